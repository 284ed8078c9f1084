"""Run one turn: check it can be sent, start the recorder, hand it to the vessel's driver, finish.

The drivers: :func:`~toolreplay._loop.http.run_http` for every HTTP vessel, and
:func:`~toolreplay._loop.claude.run_claude_turn` for the ``claude`` vessel (the Claude Code CLI runs its
own tool loop). Both write through one :class:`~toolreplay._loop.recorder.Recorder`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError, StoreError
from toolreplay._loop.events import EventCallback, TurnOptions, TurnResult
from toolreplay._loop.recorder import Recorder
from toolreplay._steps import Part
from toolreplay._tools import Tool, ToolRegistry
from toolreplay._vessels import Vessel, resolve_vessel
from toolreplay.wires import get_wire

if TYPE_CHECKING:
    from toolreplay._store import Store
    from toolreplay._store.turns import TurnLock
    from toolreplay._transport.client import Transport


#: The driver the turn loop has for a wire not sent over HTTP, by the name its contract gives it
#: (``Wire.driver``); every other wire is sent over HTTP (``Wire.http``).
CLAUDE_CODE = "Claude Code CLI"


def driver_of(vessel: Vessel) -> str:
    """The driver of ``vessel``'s wire: "" for HTTP, else the named driver of its contract, refused
    when the turn loop has none of that name (a second non-HTTP wire is not driven by the Claude one)."""
    w = get_wire(vessel.wire)
    if w.http is not None:
        return ""
    if w.driver != CLAUDE_CODE:
        raise ConfigError(
            f"--vessel {vessel.name}: the {w.name} wire is not sent over HTTP and names the driver "
            f"{w.driver!r}, which the turn loop does not have (it drives HTTP wires and the {CLAUDE_CODE})"
        )
    return w.driver


def _registry(tools: ToolRegistry | Iterable[Tool] | None) -> ToolRegistry:
    if tools is None:
        return ToolRegistry()
    return tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)


def preflight(vessel: Vessel, registry: ToolRegistry, options: TurnOptions, store: Store) -> None:
    """Refuse a turn that cannot be sent before anything is stored: a missing key for a remote URL, a key
    that may not go to the base URL (the key-host rule), a bad base URL, a missing Claude Code CLI, tools
    ``toolreplay mcp`` could not load, a dump directory that cannot be made."""
    if options.dump_requests is not None:
        from toolreplay._transport.dump import RequestDump

        RequestDump(options.dump_requests)  # makes the directory, or says why it cannot
    if driver_of(vessel) == CLAUDE_CODE:
        from toolreplay._loop.claude_cli import preflight as claude_preflight

        claude_preflight(registry.sources(), store.url)
        return
    from toolreplay._transport.client import endpoint, resolve_key

    endpoint(vessel, vessel.base_url, vessel.model, options.stream)
    resolve_key(vessel, vessel.base_url, send_key=options.send_key)


def _refuse_empty(conversation: str, user_text: str, parts: Sequence[Part] = ()) -> None:
    """Refused before anything is stored: the wires drop an empty user message, so the request would end
    on the previous reply (read as a prefill) or hold no message at all (Anthropic: 400 "messages: Field
    required"; Gemini: "contents is not specified")."""
    if not isinstance(conversation, str) or not conversation.strip():
        raise ConfigError(f"a turn needs a conversation id, not {conversation!r}")
    if not user_text.strip() and not any(p.kind != "text" for p in parts):
        raise ConfigError("a turn needs the user's text (or an image or a document): it is empty")
    for what, value in (("conversation id", conversation), ("user's text", user_text)):
        if jsonenc.scrub(value) != value:
            raise ConfigError(f"the {what} is not UTF-8 text (it holds a lone surrogate)")


async def run_turn_async(
    conversation: str,
    user_text: str,
    vessel: str | Vessel,
    tools: ToolRegistry | Iterable[Tool] | None = None,
    *,
    store: Store | None = None,
    options: TurnOptions | None = None,
    on_event: EventCallback | None = None,
    transport: Transport | None = None,
    parts: Sequence[Part] = (),
) -> TurnResult:
    """Run one turn of ``conversation`` on ``vessel`` (see :mod:`toolreplay._loop`).

    ``parts``: images and documents the user gives with the text (design 34), stored on the user message
    and sent where the vessel's wire has a place for them (the text follows them unless ``parts`` holds
    text parts of its own).

    ``store`` defaults to :func:`~toolreplay._store.open_store` (opened and closed here); ``transport``
    to a :class:`~toolreplay._transport.client.Transport` made here (dumping to ``options.dump_requests``).
    ``on_event`` gets :data:`TurnEvent` values as they happen. Raises what the provider or a tool raised,
    after marking the reply interrupted; or, when the provider answered nothing and no call ran, after
    removing the turn's user message and reply (design 28).
    """
    opts = options or TurnOptions()
    _refuse_empty(conversation, user_text, parts)
    # once: passed down as it is
    v = resolve_vessel(
        vessel, model=opts.model, base_url=opts.base_url, cache_breakpoints=opts.cache_breakpoints
    )
    own_store = store is None
    if store is None:
        from toolreplay._store import open_store

        store = open_store()
    own_transport: Transport | None = None
    try:
        registry = _registry(tools)
        preflight(v, registry, opts, store)
        lock = await hold_turn(store, conversation, opts.timeout)
        try:
            rec = Recorder(store, conversation, v, registry, opts, on_event, lock)
            rec.start(user_text, parts)
            if driver_of(v) == CLAUDE_CODE:
                return await _drive(rec, None)
            from toolreplay._transport.client import Transport

            if transport is None:
                transport = own_transport = Transport(dump=opts.dump_requests)
            return await _drive(rec, transport)
        finally:
            lock.release()  # after the reply's last write: a reader never sees it open and unheld
    finally:
        if own_transport is not None:
            await own_transport.aclose()
        if own_store:
            store.close()


async def _drive(rec: Recorder, transport: Transport | None) -> TurnResult:
    """Run the turn on its driver (``transport`` None: the :data:`CLAUDE_CODE` one) and finish the reply; on
    a failure, interrupt it, or take the turn back when it sent nothing (design 28)."""
    try:
        if transport is None:
            from toolreplay._loop.claude import run_claude_turn

            stopped = await run_claude_turn(rec)
        else:
            from toolreplay._loop.http import run_http
            from toolreplay._transport.policy import within

            async with within(rec.options.timeout, rec.vessel.name, "the turn"):
                stopped = await run_http(rec, transport)
    except BaseException as exc:
        # The Claude Code CLI's own tool server may have written calls the recorder never saw.
        if transport is not None and rec.sent_nothing(exc):
            rec.discard()
        else:
            rec.interrupt(exc)
        raise
    return rec.finish(stopped)


class _NoLock:
    """The turn lock of a store that has none: nothing to hold, so its replies carry no writer."""

    token = ""

    def release(self) -> None:
        return None


async def hold_turn(store: Store, conversation: str, seconds: float | None) -> TurnLock:
    """The conversation's turn lock (design 40), waited for while another turn on it runs, at most
    ``seconds`` (the turn's own time limit; None: as long as it takes). Two turns on one conversation
    never interleave: each question is followed by its own answer."""
    start, pause = time.monotonic(), 0.01
    if getattr(store, "try_lock_turn", None) is None:  # a Store of the library's user, from before
        return _NoLock()
    while (lock := store.try_lock_turn(conversation)) is None:
        if seconds is not None and time.monotonic() - start >= seconds:
            raise StoreError(
                f"conversation {conversation!r}: another turn on it was still running after "
                f"{seconds:g} s of waiting; try again when it has ended"
            )
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.2)
    return lock


def run_turn(
    conversation: str,
    user_text: str,
    vessel: str | Vessel,
    tools: ToolRegistry | Iterable[Tool] | None = None,
    *,
    store: Store | None = None,
    options: TurnOptions | None = None,
    on_event: EventCallback | None = None,
    transport: Transport | None = None,
    parts: Sequence[Part] = (),
) -> TurnResult:
    """:func:`run_turn_async` for synchronous callers (the same arguments)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        turn = run_turn_async(
            conversation,
            user_text,
            vessel,
            tools,
            store=store,
            options=options,
            on_event=on_event,
            transport=transport,
            parts=parts,
        )
        return asyncio.run(turn)
    raise ConfigError("run_turn was called inside a running event loop: await run_turn_async() instead")


__all__ = ["hold_turn", "preflight", "run_turn", "run_turn_async"]

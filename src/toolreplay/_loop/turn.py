"""Run one turn: check it can be sent, start the recorder, hand it to the vessel's driver, finish.

The drivers: :func:`~toolreplay._loop.http.run_http` for every HTTP vessel, and
:func:`~toolreplay._loop.claude.run_claude_turn` for the ``claude`` vessel (the Claude Code CLI runs its
own tool loop). Both write through one :class:`~toolreplay._loop.recorder.Recorder`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError
from toolreplay._loop.events import EventCallback, TurnOptions, TurnResult
from toolreplay._loop.recorder import Recorder
from toolreplay._steps import Part
from toolreplay._tools import Tool, ToolRegistry
from toolreplay._vessels import Vessel, get_vessel
from toolreplay.wires import get_wire

if TYPE_CHECKING:
    from toolreplay._store import Store
    from toolreplay._transport.client import Transport


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
    if get_wire(vessel.wire).http is None:  # the CLI driver (the only wire not sent over HTTP)
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
    v = get_vessel(vessel)
    if opts.base_url or opts.model:
        v = replace(v, base_url=opts.base_url or v.base_url, model=opts.model or v.model)
    own_store = store is None
    if store is None:
        from toolreplay._store import open_store

        store = open_store()
    own_transport: Transport | None = None
    try:
        registry = _registry(tools)
        preflight(v, registry, opts, store)
        rec = Recorder(store, conversation, v, registry, opts, on_event)
        rec.start(user_text, parts)
        http = get_wire(v.wire).http is not None
        try:
            if not http:
                from toolreplay._loop.claude import run_claude_turn

                stopped = await run_claude_turn(rec)
            else:
                from toolreplay._loop.http import run_http
                from toolreplay._transport.client import Transport
                from toolreplay._transport.policy import within

                if transport is None:
                    transport = own_transport = Transport(dump=opts.dump_requests)
                async with within(opts.timeout, v.name, "the turn"):
                    stopped = await run_http(rec, transport)
        except BaseException as exc:
            # The Claude Code CLI's own tool server may have written calls the recorder never saw.
            if http and rec.sent_nothing(exc):
                rec.discard()
            else:
                rec.interrupt(exc)
            raise
        return rec.finish(stopped)
    finally:
        if own_transport is not None:
            await own_transport.aclose()
        if own_store:
            store.close()


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


__all__ = ["preflight", "run_turn", "run_turn_async"]

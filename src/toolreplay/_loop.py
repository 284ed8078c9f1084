"""One live turn: store the user message, ask the vessel, run the tools, record every call, finish.

``run_turn("chief", "Close #12.", "kimi", build_registry(["coop"], store), store=store)`` does, in order:

1. stores the user message (``u<position>``) with the real time;
2. allocates the reply's id (``a<position>``) and stores it empty, ``in_progress``, **before** the first
   request, so every call made inside the turn has its final derived id (``replay_a7_0``) at once: the
   requests inside the turn and every later turn's requests share their bytes up to the newest call;
3. loops: render (the conversation up to and including its own user message, plus its own reply in
   progress: DECISIONS 5), send, parse; runs each call the model made (or dry-runs it), recording it
   before it runs and again with its answer (each committed: nothing executed is lost if the process
   dies, even while a tool runs); stops at an answer without calls, or after ``max_steps`` requests;
4. finishes the reply (text, status, provider data, meta) in one transaction, after running the "said
   without doing" classifier on it: a flagged reply carries ``meta["said_without_doing"]``.

A turn that fails part-way (a provider error, a crashed tool, Ctrl-C) marks its reply ``interrupted``
with the calls it executed and the text it had, and re-raises; the next turn replays those calls.
Message ids are ``u<n>``/``a<n>`` with ``n`` the (1-based) position the message takes (the next free
one when an imported message already has that id): short, deterministic per conversation, stable once
stored.

The ``claude`` vessel runs its own tool loop inside the Claude Code CLI; the turn then records the calls
the CLI reports (:mod:`toolreplay._claude_cli`) in the same reply, the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError, StoreError
from toolreplay._history import History, Message, Status, ToolCall, ToolSpec
from toolreplay._ids import StemAllocator, call_id
from toolreplay._replay import DEFAULT_SETTINGS, ReplaySettings, prepare_turn_messages, replay_name
from toolreplay._tools import Tool, ToolOutcome, ToolRegistry
from toolreplay._vessels import Vessel, get_vessel
from toolreplay.wires.reply import ParsedCall, Reply, Usage, add_usage, usage_json

if TYPE_CHECKING:
    from toolreplay._claude_cli import ClaudeEvent
    from toolreplay._errors import ProviderError
    from toolreplay._store import Store
    from toolreplay._transport.client import Transport

DEFAULT_MAX_STEPS = 8


@dataclass(frozen=True, slots=True)
class TurnOptions:
    """How a turn is run. ``model`` and ``base_url`` override the vessel's."""

    system: str | None = None
    model: str | None = None
    base_url: str | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    """Requests per turn at most (the claude vessel: ``--max-turns``)."""
    dry_tools: bool = False
    """Record every call, execute none: each gets a canned ``[dry run]`` answer."""
    stream: bool = True
    temperature: float | None = None
    max_tokens: int | None = None
    replay: ReplaySettings = DEFAULT_SETTINGS
    dump_requests: Path | None = None
    """Write every request body sent and its answer here (keys redacted), for the audit."""
    send_key: bool = False
    """The vessel's key may go to ``base_url`` although it is not the vessel's own host (``--send-key``)."""
    timeout: float | None = 600.0
    """Seconds the whole turn may take (every request, retry and tool run); None: no limit."""

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ConfigError(f"max_steps must be at least 1, not {self.max_steps}")
        if self.timeout is not None and not self.timeout > 0:
            raise ConfigError(f"timeout must be more than 0 seconds, not {self.timeout}")


# -- events for a UI ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """New text from the model, as it streams in."""

    text: str


@dataclass(frozen=True, slots=True)
class CallStarted:
    """The model made a call; ``call_id`` is its derived id (``replay_a7_0``), final from now on."""

    call_id: str
    name: str
    input: Any


@dataclass(frozen=True, slots=True)
class CallFinished:
    """A call was answered and recorded (``executed`` False: dry run, broken arguments, unknown tool)."""

    call_id: str
    name: str
    input: Any
    answer: str
    is_error: bool
    executed: bool
    dry: bool = False


@dataclass(frozen=True, slots=True)
class Retrying:
    """A request failed with a retryable error; it is sent again after ``delay`` seconds."""

    error: str
    attempt: int
    delay: float


@dataclass(frozen=True, slots=True)
class Flagged:
    """The finished reply claims an action its turn never called ("Closed #506." and no close call)."""

    claim: Mapping[str, Any]


TurnEvent = TextDelta | CallStarted | CallFinished | Retrying | Flagged
EventCallback = Callable[[TurnEvent], None]


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What a finished turn stored: the user message and the reply, plus how it went."""

    conversation_id: str
    user_message: Message
    reply: Message
    steps: int
    usage: Usage
    stopped: Literal["answer", "step_limit"]
    flag: Mapping[str, Any] | None = None


# -- helpers -----------------------------------------------------------------------------------------


def now() -> str:
    """The time stamped on live messages (UTC, seconds; DECISIONS 6)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def next_id(history: History | None, prefix: str) -> str:
    """``<prefix><n>``: ``n`` the 1-based position the next message takes, or the next free one after it."""
    taken = {m.id for m in history.messages} if history is not None else set()
    n = len(history.messages) + 1 if history is not None else 1
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def merge_provider_data(
    old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
) -> Mapping[str, Any] | None:
    """Message-level provider data of several steps, merged per wire namespace (later steps win)."""
    if not new:
        return old
    if not old:
        return dict(new)
    out = dict(old)
    for ns, value in new.items():
        prev = out.get(ns)
        out[ns] = {**prev, **value} if isinstance(prev, Mapping) and isinstance(value, Mapping) else value
    return out


def _registry(tools: ToolRegistry | Iterable[Tool] | None) -> ToolRegistry:
    if tools is None:
        return ToolRegistry()
    return tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)


def said_without_doing_flag(
    text: str, calls: Iterable[ToolCall], registry: ToolRegistry, history: History
) -> dict[str, Any] | None:
    """The classifier's verdict on a finished reply, as stored in ``meta["said_without_doing"]``.

    Checked against the verb tables of the tools offered this turn or used earlier in the conversation
    (the classifier's advice: tables of tools that are not in play only raise false alarms).
    """
    from toolreplay._lab.classify import DEFAULT_TOOLS, said_without_doing

    names = {replay_name(n) for n in registry.names}
    names |= {replay_name(c.name) for m in history.messages for c in m.tool_uses}
    tables = [t for t in DEFAULT_TOOLS if t.tool in names]
    if not text or not tables:
        return None
    claim = said_without_doing(text, list(calls), tools=tables)
    return claim.as_json() if claim is not None else None


# -- the turn ----------------------------------------------------------------------------------------


class _Turn:
    """The state of one turn between its first and last write."""

    def __init__(
        self,
        store: Store,
        conversation: str,
        vessel: Vessel,
        registry: ToolRegistry,
        options: TurnOptions,
        on_event: EventCallback | None,
    ) -> None:
        self.store = store
        self.cid = conversation
        self.vessel = vessel
        self.registry = registry
        self.options = options
        self.on_event = on_event
        self.calls: list[ToolCall] = []
        self.texts: list[str] = []
        self.usage = Usage()
        self.provider_data: Mapping[str, Any] | None = None
        self.steps = 0
        self.model: str | None = None
        self.finish_reason: str | None = None
        self.extra_meta: dict[str, Any] = {}
        self.claude_index: dict[str, int] = {}

    def emit(self, event: TurnEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    # -- the first writes -------------------------------------------------------------------------

    def _claim_id(self, prefix: str, write: Callable[[str], None]) -> str:
        """Write a new message under the next free ``<prefix><n>``; again when another writer took it."""
        for _ in range(5):
            mid = next_id(self.store.load(self.cid) if self.store.exists(self.cid) else None, prefix)
            try:
                write(mid)
                return mid
            except StoreError:
                if not any(m.id == mid for m in self.store.load(self.cid).messages):
                    raise
        raise StoreError(f"conversation {self.cid!r}: could not find a free message id")

    def start(self, user_text: str) -> None:
        """Store the user message and the empty reply; keep the history this turn renders from."""
        stamp = now()

        def store_user(mid: str) -> None:
            self.store.append_message(self.cid, Message(mid, "user", user_text, created_at=stamp))

        def begin(mid: str) -> None:
            self.store.begin_reply(self.cid, mid, vessel=self.vessel.name, created_at=self.started_at)

        uid = self._claim_id("u", store_user)
        self.user = Message(uid, "user", user_text, created_at=stamp)
        history = self.store.load(self.cid)
        self.history = History(history.id, history.messages[: history.index_of(uid) + 1], history.tools)
        self.started_at = now()
        self.reply_id = self._claim_id("a", begin)
        alloc = StemAllocator()
        for m in self.history.messages:
            alloc.stem(m.id)
        self.stem = alloc.stem(self.reply_id)

    def in_progress(self) -> Message:
        # No text while in progress (DECISIONS 4): text after the calls would end an Anthropic request
        # with an assistant message, which the API reads as a prefill to continue.
        v, pdata = self.vessel.name, self.provider_data
        return Message(self.reply_id, "assistant", "", tuple(self.calls), None, v, pdata, "in_progress")

    def tool_specs(self) -> tuple[ToolSpec, ...]:
        return self.registry.specs() if len(self.registry) else (self.history.tools or ())

    # -- calls ------------------------------------------------------------------------------------

    async def run_call(self, pc: ParsedCall) -> None:
        """Answer one call (run, dry-run or refuse it): recorded before it runs, then with its answer."""
        cid = call_id(self.stem, len(self.calls))
        self.emit(CallStarted(cid, pc.name, pc.input))
        made = ToolCall(pc.name, pc.input, None, pc.call_id, False, pc.provider_data)
        # Committed before the tool runs: a process killed while it runs keeps the call, unanswered
        # (the answer recorded below fills this same call in).
        self.store.record_call(self.cid, self.reply_id, made)
        try:
            outcome: ToolOutcome = await self.registry.call(
                pc.name, pc.input, dry=self.options.dry_tools, input_error=pc.input_error
            )
        except BaseException:
            # A crashed tool: the call was made and its effect is unknown. Keep it, unanswered.
            self.calls.append(made)
            raise
        answer = jsonenc.scrub(outcome.answer)  # a tool's lone surrogate could not be stored
        self.record(ToolCall(pc.name, pc.input, answer, pc.call_id, outcome.is_error, pc.provider_data))
        self.emit(
            CallFinished(
                cid, pc.name, pc.input, outcome.answer, outcome.is_error, outcome.executed, outcome.dry
            )
        )

    def record(self, call: ToolCall) -> None:
        self.store.record_call(self.cid, self.reply_id, call)
        self.calls.append(call)

    # -- the HTTP vessels -------------------------------------------------------------------------

    async def run_http(self, transport: Transport) -> Literal["answer", "step_limit"]:
        from toolreplay._api import render_options
        from toolreplay._render_cache import RenderCache

        specs = self.tool_specs()
        opts = render_options(
            self.vessel,
            system=self.options.system,
            tools=specs,
            model=self.options.model,
            temperature=self.options.temperature,
            max_tokens=self.options.max_tokens,
            stream=self.options.stream,
        )
        if not len(self.registry):
            # No tool can run this turn, yet the body may declare some (the history's calls need their
            # definitions: Anthropic rejects tool_use blocks without tools): the model must not call them.
            opts = replace(opts, tool_choice="none")

        def on_retry(err: ProviderError, attempt: int, delay: float) -> None:
            self.emit(Retrying(str(err), attempt, delay))

        streamed: list[str] = []
        # Each step renders the same history plus the reply in progress, which only grew: the cache
        # renders that reply again and reuses every earlier message's pieces (same bytes as a full render).
        bodies = RenderCache()

        def on_text(piece: str) -> None:
            streamed.append(piece)
            self.emit(TextDelta(piece))

        while self.steps < self.options.max_steps:
            self.steps += 1
            messages = (*self.history.messages, self.in_progress())
            body = bodies.render_body(messages, self.vessel.wire, opts, settings=self.options.replay)
            streamed.clear()
            reply: Reply = await transport.send(
                self.vessel,
                body,
                model=self.options.model,
                base_url=self.options.base_url,
                stream=self.options.stream,  # Gemini's body has no stream flag: the URL says it
                on_text=on_text,
                on_retry=on_retry,
                send_key=self.options.send_key,
            )
            if reply.text and not streamed:  # answered whole: the UI still gets the text
                self.emit(TextDelta(reply.text))
            self.take(reply)
            if not reply.calls:
                return "answer"
            for pc in reply.calls:
                await self.run_call(pc)
        return "step_limit"

    def take(self, reply: Reply) -> None:
        if reply.text:
            self.texts.append(reply.text)
        self.usage = add_usage(self.usage, reply.usage)
        self.provider_data = merge_provider_data(self.provider_data, reply.provider_data)
        self.model = reply.model or self.model
        self.finish_reason = reply.finish_reason

    # -- the claude vessel ------------------------------------------------------------------------

    async def run_claude(self) -> Literal["answer", "step_limit"]:
        from toolreplay._api import render_options
        from toolreplay._claude_cli import ClaudeRun, run_claude
        from toolreplay.wires import render_wire

        opts = render_options(self.vessel, system=self.options.system, model=self.options.model)
        turns = prepare_turn_messages(self.history, "native", settings=self.options.replay)
        body = render_wire(self.vessel.wire, turns, opts)
        if self.options.dump_requests is not None:
            from toolreplay._transport.dump import RequestDump

            RequestDump(self.options.dump_requests).request(self.vessel.name, jsonenc.encode(body))
        run = ClaudeRun.from_body(
            body,
            tools=self.registry.sources(),
            db=self.store.url,
            dry_tools=self.options.dry_tools,
            max_turns=self.options.max_steps,
            base_url=self.options.base_url,
        )
        self.steps = 1
        outcome = await run_claude(run, self.registry.names, self.on_claude_event)
        if outcome.text:
            self.texts.append(outcome.text)
        self.usage = outcome.usage
        self.model = outcome.model
        self.steps = outcome.num_turns or 1
        self.extra_meta["claude"] = outcome.meta()
        return "step_limit" if outcome.subtype == "error_max_turns" else "answer"

    def on_claude_event(self, ev: ClaudeEvent) -> None:
        """Record the CLI's calls: each as it starts (no answer yet), its answer filled in when it comes
        (the store pairs them by the provider's id), so a run that dies mid-call keeps the call."""
        from toolreplay._claude_cli import ClaudeCallAnswered, ClaudeCallStarted, ClaudeText

        if isinstance(ev, ClaudeText):
            self.emit(TextDelta(ev.text))
        elif isinstance(ev, ClaudeCallStarted):
            self.claude_index[ev.tool_use_id] = len(self.calls)
            self.emit(CallStarted(call_id(self.stem, len(self.calls)), ev.name, ev.input))
            self.record(ToolCall(ev.name, ev.input, None, ev.tool_use_id))
        elif isinstance(ev, ClaudeCallAnswered):
            c = ev.call
            pos = self.claude_index.pop(c.call_id or "", None)
            self.store.record_call(self.cid, self.reply_id, c)
            if pos is None:
                self.calls.append(c)
                pos = len(self.calls) - 1
            else:
                self.calls[pos] = c
            dry = self.options.dry_tools
            answer = c.answer or ""
            self.emit(
                CallFinished(call_id(self.stem, pos), c.name, c.input, answer, c.is_error, not dry, dry)
            )

    # -- the last write ---------------------------------------------------------------------------

    def meta(self, stopped: str) -> dict[str, Any]:
        out: dict[str, Any] = {"steps": self.steps, "stopped": stopped}
        if usage_json(self.usage):
            out["usage"] = usage_json(self.usage)
        if self.model:
            out["model"] = self.model
        if self.finish_reason:
            out["finish_reason"] = self.finish_reason
        if self.options.dry_tools:
            out["dry_tools"] = True
        if len(self.texts) > 1:
            out["text_pieces"] = list(self.texts)
        out.update(self.extra_meta)
        return out

    def finish(self, stopped: Literal["answer", "step_limit"]) -> TurnResult:
        text = jsonenc.scrub("\n\n".join(self.texts))
        meta = self.meta(stopped)
        flag = said_without_doing_flag(text, self.calls, self.registry, self.history)
        if flag is not None:
            meta["said_without_doing"] = flag
        # A reply stopped by the step limit with no text is not finished: "interrupted" keeps its calls
        # in every later replay (a complete reply without text is left out, calls included).
        status: Status = "interrupted" if stopped == "step_limit" and not text else "complete"
        self.store.finish_reply(
            self.cid, self.reply_id, text=text, status=status, provider_data=self.provider_data, meta=meta
        )
        if flag is not None:
            self.emit(Flagged(flag))
        reply = Message(
            self.reply_id,
            "assistant",
            text,
            tuple(self.calls),
            created_at=self.started_at,
            vessel=self.vessel.name,
            provider_data=self.provider_data,
            status=status,
            meta=meta,
        )
        return TurnResult(self.cid, self.user, reply, self.steps, self.usage, stopped, flag)

    def interrupt(self, error: BaseException) -> None:
        """Mark the reply interrupted, keeping its calls and text (the error is re-raised by the caller)."""
        from toolreplay._transport.dump import redact

        meta = self.meta("error")
        # Redacted and scrubbed: an error may quote a key, or text that cannot be stored as UTF-8.
        meta["error"] = jsonenc.scrub(redact(str(error) or type(error).__name__))[:500]
        self.store.finish_reply(
            self.cid,
            self.reply_id,
            text=jsonenc.scrub("\n\n".join(self.texts)),
            status="interrupted",
            provider_data=self.provider_data,
            meta=meta,
        )


def preflight(vessel: Vessel, registry: ToolRegistry, options: TurnOptions, store: Store) -> None:
    """Refuse a turn that cannot be sent before anything is stored: a missing key for a remote URL, a key
    that may not go to the base URL (the key-host rule), a bad base URL, a missing Claude Code CLI, tools
    ``toolreplay mcp`` could not load, a dump directory that cannot be made."""
    if options.dump_requests is not None:
        from toolreplay._transport.dump import RequestDump

        RequestDump(options.dump_requests)  # makes the directory, or says why it cannot
    if vessel.wire == "claude-prompt":
        from toolreplay._claude_cli import preflight as claude_preflight

        claude_preflight(registry.sources(), store.url)
        return
    from toolreplay._transport.client import endpoint, resolve_key

    endpoint(vessel, vessel.base_url, vessel.model, options.stream)
    resolve_key(vessel, vessel.base_url, send_key=options.send_key)


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
) -> TurnResult:
    """Run one turn of ``conversation`` on ``vessel`` (see the module docstring).

    ``store`` defaults to :func:`~toolreplay._store.open_store` (opened and closed here); ``transport``
    to a :class:`~toolreplay._transport.client.Transport` made here (dumping to ``options.dump_requests``).
    ``on_event`` gets :data:`TurnEvent` values as they happen. Raises what the provider or a tool raised,
    after marking the reply interrupted.
    """
    opts = options or TurnOptions()
    # Refused before anything is stored: the wires drop an empty user message, so the request would end
    # on the previous reply (read as a prefill) or hold no message at all (Anthropic: 400 "messages:
    # Field required"; Gemini: "contents is not specified").
    if not isinstance(conversation, str) or not conversation.strip():
        raise ConfigError(f"a turn needs a conversation id, not {conversation!r}")
    if not user_text.strip():
        raise ConfigError("a turn needs the user's text: it is empty")
    for what, value in (("conversation id", conversation), ("user's text", user_text)):
        if jsonenc.scrub(value) != value:
            raise ConfigError(f"the {what} is not UTF-8 text (it holds a lone surrogate)")
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
        turn = _Turn(store, conversation, v, registry, opts, on_event)
        turn.start(user_text)
        try:
            if v.wire == "claude-prompt":
                stopped = await turn.run_claude()
            else:
                from toolreplay._transport.client import Transport
                from toolreplay._transport.policy import within

                if transport is None:
                    transport = own_transport = Transport(dump=opts.dump_requests)
                async with within(opts.timeout, v.name, "the turn"):
                    stopped = await turn.run_http(transport)
        except BaseException as exc:
            turn.interrupt(exc)
            raise
        return turn.finish(stopped)
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
    **kwargs: Any,
) -> TurnResult:
    """:func:`run_turn_async` for synchronous callers (same keyword arguments)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_turn_async(conversation, user_text, vessel, tools, **kwargs))
    raise ConfigError("run_turn was called inside a running event loop: await run_turn_async() instead")


__all__ = [
    "DEFAULT_MAX_STEPS",
    "CallFinished",
    "CallStarted",
    "EventCallback",
    "Flagged",
    "Retrying",
    "TextDelta",
    "TurnEvent",
    "TurnOptions",
    "TurnResult",
    "next_id",
    "run_turn",
    "run_turn_async",
    "said_without_doing_flag",
]

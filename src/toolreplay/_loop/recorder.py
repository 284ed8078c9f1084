"""The recorder: every write a turn makes, whichever driver runs it.

A driver (:mod:`~toolreplay._loop.http` for the HTTP vessels, :mod:`~toolreplay._loop.claude` for the
Claude Code CLI) asks the model and runs or watches the tools; the recorder stores what happens, in the
order that keeps a killed process's work:

1. :meth:`Recorder.start`: the user message (``u<n>``), then the reply's id (``a<n>``) stored empty and
   ``in_progress`` **before** the first request, so every call made inside the turn has its final derived
   id (``replay_a7_0``) at once;
2. :meth:`Recorder.call_started`: each call committed before its tool runs (unanswered), then
   :meth:`Recorder.call_answered` fills its answer in as it completes;
3. :meth:`Recorder.finish`: text, steps, status, provider data and meta in one transaction, after the
   "said without doing" check; or :meth:`Recorder.interrupt` when the turn failed, keeping the calls
   and the text it had; or, when the turn failed before the provider answered anything and nothing ran,
   :meth:`Recorder.discard`, which removes the user message and the empty reply (design 28).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError, ConnectionFault, ProviderError, ResponseFormatError, StoreError
from toolreplay._history import History, Message, Status, Step, ToolCall, ToolSpec
from toolreplay._ids import StemAllocator, call_id
from toolreplay._loop.events import (
    CallFinished,
    CallStarted,
    ContextTrimmed,
    EventCallback,
    Flagged,
    Stopped,
    TurnEvent,
    TurnOptions,
    TurnResult,
)
from toolreplay._loop.step_log import StepLog, words
from toolreplay._loop.window import read_window
from toolreplay._replay import replay_name
from toolreplay._steps import Part, steps_problem, with_words
from toolreplay._store.turns import WRITER, TurnLock, writer
from toolreplay._tokens import size_for
from toolreplay._tools import ToolRegistry
from toolreplay._vessels import Vessel
from toolreplay.model import CallKind
from toolreplay.wires.reply import Reply, Usage, add_usage, usage_json

if TYPE_CHECKING:
    from toolreplay._store import Store


#: How often the words of a streaming answer are stored while they come in (seconds).
PROGRESS_SECONDS = 0.5


def now() -> str:
    """The time stamped on live messages (UTC, seconds; design 6)."""
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


def said_without_doing_flag(
    text: str, calls: Iterable[ToolCall], registry: ToolRegistry, history: History
) -> dict[str, Any] | None:
    """The classifier's verdict on a finished reply, as stored in ``meta["said_without_doing"]``.

    Checked against the verb tables of the tools offered this turn or used earlier in the conversation
    (the classifier's advice: tables of tools that are not in play only raise false alarms).
    """
    from toolreplay._claims import DEFAULT_TOOLS, said_without_doing

    names = {replay_name(n) for n in registry.names}
    names |= {replay_name(c.name) for m in history.messages for c in m.tool_uses}
    tables = [t for t in DEFAULT_TOOLS if t.tool in names]
    if not text or not tables:
        return None
    claim = said_without_doing(text, list(calls), tools=tables)
    return claim.as_json() if claim is not None else None


class Recorder:
    """The state of one turn between its first and last write, and every write it makes."""

    def __init__(
        self,
        store: Store,
        conversation: str,
        vessel: Vessel,
        registry: ToolRegistry,
        options: TurnOptions,
        on_event: EventCallback | None,
        lock: TurnLock | None = None,
    ) -> None:
        self.store = store
        # who writes the reply in progress, kept with it until it is finished (design 40)
        self.writer = {WRITER: writer(lock).as_json()} if lock is not None and lock.token else {}
        self.cid = conversation
        self.vessel = vessel
        self.registry = registry
        self.options = options
        self.on_event = on_event
        self.calls: list[ToolCall] = []
        self.texts: list[str] = []
        self.usage = Usage()
        self.provider_data: Mapping[str, Any] | None = None
        self.requests = 0  # the requests of this turn so far (not the reply's steps)
        self.model: str | None = None
        self.finish_reason: str | None = None
        self.extra_meta: dict[str, Any] = {}
        self.heard = False
        """The provider answered something this turn: a reply parsed, or streamed text (design 28)."""
        self.log: StepLog | None = None  # the HTTP driver's steps (the claude CLI runs its own loop)
        self.given_steps: tuple[Step, ...] = ()  # the steps a watched loop reported (the claude CLI)
        self.streaming: list[str] = []
        """The words of the answer streaming in, shown and not yet part of an answer (issue 27)."""
        self.saved_at = 0.0  # when they were last stored (monotonic seconds)

    def emit(self, event: TurnEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    # -- the first writes -------------------------------------------------------------------------

    def _claim_id(self, prefix: str, write: Callable[[str], None]) -> str:
        """Write a new message under the next free ``<prefix><n>`` (``n`` from the message count on, the
        first not taken: index lookups, fast at any length); again when another writer took it."""
        for _ in range(5):
            count = self.store.counts(self.cid)[0]
            ids = [f"{prefix}{n}" for n in range(count + 1, count + 33)]
            taken = self.store.positions(self.cid, ids)
            mid = next((i for i in ids if i not in taken), None)
            if mid is None:
                break
            try:
                write(mid)
                return mid
            except StoreError:
                if mid not in self.store.positions(self.cid, [mid]):
                    raise
        raise StoreError(f"conversation {self.cid!r}: could not find a free message id")

    def start(self, user_text: str, parts: Sequence[Part] = ()) -> None:
        """Store the user message (with its images and documents, design 34) and the empty reply; keep
        the history this turn renders from (the conversation up to and including its own user message:
        design 5)."""
        stamp = now()
        user_text, kept = with_words(user_text, parts)

        def store_user(mid: str) -> None:
            self.store.append_message(self.cid, Message(mid, "user", user_text, created_at=stamp, parts=kept))

        def begin(mid: str) -> None:
            meta = self.writer or None
            self.store.begin_reply(
                self.cid, mid, vessel=self.vessel.name, created_at=self.started_at, meta=meta
            )

        self.existed = self.store.exists(self.cid)
        uid = self._claim_id("u", store_user)
        self.user = Message(uid, "user", user_text, created_at=stamp, parts=kept)
        end = self.store.positions(self.cid, [uid])[uid] + 1
        self.window = read_window(self.store, self.cid, end, self.vessel, self.options, self._specs)
        self.history = self.window.history
        self.started_at = now()
        self.reply_id = self._claim_id("a", begin)
        alloc = StemAllocator()
        for m in self.history.messages:
            alloc.stem(m.id)
        self.stem = alloc.stem(self.reply_id)

    def fitted(
        self, messages: tuple[Message, ...], render: Callable[[History], dict[str, Any]]
    ) -> dict[str, Any]:
        """The body of ``messages`` (the window read, plus the reply in progress) within the context
        budget, by the plan made once for the turn; all of them when no budget is known. Said once per
        turn (:class:`ContextTrimmed`)."""
        from toolreplay._render import fit_plan

        o, w = self.options, self.window
        budget = o.context.tokens(self.vessel.context_tokens, o.max_tokens)
        h = History(self.cid, messages, self.history.tools)
        if budget is None or w.plan is None:
            return render(h)
        extra = sum(size_for(m, w.accepts) for m in messages[len(self.history.messages) :])
        # the model: the resolved vessel's (--model is folded into it); each start rendered here
        starts, count = fit_plan(
            h, self.vessel, o.context, budget, the_plan=w.plan, extra=extra, offset=w.offset
        )
        for trial in starts:
            body = render(replace(h, messages=trial.sent))
            got = trial.fitted(body, count(body, trial.sent), budget)
            if got.tokens <= budget:
                break
        if got.dropped:
            self.extra_meta["context"] = {"dropped": got.dropped, "tokens": got.tokens, "budget": budget}
        if got.warnings and self.requests <= 1:
            self.emit(ContextTrimmed(got.dropped, got.tokens, budget, got.warnings))
        return got.body

    def in_progress(self) -> Message:
        # No final text while in progress (design 16): each step's words ride with its calls, so the
        # request ends with the last step's answers (text after them would be an Anthropic prefill).
        v, pdata = self.vessel.name, self.provider_data
        steps = self.log.fitted(len(self.calls)) if self.log is not None else ()
        return Message(
            self.reply_id, "assistant", "", tuple(self.calls), None, v, pdata, "in_progress", None, steps
        )

    def tool_specs(self) -> tuple[ToolSpec, ...]:
        return self._specs(self.history)

    def _specs(self, history: History) -> tuple[ToolSpec, ...]:
        return self.registry.specs() if len(self.registry) else (history.tools or ())

    # -- calls ------------------------------------------------------------------------------------

    def call_started(
        self,
        name: str,
        input: Any,
        call_id_: str | None = None,
        provider_data: Mapping[str, Any] | None = None,
        kind: CallKind = "function",
    ) -> int:
        """Commit a call before its tool runs (unanswered: a process killed while the tool runs keeps
        it); returns its position in the reply, which :meth:`call_answered` takes. ``kind`` ``custom``:
        a free-form call, its input the text the model wrote."""
        pos = len(self.calls)
        self.emit(CallStarted(call_id(self.stem, pos), name, input))
        made = ToolCall(name, input, None, call_id_, False, provider_data, kind=kind)
        self.store.record_call(self.cid, self.reply_id, made)
        self.calls.append(made)
        return pos

    def call_answered(self, pos: int | None, call: ToolCall, *, executed: bool, dry: bool) -> None:
        """Fill in the answer of the call at ``pos`` (the store pairs it with the unanswered row by the
        provider's id); ``pos`` None: a call nobody saw start, appended answered."""
        self.store.record_call(self.cid, self.reply_id, call)
        if pos is None:
            self.calls.append(call)
            pos = len(self.calls) - 1
        else:
            self.calls[pos] = call
        answer = call.answer or ""
        self.emit(
            CallFinished(call_id(self.stem, pos), call.name, call.input, answer, call.is_error, executed, dry)
        )

    def streamed(self, piece: str) -> None:
        """Keep a piece of streamed text as it is shown, and store the reply's words so far, at most
        every :data:`PROGRESS_SECONDS` (a write per token would cost more than the stream): a process
        killed mid-stream loses at most that much of what it showed."""
        self.heard = True
        self.streaming.append(piece)
        if time.monotonic() - self.saved_at >= PROGRESS_SECONDS:
            self.save_progress()

    def retried(self) -> None:
        """The answer streaming in failed and is asked again: its words are superseded."""
        self.streaming.clear()

    def save_progress(self) -> None:
        """Store the reply's words so far, still in progress. A record only: the finishing write says
        whether the store works, so a failure here does not stop the stream."""
        self.saved_at = time.monotonic()
        text, steps = self.reply_text()
        with contextlib.suppress(StoreError):
            self.store.finish_reply(
                self.cid, self.reply_id, text=text, status="in_progress", provider_data=self.provider_data,
                meta={**self.meta("in_progress"), **self.writer}, steps=steps,
            )  # fmt: skip

    def take(self, reply: Reply) -> None:
        """Keep what one answer of the model adds to the reply: its text, usage, provider data, model."""
        self.heard = True
        self.streaming.clear()  # the answer holds those words now
        if reply.text:
            self.texts.append(reply.text)
        self.usage = add_usage(self.usage, reply.usage)
        self.store_usage(reply.usage, reply.model)
        self.provider_data = merge_provider_data(self.provider_data, reply.provider_data)
        self.model = reply.model or self.model
        self.finish_reason = reply.finish_reason
        if self.log is not None:
            self.log.took(reply)

    def store_usage(self, usage: Usage, model: str | None) -> None:
        """Keep one response's usage, cache figures included (``toolreplay stats``), as step ``steps``."""
        if usage_json(usage):
            self.store.record_usage(self.cid, self.reply_id, self.requests, usage, model)

    # -- the last write ---------------------------------------------------------------------------

    def meta(self, stopped: str) -> dict[str, Any]:
        out: dict[str, Any] = {"requests": self.requests, "stopped": stopped}
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

    def reply_text(self) -> tuple[str, tuple[Step, ...]]:
        """The reply's final words and its steps (design 16), with the words of an answer still
        streaming in last (they were shown); without steps, all its words joined."""
        text, steps = self._final_text()
        partial = jsonenc.scrub("".join(self.streaming))
        if partial:
            text = f"{text}\n\n{partial}" if text else partial
        return text, steps

    def _final_text(self) -> tuple[str, tuple[Step, ...]]:
        if self.log is None:
            # a watched loop's steps stand only if they still hold exactly the calls recorded
            fits = steps_problem(self.given_steps, len(self.calls)) is None
            return jsonenc.scrub("\n\n".join(self.texts)), self.given_steps if fits else ()
        steps = self.log.fitted(len(self.calls))
        if not steps:
            return jsonenc.scrub("\n\n".join(self.texts)), steps
        return jsonenc.scrub(self.log.final), steps

    def finish(self, stopped: Stopped) -> TurnResult:
        text, steps = self.reply_text()
        meta = self.meta(stopped)
        flag = said_without_doing_flag(words(steps, text), self.calls, self.registry, self.history)
        if flag is not None:
            meta["said_without_doing"] = flag
        # A reply stopped by the step limit with no text is not finished: "interrupted" keeps its calls
        # in every later replay (a complete reply without text is left out, calls included).
        status: Status = "interrupted" if stopped == "request_limit" and not text else "complete"
        self.store.finish_reply(
            self.cid, self.reply_id, text=text, status=status, provider_data=self.provider_data, meta=meta,
            steps=steps,
        )  # fmt: skip
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
            steps=steps,
        )
        return TurnResult(self.cid, self.user, reply, self.requests, self.usage, stopped, flag)

    def sent_nothing(self, error: BaseException) -> bool:
        """The turn failed before the provider answered anything and before any call: no connection, a
        refused key or host, a redirect (never followed), a 4xx, a 5xx after its retries (design 28):
        an error status is the provider saying it did not answer. A timeout or an answer that could not
        be read may have been worked on (and billed): those keep the interrupted reply."""
        if self.heard or self.calls or self.texts or self.requests > 1:
            return False
        if isinstance(error, (ConnectionFault, ConfigError)):
            return True
        if isinstance(error, ResponseFormatError) or not isinstance(error, ProviderError):
            return False
        return error.status is not None and 300 <= error.status < 600

    def discard(self) -> None:
        """Remove what :meth:`start` stored, and the conversation when this turn made it and nothing else
        was written to it meanwhile: one transaction, so a killed process leaves all of it or none."""
        ids = [self.reply_id, self.user.id]
        self.store.delete_messages(self.cid, ids, drop_if_empty=not self.existed)

    def interrupt(self, error: BaseException) -> None:
        """Mark the reply interrupted, keeping its calls and text (the error is re-raised by the caller)."""
        from toolreplay._transport.dump import redact

        meta = self.meta("error")
        # Redacted and scrubbed: an error may quote a key, or text that cannot be stored as UTF-8.
        meta["error"] = jsonenc.scrub(redact(str(error) or type(error).__name__))[:500]
        text, steps = self.reply_text()
        self.store.finish_reply(
            self.cid, self.reply_id, text=text, status="interrupted", provider_data=self.provider_data,
            meta=meta, steps=steps,
        )  # fmt: skip


__all__ = ["Recorder", "merge_provider_data", "next_id", "now", "said_without_doing_flag"]

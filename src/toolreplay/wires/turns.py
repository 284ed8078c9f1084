"""What every wire's request parser shares: a body, read into neutral events, assembled into stored turns.

Each ``wires/<wire>/request.py`` reads its own shapes into a flat list of events (:class:`SystemText`,
:class:`UserText`, :class:`AgentSaid`, :class:`Answers`) and hands them to :func:`assemble`, which applies
the rules every wire shares:

* **One agent turn is one stored reply.** Everything the agent said and called between two user messages
  becomes one reply: its calls in order, each paired with its answer, and its text. In every wire's own
  loop an assistant message *without* calls is the agent's answer and ends its turn, so such a message
  closes the reply; the next assistant message (without a user message between) starts another one.
* **Each assistant message with calls is a step** (design 16): what it said besides its calls (reasoning
  pieces verbatim, words) rides with those calls. A reply of one step with nothing said before its calls
  is stored as before steps existed (no step record); any other reply records its steps, and its text is
  then the closing message's words only (the reasoning of that message is the reply's closing step).
* A reply whose agent never closed it (calls, and no message without calls after them) is a reply of
  its own. At the very end of the body it is the reply in progress (status ``in_progress``: the body is a
  continuation request inside a turn, design 4 and 16); before a user message the turn was cut short
  (status ``interrupted``). Either way its calls replay as calls, and the words it wrote before them ride
  with them, so the continuation still ends with the tool results.
* **Pairing** (design 1): an answer carrying an id answers the latest unanswered call of the turn with
  that id (ids are reused across turns in real data); an answer without an id, or with an id when no call
  of the turn has any id (Ollama, Gemini), answers the earliest unanswered call. Anything else is reported.
* **Message ids** are deterministic: a reply whose calls all carry the derived ids of one stored message
  (``replay_<stem>_<n>``, a stem that is its own message id) gets that id back, so a body rendered from a
  stored history parses into a history that renders the same ids; every other message gets ``m<position>``
  (1-based), suffixed ``-2``, ``-3``... if that id is taken. Parsing the same body twice gives the same
  history.

Nothing here knows a wire's shapes, and nothing is dropped silently: every problem is a warning naming the
body field.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from toolreplay.ids import message_stem
from toolreplay.model import (
    History,
    Issuer,
    Message,
    Part,
    Piece,
    RequestSettings,
    Sent,
    Status,
    Step,
    Text,
    ToolCall,
    ToolSpec,
    closing_pieces,
)
from toolreplay.wires.common import merge_data, merge_sent, messages_sent
from toolreplay.wires.readers import answer_text, arguments_input, kind_of, tool_spec
from toolreplay.wires.turn_events import (
    AgentSaid,
    Answers,
    Call,
    Event,
    Result,
    SaidPart,
    SystemText,
    UserText,
)

#: A derived replay id (see :mod:`toolreplay.ids`): ``replay_<stem>_<position>``.
_DERIVED_ID = re.compile(r"^replay_([A-Za-z0-9]{1,16})_(\d+)$")


# --------------------------------------------------------------------------------------------------
# assembling


@dataclass(slots=True)
class _OpenCall:
    """A call of the turn being assembled, with what the turn adds to it: its answer, and its message's
    data and its answer's layout merged into the call's own (kept here: the events are never changed, so
    a memo may give them again)."""

    call: Call
    answer: str | None = None
    is_error: bool = False
    parts: tuple[Part, ...] = ()
    provider_data: dict[str, Any] | None = None
    sent: Sent | None = None
    #: the stored call, once answered (nothing changes it then: a turn read on gives the same object)
    made: ToolCall | None = None

    def __post_init__(self) -> None:
        self.provider_data, self.sent = self.call.provider_data, self.call.sent


@dataclass(slots=True)
class _Piece:
    """One stored reply being assembled: its calls, its steps (one per message with calls), and the
    closing message's words and reasoning."""

    calls: list[_OpenCall] = field(default_factory=lambda: [])
    steps: list[Step] = field(default_factory=lambda: [])
    final: list[str] = field(default_factory=lambda: [])
    closing: tuple[Piece, ...] = ()
    provider_data: dict[str, Any] | None = None
    created_at: str | None = None
    closed: bool = False
    sents: list[Sent | None] = field(default_factory=lambda: [])

    @property
    def has_text(self) -> bool:
        return any(self.final) or any(s.words for s in self.steps)


@dataclass(slots=True)
class Draft:
    """A stored message before its id is known."""

    role: Literal["system", "user", "assistant"]
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    created_at: str | None = None
    provider_data: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    status: Status = "complete"
    steps: tuple[Step, ...] = ()
    parts: tuple[Part, ...] = ()
    sent: Sent | None = None


#: A call as it stood before an answer came: the call, and its answer, error mark, parts and layout.
_AsItStood = tuple[_OpenCall, str | None, bool, tuple[Part, ...], Sent | None]


class TurnDraft:
    """The agent's side between two user messages: its pieces and the pairing of answers to calls."""

    def __init__(self, warnings: list[str]) -> None:
        self.pieces: list[_Piece] = []
        self.open: list[_OpenCall] = []
        self.warnings = warnings
        # the pairing's indexes (a turn of many calls pairs in time proportional to them): each id's calls
        # in order (none: no call has an id), and the first call that may still be unanswered
        self._by_id: dict[str, list[_OpenCall]] = {}
        self._first = 0
        #: how to take back the last event fed, when it was answers: the pairing's start and the warnings'
        #: count before it, and each call it answered as it stood (None: the last event cannot be)
        self._undo: tuple[int, int, list[_AsItStood]] | None = None

    def said(self, ev: AgentSaid) -> None:
        # a message with neither calls nor words (only reasoning or server-tool pieces) after the agent's
        # answer belongs to that answer: it starts no reply of its own
        calls = ev.calls
        opens = bool(calls) or bool(ev.text)
        if not self.pieces or (self.pieces[-1].closed and opens):
            self.pieces.append(_Piece(created_at=ev.created_at))
        piece = self.pieces[-1]
        piece.sents.append(ev.sent)
        made = list(map(_OpenCall, calls))
        for oc in made:
            piece.calls.append(oc)
            self.open.append(oc)
            if oc.call.call_id is not None:
                self._by_id.setdefault(oc.call.call_id, []).append(oc)
        if calls:
            piece.steps.append(Step(ev.said(), len(calls)))
            # Message-level data of a message that called (other blocks a wire keeps whole) travels with
            # that message's first call.
            first = made[0]
            first.provider_data = merge_data(first.provider_data, ev.provider_data)
        else:
            piece.provider_data = merge_data(piece.provider_data, ev.provider_data)
            said = ev.said()
            piece.final.extend(p.text for p in said if isinstance(p, Text) and p.text)
            # The closing message's reasoning and server tools are the reply's closing step; its words are
            # the reply's text, and data on them (a Gemini signature on a text part) is kept in that step
            # as words-less Text: it goes back on the reply's final words, to its issuer only.
            piece.closing += closing_pieces(said)
            if ev.text:
                piece.closed = True  # an answer without calls ends the agent's turn

    def answers(self, ev: Answers) -> None:
        undo: list[_AsItStood] = []
        self._undo = (self._first, len(self.warnings), undo)
        for r in ev.results:
            target = self._target(r)
            if target is None:
                continue
            undo.append((target, target.answer, target.is_error, target.parts, target.sent))
            target.answer = r.answer
            target.is_error = r.is_error
            target.parts = r.parts
            if r.sent:
                target.sent = merge_sent(target.sent, r.sent)
            if r.name is not None and r.name != target.call.name:
                self.warnings.append(
                    f"{r.where}: answer named {r.name!r} paired by position with call {target.call.name!r}"
                )

    def _target(self, r: Result) -> _OpenCall | None:
        if r.call_id is not None and self._by_id:
            same = self._by_id.get(r.call_id, ())
            for oc in reversed(same):
                if oc.answer is None:
                    return oc
            problem = "a second answer for call" if same else "an answer for unknown call id"
            self.warnings.append(f"{r.where}: {problem} {r.call_id!r}; not replayed")
            return None
        opened, k = self.open, self._first
        while k < len(opened) and opened[k].answer is not None:
            k += 1  # an answer is never taken back: the calls before stay answered
        self._first = k
        if k < len(opened):
            return opened[k]
        self.warnings.append(f"{r.where}: an answer with no unanswered call before it; not replayed")
        return None

    def feed(self, events: Sequence[Event]) -> None:
        """The turn's events, in order (a turn read on from where it stood takes only the new ones: the
        same as all of them at once). No event is changed: a memo may give them again as they are."""
        for ev in events:
            if isinstance(ev, AgentSaid):
                self._undo = None
                self.said(ev)
            elif isinstance(ev, Answers):
                if not self.open:
                    self._undo = (self._first, len(self.warnings), [])
                    self.warnings.extend(
                        f"{r.where}: an answer with no call before it in this turn; not replayed"
                        for r in ev.results
                    )
                    continue
                self.answers(ev)

    def take_back(self) -> bool:
        """The last event fed taken back, when it was answers (an agent's next request sends its last
        message again, without its prompt-cache marker: read on from before it); whether it was."""
        if self._undo is None:
            return False
        first, said, undo = self._undo
        for target, answer, is_error, parts, sent in reversed(undo):
            target.answer, target.is_error, target.parts, target.sent, target.made = (
                answer, is_error, parts, sent, None,
            )  # fmt: skip
        self._first, self._undo = first, None
        del self.warnings[said:]
        return True

    def finish(self, at_end: bool) -> list[Draft]:
        """The turn's drafts as it stands (it is not changed: more events may follow)."""
        out: list[Draft] = []
        for p in self.pieces:
            if not (p.calls or p.has_text or p.provider_data or p.closing):
                continue
            d = _draft(p)
            if p.calls and not d.text:  # only the last piece can lack final words: they end a piece
                d.status = "in_progress" if at_end else "interrupted"
            out.append(d)
        return out


def read_turn(run: Sequence[Event], at_end: bool) -> tuple[tuple[Draft, ...], tuple[str, ...]]:
    """The drafts of one turn (the agent's side between two user or system messages; or one user or
    system message alone) and its warnings: what :func:`assemble` makes of it wherever it stands, so the
    read memo reads a turn once (``at_end``: it ends the body, a reply in it may be in progress)."""
    alone = read_alone(run)
    if alone is not None:
        return alone, ()
    turn = TurnDraft([])
    turn.feed(run)
    return tuple(turn.finish(at_end=at_end)), tuple(turn.warnings)


def read_alone(run: Sequence[Event]) -> tuple[Draft, ...] | None:
    """The draft of a system or user message that is a turn of its own, or None (the agent's side)."""
    if len(run) == 1 and isinstance(run[0], SystemText):
        return (Draft("system", run[0].text, sent=run[0].sent),)
    if len(run) == 1 and isinstance(user := run[0], UserText):
        return (Draft("user", user.text, created_at=user.created_at, meta=user.meta, parts=user.parts,
                      sent=user.sent),)  # fmt: skip
    return None


def _steps_of(p: _Piece) -> tuple[Step, ...]:
    """The reply's step record; none for one step with nothing said before its calls (stored as before
    steps existed, so its bytes do not change)."""
    if len(p.steps) == 1 and not p.steps[0].said and not p.closing:
        return ()
    return (*p.steps, Step(p.closing, 0)) if p.closing else tuple(p.steps)


def _draft(p: _Piece) -> Draft:
    steps = _steps_of(p)
    joined = "\n\n".join(p.final)
    calls = tuple(oc.made or _stored_call(oc) for oc in p.calls)
    sent = messages_sent(p.sents)
    return Draft("assistant", joined, calls, p.created_at, p.provider_data or None, steps=steps, sent=sent)


def _stored_call(oc: _OpenCall) -> ToolCall:
    made = ToolCall(
        name=oc.call.name,
        input=oc.call.input,
        answer=oc.answer,
        call_id=oc.call.call_id,
        is_error=oc.is_error,
        provider_data=oc.provider_data or None,
        parts=oc.parts,
        kind=oc.call.kind,
        sent=oc.sent,
    )
    if oc.answer is not None:  # answered: no later event of its turn changes it
        oc.made = made
    return made


def _recovered_id(d: Draft) -> str | None:
    """The stored message id a reply's derived call ids name, when they all name the same one."""
    if d.role != "assistant" or not d.calls:
        return None
    stems = set()
    for c in d.calls:
        m = _DERIVED_ID.match(c.call_id or "")
        if m is None:
            return None
        stems.add(m.group(1))
    if len(stems) != 1:
        return None
    stem = stems.pop()
    return stem if message_stem(stem) == stem else None


def assign_ids(drafts: Sequence[Draft], prefix: str) -> list[str]:
    ids: list[str | None] = [None] * len(drafts)
    taken: set[str] = set()
    for i, d in enumerate(drafts):
        rid = _recovered_id(d)
        if rid is not None and rid not in taken:
            ids[i] = rid
            taken.add(rid)
    out: list[str] = []
    for i, got in enumerate(ids):
        if got is None:
            base = f"{prefix}{i + 1}"
            got, k = base, 2
            while got in taken:
                got, k = f"{base}-{k}", k + 1
            taken.add(got)
        out.append(got)
    return out


def drafted_message(mid: str, d: Draft) -> Message:
    return Message(id=mid, role=d.role, text=d.text, tool_uses=d.calls, created_at=d.created_at,
                   provider_data=d.provider_data, status=d.status, meta=d.meta, steps=d.steps,
                   parts=d.parts, sent=d.sent)  # fmt: skip


def warn_unanswered(messages: Sequence[Message], warns: list[str]) -> None:
    """An unanswered call of a finished reply is reported."""
    for m in messages:
        for k, c in enumerate(m.tool_uses):
            if c.answer is None and m.status == "complete":
                warns.append(f"message {m.id}: call {k} ({c.name}) has no answer in the body")


def _messages(drafts: Sequence[Draft], id_prefix: str, warns: list[str]) -> tuple[Message, ...]:
    """The drafts as stored messages with their ids (:func:`warn_unanswered` reports)."""
    ids = assign_ids(drafts, id_prefix)
    messages = tuple(drafted_message(mid, d) for mid, d in zip(ids, drafts, strict=True))
    warn_unanswered(messages, warns)
    return messages


def with_issuer(m: Message, issuer: Issuer) -> Message:
    """``m`` with its issuer on every step, when it carries anything its issuer alone may get back (a
    reply without a step record but with provider data gets one step of all its calls)."""
    if m.role != "assistant":
        return m
    if m.steps:
        return replace(m, steps=tuple(s.issued_by(issuer) for s in m.steps))
    if not m.tool_uses or not (m.provider_data or any(c.provider_data for c in m.tool_uses)):
        return m
    return replace(m, steps=(Step((), len(m.tool_uses), issuer),))


def assemble(
    events: Sequence[Event],
    *,
    conversation_id: str = "request",
    tools: Sequence[ToolSpec] | None = None,
    warnings: Sequence[str] = (),
    id_prefix: str = "m",
    issuer: Issuer | None = None,
    settings: RequestSettings | None = None,
) -> History:
    """The stored history of a body's events (see the module docstring for the rules).

    ``issuer``: who made the body's replies (design 17), recorded on their steps; a reply carrying
    provider data (signatures) without a step record gets one step, so that data goes back only to that
    issuer. ``settings``: the body's request settings (:func:`~toolreplay.wires.common.request_settings`),
    recorded as the history's one request, ``after`` its last message.
    """
    warns = list(warnings)
    drafts: list[Draft] = []
    turns: list[tuple[list[Event], bool]] = []
    run: list[Event] = []
    for ev in events:
        # a system message is kept where it stood: the system prompt's blocks first, a later one in place
        # (a wire that takes no system message there sends it as a user message, and says so)
        if isinstance(ev, SystemText | UserText):
            turns += [(run, False), ([ev], False)]
            run = []
        else:
            run.append(ev)
    for part, at_end in [*turns, (run, True)]:
        made, said = read_turn(part, at_end)
        drafts += made
        warns += said
    messages = _messages(drafts, id_prefix, warns)
    if issuer is not None:
        messages = tuple(with_issuer(m, issuer) for m in messages)
    return history_of(conversation_id, messages, tools, warns, settings)


def history_of(
    conversation_id: str, messages: tuple[Message, ...], tools: Sequence[ToolSpec] | None,
    warns: Sequence[str], settings: RequestSettings | None,
) -> History:  # fmt: skip
    """The history of a body's messages: ``settings`` its one request, after its last message."""
    after = messages[-1].id if messages else None
    requests = (RequestSettings(settings.wire, settings.fields, after),) if settings is not None else ()
    return History(id=conversation_id, messages=messages, tools=tuple(tools) if tools else None,
                   warnings=tuple(warns), requests=requests)  # fmt: skip


__all__ = [
    "AgentSaid",
    "Answers",
    "Call",
    "Event",
    "Result",
    "SaidPart",
    "SystemText",
    "TurnDraft",
    "UserText",
    "answer_text",
    "arguments_input",
    "assemble",
    "kind_of",
    "read_alone",
    "read_turn",
    "tool_spec",
]

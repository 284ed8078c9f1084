"""The bridge between two wires' answers: a provider's answer, whole or streamed, read into neutral
deltas and written out again in another wire's own shape, event by event (the proxy's translation,
design 51).

Each wire with an answer shape has one :class:`Bridge` (``Wire.bridge``), in its own package
(``toolreplay.wires.<pkg>.bridge``):

* ``reader()``: a :class:`DeltaReader` fed the upstream's stream events (SSE ``data`` payloads or NDJSON
  lines, decoded; Chat's ``[DONE]`` as the string) one by one; it returns the deltas each event carries,
  as soon as it carries them (a call's arguments as they arrive, not when the call ends);
* ``writer(out)``: a :class:`DeltaWriter` that turns deltas into this wire's stream events, as a real
  server of this wire sends them (one index per block or call, the same ids from the first event to the
  last, the final event with the usage);
* ``body(reply, out)``: a whole answer (a :class:`~toolreplay.wires.reply.Reply`) as this wire's whole
  answer body.

Readers and writers are pure: the same events give the same deltas, the same deltas the same bytes. The
ids a writer needs (the answer's own id, each call's id as the agent will see it) and the opaque token
that stands for a piece of reasoning come from :class:`Outbound`, which the caller builds from the stored
conversation, so a second run of the same conversation writes the same bytes.

What a writer's wire cannot carry (reasoning on a wire without a place for it, a hosted tool's result) is
named in :attr:`DeltaWriter.notes`, never dropped silently.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from toolreplay import jsonenc
from toolreplay.model import CallKind, Issuer, Reasoning, ServerTool, Text, Usage
from toolreplay.wires.reply import ParsedCall, Reply

#: Why an answer ended, in words every wire has: ``stop`` (the model finished), ``tool_calls`` (it made
#: calls and waits for their answers), ``length`` (the output limit), ``refusal`` (a safety stop or a
#: refusal), ``error`` (the upstream failed part-way).
FinishReason = Literal["stop", "tool_calls", "length", "refusal", "error"]
FINISH_REASONS: tuple[FinishReason, ...] = ("stop", "tool_calls", "length", "refusal", "error")


@dataclass(frozen=True, slots=True)
class Begin:
    """The answer has started. ``model`` and ``id`` are what the upstream said (None when its first event
    does not say)."""

    model: str | None = None
    id: str | None = None
    kind: Literal["begin"] = "begin"


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Words as they arrive. ``data``: what the upstream put on that text and must get back with it,
    namespaced by wire, as :attr:`toolreplay.model.Text.data` keeps it (a Gemini ``thoughtSignature``,
    which can come on an empty text part: ``text`` is then ``""``); a writer never shows it."""

    text: str
    data: Mapping[str, Any] | None = None
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """Readable reasoning text as it arrives (empty pieces are not sent)."""

    text: str
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class ReasoningEnd:
    """One piece of reasoning is complete. ``data`` is what the upstream must get back, namespaced by its
    wire, as :attr:`toolreplay.model.Reasoning.data` keeps it (a signature, ``encrypted_content``,
    Kimi's ``reasoning_content``): the writer never shows it to the agent, it shows the piece's token."""

    text: str = ""
    data: Mapping[str, Any] | None = None
    kind: Literal["reasoning_end"] = "reasoning_end"

    def piece(self) -> Reasoning:
        return Reasoning(self.text, self.data)


@dataclass(frozen=True, slots=True)
class CallBegin:
    """A call starts: ``index`` counts the answer's calls from 0 (not the upstream's block index);
    ``call_id`` is the upstream's id (None: the upstream gives none, as Gemini 2 does)."""

    index: int
    name: str
    call_id: str | None = None
    call_kind: CallKind = "function"
    kind: Literal["call_begin"] = "call_begin"


@dataclass(frozen=True, slots=True)
class CallDelta:
    """A piece of a call's arguments (JSON text; a free-form call's raw text), in order."""

    index: int
    arguments: str
    kind: Literal["call_delta"] = "call_delta"


@dataclass(frozen=True, slots=True)
class CallEnd:
    """A call is complete. ``provider_data`` is what the upstream must get back with it (a Gemini
    ``thoughtSignature``), namespaced by wire, as :attr:`ParsedCall.provider_data`."""

    index: int
    provider_data: Mapping[str, Any] | None = None
    kind: Literal["call_end"] = "call_end"


@dataclass(frozen=True, slots=True)
class Finish:
    """The answer ended: why, and its usage (input, output, cached tokens)."""

    reason: FinishReason
    usage: Usage = field(default_factory=Usage)
    kind: Literal["finish"] = "finish"


@dataclass(frozen=True, slots=True)
class Failed:
    """The upstream sent an error event part-way (or broke off): its message, and its HTTP status when it
    gave one."""

    message: str
    status: int | None = None
    kind: Literal["failed"] = "failed"


Delta = Begin | TextDelta | ReasoningDelta | ReasoningEnd | CallBegin | CallDelta | CallEnd | Finish | Failed
#: One stream event as a wire sends it: (SSE event name or None, payload); a payload is a dict sent as
#: JSON, or a string sent as it is (Chat's ``[DONE]``). Ollama's events are NDJSON objects (no name).
Event = tuple[str | None, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Outbound:
    """What a writer needs to know about the agent it writes for.

    ``model``: the model name the answer reports (the one the agent asked for). ``answer_id``: the
    answer's own id in the agent's wire (``msg_...``, ``resp_...``, ``chatcmpl-...``), from the caller,
    deterministic. ``thinking``: the agent asked to see reasoning (an Anthropic ``thinking`` setting, a
    Responses ``reasoning`` setting, Gemini ``includeThoughts``, Ollama ``think``); without it no reasoning
    is shown. ``seal``: the opaque token that stands for a piece of reasoning on the agent's side (design
    50); ``call_id``: the id the agent sees for the answer's call ``index`` (the upstream's id, or None,
    and the call's name in), valid for the agent's wire.
    """

    model: str
    answer_id: str
    thinking: bool = False
    seal: Callable[[Reasoning], str] = field(default=lambda piece: "")
    call_id: Callable[[int, str | None, str], str] = field(
        default=lambda index, upstream, name: upstream or ""
    )
    #: Seconds since the epoch the answer is stamped with (``created``): from the caller, so bytes are stable.
    created: int = 0
    #: The agent's request asked for the usage as its own last event (Chat's
    #: ``stream_options.include_usage``); a writer whose wire always sends the usage ignores it.
    usage_chunk: bool = True


class DeltaReader(Protocol):
    """Reads one upstream stream, event by event, into deltas."""

    def feed(self, event: Any) -> list[Delta]:
        """The deltas one decoded event carries (``[]`` for events that carry none)."""
        ...

    def finish(self) -> list[Delta]:
        """What is still due when the stream has ended (a :class:`Finish` if the stream's own final event
        was not seen: ``error``, with the :class:`Failed` before it naming what was missing)."""
        ...


class DeltaWriter(Protocol):
    """Writes deltas as one wire's stream events."""

    notes: list[str]
    """What this wire could not carry, one line each (filled as the deltas come)."""

    def write(self, delta: Delta) -> list[Event]:
        """The events ``delta`` becomes (``[]`` while a wire waits for more, e.g. Chat's usage chunk)."""
        ...

    def close(self) -> list[Event]:
        """The events that end the stream (after a :class:`Finish` or :class:`Failed`; a stream closed
        without either is ended as failed)."""
        ...


@dataclass(frozen=True, slots=True)
class Bridge:
    """One wire's side of the translation: reading its streams, writing its streams and whole answers."""

    reader: Callable[[], DeltaReader]
    writer: Callable[[Outbound], DeltaWriter]
    body: Callable[[Reply, Outbound], tuple[dict[str, Any], list[str]]]
    """A whole reply as this wire's answer body, and the notes of what it could not carry. The reply's
    ``finish_reason`` is in neutral words (:data:`FinishReason`): see :func:`neutral_reply`."""
    reason: Callable[[str | None, bool], FinishReason] | None = None
    """This wire's own finish reason (``max_tokens``, ``MAX_TOKENS``, ``length``...) in neutral words,
    given whether the answer made calls: what its ``parse_response`` leaves raw. None: read as
    :func:`generic_reason` reads it."""


def generic_reason(raw: str | None, calls: bool) -> FinishReason:
    """A finish reason in neutral words by its common spellings (for a wire that names no mapping)."""
    word = (raw or "").lower()
    if word in ("length", "max_tokens", "max_output_tokens"):
        return "length"
    if word in ("refusal", "content_filter", "safety"):
        return "refusal"
    if word == "error":
        return "error"
    return "tool_calls" if calls else "stop"


def neutral_reply(reply: Reply, bridge: Bridge) -> Reply:
    """``reply`` (as its wire's ``parse_response`` read it) with its finish reason in neutral words, for
    another wire's :attr:`Bridge.body`."""
    read = bridge.reason or generic_reason
    return replace(reply, finish_reason=read(reply.finish_reason, bool(reply.calls)))


# -- between replies and deltas --------------------------------------------------------------------------


def _call_arguments(call: ParsedCall) -> str:
    if call.kind == "custom" or isinstance(call.input, str):
        return call.input if isinstance(call.input, str) else jsonenc.dumps(call.input)
    return jsonenc.dumps(call.input)


def reply_deltas(reply: Reply, reason: FinishReason | None = None) -> list[Delta]:
    """A whole reply as the deltas a stream of it would carry: its pieces in order (reasoning, words),
    then its calls, then the finish (``reason``, else ``tool_calls`` when it made calls, else ``stop``)."""
    out: list[Delta] = [Begin(reply.model)]
    said = reply.said or ((Text(reply.text),) if reply.text else ())
    for piece in said:
        if isinstance(piece, Reasoning):
            if piece.text:
                out.append(ReasoningDelta(piece.text))
            out.append(ReasoningEnd(piece.text, piece.data))
        elif isinstance(piece, Text) and (piece.text or piece.data):
            out.append(TextDelta(piece.text, piece.data))
        elif isinstance(piece, ServerTool):
            continue  # a hosted tool's run belongs to its provider; the writer has nothing to show
    for i, call in enumerate(reply.calls):
        out.append(CallBegin(i, call.name, call.call_id, call.kind))
        out.append(CallDelta(i, _call_arguments(call)))
        out.append(CallEnd(i, call.provider_data))
    out.append(Finish(reason or ("tool_calls" if reply.calls else "stop"), reply.usage))
    return out


@dataclass(slots=True)
class _Collecting:
    text: list[str] = field(default_factory=list)
    said: list[Reasoning | Text] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, list[Any]] = field(default_factory=dict)


def collect(deltas: Sequence[Delta]) -> Reply:
    """The reply a sequence of deltas makes (the inverse of :func:`reply_deltas`: what a stream
    accumulator rebuilds); a call's arguments that are not a JSON object stay text, with ``input_error``."""
    c = _Collecting()
    model: str | None = None
    reason: str | None = None
    usage = Usage()
    done: list[ParsedCall] = []
    for d in deltas:
        if isinstance(d, Begin):
            model = d.model or model
        elif isinstance(d, TextDelta):
            c.text.append(d.text)
            if c.said and isinstance(c.said[-1], Text):
                prev = c.said[-1]  # a signature stays with the words it came among (Gemini's last part)
                c.said[-1] = Text(prev.text + d.text, prev.data or d.data)
            else:
                c.said.append(Text(d.text, d.data))
        elif isinstance(d, ReasoningDelta):
            c.reasoning.append(d.text)
        elif isinstance(d, ReasoningEnd):
            c.said.append(Reasoning(d.text or "".join(c.reasoning), d.data))
            c.reasoning = []
        elif isinstance(d, CallBegin):
            c.calls[d.index] = [d.name, d.call_id, d.call_kind, []]
        elif isinstance(d, CallDelta):
            c.calls[d.index][3].append(d.arguments)
        elif isinstance(d, CallEnd):
            name, cid, kind, parts = c.calls.pop(d.index)
            done.append(_parsed(name, cid, kind, "".join(parts), d.provider_data))
        elif isinstance(d, Finish):
            reason, usage = d.reason, d.usage
        elif isinstance(d, Failed):
            reason = "error"
    return Reply("".join(c.text), tuple(done), reason, usage, None, model, tuple(c.said))


def _parsed(
    name: str, cid: str | None, kind: CallKind, args: str, data: Mapping[str, Any] | None
) -> ParsedCall:
    if kind == "custom":
        return ParsedCall(name, args, cid, data, kind="custom")
    try:
        value = jsonenc.loads(args) if args.strip() else {}
    except ValueError as exc:
        return ParsedCall(name, args, cid, data, input_error=f"the arguments are not JSON: {exc}")
    if not isinstance(value, dict):
        return ParsedCall(name, args, cid, data, input_error="the arguments are not a JSON object")
    return ParsedCall(name, value, cid, data)


# -- the opaque reasoning token (design 50) --------------------------------------------------------------

#: Every token of ours starts so: the proxy recognises it in an agent's request and never forwards it.
TOKEN_PREFIX = "toolreplay.r1."


def seal(issuer: Issuer, piece: Reasoning) -> str:
    """The opaque token that stands for ``piece`` (issued by ``issuer``) on an agent's wire: a pure
    function of the two, so the same stored conversation shows the same tokens on every run."""
    data = jsonenc.dumps(piece.data) if piece.data is not None else ""
    digest = hashlib.sha256("\x1f".join([*issuer.as_json().values(), piece.text, data]).encode()).digest()
    return TOKEN_PREFIX + base64.urlsafe_b64encode(digest).decode().rstrip("=")


#: A token in its base64 form starts so (the base64 of ``toolreplay.r1`` and the first bits of ``.``).
_BASE64_PREFIX = base64.urlsafe_b64encode(TOKEN_PREFIX.encode())[:16].decode()


def base64_token(token: str) -> str:
    """``token`` as URL-safe base64 text, for a wire whose clients hold a signature as bytes: Gemini's
    ``thoughtSignature`` is protobuf ``bytes``, which google-genai decodes from base64 when it reads an
    answer (refusing anything else) and encodes back, URL-safe, when it sends the history. A token's 57
    characters encode without padding, so the text comes back as it was sent."""
    return base64.urlsafe_b64encode(token.encode("ascii")).decode("ascii")


def token_of(value: Any) -> str | None:
    """The token ``value`` is, as sent or in its base64 form (:func:`base64_token`, standard or URL-safe
    alphabet, padded or not); None when it is none of ours."""
    if not isinstance(value, str):
        return None
    if value.startswith(TOKEN_PREFIX):
        return value
    if not value.replace("+", "-").replace("/", "_").startswith(_BASE64_PREFIX):
        return None
    try:
        raw = base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_") + "=" * (-len(value) % 4))
        text = raw.decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return None
    return text if text.startswith(TOKEN_PREFIX) else None


def is_token(value: Any) -> bool:
    """Whether ``value`` (a signature or ``encrypted_content`` an agent sent back) is a token of ours, as
    sent or in its base64 form."""
    return token_of(value) is not None


__all__ = [
    "FINISH_REASONS",
    "TOKEN_PREFIX",
    "Begin",
    "Bridge",
    "CallBegin",
    "CallDelta",
    "CallEnd",
    "Delta",
    "DeltaReader",
    "DeltaWriter",
    "Event",
    "Failed",
    "Finish",
    "FinishReason",
    "Outbound",
    "ReasoningDelta",
    "ReasoningEnd",
    "TextDelta",
    "base64_token",
    "collect",
    "generic_reason",
    "is_token",
    "neutral_reply",
    "reply_deltas",
    "seal",
    "token_of",
]

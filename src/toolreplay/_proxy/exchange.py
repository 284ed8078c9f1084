"""One request and its answer as the proxy saw them, handed to the recorder once the answer has ended,
and the answer read back (whole, or its stream's events assembled by the wire's own parser)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ToolreplayError
from toolreplay._history import History
from toolreplay._steps import Issuer
from toolreplay.wires import get_wire
from toolreplay.wires.bridge import Delta, collect
from toolreplay.wires.contract import Framing, Wire
from toolreplay.wires.reply import Reply


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """What one request and its answer were (never a key: no header but the agent's name and session)."""

    started: float
    """Wall time the request arrived (seconds since the epoch)."""
    wire: str
    kind: str
    path: str
    model: str | None
    upstream: str
    agent: str
    session: str | None
    body: Any
    """The request's JSON as the agent sent it; None for a model request's until the recorder's thread reads
    it from ``received`` (the event loop only checks it; bytes wait in the queue, not their objects), and
    for a translated one (its ``history`` is what is recorded: the queue holds no body's objects, which
    the interpreter's collector would walk again and again while exchanges wait, design 54)."""
    request_bytes: int
    status: int
    answer: bytes = b""
    """The answer's bytes as they came (empty when not kept: pass-through only)."""
    answer_encoding: str = ""
    answer_bytes: int = 0
    streamed: bool = False
    cut: str | None = None
    """Why the answer ended early (the upstream's stream broke off, the agent went away), or None."""
    added_ms: float = 0.0
    refused: str | None = None
    """The proxy answered itself (too large, not JSON...): the message, and the upstream was not called."""
    repairs: tuple[str, ...] = ()
    received: bytes = field(default=b"", repr=False)
    """The request body exactly as the agent sent it (before any repair): the log names its digest, so a
    test can prove what reached the upstream is what the agent sent."""
    # A translated exchange (a model route, design 47): what the recorder stores in place of reading the
    # body and the answer again on the agent's wire.
    history: History | None = field(default=None, repr=False)
    """The request's history merged with the stored conversation (the request as recorded)."""
    reply: Reply | None = field(default=None, repr=False)
    """The upstream's answer, read (its calls under the ids the agent saw); for a cut one, what came."""
    issuer: Issuer | None = None
    """Who answered: the routed vessel's wire, the host of its base URL, its model."""
    route: str | None = None
    """The route that took the request (its label)."""
    vessel: str | None = None
    notes: tuple[str, ...] = ()
    """What the translation could not carry, one line each."""
    answer_id: str | None = None
    """The id the agent was given for the answer, kept with the reply where its wire names earlier
    answers by id (Responses' ``previous_response_id``, design 55)."""
    request_encoding: str = ""
    """The request's ``Content-Encoding`` (``received`` is read through it)."""
    heads: tuple[str, ...] | None = field(default=None, repr=False)
    """A translated request's :func:`~toolreplay._proxy.matching.prefix_heads` (its history's), worked
    out on the way: the recorder does not work them out again."""
    ticket: int | None = None
    """The routed path's memory of this exchange (design 54), told what the recorder made of it."""
    framing: Framing | None = None
    """How a streamed answer passed through was framed, as the request asked (Gemini's REST stream without
    ``alt=sse``: one JSON array); None: the wire's own."""


def model_of(body: Any) -> str | None:
    """The model a request body names (None when it names none)."""
    model = body.get("model") if isinstance(body, Mapping) else None
    return model if isinstance(model, str) else None


@dataclass(frozen=True, slots=True)
class AnswerRead:
    """The answer read back: the reply when it is whole, and else the words the agent saw before it ended."""

    reply: Reply | None
    seen_text: str = ""
    problem: str | None = None
    partial: Reply | None = None
    """For an answer that broke off: what it finished before it did (each call whose end came, the words
    and reasoning before), read by the wire's bridge; None when nothing can be read."""


def translated_answer(ex: Exchange) -> AnswerRead | None:
    """A translated exchange's answer as the recorder stores it (read on the way: nothing to parse)."""
    if ex.cut:
        return AnswerRead(None, ex.reply.text if ex.reply is not None else "", ex.cut, ex.reply)
    return AnswerRead(ex.reply) if ex.reply is not None and ex.status == 200 else None


_EOL = re.compile(rb"\r\n|\r|\n")


def sse_payloads(data: bytes) -> Iterator[str]:
    """The ``data`` payloads of an SSE stream, event by event (an unfinished last event is dropped)."""
    buf: list[bytes] = []
    for line in _EOL.split(data):
        if not line:
            if buf:
                yield b"\n".join(buf).decode("utf-8", "replace")
                buf = []
            continue
        if line.startswith(b":"):
            continue
        name, _, value = line.partition(b":")
        if name == b"data":
            buf.append(value[1:] if value.startswith(b" ") else value)


def ndjson_payloads(data: bytes) -> Iterator[str]:
    for line in _EOL.split(data):
        if line.strip():
            yield line.decode("utf-8", "replace")


def array_payloads(data: bytes) -> Iterator[str]:
    """The elements of a stream framed as one JSON array (Gemini's REST stream), element by element; an
    array cut off yields what it finished (an unfinished last element is dropped, as in SSE)."""
    text, decoder = data.decode("utf-8", "replace"), json.JSONDecoder()
    at = _skip(text, 0)
    if not text.startswith("[", at):
        return
    at += 1
    while (at := _skip(text, at)) < len(text) and text[at] != "]":
        try:
            _value, end = decoder.raw_decode(text, at)  # where the element ends (read again as it comes)
        except ValueError:
            return  # cut off inside it
        yield text[at:end]
        at = _skip(text, end)
        at += text.startswith(",", at)


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def read_answer(ex: Exchange, data: bytes) -> AnswerRead:
    """``data`` (the decompressed answer) parsed by the exchange's wire."""
    wire = get_wire(ex.wire)
    if not ex.streamed:
        try:
            body = jsonenc.loads(data)
        except ValueError:
            return AnswerRead(None, "", "the answer is not JSON")
        if not isinstance(body, Mapping):
            return AnswerRead(None, "", "the answer is not a JSON object")
        try:
            return AnswerRead(wire.parse_response(body))
        except (ToolreplayError, ValueError, TypeError) as exc:  # the parser's error names what is wrong
            return AnswerRead(None, "", f"the answer cannot be read: {exc}")
    framing = ex.framing or (wire.http.framing if wire.http is not None else "sse")
    read = {"ndjson": ndjson_payloads, "json-array": array_payloads}.get(framing, sse_payloads)
    payloads = list(read(data))
    parser = wire.stream_parser()
    seen: list[str] = []
    try:
        for payload in payloads:
            if payload.strip() == "[DONE]":
                parser.mark_done()
                continue
            seen.append(parser.feed(jsonenc.loads(payload)))
        return AnswerRead(parser.finish(), "".join(seen))
    except (ToolreplayError, ValueError, TypeError) as exc:  # a cut stream, an error event: words kept
        return AnswerRead(None, "".join(seen), str(exc) or type(exc).__name__, _finished(wire, payloads))


def _finished(wire: Wire, payloads: Sequence[str]) -> Reply | None:
    """What a stream that broke off had finished, by the wire's bridge reader: a call counts once its
    end came (:func:`~toolreplay.wires.bridge.collect` keeps no unfinished call)."""
    if wire.bridge is None:
        return None
    reader = wire.bridge().reader()
    deltas: list[Delta] = []
    try:
        for payload in payloads:
            text = payload.strip()
            deltas += reader.feed(text if text == "[DONE]" else jsonenc.loads(text))
    except (ToolreplayError, ValueError, TypeError):
        pass  # what was read before the broken event stands
    return collect(deltas)


__all__ = [
    "AnswerRead",
    "Exchange",
    "array_payloads",
    "model_of",
    "ndjson_payloads",
    "read_answer",
    "sse_payloads",
    "translated_answer",
]

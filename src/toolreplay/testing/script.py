"""What a provider double answers: the scripted items.

A double takes items from its queue (or from a responder callable), one per request that passes its
checks. Items that end in an answer (:class:`Text`, :class:`Calls`, :class:`BrokenArgs`) are rendered in
the wire of the request, streamed or whole as the request asked; the others are faults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolreplay.wires.reply import Usage

Chunking = Literal["tokens", "whole", "empty_first"]


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call the double makes. ``call_id`` None: the double makes one in the wire's style
    (Gemini: none). ``signature``: Gemini's ``thoughtSignature`` (None: the double signs the first call of
    each answer, as Gemini 3 does)."""

    name: str
    input: Mapping[str, Any] = field(default_factory=lambda: {})
    call_id: str | None = None
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class Text:
    """A text answer. ``usage`` None: counts derived from the sizes; ``reasoning``: thinking text sent
    the wire's way (Chat ``reasoning_content``, Responses reasoning item: its summary and
    ``encrypted_content`` when the request asks for them, as OpenAI sends them,
    Anthropic signed thinking block, Gemini thought part, Ollama ``thinking``)."""

    text: str
    usage: Usage | None = None
    reasoning: str | None = None
    #: How this answer's stream deltas are cut: ``tokens`` (token-sized, the default), ``whole`` (one
    #: delta), ``empty_first`` (an empty delta, then tokens); None: the double's own chunking.
    chunking: Chunking | None = None


@dataclass(frozen=True, slots=True)
class Calls:
    """An answer with tool calls (several: parallel calls), and optionally text before them."""

    calls: Sequence[Call]
    text: str = ""
    usage: Usage | None = None
    reasoning: str | None = None
    #: How this answer's stream deltas are cut: ``tokens`` (token-sized, the default), ``whole`` (one
    #: delta), ``empty_first`` (an empty delta, then tokens); None: the double's own chunking.
    chunking: Chunking | None = None


@dataclass(frozen=True, slots=True)
class BrokenArgs:
    """A call whose arguments are not a JSON object: ``raw`` is sent as the arguments text (on wires
    whose arguments are objects: as a string where the object belongs, or as broken ``partial_json``)."""

    name: str
    raw: str = '{"action": "close", "id": 12'
    text: str = ""
    call_id: str | None = None
    #: How this answer's stream deltas are cut: ``tokens`` (token-sized, the default), ``whole`` (one
    #: delta), ``empty_first`` (an empty delta, then tokens); None: the double's own chunking.
    chunking: Chunking | None = None


@dataclass(frozen=True, slots=True)
class Error:
    """An HTTP error in the wire's own error shape. ``message`` None: the provider's usual text for the
    status. ``retry_after``: the ``Retry-After`` header (seconds, or an HTTP date as a string)."""

    status: int
    message: str | None = None
    retry_after: float | str | None = None


@dataclass(frozen=True, slots=True)
class Hang:
    """Say nothing for ``seconds`` (then close), before answering at all or after ``after_events`` of a
    stream of ``then``: the client's timeout fires."""

    seconds: float = 30.0
    after_events: int | None = None
    then: Text | Calls = Text("an answer that stalls")


@dataclass(frozen=True, slots=True)
class CutStream:
    """Send the first ``after_events`` events of ``then``'s stream, then close the connection cleanly,
    before the final event. A non-streamed request gets part of its body (fewer bytes than promised)."""

    after_events: int = 1
    then: Text | Calls = Text("an answer that never finishes")


@dataclass(frozen=True, slots=True)
class Reset:
    """Reset the connection (TCP RST): before answering, or after ``after_events`` events of a stream."""

    after_events: int | None = None
    then: Text | Calls = Text("an answer cut by a reset")


@dataclass(frozen=True, slots=True)
class StreamError:
    """An error event inside a 200 stream after ``after_events`` events of ``then`` (Anthropic's
    ``overloaded_error`` mid-stream is the common case), in the wire's own error-event shape. ``kind``:
    ``overloaded`` (a server error), ``rate_limit`` or ``invalid_request``. A non-streamed request gets
    the matching HTTP error (503, 429 or 400)."""

    message: str = "Overloaded"
    kind: Literal["overloaded", "rate_limit", "invalid_request"] = "overloaded"
    after_events: int = 1
    then: Text | Calls = Text("an answer interrupted by an error event")


@dataclass(frozen=True, slots=True)
class NotJSON:
    """A 200 answer that is not JSON (a proxy's HTML page)."""

    body: str = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    content_type: str = "text/html"


Item = Text | Calls | BrokenArgs | Error | Hang | CutStream | Reset | StreamError | NotJSON

__all__ = [
    "BrokenArgs",
    "Call",
    "Calls",
    "Chunking",
    "CutStream",
    "Error",
    "Hang",
    "Item",
    "NotJSON",
    "Reset",
    "StreamError",
    "Text",
]

"""A Responses stream read into the bridge's neutral deltas as it arrives (design 51).

Items are followed by their ``output_index``, never by their ``item_id``: GitHub Copilot's backend gives
every event of one item a new id (``vercel-ai/github-copilot-id-rotation``). What a server sends only in a
``.done`` event (LM Studio streams no argument deltas; OpenRouter may send the text only in
``output_text.done``) is caught up there: the part not streamed yet is sent as one more delta, so the
deltas always add up to the finished item. A reasoning item ends as :class:`ReasoningEnd` with the item
as ``output_item.done`` gives it, as :func:`~.response.said_item` keeps it; hosted-tool items (web search,
image generation, MCP...) have no neutral delta: they are named in :attr:`ResponsesReader.notes` (the
recording keeps them whole).

The final event (``response.completed`` / ``.incomplete``) gives the usage and the finish: ``length`` for
``max_output_tokens``, ``refusal`` for ``content_filter`` or a refusal part, else ``tool_calls`` when the
answer made calls, else ``stop``. ``response.failed`` and ``error`` end the answer as :class:`Failed`
then ``Finish("error")``. Items the final object lists but the stream never finished are read from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolreplay.model import CallKind
from toolreplay.wires._parse import stream_error, string
from toolreplay.wires.bridge import (
    Begin,
    CallBegin,
    CallDelta,
    CallEnd,
    Delta,
    Failed,
    Finish,
    FinishReason,
    ReasoningDelta,
    ReasoningEnd,
    TextDelta,
)
from toolreplay.wires.openai_responses.response import WIRE, parse_usage, reasoning_text

_CALLS = {"function_call": "arguments", "custom_tool_call": "input"}
_FINAL = ("response.completed", "response.incomplete")
_ENDED = (*_FINAL, "response.failed", "error")
#: The events that carry a piece of an item's text or arguments (in their ``delta``).
_PIECES = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
        "response.function_call_arguments.delta",
        "response.custom_tool_call_input.delta",
    }
)
#: The ``.done`` events that give a call's whole arguments: the part not streamed is caught up at once (a
#: message's text, perhaps in several parts, is caught up when its item is done).
_WHOLE = {
    "response.function_call_arguments.done": "arguments",
    "response.custom_tool_call_input.done": "input",
}


@dataclass(slots=True)
class _Item:
    """One output item being read: its kind, its call index (calls only), what it has streamed so far."""

    kind: str
    id: str | None = None
    call: int | None = None
    streamed: str = ""
    summary_index: int | None = None
    done: bool = False


@dataclass(slots=True)
class ResponsesReader:
    """Fed ``response.*`` payloads one by one (OpenRouter's ``[DONE]`` string is taken and ignored)."""

    notes: list[str] = field(default_factory=list)
    _items: dict[int, _Item] = field(default_factory=dict)
    _calls: int = 0
    _begun: bool = False
    _ended: bool = False
    _refused: bool = False

    def feed(self, event: Any) -> list[Delta]:
        if not isinstance(event, Mapping) or self._ended:
            return []
        kind = event.get("type")
        out: list[Delta] = [] if self._begun else [self._begin(event)]
        if kind in _PIECES:
            out += self._piece(event, str(kind))
        elif kind in _WHOLE:
            out += self._catch_up(self._item(event), event.get(_WHOLE[str(kind)]))
        elif kind == "response.output_item.added":
            out += self._added(_index(event, len(self._items)), _mapping(event.get("item")))
        elif kind == "response.output_item.done":
            out += self._done(_index(event, len(self._items)), _mapping(event.get("item")))
        elif kind in _ENDED:
            out += self._end(str(kind), event)
        return out

    def finish(self) -> list[Delta]:
        if self._ended:
            return []
        self._ended = True
        return [Failed("the stream ended before response.completed"), Finish("error")]

    # -- the items ----------------------------------------------------------------------------------

    def _begin(self, event: Mapping[str, Any]) -> Begin:
        self._begun = True
        response = _mapping(event.get("response"))
        return Begin(string(response.get("model")), string(response.get("id")))

    def _item(self, event: Mapping[str, Any]) -> _Item | None:
        index = event.get("output_index")
        return self._items.get(index) if isinstance(index, int) else None

    def _added(self, index: int, item: Mapping[str, Any]) -> list[Delta]:
        kind = str(item.get("type") or "")
        entry = _Item(kind, string(item.get("id")))
        self._items[index] = entry
        if kind not in _CALLS:
            if kind not in ("message", "reasoning"):
                self.notes.append(
                    f"output[{index}]: a {kind or 'untyped'} item has no place in a neutral answer"
                )
            return []
        entry.call = self._calls
        self._calls += 1
        call_kind: CallKind = "custom" if kind == "custom_tool_call" else "function"
        name = str(item.get("name") or "")
        begin = CallBegin(entry.call, name, string(item.get("call_id")), call_kind)
        return [begin, *self._catch_up(entry, item.get(_CALLS[kind]))]

    def _piece(self, event: Mapping[str, Any], kind: str) -> list[Delta]:
        item = self._item(event)
        text = event.get("delta")
        if item is None or item.done or not isinstance(text, str) or not text:
            return []
        if kind == "response.refusal.delta":
            self._refused = True
        if item.kind == "reasoning":
            return [self._reasoning_piece(item, event.get("summary_index"), text)]
        return self._stream(item, text)

    def _reasoning_piece(self, item: _Item, summary: Any, text: str) -> ReasoningDelta:
        # summary parts are joined with a blank line in the finished text (reasoning_text)
        if isinstance(summary, int) and item.summary_index not in (None, summary) and item.streamed:
            text = "\n\n" + text
        item.summary_index = summary if isinstance(summary, int) else item.summary_index
        item.streamed += text
        return ReasoningDelta(text)

    def _stream(self, item: _Item, text: str) -> list[Delta]:
        item.streamed += text
        if item.kind == "reasoning":
            return [ReasoningDelta(text)]
        if item.call is not None:
            return [CallDelta(item.call, text)]
        return [TextDelta(text)] if item.kind == "message" else []

    def _catch_up(self, item: _Item | None, whole: Any) -> list[Delta]:
        """The part of ``whole`` not streamed yet (when what was streamed is its beginning)."""
        if item is None or item.done or not isinstance(whole, str) or len(whole) <= len(item.streamed):
            return []
        if not whole.startswith(item.streamed):
            return []
        return self._stream(item, whole[len(item.streamed) :])

    def _done(self, index: int, item: Mapping[str, Any] | None) -> list[Delta]:
        """An item finished: as ``item`` gives it, or (None) as far as it streamed."""
        entry = self._items.get(index)
        out: list[Delta] = []
        if item is not None and (entry is None or entry.kind != item.get("type")):
            out += self._added(index, item)
            entry = self._items[index]
        if entry is None or entry.done:
            return out
        whole = item or {}
        if entry.kind == "message":
            out += self._catch_up(entry, _message_text(whole))
        elif entry.kind == "reasoning":
            text = reasoning_text(whole) if item is not None else entry.streamed
            out += self._catch_up(entry, text)
            out.append(ReasoningEnd(text, {WIRE: dict(item)} if item is not None else None))
        elif entry.call is not None:
            out += self._catch_up(entry, whole.get(_CALLS[entry.kind]))
            item_id = whole.get("id")
            data = {WIRE: {"item_id": item_id}} if isinstance(item_id, str) and item_id else None
            out.append(CallEnd(entry.call, data))
        entry.done = True
        return out

    # -- the end ------------------------------------------------------------------------------------

    def _end(self, kind: str, event: Mapping[str, Any]) -> list[Delta]:
        self._ended = True
        response = _mapping(event.get("response"))
        usage = parse_usage(response.get("usage"))
        if kind not in _FINAL:
            return [_failed(event), Finish("error", usage)]
        output = [_mapping(raw) for raw in _list(response.get("output"))]
        out: list[Delta] = []
        if not self._items:  # a server that sends the items only in the final object
            for i, item in enumerate(output):
                out += self._done(i, item)
        # an item left unfinished ends as the final object gives it (found by its id: a hidden item,
        # web search's, takes an output_index the stream never shows, so positions do not match)
        final = {item.get("id"): item for item in output if isinstance(item.get("id"), str)}
        for index, entry in sorted(self._items.items()):
            if not entry.done:
                out += self._done(index, final.get(entry.id))
        return [*out, Finish(self._reason(response), usage)]

    def _reason(self, response: Mapping[str, Any]) -> FinishReason:
        details = _mapping(response.get("incomplete_details"))
        if response.get("status") == "incomplete":
            return "refusal" if details.get("reason") == "content_filter" else "length"
        if self._refused:
            return "refusal"
        return "tool_calls" if self._calls else "stop"


def _failed(event: Mapping[str, Any]) -> Failed:
    """The error's own message, and the status its type or code stands for (429 for a rate limit...)."""
    error: Any = event if event.get("type") == "error" else _mapping(event.get("response")).get("error")
    error = _mapping(error)
    message = error.get("message")
    text = message if isinstance(message, str) and message else "the response failed"
    return Failed(text, stream_error(WIRE, event).status)


def _message_text(item: Mapping[str, Any]) -> str:
    """A message item's text and refusal parts, as the whole-answer parser reads them."""
    parts = item.get("content")
    if isinstance(parts, str):
        return parts
    out = []
    for part in map(_mapping, parts if isinstance(parts, list) else []):
        text = part.get("refusal") if part.get("type") == "refusal" else part.get("text")
        if part.get("type") in ("output_text", "text", "refusal") and isinstance(text, str):
            out.append(text)
    return "".join(out)


def _index(event: Mapping[str, Any], default: int) -> int:
    index = event.get("output_index")
    return index if isinstance(index, int) and not isinstance(index, bool) else default


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


__all__ = ["ResponsesReader"]

"""OpenAI Responses answers (``response`` objects and the ``response.*`` stream events): OpenAI, Codex, Grok.

Read: the ``output`` items in order: ``message`` (``output_text`` / ``refusal`` parts), ``function_call``
(``call_id``, ``name``, JSON-string ``arguments``), ``custom_tool_call`` (a free-form call: its raw
``input`` text, ``ParsedCall.kind`` ``custom``), ``reasoning``. ``finish_reason`` is the response
``status`` (``completed``), or ``incomplete:<reason>`` from ``incomplete_details``. Usage:
``input_tokens``, ``output_tokens``, cached from ``input_tokens_details.cached_tokens``.

Provider data to echo back: message level, under ``"openai-responses"``: ``reasoning``, the reasoning
items as given (``id``, ``summary``, ``encrypted_content`` when ``include`` asked for it; with
``store:false`` the encrypted content is the only way to hand reasoning back), and ``other_items`` for
output items of kinds this parser does not model (kept, not dropped). Call level, under
``"openai-responses"``: ``item_id``, the ``fc_...`` (``ctc_...``) id of the call item (sending it back
demands its paired reasoning item: "provided without its required 'reasoning' item", so renderers use it only
together with ``reasoning``).

Streaming: ``response.output_text.delta`` gives text; ``response.output_item.done`` gives each finished
item; the final event is ``response.completed`` or ``response.incomplete`` (its ``response`` is the whole
object; when its ``output`` is empty, as the Codex backend sends it, the items collected from
``output_item.done`` stand in). ``response.failed`` and ``error`` events raise the provider's error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from toolreplay.model import Piece, Reasoning, ServerTool, Text
from toolreplay.wires._parse import (
    count,
    detail_count,
    ended_early,
    items,
    join_runs,
    mapping,
    missing,
    parsed_call,
    provider_data,
    stream_error,
    string,
    text_of,
)
from toolreplay.wires.reply import ParsedCall, Reply, Usage

WIRE = "openai-responses"
_FINAL = ("response.completed", "response.incomplete")


def parse_response(body: Mapping[str, Any]) -> Reply:
    """A whole ``response`` object as a :class:`Reply`."""
    body = mapping(body, WIRE, "the body")
    if "output" not in body:
        if body.get("error"):
            raise stream_error(WIRE, body)
        missing(WIRE, "output", body)
    if body.get("status") == "failed":
        raise stream_error(WIRE, {"error": body.get("error") or "response failed"})
    runs: list[str] = [""]
    calls: list[ParsedCall] = []
    reasoning: list[Any] = []
    other: list[Any] = []
    said: list[Piece] = []
    for i, raw in enumerate(items(body["output"], WIRE, "output")):
        item = mapping(raw, WIRE, f"output[{i}]")
        kind = item.get("type")
        if kind == "message":
            piece = _message_text(item, i)
            runs[-1] += piece
            said.append(Text(piece))
        elif kind == "function_call":
            calls.append(_call(item, i))
            runs.append("")
        elif kind == "custom_tool_call":
            calls.append(_custom_call(item, i))
            runs.append("")
        else:
            # reasoning items (with encrypted_content when asked for) and hosted-tool items
            # (web_search_call, ...): kept verbatim in order, replayed only to their issuer (design 17)
            said.append(said_item(item))
            (reasoning if kind == "reasoning" else other).append(dict(item))
    return Reply(
        text=join_runs(runs),
        calls=tuple(calls),
        finish_reason=_finish(body),
        usage=parse_usage(body.get("usage")),
        provider_data=provider_data(WIRE, {"reasoning": reasoning, "other_items": other}),
        model=string(body.get("model")),
        said=tuple(said),
    )


def said_item(item: Mapping[str, Any]) -> Reasoning | ServerTool:
    """A reasoning item or a hosted-tool item (the provider ran the tool), verbatim for its issuer."""
    if item.get("type") == "reasoning":
        return Reasoning(reasoning_text(item), {WIRE: dict(item)})
    return ServerTool(str(item.get("type") or ""), {WIRE: dict(item)})


def reasoning_text(item: Mapping[str, Any]) -> str:
    """A reasoning item's readable text: its summary texts joined, else its ``reasoning_text`` content
    (what LM Studio and gpt-oss servers stream instead of a summary); empty for opaque items."""
    summary = _texts(item.get("summary"), "summary_text")
    return summary or _texts(item.get("content"), "reasoning_text")


def _texts(parts: Any, kind: str) -> str:
    if not isinstance(parts, list):
        return ""
    found = (p.get("text") for p in parts if isinstance(p, Mapping) and p.get("type", kind) == kind)
    return "\n\n".join(str(t) for t in found if t)


def _message_text(item: Mapping[str, Any], i: int) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    out: list[str] = []
    for j, raw in enumerate(items(content, WIRE, f"output[{i}].content")):
        part = mapping(raw, WIRE, f"output[{i}].content[{j}]")
        if part.get("type") in ("output_text", "text"):
            out.append(text_of(part.get("text"), WIRE, f"output[{i}].content[{j}].text"))
        elif part.get("type") == "refusal":
            out.append(text_of(part.get("refusal"), WIRE, f"output[{i}].content[{j}].refusal"))
    return "".join(out)


def _call(item: Mapping[str, Any], i: int) -> ParsedCall:
    item_id = item.get("id")
    pdata = {WIRE: {"item_id": item_id}} if isinstance(item_id, str) and item_id else None
    return parsed_call(
        WIRE, item.get("name"), item.get("arguments"), item.get("call_id"), f"output[{i}].name", pdata
    )


def _custom_call(item: Mapping[str, Any], i: int) -> ParsedCall:
    """A free-form call: its raw ``input`` text is its whole input (never an arguments error)."""
    call = _call({**item, "arguments": "{}"}, i)
    raw = text_of(item.get("input", ""), WIRE, f"output[{i}].input")
    return replace(call, input=raw, kind="custom")


def _finish(body: Mapping[str, Any]) -> str | None:
    status = body.get("status")
    if status == "incomplete":
        details = body.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return f"incomplete:{reason}" if reason else "incomplete"
    return status if isinstance(status, str) else None


def parse_usage(usage: Any) -> Usage:
    """Responses ``usage`` with ``input_tokens_details.cached_tokens``."""
    if not isinstance(usage, Mapping):
        return Usage()
    cached = detail_count(usage, "input_tokens_details")
    return Usage(count(usage.get("input_tokens")), count(usage.get("output_tokens")), cached)


class StreamParser:
    """Fed ``response.*`` event payloads one by one; :meth:`finish` gives the same Reply as the object."""

    def __init__(self) -> None:
        self._items: dict[int, Any] = {}
        self._final: Mapping[str, Any] | None = None

    def feed(self, event: Mapping[str, Any]) -> str:
        """Take one event; return the new text it carries ('' when none)."""
        event = mapping(event, WIRE, "a stream event")
        kind = event.get("type")
        if kind == "response.output_text.delta":
            return text_of(event.get("delta"), WIRE, "response.output_text.delta.delta")
        if kind == "response.output_item.done":
            index = event.get("output_index")
            item = mapping(event.get("item"), WIRE, "response.output_item.done.item")
            self._items[index if isinstance(index, int) else len(self._items)] = item
        elif kind in _FINAL:
            self._final = mapping(event.get("response"), WIRE, f"{kind}.response")
        elif kind in ("response.failed", "error"):
            raise stream_error(WIRE, event)
        return ""

    def mark_done(self) -> None:
        """This wire sends no end marker besides its final event; nothing to do."""

    def finish(self) -> Reply:
        """The whole answer; ConnectionFault when the stream ended before ``response.completed``."""
        if self._final is None:
            raise ended_early(WIRE, "response.completed")
        body = dict(self._final)
        if not body.get("output") and self._items:
            body["output"] = [item for _, item in sorted(self._items.items())]
        body.setdefault("output", [])
        return parse_response(body)


__all__ = ["WIRE", "StreamParser", "parse_response", "parse_usage", "reasoning_text", "said_item"]

"""The OpenAI Responses double (a :class:`toolreplay.wires.contract.Double`): ``response`` objects and the
typed event stream (``response.created`` to ``response.completed``; a call of a tool the request declares
free-form, ``custom``, is a ``custom_tool_call`` item), OpenAI's error objects, and the
request checks with OpenAI's own texts: the model, Codex's ``store``/``stream`` demands, call ids and
their outputs, function-call item ids without their reasoning item.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from toolreplay import jsonenc
from toolreplay.wires.contract import Double
from toolreplay.wires.doubles import (
    ERROR_KINDS,
    Answer,
    Event,
    Rules,
    Splitter,
    as_list,
    as_map,
    token_pieces,
    usage_counts,
)
from toolreplay.wires.openai_chat.errors import error_body as openai_error_body
from toolreplay.wires.openai_responses.rules import lone_reasoning, reasoning_items


def check_responses(body: Mapping[str, Any], rules: Rules) -> str | None:
    """What only the server sees: the model and Codex's demands; the reasoning-item rules are refused
    first (the items are otherwise the wire rules')."""
    if not body.get("model"):
        return "Missing required parameter: 'model'."
    if rules.codex:
        if body.get("store") is not False:
            return "Store must be set to false"
        if body.get("stream") is not True:
            return "Stream must be set to true"
    items = body.get("input")
    if isinstance(items, str):
        return None
    refused = reasoning_items(body) or lone_reasoning(body)  # the wire's rules, with OpenAI's own text
    return refused.provider if refused else None


def _asked(a: Answer) -> tuple[bool, bool]:
    """(a reasoning summary, the encrypted reasoning): OpenAI sends each only when the request asks for it
    (``reasoning.summary``; ``include: ["reasoning.encrypted_content"]``)."""
    reasoning = a.request.get("reasoning")
    summary = isinstance(reasoning, Mapping) and reasoning.get("summary") is not None
    return summary, "reasoning.encrypted_content" in as_list(a.request.get("include"))


def _reasoning_item(a: Answer) -> dict[str, Any]:
    summary, secret = _asked(a)
    item: dict[str, Any] = {"id": f"rs_double{a.seq}", "type": "reasoning"}
    if secret:
        sealed = base64.b64encode((a.reasoning or "").encode("utf-8")).decode("ascii")
        item["encrypted_content"] = f"enc:{sealed}"
    item["summary"] = [{"type": "summary_text", "text": a.reasoning}] if summary else []
    return item


def _responses_items(a: Answer) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [_reasoning_item(a)] if a.reasoning else []
    if a.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_double{a.seq}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": a.text, "annotations": [], "logprobs": []}],
            }
        )
    free = _free_form_tools(a.request)
    for i, c in enumerate(a.calls):
        if c.name in free:  # a free-form tool: the call's text is its input
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": f"ctc_double{a.seq}_{i}",
                    "call_id": c.call_id,
                    "name": c.name,
                    "input": _free_input(c.args),
                    "status": "completed",
                }
            )
            continue
        items.append(
            {
                "type": "function_call",
                "id": f"fc_double{a.seq}_{i}",
                "call_id": c.call_id,
                "name": c.name,
                "arguments": c.arguments,
                "status": "completed",
            }
        )
    return items


def _free_form_tools(request: Mapping[str, Any]) -> frozenset[str]:
    """The names the request declares as free-form (``custom``) tools: their calls are custom calls."""
    return frozenset(
        str(t.get("name")) for t in map(as_map, as_list(request.get("tools"))) if t.get("type") == "custom"
    )


def _free_input(args: Mapping[str, Any] | str) -> str:
    """A scripted call's input as a free-form call's text: a string as it is, ``{"input": text}`` as its
    text (how a free-form call is written where tools take JSON), any other object as its JSON."""
    if isinstance(args, str):
        return args
    text = args.get("input") if len(args) == 1 else None
    return text if isinstance(text, str) else jsonenc.dumps(args)


def _tools(request: Mapping[str, Any]) -> list[Any]:
    # The Response lists the request's tools as the server filled them in (strict and description said).
    out: list[Any] = []
    for raw in as_list(request.get("tools")):
        tool = dict(as_map(raw))
        if tool.get("type") == "function":
            tool.setdefault("description", None)
            tool.setdefault("strict", True)
            tool.setdefault("parameters", None)
        out.append(tool)
    return out


def _echo(a: Answer) -> dict[str, Any]:
    """The request settings every Response object lists (real servers send them on every event)."""
    r = a.request
    return {
        "error": None,
        "incomplete_details": None,
        "instructions": r.get("instructions"),
        "max_output_tokens": r.get("max_output_tokens"),
        "metadata": r.get("metadata") or {},
        "parallel_tool_calls": r.get("parallel_tool_calls", True),
        "previous_response_id": r.get("previous_response_id"),
        "reasoning": r.get("reasoning") or {"effort": None, "summary": None},
        "store": r.get("store", True),
        "temperature": r.get("temperature", 1.0),
        "text": r.get("text") or {"format": {"type": "text"}},
        "tool_choice": r.get("tool_choice", "auto"),
        "tools": _tools(r),
        "top_p": r.get("top_p", 1.0),
        "truncation": r.get("truncation", "disabled"),
        "user": None,
    }


def responses_body(a: Answer, *, status: str = "completed", output: bool = True) -> dict[str, Any]:
    i, o, c = usage_counts(a.usage)
    usage = {
        "input_tokens": i,
        "input_tokens_details": {"cached_tokens": c, "cache_write_tokens": 0},
        "output_tokens": o,
        # reasoning is billed as output: its share of the output count
        "output_tokens_details": {
            "reasoning_tokens": min(o, len(a.reasoning) // 4 + 1) if a.reasoning else 0
        },
        "total_tokens": i + o,
    }
    return {
        "id": f"resp_double{a.seq}",
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": a.model,
        "output": _responses_items(a) if output else [],
        **_echo(a),
        # Real streams carry usage only on response.completed (null on created and in_progress).
        "usage": usage if status == "completed" else None,
    }


def _message_events(ev: Any, index: int, item: dict[str, Any], text: str, cut: Splitter) -> list[Event]:
    at = {"item_id": item["id"], "output_index": index, "content_index": 0}
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    added = {**item, "status": "in_progress", "content": []}
    return [
        ev("response.output_item.added", output_index=index, item=added),
        ev("response.content_part.added", **at, part=part),
        *(ev("response.output_text.delta", **at, delta=p, logprobs=[]) for p in cut(text)),
        ev("response.output_text.done", **at, text=text, logprobs=[]),
        ev("response.content_part.done", **at, part={**part, "text": text}),
    ]


def _call_events(ev: Any, index: int, item: dict[str, Any], cut: Splitter) -> list[Event]:
    at = {"item_id": item["id"], "output_index": index}
    added = {**item, "arguments": "", "status": "in_progress"}
    return [
        ev("response.output_item.added", output_index=index, item=added),
        *(ev("response.function_call_arguments.delta", **at, delta=p) for p in cut(item["arguments"])),
        ev("response.function_call_arguments.done", **at, arguments=item["arguments"]),
    ]


def _custom_call_events(ev: Any, index: int, item: dict[str, Any], cut: Splitter) -> list[Event]:
    """A free-form call streams its text as ``response.custom_tool_call_input.delta`` events, then
    ``.done`` with the whole input (the openai SDK's event types)."""
    at = {"item_id": item["id"], "output_index": index}
    added = {**item, "input": "", "status": "in_progress"}
    return [
        ev("response.output_item.added", output_index=index, item=added),
        *(ev("response.custom_tool_call_input.delta", **at, delta=p) for p in cut(item["input"])),
        ev("response.custom_tool_call_input.done", **at, input=item["input"]),
    ]


def _reasoning_events(ev: Any, index: int, item: dict[str, Any], cut: Splitter) -> list[Event]:
    """The reasoning item opens with an empty summary; each summary part streams as a part added, its text
    in deltas, the text done and the part done (real order, OpenAI's reasoning models)."""
    out = [ev("response.output_item.added", output_index=index, item={**item, "summary": []})]
    for k, part in enumerate(item["summary"]):
        at = {"item_id": item["id"], "output_index": index, "summary_index": k}
        out.append(ev("response.reasoning_summary_part.added", **at, part={**part, "text": ""}))
        out += [ev("response.reasoning_summary_text.delta", **at, delta=p) for p in cut(part["text"])]
        out.append(ev("response.reasoning_summary_text.done", **at, text=part["text"]))
        out.append(ev("response.reasoning_summary_part.done", **at, part=part))
    return out


def responses_events(a: Answer, cut: Splitter = token_pieces) -> list[Event]:
    seq = iter(range(10**6))

    def ev(kind: str, **fields: Any) -> Event:
        return kind, {"type": kind, **fields, "sequence_number": next(seq)}

    opening = responses_body(a, status="in_progress", output=False)
    out = [ev("response.created", response=opening), ev("response.in_progress", response=opening)]
    for index, item in enumerate(_responses_items(a)):
        if item["type"] == "message":
            out += _message_events(ev, index, item, a.text, cut)
        elif item["type"] == "function_call":
            out += _call_events(ev, index, item, cut)
        elif item["type"] == "custom_tool_call":
            out += _custom_call_events(ev, index, item, cut)
        else:
            out += _reasoning_events(ev, index, item, cut)
        out.append(ev("response.output_item.done", output_index=index, item=item))
    out.append(ev("response.completed", response=responses_body(a)))
    return out


def error_body(status: int, message: str) -> dict[str, Any]:
    return openai_error_body(status, message)


def error_event(kind: str, message: str) -> Event:
    # sequence_number: the server numbers it after the events sent before it
    error = {"type": "error", "code": ERROR_KINDS[kind][1], "message": message, "param": None}
    return "error", {**error, "sequence_number": 0}


DOUBLE = Double(
    route=re.compile(r"^(?:/v1)?/responses$"),
    base_suffix="/v1",
    body=responses_body,
    events=responses_events,
    error_body=error_body,
    error_event=error_event,
    check=check_responses,
    call_id=lambda seq, k: f"call_double{seq}_{k}",
)

"""The provider double's side of this wire: the server-side checks (with the provider's own error text), the
answer bodies and stream events, and the error shapes (see :class:`toolreplay.wires.contract.Double`).

Only what a real server enforces is checked here; the wire's ``rules`` hold the rest.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from toolreplay.testing.answers import (
    ERROR_KINDS,
    Answer,
    Event,
    Splitter,
    openai_error_body,
    pieces,
    usage_counts,
)
from toolreplay.testing.checks import Rules, as_list, as_map, too_long
from toolreplay.wires.contract import Double

NO_CALL_FOR_OUTPUT = "No tool call found for function call output with call_id {id}."


NO_OUTPUT_FOR_CALL = "No tool output found for function call {id}."


_RS = "'reasoning' item."


def check_responses(body: Mapping[str, Any], rules: Rules) -> str | None:
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
    calls: list[str] = []
    answered: set[str] = set()
    reasoning_seen = False
    for i, raw in enumerate(as_list(items)):
        item = as_map(raw)
        kind = item.get("type")
        if kind == "reasoning":
            reasoning_seen = True
        elif kind == "function_call":
            cid = str(item.get("call_id") or "")
            if not cid:
                return f"Missing required parameter: 'input[{i}].call_id'."
            if len(cid) > 64:
                return too_long(f"input[{i}].call_id", cid, 64)
            item_id = item.get("id")
            if isinstance(item_id, str) and item_id.startswith("fc_") and not reasoning_seen:
                return f"Item '{item_id}' of type 'function_call' was provided without its required {_RS}"
            calls.append(cid)
        elif kind == "function_call_output":
            cid = str(item.get("call_id") or "")
            if cid not in calls:
                return NO_CALL_FOR_OUTPUT.format(id=cid)
            answered.add(cid)
    for cid in calls:
        if cid not in answered:
            return NO_OUTPUT_FOR_CALL.format(id=cid)
    return None


def _responses_items(a: Answer) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if a.reasoning:
        secret = base64.b64encode(a.reasoning.encode("utf-8")).decode("ascii")
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_double{a.seq}",
                "summary": [{"type": "summary_text", "text": a.reasoning}],
                "encrypted_content": f"enc:{secret}",
            }
        )
    if a.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_double{a.seq}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": a.text, "annotations": []}],
            }
        )
    for i, c in enumerate(a.calls):
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


def responses_body(a: Answer, *, status: str = "completed", output: bool = True) -> dict[str, Any]:
    i, o, c = usage_counts(a.usage)
    return {
        "id": f"resp_double{a.seq}",
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": a.model,
        "output": _responses_items(a) if output else [],
        "usage": {
            "input_tokens": i,
            "input_tokens_details": {"cached_tokens": c},
            "output_tokens": o,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": i + o,
        },
    }


def responses_events(a: Answer, cut: Splitter = pieces) -> list[Event]:
    seq = iter(range(10**6))

    def ev(kind: str, **fields: Any) -> Event:
        return kind, {"type": kind, "sequence_number": next(seq), **fields}

    out = [ev("response.created", response=responses_body(a, status="in_progress", output=False))]
    for index, item in enumerate(_responses_items(a)):
        at = {"item_id": item.get("id"), "output_index": index}
        if item["type"] == "message":
            part = {"type": "output_text", "text": "", "annotations": []}
            out.append(ev("response.output_item.added", output_index=index, item={**item, "content": []}))
            out.append(ev("response.content_part.added", **at, content_index=0, part=part))
            out += [ev("response.output_text.delta", **at, content_index=0, delta=p) for p in cut(a.text)]
            out.append(ev("response.output_text.done", **at, content_index=0, text=a.text))
            out.append(ev("response.content_part.done", **at, content_index=0, part={**part, "text": a.text}))
        elif item["type"] == "function_call":
            out.append(ev("response.output_item.added", output_index=index, item={**item, "arguments": ""}))
            out += [
                ev("response.function_call_arguments.delta", **at, delta=p) for p in cut(item["arguments"])
            ]
            out.append(ev("response.function_call_arguments.done", **at, arguments=item["arguments"]))
        else:
            out.append(ev("response.output_item.added", output_index=index, item=item))
        out.append(ev("response.output_item.done", output_index=index, item=item))
    out.append(ev("response.completed", response=responses_body(a)))
    return out


def error_body(status: int, message: str) -> dict[str, Any]:
    return openai_error_body(status, message)


def error_event(kind: str, message: str) -> Event:
    return "error", {"type": "error", "code": ERROR_KINDS[kind][1], "message": message, "param": None}


def _wants_stream(body: Any, streamed: bool) -> bool:
    return isinstance(body, Mapping) and body.get("stream") is True


DOUBLE = Double(
    route=re.compile(r"^(?:/v1)?/responses$"),
    base_suffix="/v1",
    body=responses_body,
    events=responses_events,
    error_body=error_body,
    error_event=error_event,
    check=check_responses,
    call_id=lambda seq, k: f"call_double{seq}_{k}",
    wants_stream=_wants_stream,
)

"""The Ollama double (a :class:`toolreplay.wires.contract.Double`): ``/api/chat`` bodies and NDJSON lines
in the server's shapes (omitempty metrics, its call-id form), its ``{"error": ...}`` answers, and the one
check only the server makes (a model); the messages are held to the wire's own rules (``rules.py``),
whose refusals carry Go's decoding texts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolreplay.wires.contract import Double
from toolreplay.wires.doubles import Answer, Event, Rules, Splitter, token_pieces, usage_counts


def check_ollama(body: Mapping[str, Any], rules: Rules) -> str | None:
    """What only the server sees: the model (the messages are the rules')."""
    return None if body.get("model") else "model is required"


def _ollama_calls(a: Answer) -> list[dict[str, Any]]:
    out = []
    for i, c in enumerate(a.calls):
        call: dict[str, Any] = {"function": {"index": i, "name": c.name, "arguments": c.args}}
        if c.call_id:
            call = {"id": c.call_id, **call}
        out.append(call)
    return out


def _ollama_final(a: Answer) -> dict[str, Any]:
    # The server's Metrics fields are all omitempty (api/types.go), so a real answer never holds a zero count
    # or duration; the durations (nanoseconds) are made up from the counts, the same for the same answer.
    i, o, _ = usage_counts(a.usage)
    metrics = {
        "total_duration": 1_000_000 + i * 1_000_000 + o * 20_000_000,
        "load_duration": 1_000_000,
        "prompt_eval_count": i,
        "prompt_eval_duration": i * 1_000_000,
        "eval_count": o,
        "eval_duration": o * 20_000_000,
    }
    return {"done": True, "done_reason": "stop", **{k: v for k, v in metrics.items() if v}}


def _call_id(seq: int, k: int) -> str:
    """``call_`` and 8 lowercase letters or digits, the server's own id shape (server/routes.go
    toolCallId), made from the answer's number and the call's place instead of at random."""
    n, digits = seq * 100 + k, ""
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return "call_" + digits.rjust(8, "0")


def ollama_body(a: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": a.text}
    if a.reasoning:
        message["thinking"] = a.reasoning
    if a.calls:
        message["tool_calls"] = _ollama_calls(a)
    return {"model": a.model, "created_at": "1970-01-01T00:00:00Z", "message": message, **_ollama_final(a)}


def ollama_events(a: Answer, cut: Splitter = token_pieces) -> list[Event]:
    head = {"model": a.model, "created_at": "1970-01-01T00:00:00Z"}

    def line(message: dict[str, Any]) -> Event:
        return None, {**head, "message": {"role": "assistant", **message}, "done": False}

    out = [line({"content": "", "thinking": p}) for p in cut(a.reasoning or "")]
    out += [line({"content": p}) for p in cut(a.text)]
    if a.calls:
        out.append(line({"content": "", "tool_calls": _ollama_calls(a)}))
    out.append((None, {**head, "message": {"role": "assistant", "content": ""}, **_ollama_final(a)}))
    return out


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": message}


def error_event(kind: str, message: str) -> Event:
    return None, {"error": message}


def _wants_stream(body: Any, streamed: bool) -> bool:
    return (
        isinstance(body, Mapping) and body.get("stream", True) is not False
    )  # Ollama streams unless told not to


DOUBLE = Double(
    route=re.compile(r"^/api/chat$"),
    base_suffix="",
    body=ollama_body,
    events=ollama_events,
    error_body=error_body,
    error_event=error_event,
    check=check_ollama,
    call_id=_call_id,
    wants_stream=_wants_stream,
)

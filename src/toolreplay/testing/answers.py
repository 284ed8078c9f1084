"""How a double answers in each wire: whole bodies, stream events and error bodies, in the real shapes.

Pure functions of an :class:`Answer` (a scripted item made concrete: ids, signatures, usage).
Stream events are ``(event name or None, payload)`` pairs; a payload is a dict (sent as JSON) or a
string sent as is (Chat's ``[DONE]``). Ollama's events are NDJSON objects (the name is None).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay.wires.reply import Usage

Event = tuple[str | None, Any]
#: Cuts a text into stream deltas (tests pass any cut to check that every split parses the same).
Splitter = Callable[[str], list[str]]


@dataclass(frozen=True, slots=True)
class AnswerCall:
    """A call as sent: ``args`` is an object, or a string for broken arguments."""

    name: str
    args: Mapping[str, Any] | str
    call_id: str | None
    signature: str | None

    @property
    def arguments(self) -> str:
        """The arguments as JSON text (broken arguments as they are)."""
        return self.args if isinstance(self.args, str) else jsonenc.dumps(self.args)


@dataclass(frozen=True, slots=True)
class Answer:
    """What the double says to one request, before any wire shape."""

    seq: int
    model: str
    text: str
    calls: tuple[AnswerCall, ...]
    reasoning: str | None
    usage: Usage


def pieces(text: str, size: int = 12) -> list[str]:
    """``text`` cut into stream deltas."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def _u(usage: Usage) -> tuple[int, int, int]:
    return usage.input_tokens or 0, usage.output_tokens or 0, usage.cached_tokens or 0


def signature_for(seq: int, index: int) -> str:
    """A stable, opaque-looking thought signature."""
    return base64.b64encode(f"toolreplay-double:{seq}:{index}".encode()).decode("ascii")


# -- OpenAI Chat ----------------------------------------------------------------------------------------


def _chat_usage(a: Answer) -> dict[str, Any]:
    i, o, c = _u(a.usage)
    return {
        "prompt_tokens": i,
        "completion_tokens": o,
        "total_tokens": i + o,
        "prompt_tokens_details": {"cached_tokens": c},
    }


def _chat_finish(a: Answer) -> str:
    return "tool_calls" if a.calls else "stop"


def chat_body(a: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": a.text or None}
    if a.reasoning:
        message["reasoning_content"] = a.reasoning
    if a.calls:
        message["tool_calls"] = [
            {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in a.calls
        ]
    return {
        "id": f"chatcmpl-double{a.seq}",
        "object": "chat.completion",
        "created": 0,
        "model": a.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _chat_finish(a)}],
        "usage": _chat_usage(a),
    }


def chat_events(a: Answer, cut: Splitter = pieces) -> list[Event]:
    head = {
        "id": f"chatcmpl-double{a.seq}",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": a.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        return None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": p}) for p in cut(a.reasoning or "")]
    out += [chunk({"content": p}) for p in cut(a.text)]
    for i, c in enumerate(a.calls):
        start = {
            "index": i,
            "id": c.call_id,
            "type": "function",
            "function": {"name": c.name, "arguments": ""},
        }
        out.append(chunk({"tool_calls": [start]}))
        out += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}) for p in cut(c.arguments)]
    out.append(chunk({}, _chat_finish(a)))
    out.append((None, {**head, "choices": [], "usage": _chat_usage(a)}))
    out.append((None, "[DONE]"))
    return out


# -- OpenAI Responses -----------------------------------------------------------------------------------


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
    i, o, c = _u(a.usage)
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


# -- Anthropic ------------------------------------------------------------------------------------------


def _anthropic_blocks(a: Answer) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if a.reasoning:
        blocks.append({"type": "thinking", "thinking": a.reasoning, "signature": signature_for(a.seq, -1)})
    if a.text:
        blocks.append({"type": "text", "text": a.text})
    blocks += [{"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.args} for c in a.calls]
    return blocks


def _anthropic_usage(a: Answer, *, output: bool = True) -> dict[str, Any]:
    i, o, c = _u(a.usage)
    return {
        "input_tokens": i - c,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": c,
        "output_tokens": o if output else 1,
    }


def anthropic_body(a: Answer) -> dict[str, Any]:
    return {
        "id": f"msg_double{a.seq}",
        "type": "message",
        "role": "assistant",
        "model": a.model,
        "content": _anthropic_blocks(a),
        "stop_reason": "tool_use" if a.calls else "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(a),
    }


def anthropic_events(a: Answer, cut: Splitter = pieces) -> list[Event]:
    def ev(kind: str, **fields: Any) -> Event:
        return kind, {"type": kind, **fields}

    start = {
        **anthropic_body(a),
        "content": [],
        "stop_reason": None,
        "usage": _anthropic_usage(a, output=False),
    }
    out = [ev("message_start", message=start), ev("ping")]
    for index, block in enumerate(_anthropic_blocks(a)):
        kind = block["type"]
        if kind == "thinking":
            out.append(
                ev(
                    "content_block_start",
                    index=index,
                    content_block={**block, "thinking": "", "signature": ""},
                )
            )
            out += [
                ev("content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": p})
                for p in cut(block["thinking"])
            ]
            delta = {"type": "signature_delta", "signature": block["signature"]}
            out.append(ev("content_block_delta", index=index, delta=delta))
        elif kind == "text":
            out.append(ev("content_block_start", index=index, content_block={"type": "text", "text": ""}))
            out += [
                ev("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
                for p in cut(block["text"])
            ]
        else:
            out.append(ev("content_block_start", index=index, content_block={**block, "input": {}}))
            raw = block["input"] if isinstance(block["input"], str) else jsonenc.dumps(block["input"])
            out += [
                ev("content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": p})
                for p in cut(raw)
            ]
        out.append(ev("content_block_stop", index=index))
    stop = {"stop_reason": "tool_use" if a.calls else "end_turn", "stop_sequence": None}
    out.append(ev("message_delta", delta=stop, usage={"output_tokens": _u(a.usage)[1]}))
    out.append(ev("message_stop"))
    return out


# -- Gemini ---------------------------------------------------------------------------------------------


def _gemini_usage(a: Answer) -> dict[str, Any]:
    i, o, c = _u(a.usage)
    usage = {"promptTokenCount": i, "candidatesTokenCount": o, "totalTokenCount": i + o}
    if c:
        usage["cachedContentTokenCount"] = c
    return usage


def _gemini_call_part(c: AnswerCall) -> dict[str, Any]:
    call: dict[str, Any] = {"name": c.name, "args": c.args}
    if c.call_id:
        call["id"] = c.call_id
    part: dict[str, Any] = {"functionCall": call}
    if c.signature:
        part["thoughtSignature"] = c.signature
    return part


def _gemini_parts(a: Answer) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if a.reasoning:
        parts.append({"text": a.reasoning, "thought": True})
    if a.text:
        parts.append({"text": a.text})
    parts += [_gemini_call_part(c) for c in a.calls]
    return parts


def gemini_body(a: Answer) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": _gemini_parts(a)}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": _gemini_usage(a),
        "modelVersion": a.model,
        "responseId": f"double{a.seq}",
    }


def gemini_events(a: Answer, cut: Splitter = pieces) -> list[Event]:
    def chunk(parts: list[dict[str, Any]], final: bool = False) -> Event:
        cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if final:
            cand["finishReason"] = "STOP"
        return None, {"candidates": [cand], "usageMetadata": _gemini_usage(a), "modelVersion": a.model}

    out: list[Event] = []
    if a.reasoning:
        out.append(chunk([{"text": a.reasoning, "thought": True}]))
    out += [chunk([{"text": p}]) for p in cut(a.text)]
    calls = [_gemini_call_part(c) for c in a.calls]
    if calls:
        out.append(chunk(calls, final=True))
    elif out:
        _, payload = out[-1]
        payload["candidates"][0]["finishReason"] = "STOP"
    else:
        out.append(chunk([{"text": ""}], final=True))
    return out


# -- Ollama ---------------------------------------------------------------------------------------------


def _ollama_calls(a: Answer) -> list[dict[str, Any]]:
    out = []
    for i, c in enumerate(a.calls):
        call: dict[str, Any] = {"function": {"index": i, "name": c.name, "arguments": c.args}}
        if c.call_id:
            call = {"id": c.call_id, **call}
        out.append(call)
    return out


def _ollama_final(a: Answer) -> dict[str, Any]:
    i, o, _ = _u(a.usage)
    return {
        "done": True,
        "done_reason": "stop",
        "total_duration": 0,
        "load_duration": 0,
        "prompt_eval_count": i,
        "prompt_eval_duration": 0,
        "eval_count": o,
        "eval_duration": 0,
    }


def ollama_body(a: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": a.text}
    if a.reasoning:
        message["thinking"] = a.reasoning
    if a.calls:
        message["tool_calls"] = _ollama_calls(a)
    return {"model": a.model, "created_at": "1970-01-01T00:00:00Z", "message": message, **_ollama_final(a)}


def ollama_events(a: Answer, cut: Splitter = pieces) -> list[Event]:
    head = {"model": a.model, "created_at": "1970-01-01T00:00:00Z"}

    def line(message: dict[str, Any]) -> Event:
        return None, {**head, "message": {"role": "assistant", **message}, "done": False}

    out = [line({"content": "", "thinking": p}) for p in cut(a.reasoning or "")]
    out += [line({"content": p}) for p in cut(a.text)]
    if a.calls:
        out.append(line({"content": "", "tool_calls": _ollama_calls(a)}))
    out.append((None, {**head, "message": {"role": "assistant", "content": ""}, **_ollama_final(a)}))
    return out


BODIES = {
    "openai-chat": chat_body,
    "openai-responses": responses_body,
    "anthropic": anthropic_body,
    "gemini": gemini_body,
    "ollama": ollama_body,
}
EVENTS = {
    "openai-chat": chat_events,
    "openai-responses": responses_events,
    "anthropic": anthropic_events,
    "gemini": gemini_events,
    "ollama": ollama_events,
}

# -- errors ---------------------------------------------------------------------------------------------

_DEFAULT_MESSAGES = {
    400: "Invalid request.",
    401: "Incorrect API key provided.",
    403: "You do not have access to this resource.",
    404: "The model does not exist or you do not have access to it.",
    408: "Request timed out.",
    422: "Unprocessable request.",
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
    529: "Overloaded",
}
_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                    529: "overloaded_error"}  # fmt: skip
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


#: StreamError kinds -> (HTTP status for a non-streamed request, OpenAI type, Anthropic type, Google status)
ERROR_KINDS = {
    "overloaded": (503, "server_error", "overloaded_error", "UNAVAILABLE"),
    "rate_limit": (429, "rate_limit_exceeded", "rate_limit_error", "RESOURCE_EXHAUSTED"),
    "invalid_request": (400, "invalid_request_error", "invalid_request_error", "INVALID_ARGUMENT"),
}


def error_event(wire: str, kind: str, message: str) -> Event:
    """An error event inside a stream, in ``wire``'s own shape."""
    status, openai_type, anthropic_type, google = ERROR_KINDS[kind]
    if wire == "anthropic":
        return "error", {"type": "error", "error": {"type": anthropic_type, "message": message}}
    if wire == "openai-responses":
        return "error", {"type": "error", "code": openai_type, "message": message, "param": None}
    if wire == "gemini":
        return None, {"error": {"code": status, "message": message, "status": google}}
    if wire == "ollama":
        return None, {"error": message}
    return None, {"error": {"message": message, "type": openai_type, "param": None, "code": None}}


def default_message(status: int) -> str:
    """The usual text for ``status``."""
    return _DEFAULT_MESSAGES.get(status, "Internal server error." if status >= 500 else "Request failed.")


def error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    """An error body in ``wire``'s own shape."""
    if wire == "anthropic":
        kind = _ANTHROPIC_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if wire == "gemini":
        state = _GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
        return {"error": {"code": status, "message": message, "status": state}}
    if wire == "ollama":
        return {"error": message}
    kind = (
        "rate_limit_exceeded"
        if status == 429
        else ("server_error" if status >= 500 else "invalid_request_error")
    )
    code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


__all__ = [
    "BODIES",
    "EVENTS",
    "Answer",
    "AnswerCall",
    "default_message",
    "error_body",
    "error_event",
    "pieces",
    "signature_for",
]

"""The OpenAI Chat double (a :class:`toolreplay.wires.contract.Double`): ``chat.completion`` bodies and
``chat.completion.chunk`` streams (``stream_options.include_usage`` honoured), OpenAI's error objects, and
what only the server checks (the model, ``stream_options`` without ``stream``). The messages are held to
the wire's own rules (``rules.py``), whose refusals carry OpenAI's and Moonshot's texts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolreplay.wires.contract import Double, VesselProfile
from toolreplay.wires.doubles import (
    ERROR_KINDS,
    Answer,
    Event,
    Rules,
    Splitter,
    token_pieces,
    usage_counts,
)
from toolreplay.wires.openai_chat.errors import error_body as openai_error_body
from toolreplay.wires.openai_chat.rules import KIMI_REASONING, kimi_thinking, moonshot

STREAM_OPTIONS_ALONE = "The 'stream_options' parameter is only allowed when 'stream' is enabled."


def check_chat(body: Mapping[str, Any], rules: Rules) -> str | None:
    """What only the server sees: the model and the stream settings (the messages are the rules')."""
    if not body.get("model"):
        return "you must provide a model parameter"
    # OpenAI's own 400 for stream options on a request that does not stream (design 32)
    if body.get("stream_options") is not None and body.get("stream") is not True:
        return STREAM_OPTIONS_ALONE
    return None


#: Chat models that think and say so in ``reasoning_content`` when no vessel names a profile: DeepSeek's
#: reasoner, Z.ai's GLM from 4.5 on (thinking on by default), Qwen's QwQ and Qwen3 thinking models.
#: Kimi's thinking models are Moonshot's rule (``kimi_thinking``: the model, or the body's ``thinking``).
_THINKING_MODEL = re.compile(r"^(deepseek-reasoner|glm-(4\.[5-9]|[5-9])|qwq|qwen3-.*thinking)")


def chat_thinks(vessel: VesselProfile | None, model: str, body: Mapping[str, Any]) -> bool:
    """Whether the model answering thinks, so the answer carries ``reasoning_content``: OpenAI's own
    models and most compatible servers send none. A vessel's profile says (flag ``reasoning_content``:
    Kimi, DeepSeek, GLM thinking models); Moonshot's server thinks only for its thinking models or when
    the body turns ``thinking`` on. Without a vessel, the model name says."""
    if vessel is not None and moonshot(vessel):
        return kimi_thinking(body)
    if vessel is not None:
        return vessel.has("reasoning_content")
    return kimi_thinking(body) or _THINKING_MODEL.match(model) is not None


def _chat_usage(a: Answer) -> dict[str, Any]:
    i, o, c = usage_counts(a.usage)
    return {
        "prompt_tokens": i,
        "completion_tokens": o,
        "total_tokens": i + o,
        "prompt_tokens_details": {"cached_tokens": c, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
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


def _wants_usage(a: Answer) -> bool:
    options = a.request.get("stream_options")
    return isinstance(options, Mapping) and options.get("include_usage") is True


def _call_chunks(a: Answer, cut: Splitter) -> list[dict[str, Any]]:
    """Each call's deltas: the opening one (index, id, name, ``""``), then its arguments cut."""
    out: list[dict[str, Any]] = []
    for i, c in enumerate(a.calls):
        fn = {"name": c.name, "arguments": ""}
        out.append({"tool_calls": [{"index": i, "id": c.call_id, "type": "function", "function": fn}]})
        out += [{"tool_calls": [{"index": i, "function": {"arguments": p}}]} for p in cut(c.arguments) if p]
    return out


def chat_events(a: Answer, cut: Splitter = token_pieces) -> list[Event]:
    # OpenAI's order (design 32: the doubles answer in real shapes): a text reply opens with the role and
    # content ""; a reply that starts with a call opens with the role, content null and the first call
    # together. Every chunk has usage null, and the usage chunk comes only when stream_options asked.
    usage = _wants_usage(a)
    head = {
        "id": f"chatcmpl-double{a.seq}",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": a.model,
    }
    extra = {"usage": None} if usage else {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return None, {**head, "choices": [choice], **extra}

    thinking = [{"reasoning_content": p} for p in cut(a.reasoning or "") if p]
    deltas = thinking + [{"content": p} for p in cut(a.text)] + _call_chunks(a, cut)
    opening: dict[str, Any] = {"role": "assistant", "content": "", "refusal": None}
    if not thinking and not a.text and a.calls:
        opening = {"role": "assistant", "content": None, **deltas.pop(0), "refusal": None}
    out = [chunk(opening), *(chunk(d) for d in deltas), chunk({}, _chat_finish(a))]
    if usage:
        out.append((None, {**head, "choices": [], "usage": _chat_usage(a)}))
    out.append((None, "[DONE]"))
    return out


#: Moonshot's own refusals (its thinking models' ``reasoning_content`` rule), told by their text.
_MOONSHOT_REFUSAL = re.compile("^" + re.escape(KIMI_REASONING).replace(re.escape("{i}"), r"\d+") + "$")


def error_body(status: int, message: str) -> dict[str, Any]:
    """OpenAI's error shape; Moonshot's refusal in Moonshot's: ``{"error": {"message", "type"}}`` with no
    ``param`` or ``code``, as its 400 reads in public reports (OpenRouter's copy of Moonshot's raw answer in
    charmbracelet/crush#2633, and the Kimi CLI's in MoonshotAI/kimi-cli#770)."""
    if _MOONSHOT_REFUSAL.match(message):
        return {"error": {"message": message, "type": "invalid_request_error"}}
    return openai_error_body(status, message)


def error_event(kind: str, message: str) -> Event:
    return None, {"error": {"message": message, "type": ERROR_KINDS[kind][1], "param": None, "code": None}}


DOUBLE = Double(
    route=re.compile(r"^(?:/v1)?/chat/completions$"),
    base_suffix="/v1",
    body=chat_body,
    events=chat_events,
    error_body=error_body,
    error_event=error_event,
    check=check_chat,
    call_id=lambda seq, k: f"call_double{seq}_{k}",
    default_max_id_len=40,
    thinks=chat_thinks,
)

"""The Anthropic Messages double (a :class:`toolreplay.wires.contract.Double`): ``message`` bodies and the
``message_start`` ... ``message_stop`` event stream, Anthropic's error envelopes, and the one request check
only the server makes (the model named); what Anthropic documents it refuses (required fields, empty
content, tools defined, the tool loop, thinking blocks) is the wire's rules, with Anthropic's texts. The
usage it reports comes from Anthropic's caching rules, simulated (``prompt_cache.py``, design 36).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolreplay import jsonenc
from toolreplay.wires.anthropic.errors import error_body
from toolreplay.wires.anthropic.prompt_cache import AnthropicPromptCache
from toolreplay.wires.contract import Double
from toolreplay.wires.doubles import (
    ERROR_KINDS,
    Answer,
    Event,
    Rules,
    Splitter,
    signature_for,
    token_pieces,
    usage_counts,
)


def check_anthropic(body: Mapping[str, Any], rules: Rules) -> str | None:
    """What only the server sees: the model named. The rest (the structure Anthropic documents, thinking
    blocks) is the wire's rules, run after this by ``check_request`` (design 30)."""
    if not body.get("model"):
        return "model: Field required"
    return None


def _anthropic_blocks(a: Answer) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if a.reasoning:
        blocks.append(
            {"type": "thinking", "thinking": a.reasoning, "signature": signature_for(a.seq, -1, a.model)}
        )
    if a.text:
        blocks.append({"type": "text", "text": a.text})
    blocks += [{"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.args} for c in a.calls]
    return blocks


def _anthropic_usage(a: Answer, *, output: bool = True) -> dict[str, Any]:
    i, o, c = usage_counts(a.usage)
    w = a.usage.cache_write_tokens or 0  # the prompt cache the double simulates (prompt_cache.py)
    return {
        "input_tokens": i - c - w,
        "cache_creation_input_tokens": w,
        "cache_read_input_tokens": c,
        "output_tokens": o if output else 1,
        **({} if output else _START_EXTRA),
    }


# What message_start's usage says beside the counts (real streams; the SDK's models have these fields).
_START_EXTRA = {
    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
    "service_tier": "standard",
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


def anthropic_events(a: Answer, cut: Splitter = token_pieces) -> list[Event]:
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
            # Real streams open every tool_use block with an empty partial_json delta (the only one when
            # the input is empty), whatever the cut.
            parts = ["", *(p for p in cut(raw) if p and raw != "{}")]
            out += [
                ev("content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": p})
                for p in parts
            ]
        out.append(ev("content_block_stop", index=index))
    stop = {"stop_reason": "tool_use" if a.calls else "end_turn", "stop_sequence": None}
    # message_delta's usage repeats the input and cache counts beside the final output count.
    out.append(ev("message_delta", delta=stop, usage=_anthropic_usage(a)))
    out.append(ev("message_stop"))
    return out


def error_event(kind: str, message: str) -> Event:
    return "error", {"type": "error", "error": {"type": ERROR_KINDS[kind][2], "message": message}}


#: Body fields Anthropic takes only under a beta flag: the field -> the flags that enable it (any one).
BETA_FIELDS = {"context_management": ("context-management-2025-06-27", "compact-2026-01-12")}


def refuse_headers(headers: Mapping[str, str], body: Mapping[str, Any]) -> str | None:
    """A beta field sent without its ``anthropic-beta`` flag, refused in Anthropic's words (a request
    routed without the agent's flags got this from the real API)."""
    flags = {f.strip() for f in headers.get("anthropic-beta", "").split(",")}
    for field, enabling in BETA_FIELDS.items():
        if field in body and flags.isdisjoint(enabling):
            return f"{field}: Extra inputs are not permitted"
    return None


DOUBLE = Double(
    route=re.compile(r"^/v1/messages$"),
    base_suffix="",
    body=anthropic_body,
    events=anthropic_events,
    error_body=error_body,
    error_event=error_event,
    check=check_anthropic,
    refuse_headers=refuse_headers,
    call_id=lambda seq, k: f"toolu_double{seq}_{k}",
    prompt_cache=AnthropicPromptCache,
)

"""The Anthropic Messages double (a :class:`toolreplay.wires.contract.Double`): ``message`` bodies and the
``message_start`` ... ``message_stop`` event stream, Anthropic's error envelopes, and the request checks
with Anthropic's own texts (required fields, no empty content or blank words, tools defined, each
``tool_use`` answered by ``tool_result`` blocks that open the next user message, id patterns, thinking
signatures).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay.testing.answers import (
    ERROR_KINDS,
    Answer,
    Event,
    Splitter,
    signature_for,
    token_pieces,
    usage_counts,
)
from toolreplay.testing.checks import Rules, as_list, as_map
from toolreplay.wires.anthropic.rules import foreign_thinking, thinking_first
from toolreplay.wires.common import ID_SAFE
from toolreplay.wires.contract import Double

MUST_DEFINE_TOOLS = "Requests which include `tool_use` or `tool_result` blocks must define tools."


NO_RESULT_AFTER = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)


UNEXPECTED_RESULT = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [as_map(b) for b in as_list(content)]


def _merged(messages: Sequence[Any]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """Consecutive same-role messages merged, as Anthropic's server does before its checks."""
    out: list[tuple[str, list[Mapping[str, Any]]]] = []
    for raw in messages:
        m = as_map(raw)
        role = str(m.get("role"))
        if out and out[-1][0] == role:
            out[-1][1].extend(_blocks(m.get("content")))
        else:
            out.append((role, _blocks(m.get("content"))))
    return out


EMPTY_MESSAGE = (
    "messages.{i}: all messages must have non-empty content except for the optional final assistant message"
)


EMPTY_TEXT = "messages: text content blocks must be non-empty"


BLANK_TEXT = "messages: text content blocks must contain non-whitespace text"


def _empty_content(messages: Sequence[Any]) -> str | None:
    """Anthropic's 400s for empty content (design 32): a message with no content (only the last one may be
    an empty assistant prefill), an empty text block, a message whose only words are blank (a blank text
    block beside a tool_use is taken: tests/corpus llm-anthropic/test_tools.1)."""
    for i, raw in enumerate(messages):
        m = as_map(raw)
        content = m.get("content")
        if content in ("", []):
            if i == len(messages) - 1 and m.get("role") == "assistant":
                continue
            return EMPTY_MESSAGE.format(i=i)
        blocks = _blocks(content)
        texts = [b.get("text") for b in blocks if b.get("type") == "text"]
        if "" in texts and isinstance(content, list):
            return EMPTY_TEXT
        last = i == len(messages) - 1 and m.get("role") == "assistant"
        if (
            not last
            and len(texts) == len(blocks)
            and all(isinstance(t, str) and not t.strip() for t in texts)
        ):
            return BLANK_TEXT
    return None


def check_anthropic(body: Mapping[str, Any], rules: Rules) -> str | None:
    problem = _check_shape(body)
    if problem:
        return problem
    refused = thinking_first(body) or foreign_thinking(body)  # the wire's rules, with Anthropic's text
    return refused.provider if refused else None


def _check_shape(body: Mapping[str, Any]) -> str | None:
    if not body.get("model"):
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: Field required"
    empty = _empty_content(messages)
    if empty:
        return empty
    merged = _merged(messages)
    uses_tools = any(b.get("type") in ("tool_use", "tool_result") for _, blocks in merged for b in blocks)
    if uses_tools and not body.get("tools"):
        return MUST_DEFINE_TOOLS
    previous_ids: list[str] = []
    for i, (role, blocks) in enumerate(merged):
        if role == "user":
            problem = _anthropic_results(blocks, previous_ids, i)
            if problem:
                return problem
            previous_ids = []
        elif role == "assistant":
            previous_ids = []
            problem = _anthropic_uses(blocks, i, previous_ids)
            if problem:
                return problem
            if previous_ids and i + 1 >= len(merged):
                return NO_RESULT_AFTER.format(i=i, ids=", ".join(previous_ids))
        else:
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    return None


def _anthropic_uses(blocks: list[Mapping[str, Any]], i: int, ids: list[str]) -> str | None:
    """The ``tool_use`` blocks of merged assistant message ``i``: each id (appended to ``ids``) and input."""
    for j, b in enumerate(blocks):
        if b.get("type") != "tool_use":
            continue
        bid = str(b.get("id") or "")
        if not ID_SAFE.match(bid):
            return f"messages.{i}.content.{j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
        if not isinstance(b.get("input"), Mapping):
            return f"messages.{i}.content.{j}.tool_use.input: Input should be a valid dictionary"
        ids.append(bid)
    return None


def _anthropic_results(blocks: list[Mapping[str, Any]], expected: list[str], i: int) -> str | None:
    leading: list[str] = []
    for b in blocks:
        if b.get("type") != "tool_result":
            break
        leading.append(str(b.get("tool_use_id")))
    missing = [x for x in expected if x not in leading]
    if missing:
        return NO_RESULT_AFTER.format(i=i - 1, ids=", ".join(missing))
    for j, b in enumerate(blocks):
        if b.get("type") == "tool_result" and str(b.get("tool_use_id")) not in expected:
            return UNEXPECTED_RESULT.format(i=i, j=j, id=b.get("tool_use_id"))
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
    w = a.usage.cache_write_tokens or 0  # the prompt cache the double simulates (testing/prefix_cache.py)
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


_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
          529: "overloaded_error"}  # fmt: skip


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = _TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def error_event(kind: str, message: str) -> Event:
    return "error", {"type": "error", "error": {"type": ERROR_KINDS[kind][2], "message": message}}


DOUBLE = Double(
    route=re.compile(r"^/v1/messages$"),
    base_suffix="",
    body=anthropic_body,
    events=anthropic_events,
    error_body=error_body,
    error_event=error_event,
    check=check_anthropic,
    call_id=lambda seq, k: f"toolu_double{seq}_{k}",
)

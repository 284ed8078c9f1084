"""What the wires' sniffers share: reading the objects inside a body's messages.

Used by each wire's ``detect.py`` (the audit's body detection and ``import --from auto``, which both ask
:func:`toolreplay.wires.sniff_wire`); nothing outside ``wires/`` imports it. Each sniffer returns the
:class:`~toolreplay.wires.evidence.Evidence` a body gives its wire, and one rule decides (design 27).

The ``messages`` wires (Anthropic, Ollama, Chat) share a list key, so their marks say what they prove:

* a mark (:attr:`~toolreplay.wires.evidence.Proof.MARK`): Anthropic's own blocks, top-level ``system``,
  ``input_schema`` tools, a thinking budget, fields only Anthropic takes (they rule out Chat and Ollama);
  Ollama's own marks (object ``arguments``, ``tool_name``, ``images``, its body keys: they rule out
  Chat); Chat's own marks (string ``arguments``, Chat-only content parts, Chat-only body fields,
  reasoning fields on messages, a model of OpenAI's own);
* a habit (:attr:`~toolreplay.wires.evidence.Proof.HABIT`): Ollama's ``"stream": false`` with no Chat
  field; Anthropic text/image blocks or a ``thinking`` parameter with nothing of Chat's;
* a fit (:attr:`~toolreplay.wires.evidence.Proof.FITS`): any ``messages`` list reads as Chat.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

#: Blocks that only Anthropic's Messages API has (a Chat content part is never one of these). A
#: ``thinking`` block is Anthropic's only when its ``thinking`` is a string: Mistral's thinking part
#: carries a list of text chunks there (see :func:`anthropic_block`).
ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking")
#: Content part types only Chat has (``thinking`` with a list body: Mistral's).
CHAT_PARTS = ("image_url", "input_audio", "file", "refusal")
#: Fields on a message only Chat servers read (Kimi, DeepSeek, GLM, vLLM, OpenRouter reasoning; Cerebras
#: and gpt-oss servers send an assistant's ``reasoning`` back: Ollama's is ``thinking``).
CHAT_MESSAGE_KEYS = ("reasoning_content", "reasoning_details", "reasoning")
#: Top-level fields of a Chat body that neither Anthropic nor Ollama takes.
CHAT_FIELDS = (
    "max_completion_tokens", "n", "stop", "stream_options", "response_format", "presence_penalty",
    "frequency_penalty", "logprobs", "top_logprobs", "seed", "user", "parallel_tool_calls",
    "reasoning_effort", "modalities", "logit_bias", "functions", "function_call",
)  # fmt: skip
#: Top-level fields only Anthropic's Messages API takes.
ANTHROPIC_FIELDS = (
    "stop_sequences", "anthropic_version", "anthropic_beta", "output_config", "mcp_servers", "container",
    "context_management",
)  # fmt: skip
#: OpenAI's own hosted models (not ``gpt-oss``, an open model Ollama serves too); ``ft:`` fine-tunes.
_OPENAI_MODEL = re.compile(r"^(ft:)?(gpt-(?!oss)|chatgpt-|o[1-9](-|$)|codex-)")


def inner(messages: Sequence[Any], key: str) -> list[Mapping[str, Any]]:
    """The objects in each message's ``key`` list (``content`` blocks, ``tool_calls``)."""
    out: list[Mapping[str, Any]] = []
    for m in messages:
        if isinstance(m, Mapping) and isinstance(m.get(key), list):
            out.extend(x for x in m[key] if isinstance(x, Mapping))
    return out


def messages_of(body: Mapping[str, Any], key: str = "messages") -> list[Any] | None:
    """The body's message list, or None when it has none."""
    value = body.get(key)
    return value if isinstance(value, list) else None


def anthropic_block(block: Mapping[str, Any]) -> bool:
    """A content block only Anthropic has (a Mistral ``thinking`` part, whose body is a list, is not)."""
    kind = block.get("type")
    if kind == "thinking":
        return not isinstance(block.get("thinking"), list)
    return kind in ANTHROPIC_BLOCKS


def chat_part(block: Mapping[str, Any]) -> bool:
    """A content part only Chat has (Mistral's ``thinking`` part with its list of chunks among them)."""
    kind = block.get("type")
    return kind in CHAT_PARTS or (kind == "thinking" and isinstance(block.get("thinking"), list))


def string_arguments(messages: Sequence[Any]) -> bool:
    """A ``tool_calls`` entry whose ``arguments`` is a JSON string: Chat's (Ollama's is an object)."""
    fns = [c.get("function") for c in inner(messages, "tool_calls")]
    return any(isinstance(f, Mapping) and isinstance(f.get("arguments"), str) for f in fns)


def function_tools(body: Mapping[str, Any]) -> bool:
    """Tools in the ``{"type": "function", "function": {...}}`` shape (Chat's and Ollama's)."""
    tools = body.get("tools")
    return isinstance(tools, list) and any(isinstance(t, Mapping) and "function" in t for t in tools)


def openai_model(body: Mapping[str, Any]) -> bool:
    model = body.get("model")
    return isinstance(model, str) and _OPENAI_MODEL.match(model) is not None


def chat_marks(body: Mapping[str, Any], messages: Sequence[Any]) -> str | None:
    """The first mark only a Chat body carries, named for people, or None: string arguments, Chat-only
    parts, fields or message keys, a string ``tool_choice`` (Anthropic's is an object, Ollama has none),
    one of OpenAI's own models."""
    if string_arguments(messages):
        return "string tool-call arguments"
    part = next((b for b in inner(messages, "content") if chat_part(b)), None)
    if part is not None:
        return f"a {part.get('type')!r} content part"
    field = next((k for k in CHAT_FIELDS if k in body), None)
    if field is not None:
        return f"a {field!r} field"
    if isinstance(body.get("tool_choice"), str):
        return "a string tool_choice"
    for m in messages:
        key = next((k for k in CHAT_MESSAGE_KEYS if isinstance(m, Mapping) and k in m), None)
        if key is not None:
            return f"{key!r} on a message"
    return f"an OpenAI model ({body.get('model')})" if openai_model(body) else None


__all__ = [
    "ANTHROPIC_BLOCKS",
    "ANTHROPIC_FIELDS",
    "CHAT_FIELDS",
    "CHAT_PARTS",
    "anthropic_block",
    "chat_marks",
    "chat_part",
    "function_tools",
    "inner",
    "messages_of",
    "openai_model",
    "string_arguments",
]

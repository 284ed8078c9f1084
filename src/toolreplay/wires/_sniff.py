"""What the wires' sniffers share: reading the objects inside a body's messages, and the confidences.

Used by each wire's ``detect.py`` (the audit's body detection and ``import --from auto``, which both ask
:func:`toolreplay.wires.sniff_wire`: the most confident wire wins); nothing outside ``wires/`` imports it.

The ``messages`` wires (Anthropic, Ollama, Chat) share a list key, so their sniffers rank marks by how
much they prove (design 27):

* :data:`OWN` (0.9): Anthropic's own blocks, top-level ``system``, ``input_schema`` tools, a thinking
  budget, fields only Anthropic takes;
* :data:`NATIVE` (0.8): Ollama's own marks (object ``arguments``, ``tool_name``, ``images``, its body keys);
* :data:`CHAT` (0.7): Chat's own marks (string ``arguments``, Chat-only content parts, Chat-only body
  fields, reasoning fields on messages, a model of OpenAI's own);
* :data:`HABIT` (0.6): Ollama's habit of ``"stream": false`` with no Chat field;
* :data:`BLOCKS` (0.5): Anthropic text/image blocks or a ``thinking`` parameter with nothing of Chat's;
* :data:`FALLBACK` (0.1): any ``messages`` list reads as Chat.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

OWN = 0.9
NATIVE = 0.8
CHAT = 0.7
HABIT = 0.6
BLOCKS = 0.5
FALLBACK = 0.1

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


def chat_marks(body: Mapping[str, Any], messages: Sequence[Any]) -> bool:
    """Anything only a Chat body carries: string arguments, Chat-only parts, fields or message keys, a
    string ``tool_choice`` (Anthropic's is an object, Ollama has none), one of OpenAI's own models."""
    if string_arguments(messages) or any(chat_part(b) for b in inner(messages, "content")):
        return True
    if any(k in body for k in CHAT_FIELDS) or isinstance(body.get("tool_choice"), str):
        return True
    if any(isinstance(m, Mapping) and any(k in m for k in CHAT_MESSAGE_KEYS) for m in messages):
        return True
    return openai_model(body)


__all__ = [
    "ANTHROPIC_BLOCKS",
    "ANTHROPIC_FIELDS",
    "BLOCKS",
    "CHAT",
    "CHAT_FIELDS",
    "CHAT_PARTS",
    "FALLBACK",
    "HABIT",
    "NATIVE",
    "OWN",
    "anthropic_block",
    "chat_marks",
    "chat_part",
    "function_tools",
    "inner",
    "messages_of",
    "openai_model",
    "string_arguments",
]

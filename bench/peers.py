"""The peer: LiteLLM's own conversion functions, fed the same OpenAI-format history toolreplay renders.

LiteLLM takes an OpenAI Chat message list and converts it into each provider's shape. The bench gives
it the ``messages`` toolreplay's ``openai-chat`` renderer produces for the history, so both sides convert
the same content (the same cut answers, the same call ids). Leading system messages are left out of the
Anthropic and Gemini inputs: LiteLLM splits them off before those converters run, as toolreplay puts
them in ``system`` / ``systemInstruction``.

:func:`summary` reads the calls (names, in order) and the answers out of any side's output, whatever
the wire, so :func:`check_like` can prove once per run that both sides carried the same calls.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The toolreplay vessel rendered for each wire the peer also produces.
VESSELS: dict[str, str] = {
    "anthropic": "anthropic",
    "gemini": "gemini",
    "openai-responses": "openai-responses",
    "openai-chat": "openai",
}
#: The vessel whose Chat ``messages`` feed the peer (derived ids, at most 40 characters).
PEER_INPUT_VESSEL = "openai"


class PeerMissing(RuntimeError):
    """LiteLLM is not installed in this environment (run ``python3 scripts/dev.py bench``)."""


class BenchMismatch(RuntimeError):
    """Both sides did not carry the same calls: the comparison would be of different work."""


@dataclass(frozen=True, slots=True)
class Peer:
    """One LiteLLM conversion: the wire it produces, its qualified name, and how to call it."""

    wire: str
    function: str
    convert: Callable[[list[dict[str, Any]]], Any]
    keeps_system: bool


def litellm_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("litellm")
    except PackageNotFoundError:
        return "not installed"


def load_peers() -> list[Peer]:
    """LiteLLM's converters for the four wires both sides produce (imports LiteLLM: seconds)."""
    # LiteLLM fetches a model price map over the network at import unless told to use its bundled copy;
    # the bench must not depend on the network, and the fetch is not part of the conversion.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        from litellm.completion_extras.litellm_responses_transformation.transformation import (
            LiteLLMResponsesTransformationHandler,
        )
        from litellm.litellm_core_utils.prompt_templates.factory import anthropic_messages_pt
        from litellm.llms.openai.chat.gpt_transformation import OpenAIGPTConfig
        from litellm.llms.vertex_ai.gemini.transformation import gemini_convert_messages_with_history
    except ImportError as exc:
        raise PeerMissing(
            f"LiteLLM is not importable here ({exc}); run: python3 scripts/dev.py bench"
        ) from None
    responses = LiteLLMResponsesTransformationHandler()
    chat = OpenAIGPTConfig()
    return [
        Peer(
            "anthropic",
            "litellm.litellm_core_utils.prompt_templates.factory.anthropic_messages_pt",
            lambda m: anthropic_messages_pt(m, model="claude-sonnet-4-5", llm_provider="anthropic"),
            keeps_system=False,
        ),
        Peer(
            "gemini",
            "litellm.llms.vertex_ai.gemini.transformation.gemini_convert_messages_with_history",
            lambda m: gemini_convert_messages_with_history(
                m, model="gemini-2.5-flash", custom_llm_provider="gemini"
            ),
            keeps_system=False,
        ),
        Peer(
            "openai-responses",
            "litellm.completion_extras.litellm_responses_transformation.transformation."
            "LiteLLMResponsesTransformationHandler.convert_chat_completion_messages_to_responses_api",
            lambda m: responses.convert_chat_completion_messages_to_responses_api(m),
            keeps_system=True,
        ),
        Peer(
            "openai-chat",
            "litellm.llms.openai.chat.gpt_transformation.OpenAIGPTConfig.transform_request",
            lambda m: chat.transform_request("gpt-4.1", m, {}, {}, {}),
            keeps_system=True,
        ),
    ]


def peer_input(chat_messages: Sequence[Mapping[str, Any]], peer: Peer) -> list[dict[str, Any]]:
    """The message list given to ``peer``: toolreplay's Chat messages, leading system ones dropped
    for the converters whose caller splits them off first."""
    msgs = [dict(m) for m in chat_messages]
    if peer.keeps_system:
        return msgs
    k = 0
    while k < len(msgs) and msgs[k].get("role") == "system":
        k += 1
    return msgs[k:]


# --------------------------------------------------------------------------------------------------
# like with like


@dataclass(frozen=True, slots=True)
class CallSummary:
    """The calls one side's output carries: tool names in order, and how many answers."""

    names: tuple[str, ...]
    answers: int


#: Keys whose values are a call's own data (inputs, schemas): never read as message structure.
_OPAQUE = frozenset({"input", "args", "arguments", "parameters", "input_schema", "parametersJsonSchema"})


def _walk(node: Any, names: list[str], answers: list[int]) -> None:
    if isinstance(node, list | tuple):
        for item in node:
            _walk(item, names, answers)
        return
    if not isinstance(node, Mapping):
        return
    kind = node.get("type")
    if kind in ("tool_use", "function_call") and isinstance(node.get("name"), str):
        names.append(node["name"])  # Anthropic tool_use block; Responses function_call item
    elif kind in ("tool_result", "function_call_output") or node.get("role") == "tool":
        answers[0] += 1
    for key in ("functionCall", "function_call"):  # Gemini part, camelCase or snake_case (design 9)
        fc = node.get(key)
        if isinstance(fc, Mapping) and isinstance(fc.get("name"), str):
            names.append(fc["name"])
    for key in ("functionResponse", "function_response"):
        if isinstance(node.get(key), Mapping):
            answers[0] += 1
    calls = node.get("tool_calls")
    if isinstance(calls, list):  # Chat assistant message
        for tc in calls:
            fn = tc.get("function") if isinstance(tc, Mapping) else None
            if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
                names.append(fn["name"])
    for key, value in node.items():
        if key not in _OPAQUE and key != "tool_calls" and isinstance(value, list | tuple | Mapping):
            _walk(value, names, answers)


def summary(output: Any) -> CallSummary:
    """The calls and answers in a message list / item list / contents list (or a tuple holding one)."""
    names: list[str] = []
    answers = [0]
    _walk(output, names, answers)
    return CallSummary(tuple(names), answers[0])


def check_like(wire: str, where: str, ours: CallSummary, theirs: CallSummary) -> None:
    """Raise :class:`BenchMismatch` unless both sides carry the same calls (names in order) and answers."""
    if ours == theirs:
        return
    if len(ours.names) != len(theirs.names):
        detail = f"{len(ours.names)} calls (toolreplay) vs {len(theirs.names)} (LiteLLM)"
    elif ours.names != theirs.names:
        i = next(k for k, (a, b) in enumerate(zip(ours.names, theirs.names, strict=True)) if a != b)
        detail = f"call {i} is {ours.names[i]!r} (toolreplay) vs {theirs.names[i]!r} (LiteLLM)"
    else:
        detail = f"{ours.answers} answers (toolreplay) vs {theirs.answers} (LiteLLM)"
    raise BenchMismatch(f"{wire}, {where}: the two sides carry different calls: {detail}")

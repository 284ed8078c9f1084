"""The agent's settings (:class:`~toolreplay._proxy.translate_settings.Asked`) in the upstream wire's own
fields (design 48): what both wires have is translated, what the upstream has no field for is named.

The output limit and temperature go through the render's own options (each wire puts them under its own
name); everything else is a top-level field (merged into a nested config where the wire has one:
Gemini's ``generationConfig``, Ollama's ``options``). The provider rules these follow are each named
beside the line that keeps them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolreplay._issuers import host_of
from toolreplay._proxy.translate_settings import Asked
from toolreplay._vessels import Vessel
from toolreplay.wires.vessel import VesselProfile


@dataclass(slots=True)
class Fields:
    """What a translation writes: the render's options, top-level fields, and notes."""

    max_tokens: int | None = None
    temperature: float | None = None
    include: tuple[str, ...] = ()
    body: dict[str, Any] = field(default_factory=lambda: {})
    notes: list[str] = field(default_factory=lambda: [])
    #: The top-level field that turns thinking off on this wire, when thinking was turned on (the
    #: translation turns it off where the upstream's rules would refuse the request with it on).
    thinking_off: tuple[str, Any] | None = None

    def lost(self, wire: str, what: str) -> None:
        self.notes.append(f"{what} not carried: {wire} has no such setting")


#: Anthropic's own output limit when the agent named none (its API requires one).
ANTHROPIC_MAX_TOKENS = 4096
_MIN_BUDGET = 1024  # Anthropic: "thinking.budget_tokens: Input should be greater than or equal to 1024"


def _anthropic_thinking(a: Asked, out: Fields) -> None:
    limit = a.max_tokens if a.max_tokens is not None else ANTHROPIC_MAX_TOKENS
    budget = max(_MIN_BUDGET, a.wants_budget)
    if budget >= limit:  # "max_tokens must be greater than thinking.budget_tokens"
        if limit <= _MIN_BUDGET:
            out.notes.append(f"thinking not carried: the output limit ({limit}) leaves no thinking budget")
            return
        budget = limit - 1
    out.max_tokens = limit
    out.body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    out.thinking_off = ("thinking", None)
    if out.temperature is not None and out.temperature != 1:  # "temperature may only be set to 1"
        out.notes.append(f"temperature {out.temperature:g} not carried: Anthropic takes only 1 with thinking")
        out.temperature = None
    top_p = out.body.get("top_p")
    if isinstance(top_p, float) and top_p < 0.95:  # "top_p must be >= 0.95 when thinking is enabled"
        out.notes.append(f"top_p {top_p:g} not carried: Anthropic takes 0.95 to 1 with thinking")
        del out.body["top_p"]


def _anthropic(a: Asked, v: VesselProfile, out: Fields) -> None:
    if a.top_p is not None and a.temperature is not None:
        # Claude 4.5 and later: "`temperature` and `top_p` cannot both be specified for this model"
        out.notes.append(f"top_p {a.top_p:g} not carried: Anthropic takes temperature or top_p, not both")
    elif a.top_p is not None:
        out.body["top_p"] = a.top_p
    if a.stop:
        out.body["stop_sequences"] = list(a.stop)
    if a.thinking:
        _anthropic_thinking(a, out)
    choice: dict[str, Any] = {}
    if a.choice is not None:
        forced = a.choice in ("required", "tool")
        if (
            forced and "thinking" in out.body
        ):  # "Thinking may not be enabled when tool_choice forces tool use"
            out.notes.append(f"tool_choice {a.choice} not carried: Anthropic forces no tool with thinking on")
            choice = {"type": "auto"}
        else:
            choice = {"type": {"required": "any"}.get(a.choice, a.choice)}
            if a.choice == "tool":
                choice["name"] = a.tool
    if a.parallel is False:
        choice = {"type": "auto", **choice, "disable_parallel_tool_use": True}
    if choice:
        out.body["tool_choice"] = choice


def _openai_choice(a: Asked, chat: bool) -> Any:
    if a.choice == "tool":
        return {"type": "function", "function": {"name": a.tool}} if chat else {"type": "function",
                                                                                "name": a.tool}  # fmt: skip
    return a.choice


#: OpenAI's reasoning models: the only ones that take ``reasoning_effort`` / ``reasoning`` ("Unrecognized
#: request argument" or "not supported with this model" elsewhere: gpt-4.1, Grok 4), and that take no
#: sampling settings ("Unsupported value: 'temperature' does not support 0.2 with this model").
_OPENAI_REASONING = re.compile(r"^(o[1-9]|gpt-5(?!(\.[0-9]+)?-chat)|gpt-oss|codex)")


def _sampling(a: Asked, v: VesselProfile, out: Fields) -> bool:
    """top_p, and whether the model reasons the OpenAI way; a reasoning model of OpenAI's own keeps
    neither temperature nor top_p."""
    reasons = _OPENAI_REASONING.match(v.model) is not None
    if reasons and host_of(v.base_url).endswith(_OPENAI_HOSTS):
        for name, value in (("temperature", out.temperature), ("top_p", a.top_p)):
            if value is not None:
                out.notes.append(f"{name} {value:g} not carried: {v.model} takes only the default")
        out.temperature = None
    elif a.top_p is not None:
        out.body["top_p"] = a.top_p
    return reasons


_OPENAI_HOSTS = ("openai.com", "chatgpt.com")


def _openai_tools(a: Asked, chat: bool, out: Fields) -> None:
    if a.choice is not None:
        out.body["tool_choice"] = _openai_choice(a, chat=chat)
    if a.parallel is not None:
        out.body["parallel_tool_calls"] = a.parallel


def _chat(a: Asked, v: VesselProfile, out: Fields) -> None:
    reasons = _sampling(a, v, out)
    if a.stop:
        out.body["stop"] = list(a.stop[:4])  # OpenAI: "stop: up to 4 sequences"
        if len(a.stop) > 4:
            out.notes.append(f"stop sequences after the 4th not carried ({len(a.stop) - 4}): Chat takes 4")
    _openai_tools(a, True, out)
    own = v.has("reasoning_content") or v.id_policy == "kimi"
    if own and a.thinking is not False:  # a thinking model thinks unless told not to
        out.thinking_off = ("thinking", {"type": "disabled"})
    if a.thinking is None:
        return
    if own:
        # Moonshot, GLM: thinking is ``{"type": "enabled" | "disabled"}`` (no budget, no effort)
        out.body["thinking"] = {"type": "enabled" if a.thinking else "disabled"}
    elif a.thinking and reasons:
        out.body["reasoning_effort"] = a.wants_effort
    elif a.thinking:
        out.notes.append(f"thinking not carried: {v.model} takes no reasoning_effort")


def _responses(a: Asked, v: VesselProfile, out: Fields) -> None:
    reasons = _sampling(a, v, out)
    if a.stop:
        out.lost("openai-responses", "stop sequences")
    _openai_tools(a, False, out)
    if reasons and v.has("store_false") and v.has("encrypted_reasoning") and a.thinking is not False:
        # stateless: the reasoning survives between tool steps only encrypted, in the answer
        out.include = ("reasoning.encrypted_content",)
    if a.thinking and reasons:
        reasoning: dict[str, Any] = {"effort": a.wants_effort}
        if a.show:
            reasoning["summary"] = "auto"
        out.body["reasoning"] = reasoning
    elif a.thinking:
        out.notes.append(f"thinking not carried: {v.model} takes no reasoning effort")
    elif a.thinking is False and reasons:
        out.body["reasoning"] = {"effort": "minimal"}


def _gemini_thinking(a: Asked, v: VesselProfile) -> dict[str, Any]:
    if not a.thinking:
        return {"thinkingBudget": 0} if a.thinking is False and "flash" in v.model else {}
    if v.model.startswith("gemini-3"):  # Gemini 3 thinks by level, "low" or "high"
        config: dict[str, Any] = {"thinkingLevel": "low" if a.wants_effort in ("minimal", "low") else "high"}
    else:
        config = {"thinkingBudget": min(a.wants_budget, 24576)}  # 2.5 Flash: 0 to 24,576
    if a.show:
        config["includeThoughts"] = True
    return config


def _gemini(a: Asked, v: VesselProfile, out: Fields) -> None:
    config: dict[str, Any] = {}
    if a.top_p is not None:
        config["topP"] = a.top_p
    if a.stop:
        config["stopSequences"] = list(a.stop[:5])  # Gemini: "up to 5 stop sequences"
    thinking = _gemini_thinking(a, v)
    if thinking:
        config["thinkingConfig"] = thinking
    if config:
        out.body["generationConfig"] = config
    if a.choice is not None:
        mode = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}[a.choice]
        fc: dict[str, Any] = {"mode": mode}
        if a.choice == "tool" and a.tool:
            fc["allowedFunctionNames"] = [a.tool]
        out.body["toolConfig"] = {"functionCallingConfig": fc}
    if a.parallel is not None:
        out.lost("gemini", "parallel_tool_calls")


def _ollama(a: Asked, v: VesselProfile, out: Fields) -> None:
    options: dict[str, Any] = {}
    if a.top_p is not None:
        options["top_p"] = a.top_p
    if a.stop:
        options["stop"] = list(a.stop)
    if options:
        out.body["options"] = options
    if a.thinking and _OLLAMA_THINKING.match(v.model) is None:
        # "... does not support thinking" (400) for a model without it
        out.notes.append(f"thinking not carried: {v.model} is not a model Ollama thinks with")
    elif a.thinking and v.model.startswith("gpt-oss"):
        out.body["think"] = {"minimal": "low"}.get(a.wants_effort, a.wants_effort)  # levels, not a flag
    elif a.thinking is not None:
        out.body["think"] = a.thinking
    if a.choice not in (None, "auto"):
        out.lost("ollama", f"tool_choice {a.choice}")
    if a.parallel is not None:
        out.lost("ollama", "parallel_tool_calls")


#: The models Ollama thinks with (``think`` is refused for any other).
_OLLAMA_THINKING = re.compile(
    r"^(qwen3|qwq|deepseek-r1|deepseek-v3\.[1-9]|gpt-oss|magistral|phi4-(mini-)?reasoning|cogito)"
)

_WRITERS: Mapping[str, Callable[[Asked, VesselProfile, Fields], None]] = {
    "anthropic": _anthropic,
    "openai-chat": _chat,
    "openai-responses": _responses,
    "gemini": _gemini,
    "ollama": _ollama,
}


def write_settings(a: Asked, agent_wire: str, vessel: Vessel) -> Fields:
    """``a`` in the fields of ``vessel``'s wire; the agent's other settings carried when both are one
    wire, else named."""
    out = Fields(max_tokens=a.max_tokens, temperature=a.temperature)
    wire = vessel.wire
    writer = _WRITERS.get(wire)
    if writer is not None:
        writer(a, vessel, out)
    else:
        out.notes.append(f"settings not carried: {wire} is not a wire the proxy translates settings for")
    rest = {k: v for k, v in a.rest.items() if v not in (None, [], {}, "")}
    if rest and agent_wire == wire:
        for k, val in rest.items():
            out.body.setdefault(k, val)
    elif rest:
        out.notes.append(f"request settings of the agent's {agent_wire} request not carried on {wire}: "
                         f"{', '.join(sorted(rest))}")  # fmt: skip
    return out


def merged_into(body: dict[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with ``fields`` set; a field that is an object in both is merged one level deep (the
    render's ``generationConfig`` keeps its limit and temperature beside the translated ones)."""
    out = dict(body)
    for k, v in fields.items():
        old = out.get(k)
        if isinstance(old, Mapping) and isinstance(v, Mapping):
            out[k] = {**old, **v}
        elif v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


__all__ = ["ANTHROPIC_MAX_TOKENS", "Fields", "merged_into", "write_settings"]

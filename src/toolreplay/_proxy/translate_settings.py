"""A request's settings across two wires (design 48): read from the agent's body into neutral words
(:class:`Asked`), then written in the upstream wire's own fields (:mod:`.translate_fields`).

What is read: the output limit, temperature, top_p, stop sequences, tool choice (auto, none, required,
a named tool), parallel calls, thinking (on, off, a budget or an effort) and whether the agent asked to
*see* reasoning, and whether it asked for a stream. Every other setting is named: carried as it is when
the upstream speaks the agent's own wire, else a note (``metadata``, ``prompt_cache_key``, ``store``...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

Choice = Literal["auto", "none", "required", "tool"]
Effort = Literal["minimal", "low", "medium", "high"]
EFFORTS: tuple[Effort, ...] = ("minimal", "low", "medium", "high")

#: A thinking budget for an effort, and back (the smallest effort whose budget holds it). Anthropic's
#: smallest budget is 1,024 tokens; Gemini 2.5 Flash thinks up to 24,576.
BUDGETS: Mapping[Effort, int] = {"minimal": 1024, "low": 4096, "medium": 12288, "high": 24576}


def effort_of(budget: int) -> Effort:
    for e in EFFORTS:
        if budget <= BUDGETS[e]:
            return e
    return "high"


@dataclass(frozen=True, slots=True)
class Asked:
    """What the agent asked for, in words every wire has (None: it did not say)."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    choice: Choice | None = None
    tool: str | None = None
    """The tool a ``tool`` choice names."""
    parallel: bool | None = None
    thinking: bool | None = None
    budget: int | None = None
    effort: Effort | None = None
    show: bool = False
    """The agent asked to see the reasoning (Anthropic ``thinking``, Responses ``reasoning``, Gemini
    ``includeThoughts``, Ollama ``think``, Chat ``reasoning_effort`` or ``thinking``)."""
    stream: bool = False
    rest: Mapping[str, Any] = field(default_factory=lambda: {})
    """Every other top-level setting, as sent."""

    @property
    def wants_budget(self) -> int:
        """The thinking budget asked, from the effort when only that was said."""
        if self.budget is not None:
            return self.budget
        return BUDGETS[self.effort or "medium"]

    @property
    def wants_effort(self) -> Effort:
        if self.effort is not None:
            return self.effort
        return effort_of(self.budget) if self.budget is not None else "medium"


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _stops(v: Any) -> tuple[str, ...]:
    if isinstance(v, str):
        return (v,) if v else ()
    return tuple(s for s in v if isinstance(s, str) and s) if isinstance(v, list) else ()


def _obj(v: Any) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], v) if isinstance(v, Mapping) else {}


def _effort(v: Any) -> Effort | None:
    return cast(Effort, v) if v in EFFORTS else ("high" if v == "xhigh" else None)


#: The settings every translation decides itself: never carried, never named as lost.
DECIDED = frozenset({"model", "stream", "stream_options"})


def _anthropic(f: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    tc, th = _obj(f.get("tool_choice")), _obj(f.get("thinking"))
    kind = tc.get("type")
    choice = {"auto": "auto", "none": "none", "any": "required", "tool": "tool"}.get(str(kind))
    on = th.get("type") in ("enabled", "adaptive") if th else None
    out = {
        "max_tokens": _int(f.get("max_tokens")), "temperature": _num(f.get("temperature")),
        "top_p": _num(f.get("top_p")), "stop": _stops(f.get("stop_sequences")), "choice": choice,
        "tool": tc.get("name") if kind == "tool" else None,
        "parallel": False if tc.get("disable_parallel_tool_use") is True else None,
        "thinking": on, "budget": _int(th.get("budget_tokens")), "show": bool(on),
    }  # fmt: skip
    return out, {"max_tokens", "temperature", "top_p", "stop_sequences", "tool_choice", "thinking"}


def _openai_choice(v: Any) -> tuple[Choice | None, str | None]:
    if v in ("auto", "none", "required"):
        return cast(Choice, v), None
    tc = _obj(v)
    name = tc.get("name") or _obj(tc.get("function")).get("name")
    return ("tool", str(name)) if tc.get("type") == "function" and name else (None, None)


def _chat(f: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    choice, tool = _openai_choice(f.get("tool_choice"))
    th = _obj(f.get("thinking"))
    effort = _effort(f.get("reasoning_effort"))
    on: bool | None = None
    if th.get("type") in ("enabled", "disabled"):
        on = th.get("type") == "enabled"
    elif f.get("reasoning_effort") == "none":
        on = False
    elif effort is not None:
        on = True
    limit = _int(f.get("max_completion_tokens"))
    out = {
        "max_tokens": limit if limit is not None else _int(f.get("max_tokens")),
        "temperature": _num(f.get("temperature")), "top_p": _num(f.get("top_p")),
        "stop": _stops(f.get("stop")), "choice": choice, "tool": tool,
        "parallel": f["parallel_tool_calls"] if isinstance(f.get("parallel_tool_calls"), bool) else None,
        "thinking": on, "effort": effort, "show": bool(on),
    }  # fmt: skip
    used = {"max_completion_tokens", "max_tokens", "temperature", "top_p", "stop", "tool_choice",
            "parallel_tool_calls", "thinking", "reasoning_effort"}  # fmt: skip
    return out, used


def _responses(f: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    choice, tool = _openai_choice(f.get("tool_choice"))
    r = _obj(f.get("reasoning"))
    effort = _effort(r.get("effort"))
    on = (r.get("effort") != "none") if r else None
    out = {
        "max_tokens": _int(f.get("max_output_tokens")), "temperature": _num(f.get("temperature")),
        "top_p": _num(f.get("top_p")), "choice": choice, "tool": tool,
        "parallel": f["parallel_tool_calls"] if isinstance(f.get("parallel_tool_calls"), bool) else None,
        "thinking": on, "effort": effort, "show": bool(on),
    }  # fmt: skip
    used = {"max_output_tokens", "temperature", "top_p", "tool_choice", "parallel_tool_calls", "reasoning"}
    return out, used


def _gemini(f: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    g = _obj(f.get("generationConfig") or f.get("generation_config"))
    th = _obj(g.get("thinkingConfig") or g.get("thinking_config"))
    fc = _obj(_obj(f.get("toolConfig") or f.get("tool_config")).get("functionCallingConfig"))
    mode = str(fc.get("mode", "")).upper()
    names = fc.get("allowedFunctionNames")
    choice: Choice | None = {"AUTO": "auto", "NONE": "none", "ANY": "required"}.get(mode)  # type: ignore[assignment]
    tool = None
    if choice == "required" and isinstance(names, list) and len(names) == 1 and isinstance(names[0], str):
        choice, tool = "tool", names[0]
    budget = _int(th.get("thinkingBudget", th.get("thinking_budget")))
    level = th.get("thinkingLevel", th.get("thinking_level"))
    on = None if budget is None and level is None else budget != 0
    out = {
        "max_tokens": _int(g.get("maxOutputTokens")), "temperature": _num(g.get("temperature")),
        "top_p": _num(g.get("topP")), "stop": _stops(g.get("stopSequences")), "choice": choice,
        "tool": tool, "thinking": on, "budget": budget if budget and budget > 0 else None,
        "effort": _effort(str(level).lower()) if level else None,
        "show": th.get("includeThoughts", th.get("include_thoughts")) is True,
    }  # fmt: skip
    return out, {"generationConfig", "generation_config", "toolConfig", "tool_config"}


def _ollama(f: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    o = _obj(f.get("options"))
    think = f.get("think")
    on = None if think is None else think is not False
    out = {
        "max_tokens": _int(o.get("num_predict")), "temperature": _num(o.get("temperature")),
        "top_p": _num(o.get("top_p")), "stop": _stops(o.get("stop")), "thinking": on,
        "effort": _effort(think) if isinstance(think, str) else None, "show": bool(on),
    }  # fmt: skip
    return out, {"options", "think"}


_READERS = {
    "anthropic": _anthropic,
    "openai-chat": _chat,
    "openai-responses": _responses,
    "gemini": _gemini,
    "ollama": _ollama,
}
#: How a wire's body says it wants a stream when its ``stream`` field is absent (Ollama streams unless
#: told not to; Gemini says it in the URL).
_STREAM_DEFAULT = {"ollama": True}


def read_settings(wire: str, fields: Mapping[str, Any], *, path_stream: bool = False) -> Asked:
    """The settings of an agent's request on ``wire`` (its top-level fields but the conversation)."""
    reader = _READERS.get(wire)
    got, used = reader(fields) if reader is not None else ({}, set[str]())
    stream = fields.get("stream")
    streamed = path_stream or (stream is True) or (stream is None and _STREAM_DEFAULT.get(wire, False))
    rest = {k: v for k, v in fields.items() if k not in used and k not in DECIDED}
    return Asked(**{k: v for k, v in got.items() if v is not None}, stream=streamed, rest=rest)


__all__ = ["BUDGETS", "DECIDED", "EFFORTS", "Asked", "Choice", "Effort", "effort_of", "read_settings"]

"""What a wire knows for the proxy's request translation (design 48-49), as one value per wire
(``Wire.translation``): how its bodies say their settings, how it writes them, what call ids its agents
take.

The settings travel in words every wire has (:class:`Asked`): the output limit, temperature, top_p, stop
sequences, tool choice (auto, none, required, a named tool), parallel calls, thinking (on or off, a budget
or an effort) and whether the agent asked to *see* reasoning. A wire's ``read`` takes them from its own
body's top-level fields (and says which fields it read: every other one is carried or named by the
translation); its ``write`` puts them in its own fields for a vessel, within its provider's limits, and
names in :attr:`Fields.notes` what it cannot carry. Pure functions of plain values, like the rest of a
wire.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from toolreplay.model import History, Message, ToolCall
from toolreplay.wires.vessel import VesselProfile

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


@dataclass(slots=True)
class Fields:
    """What a wire's ``write`` makes of :class:`Asked`: the render's own options (each wire names the
    limit and temperature itself), top-level fields of the body, and notes."""

    max_tokens: int | None = None
    temperature: float | None = None
    include: tuple[str, ...] = ()
    body: dict[str, Any] = field(default_factory=lambda: {})
    notes: list[str] = field(default_factory=lambda: [])
    #: The top-level field (and its value; None: taken out) that turns thinking off on this wire: the
    #: translation turns thinking off where the upstream's rules would refuse the request with it on.
    thinking_off: tuple[str, Any] | None = None

    def lost(self, wire: str, what: str) -> None:
        self.notes.append(f"{what} not carried: {wire} has no such setting")


@dataclass(frozen=True, slots=True)
class IdRule:
    """What a wire's agents take as a call id (the SDKs' and the providers' own checks), and the prefixes
    of the ids minted for them."""

    pattern: re.Pattern[str] | None = None
    max_len: int | None = None
    call_prefix: str = "call_"
    answer_prefix: str = ""

    def fits(self, call_id: str) -> bool:
        """Whether ``call_id`` is valid as it is on this wire."""
        if not call_id or (self.max_len is not None and len(call_id) > self.max_len):
            return False
        return self.pattern is None or self.pattern.match(call_id) is not None


#: ``read``: a body's top-level fields -> what they ask (its ``stream`` aside) and the fields read.
ReadSettings = Callable[[Mapping[str, Any]], tuple[Asked, frozenset[str]]]
#: ``write``: what was asked, the vessel, the fields to fill.
WriteSettings = Callable[[Asked, VesselProfile, Fields], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Earlier:
    """How a wire's body names earlier turns its server keeps (Responses' ``previous_response_id``,
    design 55): the proxy rebuilds them from its store."""

    #: The id of the earlier answer a body continues; None when the body carries its whole history.
    named: Callable[[Mapping[str, Any]], str | None]
    #: The body without that id, its input led by items that make ``calls`` (the earlier answer's calls
    #: the body answers), so the wire's reader pairs each answer with its call.
    opened: Callable[[Mapping[str, Any], Sequence[ToolCall]], dict[str, Any]]
    #: How the wire's server refuses an id it does not know: (status, body); the second argument is
    #: more to say (why the proxy cannot look it up), or "".
    unknown: Callable[[str, str], tuple[int, dict[str, Any]]]
    #: Whether an earlier message goes on into the continued request (Responses: all but the earlier
    #: request's ``instructions``, which OpenAI does not carry over).
    carried: Callable[[Message], bool] = lambda m: True


@dataclass(frozen=True, slots=True)
class Memoized:
    """How a wire's request reader takes the proxy's read memo (design 53): ``parse(body, memo=...,
    raws=...)`` gives the history ``parse_request`` gives, each message of the body's list (its
    ``list_key``) and each value of ``whole`` read once per exact bytes."""

    parse: Callable[..., History]
    #: Top-level keys read whole and keyed by their bytes (Anthropic's ``system`` and ``tools``).
    whole: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Translation:
    """A wire's side of request translation (design 48-49)."""

    read: ReadSettings
    write: WriteSettings
    ids: IdRule
    #: Whether a body of this wire streams when it says nothing (Ollama streams unless told not to).
    stream_default: bool = False
    #: Whether and how its bodies name earlier turns the server keeps (design 55).
    earlier: Earlier | None = None
    #: How its requests are read through the proxy's memo (design 53); None: read whole every time.
    memoized: Memoized | None = None
    #: The provider's words refusing a body of this wire for its thinking setting alone (Anthropic: a tool
    #: loop that does not open with the model's own thinking block; Moonshot: a tool-call message without
    #: its reasoning), or None: what the translation asks before it turns thinking off (design 48).
    #: None here: the wire's whole rules are asked (a check of every rule, twice, on a long body).
    thinking_refusal: Callable[[VesselProfile, Mapping[str, Any]], str | None] | None = None


# -- what the wires' readers share ------------------------------------------------------------------


def num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def integer(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def stops(v: Any) -> tuple[str, ...]:
    if isinstance(v, str):
        return (v,) if v else ()
    return tuple(s for s in v if isinstance(s, str) and s) if isinstance(v, list) else ()


def obj(v: Any) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], v) if isinstance(v, Mapping) else {}


def effort(v: Any) -> Effort | None:
    return cast(Effort, v) if v in EFFORTS else ("high" if v == "xhigh" else None)


def asked(**given: Any) -> Asked:
    """An :class:`Asked` of the values a reader found (None: not said)."""
    return Asked(**{k: v for k, v in given.items() if v is not None})


__all__ = [
    "BUDGETS",
    "EFFORTS",
    "Asked",
    "Choice",
    "Earlier",
    "Effort",
    "Fields",
    "IdRule",
    "Memoized",
    "ReadSettings",
    "Translation",
    "WriteSettings",
    "asked",
    "effort",
    "effort_of",
    "integer",
    "num",
    "obj",
    "stops",
]

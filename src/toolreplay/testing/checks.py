"""How a double decides to refuse a request: the wire's own rules, plus what only a server sees.

A request the provider would take gets None, else the message of the 400 it would answer: first the
double's own checks (``Wire.double().check``: the model, stream settings, a vessel's demands), then the
first :class:`~toolreplay.wires.contract.Refusal` of the wire's rules (``Wire.rules``, the same rules the
validator and ``check --offline`` run), with the provider's own text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolreplay._vessels import Vessel


@dataclass(frozen=True, slots=True)
class Rules:
    """Vessel-dependent rules of the doubles' own checks: the id limit of a request that names no vessel
    (OpenAI's own server: 40), Codex's stream/store demands, Gemini 3's thought signatures; the vessel
    the request names (the wire's rules it is held to depend on whose server it is: Moonshot's reasoning
    rule) and the model the URL names (Gemini's signatures)."""

    max_id_len: int | None = 40
    codex: bool = False
    require_signatures: bool = True
    vessel: Vessel | None = None
    model: str | None = None


def as_list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def double_vessel(wire: str, rules: Rules) -> Vessel:
    """The vessel whose rules a request is held to: the one its URL names (else a plain one of ``wire``
    with the double's id limit), asked for the model the request names."""
    from dataclasses import replace

    from toolreplay._vessels import Vessel

    v = rules.vessel
    if v is None or v.wire != wire:
        v = Vessel(f"{wire} double", wire, "", None, "", max_id_len=rules.max_id_len)
    return replace(v, model=rules.model) if rules.model else v


def check_request(wire: str, body: Mapping[str, Any], rules: Rules) -> str | None:
    """The provider error text ``wire``'s server would answer ``body`` with, or None when it takes it."""
    from toolreplay.wires import get_wire
    from toolreplay.wires.contract import first_refusal

    w = get_wire(wire)
    if w.double is None:
        raise ValueError(f"wire {wire} has no provider double")
    problem = w.double().check(body, rules)
    if problem:
        return problem
    problems: list[str] = []
    w.rules(double_vessel(wire, rules), body, problems)
    return first_refusal(problems)


__all__ = ["Rules", "as_list", "as_map", "check_request", "double_vessel"]

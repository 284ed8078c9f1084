"""How a double decides to refuse a request: the wire's own rules, plus what only a server sees.

A request the provider would take gets None, else the message of the 400 it would answer: first the
double's own checks (``Wire.double().check``: the model, stream settings, a vessel's demands), then the
first :class:`~toolreplay.wires.contract.Refusal` of the wire's rules (``Wire.rules``, the same rules the
validator and ``check --offline`` run), with the provider's own text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.wires.doubles import Rules, as_list, as_map

if TYPE_CHECKING:
    from toolreplay._vessels import Vessel


def double_vessel(wire: str, rules: Rules) -> Vessel:
    """The vessel whose rules a request is held to: the one its URL names (else a plain one of ``wire``
    with the double's id limit), asked for the model the request names."""
    from dataclasses import replace

    from toolreplay._vessels import Vessel

    v = rules.vessel
    if not isinstance(v, Vessel) or v.wire != wire:
        v = Vessel(
            name=f"{wire} double", wire=wire, base_url="", key_env=None, model="", max_id_len=rules.max_id_len
        )
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

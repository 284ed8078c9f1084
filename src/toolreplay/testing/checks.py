"""What the doubles' request checks share: the vessel-dependent rules and small readers.

Each wire's double (``toolreplay.wires.<wire>.double``, reached through ``Wire.double``) holds its own
checks: for a request the provider would take None, else the message of the 400 it would answer. Only
rules that real servers enforce are there (each names its provider text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolreplay._vessels import Vessel


@dataclass(frozen=True, slots=True)
class Rules:
    """Vessel-dependent rules: the Chat id limit (OpenAI's own server: 40), Codex's stream/store demands,
    Gemini 3's thought signatures; the vessel the request names (its wire's rules may depend on whose
    server it is: Moonshot's reasoning rule) and the model the URL names (Gemini's signatures)."""

    max_id_len: int | None = 40
    codex: bool = False
    require_signatures: bool = True
    vessel: Vessel | None = None
    model: str | None = None


def too_long(where: str, value: str, limit: int) -> str:
    return (
        f"Invalid '{where}': string too long. Expected a string with maximum length {limit}, "
        f"but got a string with length {len(value)} instead."
    )


def as_list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def check_request(wire: str, body: Mapping[str, Any], rules: Rules) -> str | None:
    """The provider error text ``wire``'s server would answer ``body`` with, or None when it takes it."""
    from toolreplay.wires import get_wire

    double = get_wire(wire).double
    if double is None:
        raise ValueError(f"wire {wire} has no provider double")
    return double().check(body, rules)


__all__ = ["Rules", "as_list", "as_map", "check_request", "too_long"]

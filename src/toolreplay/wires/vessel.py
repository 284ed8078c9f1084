"""What a wire reads of a vessel, as a Protocol (:class:`toolreplay.Vessel` is one): in a module of its own,
below both the contract (:mod:`toolreplay.wires.contract`, which re-exports it) and the doubles' shared
parts (:mod:`toolreplay.wires.doubles`), so neither imports the other for it.
"""

from __future__ import annotations

from typing import Protocol


class VesselProfile(Protocol):
    """What a wire reads of a vessel (a :class:`toolreplay.Vessel` is one): its name, wire, model, base URL,
    id policy and length, and its quirk flags. A Protocol, so that the wires need nothing of the vessel
    table's module (which asks the wire registry which wires exist)."""

    @property
    def name(self) -> str: ...
    @property
    def wire(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def base_url(self) -> str: ...
    @property
    def id_policy(self) -> str: ...
    @property
    def max_id_len(self) -> int | None: ...
    def has(self, flag: str) -> bool: ...


__all__ = ["VesselProfile"]

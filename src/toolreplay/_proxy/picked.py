"""A request a model route takes (design 47), as the routed path and what answers for it hold it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolreplay._proxy.model_routes import ModelRoute
from toolreplay._proxy.routes import Route


@dataclass(frozen=True, slots=True)
class Picked:
    """A request a route takes: its path route, the model route, its body, and whether it is a count."""

    route: Route
    model_route: ModelRoute
    #: the body; a generation's as its top-level slices (read whole on the translation thread, design 53)
    body: Mapping[str, Any]
    #: The request's bytes as the agent sent them.
    size: int
    count: bool = False
    #: the agent's request headers (some go on to an upstream of the agent's own wire, design 56)
    headers: Mapping[str, str] = field(default_factory=dict)


__all__ = ["Picked"]

"""Where a request to the proxy goes: the wire whose provider path it is, and the upstream URL.

Every fact comes from the wires (``Wire.http``: the provider's path, its other paths, the base URL's
suffix, the headers only its clients send); nothing here names a wire.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from toolreplay.wires import all_wires
from toolreplay.wires.contract import Framing, Http, Wire

Kind = Literal["generate", "side"]

#: What Claude Code and the other agents probe before their first request: answered 200 here.
PROBES = frozenset({("HEAD", "/"), ("GET", "/api/hello"), ("HEAD", "/api/hello")})


@dataclass(frozen=True, slots=True)
class Route:
    """A request's wire, what it is (a model request the proxy records, or another provider path passed
    through), the model its path names, whether the path asks for a stream, and the upstream URL."""

    wire: Wire
    kind: Kind
    model: str | None
    path_stream: bool
    url: str
    #: How an answer streamed to this request is framed (the wire's, or as its query asks: Gemini's
    #: ``alt=sse``).
    framing: Framing = "sse"


def _served() -> list[tuple[Wire, Http]]:
    return [(w, w.http) for w in all_wires() if w.http is not None and w.http.path is not None]


def upstream_url(base: str, http: Http, path: str, query: str) -> str:
    """``path`` (from the server root, as the agent asked it) on the upstream: the base URL without the
    wire's suffix (``/v1``) is the upstream's root, so the path keeps the API version the agent chose."""
    base = base.rstrip("/")
    root = base[: -len(http.base_suffix)] if http.base_suffix and base.endswith(http.base_suffix) else base
    return root + path + (f"?{query}" if query else "")


def _marked(http: Http, headers: Mapping[str, str]) -> bool:
    return any(m in headers for m in http.marks)


def resolve(path: str, query: str, headers: Mapping[str, str], upstreams: Mapping[str, str]) -> Route | None:
    """The route of a request (``headers`` with lower-case names), or None for a path no wire serves."""
    side: list[tuple[Wire, Http]] = []
    for wire, http in _served():
        assert http.path is not None
        found = http.path.match(path)
        if found is not None and wire.name in upstreams:
            named = found.groupdict()
            url = upstream_url(upstreams[wire.name], http, path, query)
            framing = http.framing_of(query) if http.framing_of is not None else http.framing
            streams = named.get("stream") is not None
            return Route(wire, "generate", named.get("model"), streams, url, framing)
        if wire.name in upstreams and any(p.match(path) for p in http.side_paths):
            side.append((wire, http))
    if not side:
        return None
    # a path several wires share (/v1/models) goes to the wire whose own headers the request carries
    wire, http = next(((w, h) for w, h in side if _marked(h, headers)), side[0])
    return Route(wire, "side", None, False, upstream_url(upstreams[wire.name], http, path, query))


def error_wire(path: str, headers: Mapping[str, str]) -> Wire:
    """The wire whose error shape answers a request the proxy refuses before knowing its route: the
    wire whose headers it carries, else the one whose base suffix its path starts with, else the first."""
    served = _served()
    for wire, http in served:
        if _marked(http, headers):
            return wire
    by_suffix = sorted(served, key=lambda wh: -len(wh[1].base_suffix))
    for wire, http in by_suffix:
        if http.base_suffix and path.startswith(http.base_suffix + "/"):
            return wire
    first = path.split("/")[1] if path.startswith("/") else ""
    for wire, http in served:
        if http.path is not None and first and http.path.pattern.startswith(f"^/{first}/"):
            return wire
    return served[0][0]


__all__ = ["PROBES", "Route", "error_wire", "resolve", "upstream_url"]

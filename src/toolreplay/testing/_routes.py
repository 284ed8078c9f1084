"""Where a request to the double goes: its wire (by the wires' own routes), vessel and framing.

Every registered wire with a double (``Wire.double``) is served; nothing here names a wire.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from toolreplay import _jsonenc as jsonenc
from toolreplay.testing.answers import Event
from toolreplay.wires import all_wires, get_wire
from toolreplay.wires.contract import Double, Framing, Wire

_PREFIX = re.compile(r"^/vessel/(?P<name>[A-Za-z0-9_.-]+)(?P<rest>/.*)$")


def doubled() -> list[tuple[Wire, Double]]:
    """Every registered wire that has a double, with it (the routes are the doubles' own)."""
    return [(w, w.double()) for w in all_wires() if w.double is not None]


def double_of(wire: str) -> Double:
    double = get_wire(wire).double
    if double is None:
        raise ValueError(f"wire {wire} has no provider double")
    return double()


def route(path: str) -> tuple[str | None, str | None, str | None, bool]:
    """(wire, vessel, model named by the path, the path asks for a stream) of a request path."""
    vessel = None
    m = _PREFIX.match(path)
    if m:
        vessel, path = m.group("name"), m.group("rest")
    for wire, double in doubled():
        found = double.route.match(path)
        if found:
            named = found.groupdict()
            return wire.name, vessel, named.get("model"), named.get("stream") is not None
    return None, vessel, None, False


def _ndjson(wire: str) -> bool:
    http = get_wire(wire).http
    return http is not None and http.framing == "ndjson"


def framing_of(wire: str, target: str) -> Framing:
    """How a stream to the request ``target`` (its path and query) is framed: the wire's, or as the query
    asks (Gemini: ``alt=sse`` SSE, else the REST default of one JSON array)."""
    http = get_wire(wire).http
    if http is None:
        return "sse"
    return http.framing_of(target.partition("?")[2]) if http.framing_of is not None else http.framing


def content_type(wire: str, target: str = "") -> str:
    framing = framing_of(wire, target)
    return {"ndjson": "application/x-ndjson", "json-array": "application/json"}.get(
        framing, "text/event-stream"
    )


def framed(wire: str, target: str, events: Sequence[Event], whole: bool = True) -> Iterator[bytes]:
    """``events`` as the stream's bytes, one write each. A JSON array (Gemini's REST stream) is opened by
    the first element and each next one follows its comma, as Gemini writes them; ``]`` comes after the
    last only when the stream is ``whole`` (a stream cut off leaves the array open)."""
    if framing_of(wire, target) != "json-array":
        yield from (frame(wire, e) for e in events)
        return
    for i, (_name, payload) in enumerate(events):
        data = payload if isinstance(payload, str) else jsonenc.dumps(payload)
        yield (("[" if i == 0 else ",\r\n") + data).encode("utf-8")
    if whole:
        yield b"]" if events else b"[]"


def frame(wire: str, event: Event) -> bytes:
    name, payload = event
    data = payload if isinstance(payload, str) else jsonenc.dumps(payload)
    if _ndjson(wire):
        return (data + "\n").encode("utf-8")
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {data}\n\n".encode()


__all__ = ["content_type", "double_of", "doubled", "frame", "framed", "framing_of", "route"]

"""A loopback server for the bridge tests: it answers every POST with what a bridge wrote (a whole body,
or stream events framed as the wire frames them, one write per event), so an official SDK reads the
writer's output over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from helpers_common import loopback_server
from toolreplay.wires import all_wires
from toolreplay.wires.bridge import Bridge, Delta, Event, Outbound


def frame(framing: Literal["sse", "ndjson"], event: Event) -> bytes:
    name, payload = event
    data = payload if isinstance(payload, str) else json.dumps(payload)
    if framing == "ndjson":
        return (data + "\n").encode()
    return (f"event: {name}\n" if name else "").encode() + f"data: {data}\n\n".encode()


@dataclass
class Written:
    """What the server answers: ``events`` to a request that streams, ``body`` to one that does not;
    ``requests``: the bodies it was sent."""

    framing: Literal["sse", "ndjson"]
    events: list[Event] = field(default_factory=list)
    body: dict[str, Any] = field(default_factory=dict)
    streams_by_default: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Relay:
    """What the loopback server answers: ``stream()`` (the frames, produced while they are sent) to a
    request that streams, ``body`` to one that does not; ``errors``: what went wrong while producing."""

    stream: Callable[[], Iterator[bytes]] | None = None
    body: dict[str, Any] | None = None
    framing: Literal["sse", "ndjson"] = "sse"
    errors: list[BaseException] = field(default_factory=list)
    #: Whether a request (its path, its body) asks for a stream: by default as the providers read it.
    streams: Callable[[str, Any], bool] | None = None
    #: The bodies the server was sent.
    requests: list[Any] = field(default_factory=list)


def _streams(path: str, request: Any) -> bool:
    """As the provider of the wire that serves ``path`` reads it (its double's reading): Gemini streams by
    its URL, Ollama unless told not to, the others when the body says ``"stream": true``."""
    for w in all_wires():
        found = w.http.path.match(path.split("?")[0]) if w.http and w.http.path else None
        if found is not None and w.double is not None:
            return w.double().wants_stream(request, found.groupdict().get("stream") is not None)
    return isinstance(request, dict) and request.get("stream") is True


@contextmanager
def relaying(relay: Relay) -> Iterator[str]:
    """``http://127.0.0.1:PORT``, answering every POST from ``relay``."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            relay.requests.append(request)
            if not (relay.streams or _streams)(self.path, request):
                data = json.dumps(relay.body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            assert relay.stream is not None
            kind = "application/x-ndjson" if relay.framing == "ndjson" else "text/event-stream"
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("connection", "close")
            self.end_headers()
            try:
                for piece in relay.stream():
                    self.wfile.write(piece)
                    self.wfile.flush()
            except Exception as exc:  # the test re-raises it: a client only sees a broken stream
                relay.errors.append(exc)
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            return None

    with loopback_server(Handler) as base:
        yield f"{base}"


@contextmanager
def serving(written: Written) -> Iterator[str]:
    """``http://127.0.0.1:PORT``, answering POSTs with ``written`` (one write per event, as a relay
    sends them); a request streams when its body says so, else as ``streams_by_default``."""
    relay = Relay(
        stream=lambda: (frame(written.framing, e) for e in written.events),
        body=written.body,
        framing=written.framing,
        streams=lambda path, request: request.get("stream", written.streams_by_default) is True,
        requests=written.requests,
    )
    with relaying(relay) as url:
        yield url


def write_all(bridge: Bridge, deltas: Sequence[Delta], out: Outbound) -> tuple[list[Event], list[str]]:
    """The events a bridge's writer makes of ``deltas`` (closed), and its notes."""
    writer = bridge.writer(out)
    events = [e for d in deltas for e in writer.write(d)]
    return [*events, *writer.close()], writer.notes


def read_all(bridge: Bridge, events: Sequence[Event]) -> list[Delta]:
    """What a bridge's reader makes of ``events``, each payload through its JSON text as on the wire."""
    reader = bridge.reader()
    payloads = [p if isinstance(p, str) else json.loads(json.dumps(p)) for _, p in events]
    return [*(d for p in payloads for d in reader.feed(p)), *reader.finish()]

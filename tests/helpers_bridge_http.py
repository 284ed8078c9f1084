"""A loopback server for the bridge tests: it answers every POST with what a bridge wrote (a whole body,
or stream events framed as the wire frames them, one write per event), so an official SDK reads the
writer's output over real HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

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


@contextmanager
def serving(written: Written) -> Iterator[str]:
    """``http://127.0.0.1:PORT``, answering POSTs with ``written``."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            written.requests.append(request)
            if request.get("stream", written.streams_by_default) is not True:
                data = json.dumps(written.body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            kind = "application/x-ndjson" if written.framing == "ndjson" else "text/event-stream"
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("connection", "close")
            self.end_headers()
            for event in written.events:  # one write each, as a relay sends them
                self.wfile.write(frame(written.framing, event))
                self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


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

"""Test data several test modules share: the example history of issue 2 (SECTION_2) and the demo file.

Read-only: tests that need to change SECTION_2 copy it first (it is shared across modules).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
#: The tests' folder (its data/, corpus/ and helper scripts), for a test module in a subfolder (tests/wires/).
TESTS = ROOT / "tests"
DEMO = ROOT / "src" / "toolreplay" / "data" / "demo.json"

#: The client of a test's own requests to a double or a proxy, where it would call ``httpx.post``: each
#: ``httpx.post`` makes a client, and a client loads the CA bundle again (about 23 ms of CPU, more than a
#: request to a double costs). No connection is kept alive, so every request opens its own as it would
#: through ``httpx.post`` (a test of closed or limited connections sees the same); the other defaults are
#: httpx's too (a 5 s timeout, no redirect followed). A double sets no cookie for the jar to keep.
HTTP = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))


@contextmanager
def loopback_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free loopback port, threaded, until the block ends: its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # shutdown() waits for the loop's next poll: every 20 ms, not 0.5 s
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


#: The stored-history example: two user turns, one reply with two calls, one reply without calls.
SECTION_2: dict[str, Any] = {
    "id": "conv-1",
    "messages": [
        {"id": "m1", "role": "user", "text": "Close todo #12, the build is green."},
        {
            "id": "m2",
            "role": "assistant",
            "text": "Closed #12.",
            "tool_uses": [
                {"tool_name": "coop", "tool_input": {"action": "close", "id": 12}},
                {"tool_name": "result", "tool_input": "status: closed"},
            ],
        },
        {"id": "m3", "role": "user", "text": "And #13?"},
        {"id": "m4", "role": "assistant", "text": "I'll close #13 now.", "tool_uses": []},
    ],
}

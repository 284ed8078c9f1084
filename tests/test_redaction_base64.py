"""A key echoed base64-encoded is redacted (issue 27, item 9): a server that echoes the request's key as
an ``Authorization: Basic`` header (``user:KEY`` encoded) leaves no piece of the key in the terminal, the
dumps or the store, whatever the key's alignment in the encoded text, in the url-safe alphabet too, and
with the slashes JSON-escaped (``\\/``). The oracle decodes every base64 run of the output at every
offset and looks for 9 bytes of the key (what 12 base64 characters carry)."""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from toolreplay._transport.dump import redact, redact_bytes

KEY = "sk-proj-Q7wErTy9UiOp3AsDfGh5JkLz+?>~"  # '?>~' and '+' put '/' and '+' in its base64
_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}")


def _decoded_runs(text: str) -> Iterator[bytes]:
    """Every base64 run of ``text`` decoded from each of its first four characters (any alignment),
    in both alphabets."""
    for run in _RUN.findall(text.replace("\\/", "/")):
        std = run.replace("-", "+").replace("_", "/")
        for start in range(4):
            part = std[start:]
            part = part[: len(part) // 4 * 4]
            try:
                yield base64.b64decode(part, validate=True)
            except binascii.Error:
                continue


def key_pieces(text: str) -> list[str]:
    """Pieces of the key in ``text``: 12 characters as they are, or 9 bytes in a base64 run."""
    raw = KEY.encode()
    found = [KEY[i : i + 12] for i in range(len(KEY) - 11) if KEY[i : i + 12] in text]
    for data in _decoded_runs(text):
        found += [f"base64 of {raw[i : i + 9]!r}" for i in range(len(raw) - 8) if raw[i : i + 9] in data]
    return found


def _basic(user: str, key: str = KEY) -> str:
    return base64.b64encode(f"{user}:{key}".encode()).decode()


def echoes(key: str) -> list[str]:
    """The ways a server may echo the key base64-encoded."""
    return [
        f"Authorization: Basic {_basic('', key)}",  # the key at offset 1 of the encoded bytes
        f"Authorization: Basic {_basic('u', key)}",  # offset 2
        f"Authorization: Basic {_basic('us', key)}",  # offset 0 (3 bytes before it)
        f"Basic {_basic('user', key + ':and-more')}",  # something after it too
        f"token={base64.urlsafe_b64encode(key.encode()).decode()}",  # url-safe, no padding kept
        f"blob {base64.b64encode(b'prefix-' + key.encode() + b'-suffix').decode()}",
    ]


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_the_oracle_sees_every_echo() -> None:
    for said in echoes(KEY):
        assert key_pieces(said), said


@pytest.mark.parametrize(
    "said", echoes(KEY), ids=["offset 1", "offset 2", "offset 0", "with a suffix", "url-safe", "in a blob"]
)
def test_a_base64_echo_of_the_key_is_redacted(said: str) -> None:
    out = redact(f"bad credentials: {said} (rejected)")
    assert "[redacted]" in out and not key_pieces(out), out
    assert out.startswith("bad credentials: ") and out.endswith(" (rejected)")
    data = json.dumps({"error": said}).replace("/", "\\/").encode()  # a JSON encoder escaping slashes
    assert not key_pieces(redact_bytes(data).decode())


def test_base64_of_something_else_is_untouched() -> None:
    text = f"Authorization: Basic {_basic('user', 'a-password-that-is-no-key')} and {_basic('', KEY[:8])}"
    assert redact(text) == text
    data = text.encode()
    assert redact_bytes(data) is data


class _EchoBasic(BaseHTTPRequestHandler):
    """A provider (or a proxy in front of it) whose 401 quotes the credentials it got, as Basic auth."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        sent = self.headers.get("authorization", "").removeprefix("Bearer ")
        message = "invalid credentials: " + "; ".join(echoes(sent))
        # encoded with every slash escaped, as PHP's json_encode writes it
        body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
        data = body.replace("/", "\\/").encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.server.seen.append(sent)  # type: ignore[attr-defined]

    def log_message(self, *args: object) -> None:
        return None


@contextmanager
def echo_server() -> Iterator[tuple[str, list[str]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoBasic)
    server.seen = []  # type: ignore[attr-defined]
    # shutdown() waits for the loop's next poll: every 20 ms, not 0.5 s
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.seen  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_a_key_echoed_as_basic_auth_by_the_provider_leaves_no_piece_anywhere(tmp_path: Path) -> None:
    env = {**os.environ, "MOONSHOT_API_KEY": KEY, "TOOLREPLAY_DB": str(tmp_path / "t.db")}
    with echo_server() as (url, seen):
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "toolreplay", "turn", "hi", "--vessel", "kimi", "--conversation", "c",
             "--base-url", url, "--send-key", "--dump-requests", str(tmp_path / "dumps")],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
    assert seen == [KEY]  # the key really went, and came back encoded
    assert done.returncode != 0 and "HTTP 401" in done.stderr and "[redacted]" in done.stderr
    assert not key_pieces(done.stdout + done.stderr), done.stderr
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert any(p.name.endswith("-response.json") for p in written)
    for path in written:
        text = path.read_bytes().decode("utf-8", "replace")
        assert not key_pieces(text), (path.name, key_pieces(text))
    assert time.monotonic() - started < 30


def test_a_long_run_beside_an_escape_is_redacted_in_linear_time() -> None:
    # An image's base64 beside one \u escape: the escaped-run pattern rescanned the run from each of
    # its characters (20,000 characters took 10 s, 50,000 took 90 s).
    escaped_key = "".join(f"\\u{ord(c):04x}" for c in KEY)
    data = ('{"a": "caf\\u00e9", "img": "' + "A" * 20_000 + '", "k": "' + escaped_key + '"}').encode()
    started = time.monotonic()
    out = redact_bytes(data).decode()
    assert time.monotonic() - started < 1
    assert "A" * 20_000 in out and "caf\\u00e9" in out and escaped_key not in out and "[redacted]" in out

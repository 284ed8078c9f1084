"""The proxy's own upstream transport and its pass-through check (design 44): TLS upstreams, bodies larger
than one write, an upstream that closes a kept-alive connection, a large answer to an agent that reads
slowly, and a body checked without being parsed refused or passed exactly as the recording proxy does."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

pytest.importorskip("starlette")

from helpers_common import HTTP
from helpers_raw_server import chat_answer
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.serve import Running, start

ANSWER = chat_answer('"ok"')
CHAT = "/v1/chat/completions"


class Upstream:
    """What a loopback OpenAI-Chat upstream received, and how it answers: ``answer``'s bytes, keeping the
    connection open (HTTP/1.1) and then closing it a moment later when ``close_after`` is set."""

    def __init__(self, answer: bytes = ANSWER, *, close_after: bool = False) -> None:
        self.answer, self.close_after = answer, close_after
        self.bodies: list[bytes] = []
        self.connections: set[tuple[str, int]] = set()


@contextmanager
def upstream(state: Upstream, tls: ssl.SSLContext | None = None) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            state.bodies.append(self.rfile.read(int(self.headers.get("content-length") or 0)))
            state.connections.add(self.client_address)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(state.answer)))
            self.end_headers()
            self.wfile.write(state.answer)
            self.wfile.flush()
            if state.close_after:  # an idle timeout: closed with no word in the answer
                self.close_connection = True

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    # shutdown() waits for the loop's next poll: every 20 ms, not 0.5 s
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    scheme = "https" if tls is not None else "http"
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def proxy_to(base: str, tmp: Path, *, record: bool = False) -> Iterator[Running]:
    cfg = ProxyConfig(upstreams={"openai-chat": base}, record=record, db=str(tmp / "p.db"))
    running = start(cfg)
    try:
        yield running
    finally:
        running.close()


def _post(url: str, data: bytes) -> httpx.Response:
    return HTTP.post(url + CHAT, content=data, headers={"content-type": "application/json"}, timeout=30)


def _body(extra: str = "") -> bytes:
    return ('{"model":"gpt-4.1","messages":[{"role":"user","content":"hi' + extra + '"}]}').encode()


@pytest.mark.parametrize("record", [False, True], ids=["pass-through", "recording"])
def test_a_body_checked_without_parsing_is_refused_or_passed_as_when_parsed(
    record: bool, tmp_path: Path
) -> None:
    state = Upstream()
    deep = b'{"model":"m","messages":' + b"[" * 5000 + b"]" * 5000 + b"}"
    refused = [
        (_body().replace(b"hi", b"h\xffi"), "not valid JSON"),  # bad UTF-8 inside a string
        (_body() + b" x", "not valid JSON"),
        (b'{"model": "m", "messages": [1,]}', "not valid JSON"),
        (deep, "not valid JSON"),
        (b'[{"model": "m"}]', "not an object"),
        (b"   ", "is empty"),
    ]
    passed = [_body("\\ud800"), b"\xef\xbb\xbf" + _body(), _body("\\u00e9 \\n")]
    with upstream(state) as base, proxy_to(base, tmp_path, record=record) as proxy:
        for data, words in refused:
            r = _post(proxy.url, data)
            assert r.status_code == 400 and words in r.json()["error"]["message"], (data[:40], r.text)
        assert state.bodies == []  # never reached the upstream
        for data in passed:
            assert _post(proxy.url, data).status_code == 200
        assert proxy.drain()
    assert state.bodies == passed  # byte for byte


def test_a_body_larger_than_one_write_goes_on_whole(tmp_path: Path) -> None:
    state = Upstream()
    big = _body("x" * (3 * 1024 * 1024))
    with upstream(state) as base, proxy_to(base, tmp_path) as proxy:
        r = _post(proxy.url, big)
        assert r.status_code == 200 and r.content == ANSWER
    assert state.bodies == [big]


def test_an_upstream_that_closes_a_kept_alive_connection_gets_a_new_one(tmp_path: Path) -> None:
    state = Upstream(close_after=True)
    with upstream(state) as base, proxy_to(base, tmp_path) as proxy:
        for _ in range(3):
            assert _post(proxy.url, _body()).status_code == 200
            time.sleep(0.2)  # the upstream's close reaches the proxy before the next request
    assert len(state.bodies) == 3 and len(state.connections) == 3


def test_kept_alive_connections_are_reused(tmp_path: Path) -> None:
    state = Upstream()
    with upstream(state) as base, proxy_to(base, tmp_path) as proxy:
        for _ in range(5):
            assert _post(proxy.url, _body()).status_code == 200
    assert len(state.bodies) == 5 and len(state.connections) == 1


def test_a_large_answer_reaches_an_agent_that_reads_slowly_whole(tmp_path: Path) -> None:
    answer = chat_answer('"' + "y" * (6 * 1024 * 1024) + '"')
    state = Upstream(answer)
    got = bytearray()
    with (
        upstream(state) as base,
        proxy_to(base, tmp_path) as proxy,
        HTTP.stream("POST", proxy.url + CHAT, content=_body(), timeout=30) as r,
    ):
        for chunk in r.iter_raw(256 * 1024):
            got += chunk
            time.sleep(0.01)  # the proxy's reading from the upstream pauses meanwhile
    assert bytes(got) == answer


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed: no certificate for the TLS upstream")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_a_tls_upstream_is_verified_and_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = _self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    state = Upstream()
    with upstream(state, tls) as base:
        with proxy_to(base, tmp_path) as proxy:  # the certificate is not trusted: refused, 502
            r = _post(proxy.url, _body())
            assert r.status_code == 502 and "cannot reach 127.0.0.1" in r.json()["error"]["message"]
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusted now
        with proxy_to(base, tmp_path) as proxy:
            for _ in range(2):
                r = _post(proxy.url, _body())
                assert r.status_code == 200 and r.content == ANSWER
    assert state.bodies == [_body(), _body()] and len(state.connections) == 1

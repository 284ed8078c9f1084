"""The double's HTTP layer has limits (issue 27, items 3 and 5): a body over the limit is refused with a
413 before it is read, a length that is not a number of bytes with a 400 (no traceback, no dropped
connection), slow or idle connections hold no thread and are closed after a deadline, and the double
keeps a bounded number of requests, so its memory stays bounded however long it runs."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from helpers_common import HTTP
from toolreplay.testing import Limits, ProviderDouble, Text

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def _address(double: ProviderDouble) -> tuple[str, int]:
    host, port = double.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _raw(double: ProviderDouble, data: bytes, *, timeout: float = 5.0) -> bytes:
    """Send ``data`` on a fresh connection and read the whole answer (until the double closes)."""
    with socket.create_connection(_address(double), timeout=timeout) as sock:
        sock.sendall(data)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


def _post_head(path: str, length: bytes) -> bytes:
    return b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n\r\n"


def _status_and_body(answer: bytes) -> tuple[int, object]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


@pytest.mark.parametrize("length", [b"abc", b"-1", b"", b"+5", b"1e3", b"0x10", b"12 13"])
def test_a_length_that_is_not_a_number_of_bytes_is_answered_400(
    length: bytes, capfd: pytest.CaptureFixture[str]
) -> None:
    with ProviderDouble() as double:
        answer = _raw(double, _post_head("/v1/chat/completions", length) + b"{}")
        status, body = _status_and_body(answer)
        assert status == 400
        assert body == {
            "error": {
                "message": f"Content-Length {length.decode()!r} is not a number of bytes",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        }
        (req,) = double.requests
        assert (req.status, req.wire, req.body, req.raw) == (400, "openai-chat", None, b"")
        assert req.rejected == f"Content-Length {length.decode()!r} is not a number of bytes"
        # and the double goes on answering
        assert (
            HTTP.post(double.base_url_for("openai-chat") + "/chat/completions", json=CHAT).status_code == 200
        )
    assert "Traceback" not in capfd.readouterr().err


def test_conflicting_lengths_are_refused() -> None:
    head = b"POST /v1/messages HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
    with ProviderDouble() as double:
        status, body = _status_and_body(_raw(double, head))
    assert status == 400
    assert body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "the request has conflicting Content-Length headers",
        },
    }


@pytest.mark.parametrize(
    ("length", "said"),
    [
        (b"40000000", "40,000,000 bytes declared"),
        (b"9" * 20, "99,999,999,999,999,999,999 bytes declared"),  # larger than any index
        (b"9" * 30, "a 30-digit number of bytes declared"),
        (b"9" * 5000, "a 5000-digit number of bytes declared"),  # int() would refuse it
    ],
)
def test_a_length_over_the_limit_is_answered_413_before_the_body_is_read(length: bytes, said: str) -> None:
    with ProviderDouble() as double:
        # Only the headers are sent: the answer comes without waiting for the body.
        answer = _raw(double, _post_head("/v1/messages", length), timeout=3)
        status, body = _status_and_body(answer)
        assert status == 413
        assert body["type"] == "error" and body["error"]["type"] == "request_too_large"  # type: ignore[index]
        assert said in body["error"]["message"]  # type: ignore[index]
        assert "at most 33,554,432 are accepted" in body["error"]["message"]  # type: ignore[index]
        assert [(r.status, r.wire) for r in double.requests] == [(413, "anthropic")]


def test_a_client_sending_a_body_over_the_limit_reads_the_413() -> None:
    with ProviderDouble(limits=Limits(max_body=100_000)) as double:
        url = double.base_url_for("openai-chat") + "/chat/completions"
        big = {"model": "m", "messages": [{"role": "user", "content": "x" * 3_000_000}]}
        answer = HTTP.post(url, json=big, timeout=10)
        assert answer.status_code == 413
        assert "3,000,0" in answer.json()["error"]["message"]
        assert HTTP.post(url, json=CHAT).status_code == 200
        assert [r.status for r in double.requests] == [413, 200]
        assert double.requests[0].raw == b""  # the refused body was not kept


def test_a_body_at_the_limit_is_taken() -> None:
    body = json.dumps(CHAT).encode()
    with ProviderDouble(limits=Limits(max_body=len(body))) as double:
        url = double.base_url_for("openai-chat") + "/chat/completions"
        assert HTTP.post(url, content=body).status_code == 200
        assert HTTP.post(url, content=body + b" ").status_code == 413


def test_the_newest_requests_are_kept_and_updated() -> None:
    with ProviderDouble(keep_requests=3) as double:
        url = double.base_url_for("openai-chat") + "/chat/completions"
        double.script(*[Text(f"answer {i}") for i in range(5)])
        for i in range(5):
            HTTP.post(url, json={**CHAT, "messages": [{"role": "user", "content": f"q{i}"}]})
        kept = double.requests
        assert [r.index for r in kept] == [2, 3, 4]
        assert [r.body["messages"][0]["content"] for r in kept] == ["q2", "q3", "q4"]
        assert [r.status for r in kept] == [200, 200, 200]
        double.clear()
        HTTP.post(url, json=CHAT)
        assert [(r.index, r.status) for r in double.requests] == [(5, 200)]
    with pytest.raises(ValueError, match="keep_requests must be at least 1"):
        ProviderDouble(keep_requests=0)
    with pytest.raises(ValueError, match=r"Limits: workers 0 \(at least 1\), idle_timeout 0 \(above 0\)"):
        Limits(workers=0, idle_timeout=0)


def _slow_connections(double: ProviderDouble, n: int) -> list[socket.socket]:
    """``n`` connections that each sent half a header block (a slowloris)."""
    out = []
    for _ in range(n):
        sock = socket.create_connection(_address(double))
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Le")
        out.append(sock)
    return out


@pytest.mark.slow
def test_slow_connections_hold_no_thread_and_a_normal_client_is_answered() -> None:
    before = threading.active_count()
    with ProviderDouble() as double:
        slow = _slow_connections(double, 1000)
        try:
            time.sleep(0.3)  # the thread-per-connection server had started a thread for each by now
            assert threading.active_count() <= before + 2, threading.active_count()
            started = time.monotonic()
            url = double.base_url_for("openai-chat") + "/chat/completions"
            answer = HTTP.post(url, json=CHAT, timeout=5)
            assert answer.status_code == 200 and time.monotonic() - started < 2
            assert threading.active_count() <= before + 3
        finally:
            for sock in slow:
                sock.close()


def test_workers_are_bounded_and_requests_beyond_them_wait_their_turn() -> None:
    with ProviderDouble(limits=Limits(workers=2), delay=0.2) as double:
        url = double.base_url_for("openai-chat") + "/chat/completions"
        results: list[int] = []
        clients = [
            threading.Thread(target=lambda: results.append(HTTP.post(url, json=CHAT, timeout=10).status_code))
            for _ in range(6)
        ]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        assert results == [200] * 6
        assert double._front is not None and double._front.workers == 2


def test_headers_not_complete_in_time_get_a_408_and_the_connection_is_closed() -> None:
    with ProviderDouble(limits=Limits(header_timeout=0.5, idle_timeout=0.5)) as double:
        (slow,) = _slow_connections(double, 1)
        started = time.monotonic()
        slow.settimeout(5)
        answer = b""
        while chunk := slow.recv(4096):
            answer += chunk
        assert 0.4 < time.monotonic() - started < 2
        assert answer.startswith(b"HTTP/1.0 408 ")
        slow.close()
        # a body that stops arriving is closed after the idle pause
        with socket.create_connection(_address(double), timeout=5) as sock:
            sock.sendall(_post_head("/v1/chat/completions", b"100") + b'{"model": ')
            assert sock.recv(4096).startswith(b"HTTP/1.0 408 ")
        assert double.requests == []  # neither request was complete


def test_headers_too_large_are_answered_431() -> None:
    with ProviderDouble() as double:
        head = b"POST /v1/chat/completions HTTP/1.1\r\n" + b"X-Pad: " + b"a" * 70_000 + b"\r\n\r\n"
        status, body = _status_and_body(_raw(double, head))
    assert status == 431
    assert body["error"]["message"] == "Request header fields too large."  # type: ignore[index]


def _rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    assert found, status
    return int(found.group(1)) / 1024


@contextmanager
def _double_process(*args: str) -> Iterator[tuple[str, int]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolreplay", "double", "--quiet", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        found = re.search(r"on (http://127\.0\.0\.1:\d+)$", proc.stdout.readline().strip())
        assert found
        yield found.group(1), proc.pid
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the RSS from /proc")
def test_the_double_command_memory_stays_bounded() -> None:
    """Four 50 MB posts took a running double from 496 to 946 MB for good; now they are refused unread,
    and accepted bodies are let go once the newest ``--keep`` requests no longer hold them."""
    with _double_process("--keep", "2") as (url, pid):
        chat = url + "/v1/chat/completions"
        HTTP.post(chat, json=CHAT)
        start = _rss_mb(pid)
        fifty = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 50_000_000}]})
        for _ in range(4):
            assert HTTP.post(chat, content=fifty, timeout=30).status_code == 413
        refused = _rss_mb(pid)
        assert refused - start < 20, (start, refused)
        twenty = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "y" * 20_000_000}]}
        sizes = []
        for _ in range(10):
            assert HTTP.post(chat, json=twenty, timeout=60).status_code == 200
            sizes.append(_rss_mb(pid))
        # Each accepted post holds 20 MB as bytes and 20 MB parsed, its echo as much again while it is
        # answered: the first posts fill the kept two and the allocator's arenas, then the memory stops
        # growing (every post kept: +60 MB a post, 28 -> 1,234 MB over these ten).
        assert max(sizes) - start < 400, (start, sizes)
        assert max(sizes[5:]) - max(sizes[:5]) < 60, (start, sizes)


@pytest.mark.slow
def test_the_double_command_logs_every_request_it_no_longer_keeps() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolreplay", "double", "--keep", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        found = re.search(r"on (http://127\.0\.0\.1:\d+)$", proc.stdout.readline().strip())
        assert found
        with httpx.Client() as client:  # a burst: all five within the time a poll of the kept ones takes
            for _ in range(5):
                client.post(found.group(1) + "/v1/chat/completions", json=CHAT)
        client_bad = _post_head("/v1/messages", b"-1")
        with socket.create_connection(("127.0.0.1", int(found.group(1).rsplit(":", 1)[1]))) as sock:
            sock.sendall(client_bad)
            sock.recv(4096)
        time.sleep(0.3)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    lines = [line.strip() for line in err.splitlines() if line.strip().startswith("#")]
    assert lines[:5] == [f"#{i} POST /v1/chat/completions  openai-chat  -> 200" for i in range(1, 6)]
    assert (
        lines[5]
        == "#6 POST /v1/messages  anthropic  -> 400 (refused: Content-Length '-1' is not a number of bytes)"
    )

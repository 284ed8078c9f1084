"""The double's HTTP layer: one thread reads every request whole, a bounded pool of threads answers.

``http.server``'s threading server spends a thread on a connection from its first byte and reads any
body length it is told: 1,500 connections sending their headers slowly held 1,502 threads,
``Content-Length: -1`` read until the client left, and ``Content-Length: abc`` ended in a traceback and a
dropped connection. Here one selector thread reads the headers and the body of every connection, with a
deadline for the headers, a longest pause for the body and a size limit for both, so a slow or idle
connection costs a socket and no thread. Only a request read whole, or refused by its headers, goes to a
worker: at most ``Limits.workers`` threads, started as work arrives. A worker answers on the blocking
socket, so a stream still goes out event by event as it is written.
"""

from __future__ import annotations

import contextlib
import errno
import queue
import selectors
import socket
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request to the double may take.

    ``max_body``: bytes of body (a longer ``Content-Length`` is answered 413 before the body is read);
    ``header_timeout``: seconds from connecting until the headers are complete (then the connection is
    closed with a 408); ``idle_timeout``: the longest pause while the body arrives or an answer is written;
    ``workers``: requests answered at once (more wait, already read, for a free worker).
    """

    max_body: int = 32 * 1024 * 1024
    header_timeout: float = 10.0
    idle_timeout: float = 30.0
    workers: int = 128

    def __post_init__(self) -> None:
        bad = [f"max_body {self.max_body} (at least 0)"] if self.max_body < 0 else []
        bad += [f"workers {self.workers} (at least 1)"] if self.workers < 1 else []
        bad += [f"{n} {v} (above 0)" for n, v in self._timeouts() if not v > 0]
        if bad:
            raise ValueError("Limits: " + ", ".join(bad))

    def _timeouts(self) -> tuple[tuple[str, float], ...]:
        return (("header_timeout", self.header_timeout), ("idle_timeout", self.idle_timeout))


#: A header block longer than this is answered 431 (http.server's own limit is 64 KiB per line).
MAX_HEAD = 64 * 1024
#: After a refusal sent before the body was read, the body is read and dropped for up to this long (each
#: pause at most ``_LINGER_IDLE``): closing on unread bytes sends a TCP reset, which can destroy the
#: answer before the client reads it.
_LINGER = 10.0
_LINGER_IDLE = 2.0
#: Every tick (seconds) the connections past their deadline are closed.
_TICK = 0.1
_LATE = b'{"error": {"message": "The request was not received in time."}}'
_TIMED_OUT = (
    b"HTTP/1.0 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_LATE), _LATE)
)


@dataclass(frozen=True, slots=True)
class Received:
    """A request read whole: its header block and body; ``problem``: (status, message) when its headers
    refuse it (the body is then not read)."""

    sock: socket.socket
    address: Any
    head: bytes
    body: bytes
    problem: tuple[int, str] | None = None


def _head_end(buf: bytearray, start: int) -> int:
    """Where the header block in ``buf`` ends (after its blank line), or -1; bare LF lines count too."""
    ends = [i + 4 for i in (buf.find(b"\r\n\r\n", start),) if i >= 0]
    ends += [i + 2 for i in (buf.find(b"\n\n", start),) if i >= 0]
    return min(ends, default=-1)


def body_length(head: bytes, max_body: int) -> tuple[int, tuple[int, str] | None]:
    """The body length a header block declares, and the refusal (status, message) when it cannot be read:
    a length that is not a number of bytes (400), two different lengths (400), a length over ``max_body``
    (413), a chunked body (411: the double reads bodies with a length only)."""
    lengths: set[bytes] = set()
    for line in head.split(b"\n")[1:]:
        name, _, value = line.partition(b":")
        key = name.strip().lower()
        if key == b"content-length":
            lengths.add(value.strip())
        elif key == b"transfer-encoding" and value.strip().lower() != b"identity":
            return 0, (411, "the provider double reads request bodies sent with a Content-Length only")
    if not lengths:
        return 0, None
    if len(lengths) > 1:
        return 0, (400, "the request has conflicting Content-Length headers")
    (value,) = lengths
    if not value.isdigit():  # ASCII digits only: "-1", "+5", "abc" and "" are refused
        return 0, (400, f"Content-Length {value.decode('latin-1')[:40]!r} is not a number of bytes")
    if len(value) > 20 or int(value) > max_body:  # int() of 4,300 digits and more would raise
        shown = f"{int(value):,}" if len(value) <= 20 else f"a {len(value)}-digit number of"
        return 0, (413, f"Request too large: {shown} bytes declared, at most {max_body:,} are accepted.")
    return int(value), None


class _Conn:
    """One connection the front is reading (mutable: its buffer grows as bytes arrive)."""

    __slots__ = ("address", "buf", "deadline", "head_end", "length", "sock", "until")

    def __init__(self, sock: socket.socket, address: Any, deadline: float) -> None:
        self.sock, self.address, self.deadline = sock, address, deadline
        self.buf = bytearray()
        self.head_end = -1
        self.length = 0
        self.until: float | None = None  # set: draining after a refusal, until then at the latest


class _Pool:
    """At most ``size`` daemon threads calling ``run`` on what is submitted, started as work arrives."""

    def __init__(self, size: int, run: Callable[[Received], None]) -> None:
        self._size, self._run = size, run
        self._queue: queue.SimpleQueue[Received | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = self._idle = self._waiting = 0

    @property
    def threads(self) -> int:
        with self._lock:
            return self._threads

    def submit(self, item: Received) -> None:
        with self._lock:
            self._waiting += 1
            start = self._waiting > self._idle and self._threads < self._size
            self._threads += start
        if start:
            threading.Thread(target=self._work, name="provider-double-worker", daemon=True).start()
        self._queue.put(item)

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            item = self._queue.get()
            with self._lock:
                self._idle -= 1
                if item is None:
                    self._threads -= 1
                    return
                self._waiting -= 1
            self._run(item)

    def close(self) -> None:
        """Each worker ends once it has finished what it is doing."""
        for _ in range(self.threads):
            self._queue.put(None)


def _listen(host: str, port: int, backlog: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as http.server does
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class Front:
    """Listens on ``(host, port)``, reads each request whole and hands it to ``handle`` on a worker.

    ``handle`` answers on ``Received.sock`` (blocking, with ``idle_timeout``); the front closes it after,
    or first drains the unread body of a refused request. Raises OSError when it cannot listen.
    """

    # The default listen backlog (5) drops connections when many clients connect at once (a lab run,
    # hundreds of concurrent turns); each dropped SYN costs the client a one-second retransmit.
    backlog = 256

    def __init__(self, host: str, port: int, handle: Callable[[Received], None], limits: Limits) -> None:
        self.limits = limits
        self._handle = handle
        self._listener = _listen(host, port, self.backlog)
        self.server_address: tuple[Any, ...] = self._listener.getsockname()
        self._pool = _Pool(limits.workers, self._run)
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)  # a full pipe already holds a wake-up: never wait on it
        self._handback: queue.SimpleQueue[socket.socket] = queue.SimpleQueue()
        self._conns: dict[socket.socket, _Conn] = {}
        self._closing = False
        self._accepting_at = 0.0  # when accepting stopped for lack of descriptors: when to resume
        self._thread = threading.Thread(target=self._loop, name="provider-double", daemon=True)
        self._thread.start()

    @property
    def workers(self) -> int:
        """Worker threads alive now."""
        return self._pool.threads

    def close(self) -> None:
        """Stop listening and drop the connections being read; requests being answered finish."""
        self._closing = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._thread.join(timeout=5)
        self._pool.close()

    # -- the selector thread --------------------------------------------------------------------------

    def _loop(self) -> None:
        self._sel.register(self._listener, selectors.EVENT_READ, None)
        self._sel.register(self._wake_r, selectors.EVENT_READ, self._wake_r)
        next_tick = 0.0
        try:
            while not self._closing:
                for key, _ in self._sel.select(_TICK):
                    if key.data is None:
                        self._accept()
                    elif key.data is self._wake_r:
                        self._woken()
                    else:
                        self._read(key.data)
                now = time.monotonic()
                if now >= next_tick:
                    self._expire(now)
                    next_tick = now + _TICK
        finally:
            for conn in list(self._conns.values()):
                self._drop(conn)
            with contextlib.suppress(queue.Empty):
                while True:
                    self._handback.get_nowait().close()
            for sock in (self._listener, self._wake_r, self._wake_w):
                sock.close()
            self._sel.close()

    def _accept(self) -> None:
        while True:
            try:
                sock, address = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # Out of descriptors: a ready listener would wake the loop forever; pause it instead.
                    self._sel.unregister(self._listener)
                    self._accepting_at = time.monotonic() + _TICK
                return
            sock.setblocking(False)
            self._watch(_Conn(sock, address, time.monotonic() + self.limits.header_timeout))

    def _watch(self, conn: _Conn) -> None:
        self._conns[conn.sock] = conn
        self._sel.register(conn.sock, selectors.EVENT_READ, conn)

    def _woken(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_r.recv(4096)
        while True:
            try:
                sock = self._handback.get_nowait()
            except queue.Empty:
                return
            sock.setblocking(False)
            now = time.monotonic()
            conn = _Conn(sock, None, now + _LINGER_IDLE)
            conn.until = now + _LINGER
            self._watch(conn)

    def _read(self, conn: _Conn) -> None:
        want = 65536 if conn.head_end < 0 else max(65536, min(1 << 20, conn.length))
        try:
            data = conn.sock.recv(want)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        now = time.monotonic()
        if not data or conn.until is not None:  # the client left, or the body of a refusal
            if data and conn.until is not None:
                conn.deadline = min(now + _LINGER_IDLE, conn.until)
            else:
                self._drop(conn)
            return
        conn.buf += data
        if conn.head_end < 0:
            end = _head_end(conn.buf, max(0, len(conn.buf) - len(data) - 3))
            if end < 0 and len(conn.buf) <= MAX_HEAD:
                return
            if end < 0 or end > MAX_HEAD:  # answered from the request line alone
                line = conn.buf.find(b"\n", 0, MAX_HEAD)
                conn.buf[line + 1 if line >= 0 else MAX_HEAD :] = b"\r\n"
                self._dispatch(conn, (431, "Request header fields too large."), len(conn.buf))
                return
            conn.head_end = end
            conn.length, problem = body_length(bytes(conn.buf[:end]), self.limits.max_body)
            if problem is not None:
                self._dispatch(conn, problem, end)
                return
        conn.deadline = now + self.limits.idle_timeout
        if len(conn.buf) - conn.head_end >= conn.length:
            self._dispatch(conn, None, conn.head_end)

    def _dispatch(self, conn: _Conn, problem: tuple[int, str] | None, head_end: int) -> None:
        self._forget(conn)
        head = bytes(conn.buf[:head_end])
        body = b"" if problem else bytes(conn.buf[head_end : head_end + conn.length])
        conn.buf = bytearray()
        conn.sock.settimeout(self.limits.idle_timeout)
        self._pool.submit(Received(conn.sock, conn.address, head, body, problem))

    def _expire(self, now: float) -> None:
        if self._accepting_at and now >= self._accepting_at and not self._closing:
            self._accepting_at = 0.0
            self._sel.register(self._listener, selectors.EVENT_READ, None)
        for conn in [c for c in self._conns.values() if c.deadline <= now]:
            if conn.until is None:  # the headers or the body did not come in time
                with contextlib.suppress(OSError):
                    conn.sock.send(_TIMED_OUT)
            self._drop(conn)

    def _forget(self, conn: _Conn) -> None:
        self._sel.unregister(conn.sock)
        del self._conns[conn.sock]

    def _drop(self, conn: _Conn) -> None:
        self._forget(conn)
        conn.sock.close()

    # -- a worker -------------------------------------------------------------------------------------

    def _run(self, got: Received) -> None:
        try:
            self._handle(got)
        except Exception:  # a responder's bug must not take a worker with it; reported as http.server does
            traceback.print_exc()
        with contextlib.suppress(OSError):
            got.sock.shutdown(socket.SHUT_WR)
        if got.problem is None or self._closing or got.sock.fileno() < 0:
            got.sock.close()
            return
        self._handback.put(got.sock)
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

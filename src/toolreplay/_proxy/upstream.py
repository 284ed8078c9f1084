"""The proxy's upstream transport (design 44): an httpx transport, so the proxy builds httpx's requests and
reads httpx's responses and exceptions, whose connections are :class:`~.http1.Connection`: the event
loop's own transports, and httptools reading the answers.

httpx's own transport goes through httpcore's pool and h11 (pure Python): on the proxy's path they were
the largest part of what it added before the upstream was sent a byte (the pool's anyio events and cancel
scopes, h11's checks of each header, a parse of the answer's head and of every chunk). Here a request is
one write of its head and body, the answer is parsed by llhttp, and the pool is a list of idle connections
per origin, with httpx's limits: at most ``max_connections`` open, ``max_keepalive_connections`` kept
idle, each for ``keepalive_expiry`` seconds. HTTP/1.1 only, as the proxy's upstreams were before.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import ssl
from collections import deque
from typing import Any

import httpx

from toolreplay._proxy.http1 import Connection, waited
from toolreplay._transport.tls import ssl_context

#: The trace event once a request's bytes are all written (httpcore's name for it: its answer's head is
#: waited for next); a request's ``trace`` extension is called with it.
WRITTEN = "http11.receive_response_headers.started"
#: Seconds a closing connection may take (a TLS close_notify) before it is cut.
_CLOSE_WAIT = 1.0
_PORTS = {b"http": 80, b"https": 443}
Origin = tuple[bytes, bytes, int]


class _Body(httpx.AsyncByteStream):
    """An answer's body as httpx reads it: the connection's chunks as they come; closed, the connection
    goes back to the pool (read whole and kept alive) or is closed."""

    def __init__(self, pool: LoopTransport, origin: Origin, conn: Connection, timeout: float | None) -> None:
        self._pool, self._origin, self._conn, self._timeout = pool, origin, conn, timeout
        self._done = False

    async def __aiter__(self) -> Any:
        conn, timeout = self._conn, self._timeout
        while (chunk := await conn.read(timeout)) is not None:
            yield chunk

    async def aclose(self) -> None:
        if not self._done:
            self._done = True
            self._pool.give_back(self._origin, self._conn)


class LoopTransport(httpx.AsyncBaseTransport):
    """Requests sent on pooled :class:`~.http1.Connection`; ``limits`` as httpx's own pool reads them."""

    def __init__(self, limits: httpx.Limits) -> None:
        self._tls = ssl_context()  # shared: loading the CA bundle again would cost more than a request
        self._max = limits.max_connections
        self._max_idle = limits.max_keepalive_connections
        self._expiry = limits.keepalive_expiry
        self._idle: dict[Origin, list[Connection]] = {}
        self._open: set[Connection] = set()  # every connection open or being used
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeout = request.extensions.get("timeout") or {}
        url = request.url
        origin = (url.raw_scheme, url.raw_host, url.port or _PORTS.get(url.raw_scheme, 80))
        conn = await self._checkout(origin, timeout)
        try:
            await conn.send(_head(request), request, timeout.get("write"))
            trace = request.extensions.get("trace")
            if trace is not None:
                await trace(WRITTEN, {})
            head = await conn.head(timeout.get("read"))
        except BaseException:
            self._drop(conn)
            raise
        return httpx.Response(
            head.status, headers=head.headers, request=request,
            stream=_Body(self, origin, conn, timeout.get("read")),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": head.reason},
        )  # fmt: skip

    # -- the pool ---------------------------------------------------------------------------------

    async def _checkout(self, origin: Origin, timeout: dict[str, float | None]) -> Connection:
        """An idle connection to ``origin``, else a new one; at the limit, an idle connection of another
        origin is closed to make room, or the request waits (``pool`` seconds in all) for one to be let
        go."""
        loop = asyncio.get_running_loop()
        wait = timeout.get("pool")
        deadline = None if wait is None else loop.time() + wait
        while True:
            conn = self._idle_one(origin, loop.time())
            if conn is not None:
                return conn
            if self._max is None or len(self._open) < self._max:
                return await self._connect(origin, timeout.get("connect"))
            oldest = min((c for conns in self._idle.values() for c in conns), key=_since, default=None)
            if oldest is not None:
                self._forget(oldest)
                self._drop(oldest)
                continue
            fut = loop.create_future()
            self._waiting.append(fut)
            try:
                left = None if deadline is None else max(deadline - loop.time(), 0.0)
                await waited(fut, left, httpx.PoolTimeout)
            finally:
                if fut in self._waiting:
                    self._waiting.remove(fut)

    @property
    def open_connections(self) -> int:
        """How many connections the pool holds open: in use, idle, or being made."""
        return len(self._open)

    def _idle_one(self, origin: Origin, now: float) -> Connection | None:
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            conn.on_lost = None
            if conn.reusable() and (self._expiry is None or now - conn.idle_since < self._expiry):
                return conn
            self._drop(conn)
        return None

    async def _connect(self, origin: Origin, timeout: float | None) -> Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        conn = Connection()
        self._open.add(conn)
        name = host.decode("ascii")
        tls = self._tls if scheme == b"https" else None
        try:
            async with asyncio.timeout(timeout):
                await loop.create_connection(
                    lambda: conn, name, port, ssl=tls, server_hostname=name if tls else None
                )
        except BaseException as exc:
            self._drop(conn)
            if isinstance(exc, TimeoutError):
                raise httpx.ConnectTimeout(f"no connection to {name}:{port} in time") from exc
            if isinstance(exc, (OSError, ssl.SSLError)):
                raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
            raise
        # TCP_NODELAY (the loop sets it on its TCP connections, said here so it holds on any loop): an
        # answer's events must not wait on a delayed ACK
        sock = conn.transport.get_extra_info("socket") if conn.transport is not None else None
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def give_back(self, origin: Origin, conn: Connection) -> None:
        """A connection whose answer is done with: kept idle when it can carry the next request and the
        idle ones are not at their limit, else closed."""
        idle_count = sum(len(c) for c in self._idle.values())
        if conn.reusable() and (self._max_idle is None or idle_count < self._max_idle):
            conn.idle_since = asyncio.get_running_loop().time()
            conn.on_lost = self._lost_idle  # an upstream that closes it while idle: let go at once
            self._idle.setdefault(origin, []).append(conn)
            self._wake_one()
        else:
            self._drop(conn)

    def _lost_idle(self, conn: Connection) -> None:
        """An idle connection the upstream closed: let go at once (not kept, not counted), instead of when
        its origin is next asked for or the pool next needs room."""
        self._forget(conn)
        self._drop(conn)

    def _forget(self, conn: Connection) -> None:
        """An idle connection taken out of the pool (its loss no longer the pool's to hear of)."""
        conn.on_lost = None
        for conns in self._idle.values():
            if conn in conns:
                conns.remove(conn)
                return

    def _drop(self, conn: Connection) -> None:
        """Closed (without waiting) and no longer counted; a request waiting for room gets it."""
        if conn.transport is not None and not conn.transport.is_closing():
            conn.transport.close()
        if conn in self._open:
            self._open.discard(conn)
            self._wake_one()

    def _wake_one(self) -> None:
        """A request waiting for room is told a connection was let go (idle, or closed)."""
        while self._waiting:
            fut = self._waiting.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    async def aclose(self) -> None:
        """Every connection closed, and waited for: a TLS connection says goodbye first, and the loop must
        not be closed under it (a second at most; then it is cut)."""
        conns = [c for c in self._open if c.transport is not None and not c.gone]
        self._idle.clear()
        self._open.clear()
        loop = asyncio.get_running_loop()
        for conn in conns:
            assert conn.transport is not None
            conn.closed = loop.create_future()
            conn.transport.close()
        for conn in conns:
            assert conn.closed is not None and conn.transport is not None
            try:
                await waited(conn.closed, _CLOSE_WAIT, httpx.WriteTimeout)
            except httpx.WriteTimeout:
                conn.transport.abort()


def _since(conn: Connection) -> float:
    return conn.idle_since


def _head(request: httpx.Request) -> bytes:
    """The request's line and headers (httpx has put in ``Host`` and the body's length or chunking); a
    header that would end the head early or split it (a line break, a NUL) is refused, as h11 refuses
    it: the headers' lines hold no more line breaks than their own ends (counted at C speed)."""
    raw = request.headers.raw
    lines = b"".join([b"%s: %s\r\n" % kv for kv in raw])
    if lines.count(b"\n") != len(raw) or lines.count(b"\r") != len(raw) or b"\0" in lines:
        bad = next(k for k, v in raw if any(c in k + v for c in (b"\r", b"\n", b"\0")))
        raise httpx.LocalProtocolError(f"the header {bad.decode('latin-1')!r} holds a line break or NUL")
    return b"%s %s HTTP/1.1\r\n%s\r\n" % (request.method.encode("ascii"), request.url.raw_path, lines)


@functools.lru_cache(maxsize=512)
def parsed_url(url: str) -> httpx.URL:
    """``url`` parsed once (an agent calls the same few paths, a route the same vessel URL; parsing it is
    most of building a request)."""
    return httpx.URL(url)


__all__ = ["WRITTEN", "LoopTransport", "parsed_url"]

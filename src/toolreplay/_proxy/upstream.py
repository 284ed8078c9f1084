"""The proxy's upstream transport: httpx's own transport and connection pool (httpcore), on a network
backend that speaks to the event loop's transports directly (design 44).

httpcore's default backend goes through anyio: every read and write opens a cancel scope and a timeout,
yields to the loop once, and asks the socket whether it is readable before a connection is reused. On the
proxy's path that was a third of its own time per request. Here a write does not yield: it is kept until
the next read, so a request's head and body leave in one write (one segment on loopback, one wake of the
upstream) instead of two; a read returns what the loop has already received without waiting; a timeout is
one timer, armed only when a read or a drain has to wait.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from typing import Any, cast

import httpcore
import httpx

from toolreplay._transport.tls import ssl_context

#: Written on at once past this many bytes kept (a large body does not wait whole in memory twice).
_FLUSH_AT = 256 * 1024
#: Seconds a closing connection may take (a TLS close_notify) before it is cut.
_CLOSE_WAIT = 1.0
#: Reading from the socket pauses while this much is received and not yet read (a slow agent).
_READ_HIGH = 1024 * 1024


class _Conn(asyncio.Protocol):
    """One upstream connection: what the loop received, and the writes kept until the next read."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.pending: list[bytes] = []
        self.pending_size = 0
        self.eof = False
        self.lost: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.drained: asyncio.Future[None] | None = None
        self.paused_reading = False
        self.gone = False
        self.closed: asyncio.Future[None] | None = None

    # -- the loop's side --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass it

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > _READ_HIGH and self.transport is not None and not self.paused_reading:
            self.transport.pause_reading()
            self.paused_reading = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = self.gone = True
        self.lost = exc
        self._wake()
        if self.closed is not None and not self.closed.done():
            self.closed.set_result(None)
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def pause_writing(self) -> None:
        if self.drained is None or self.drained.done():
            self.drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


async def _wait(fut: asyncio.Future[None], timeout: float | None, error: type[Exception]) -> None:
    """Wait for ``fut``; ``error`` when ``timeout`` seconds pass first."""
    if timeout is None:
        await fut
        return
    timer = asyncio.get_running_loop().call_later(timeout, _expire, fut)
    try:
        await fut
    except TimeoutError:
        raise error("timed out") from None
    finally:
        timer.cancel()


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_exception(TimeoutError())


class LoopStream(httpcore.AsyncNetworkStream):
    """httpcore's view of a :class:`_Conn`."""

    def __init__(self, conn: _Conn) -> None:
        self._conn = conn

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        conn = self._conn
        if conn.pending:
            try:
                await self._flush(timeout)
            except httpcore.WriteError:  # as httpcore does: an upstream may answer (413) and close early
                conn.pending.clear()
        if not conn.chunks and not conn.eof:
            conn.waiter = asyncio.get_running_loop().create_future()
            try:
                await _wait(conn.waiter, timeout, httpcore.ReadTimeout)
            finally:
                conn.waiter = None
        if not conn.chunks:
            if conn.lost is not None:
                raise httpcore.ReadError(str(conn.lost) or type(conn.lost).__name__)
            return b""
        data = conn.chunks.popleft()
        if len(data) > max_bytes:
            conn.chunks.appendleft(data[max_bytes:])
            data = data[:max_bytes]
        conn.buffered -= len(data)
        if conn.paused_reading and conn.buffered < _READ_HIGH // 2 and conn.transport is not None:
            conn.paused_reading = False
            conn.transport.resume_reading()
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        conn = self._conn
        if conn.lost is not None or conn.transport is None or conn.transport.is_closing():
            raise httpcore.WriteError("the upstream's connection is closed")
        conn.pending.append(buffer)
        conn.pending_size += len(buffer)
        if conn.pending_size >= _FLUSH_AT:
            await self._flush(timeout)

    async def _flush(self, timeout: float | None) -> None:
        conn = self._conn
        data, conn.pending, conn.pending_size = conn.pending, [], 0
        if conn.lost is not None or conn.transport is None or conn.transport.is_closing():
            raise httpcore.WriteError("the upstream's connection is closed")
        # the request's head and its body given to the loop as they are: uvloop writes them with one
        # writev, without copying the body into one buffer with the head first
        conn.transport.writelines(data)
        if conn.drained is not None and not conn.drained.done():
            await _wait(conn.drained, timeout, httpcore.WriteTimeout)

    async def aclose(self) -> None:
        """Closed, and waited for: a TLS connection says goodbye first, and the loop must not be closed
        under it (a second at most; then it is cut)."""
        conn, transport = self._conn, self._conn.transport
        if transport is None or conn.gone:
            return
        conn.closed = asyncio.get_running_loop().create_future()
        transport.close()
        try:
            await _wait(conn.closed, _CLOSE_WAIT, httpcore.WriteTimeout)
        except httpcore.WriteTimeout:
            transport.abort()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        conn = self._conn
        assert conn.transport is not None
        if conn.pending:
            await self._flush(timeout)
        loop = asyncio.get_running_loop()
        try:
            tls = await loop.start_tls(
                conn.transport, conn, ssl_context, server_hostname=server_hostname,
                ssl_handshake_timeout=timeout,
            )  # fmt: skip
        except TimeoutError as exc:
            conn.transport.close()
            raise httpcore.ConnectTimeout(str(exc) or "the TLS handshake timed out") from exc
        except (OSError, ssl.SSLError) as exc:
            conn.transport.close()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        if tls is None:
            raise httpcore.ConnectError("the TLS handshake did not complete")
        conn.transport = tls
        return self

    def get_extra_info(self, info: str) -> Any:
        conn = self._conn
        transport = conn.transport
        if info == "is_readable":  # httpcore: a kept-alive connection the upstream has closed, or written on
            return bool(conn.chunks) or conn.eof
        if transport is None:
            return None
        name = {"client_addr": "sockname", "server_addr": "peername"}.get(info, info)
        return (
            transport.get_extra_info(name)
            if name in ("ssl_object", "sockname", "peername", "socket")
            else None
        )


class LoopBackend(httpcore.AsyncNetworkBackend):
    """Connections made by the running event loop itself (asyncio's or uvloop's)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        conn = _Conn()
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                await loop.create_connection(lambda: conn, host, port, local_addr=local)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"no connection to {host}:{port} in time") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        sock = conn.transport.get_extra_info("socket") if conn.transport is not None else None
        for option in socket_options or ():
            if sock is not None:
                sock.setsockopt(*option)
        return LoopStream(conn)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        conn = _Conn()
        try:
            async with asyncio.timeout(timeout):
                await loop.create_unix_connection(lambda: conn, path)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"no connection to {path} in time") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return LoopStream(conn)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@functools.lru_cache(maxsize=512)
def parsed_url(url: str) -> httpx.URL:
    """``url`` parsed once (an agent calls the same few paths, a route the same vessel URL; parsing it is
    most of building a request)."""
    return httpx.URL(url)


class LoopTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connection pool on :class:`LoopBackend` (the rest is httpx's own: the
    request and response models, the exceptions, the pool's keep-alive rules)."""

    def __init__(self, limits: httpx.Limits) -> None:
        tls = ssl_context()  # shared: loading the CA bundle again would cost more than a request
        super().__init__(verify=tls, limits=limits)
        # TCP_NODELAY (the loop sets it on its TCP connections, said here so it holds on any loop): a
        # request's head and body go out as one write, and an answer's events must not wait on an ACK
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=tls,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            socket_options=nodelay,
            network_backend=LoopBackend(),
        )


__all__ = ["LoopBackend", "LoopStream", "LoopTransport", "parsed_url"]

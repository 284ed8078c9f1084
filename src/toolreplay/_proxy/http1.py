"""One HTTP/1.1 connection to an upstream, for the proxy's transport (design 44): the event loop's own
transport carries the bytes and httptools (llhttp, the parser uvicorn serves the agents with) reads the
answer.

A request leaves in one write: its head and its body handed to the loop as they are (uvloop writes them
with one ``writev``, the body not copied behind the head). The answer's head and body chunks are what the
parser hands over, kept until they are read; a timeout is one timer, armed only when a read or a drain
has to wait. Errors are httpx's own exceptions, so the proxy's callers catch what they caught before.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass
from typing import cast

import httptools
import httpx

#: Reading from the socket pauses while this much is received and not yet read (a slow agent).
READ_HIGH = 1024 * 1024
_NO_BODY = frozenset({204, 304})


@dataclass(frozen=True, slots=True)
class Head:
    """An answer's status line and headers, as received."""

    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]


async def waited(fut: asyncio.Future[None], timeout: float | None, error: type[Exception]) -> None:
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


class Connection(asyncio.Protocol):
    """One connection and the exchange on it: the answer's head once parsed, its body chunks not yet
    read, whether the body has ended, and what went wrong (the connection lost, an answer llhttp refuses).

    One exchange at a time: :meth:`send` starts it, :meth:`head` and :meth:`read` follow, and
    :meth:`reusable` says whether the next may go on the same connection."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.reply: asyncio.Future[Head] | None = None
        self._status = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._informational = False
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.complete = False
        #: an answer with neither a length nor chunks: its body ends with the connection
        self.until_eof = False
        self.keep = False
        self.head_only = False
        self.failure: httpx.HTTPError | None = None
        self.gone = False
        self.idle_since = 0.0
        self.waiter: asyncio.Future[None] | None = None
        self.drained: asyncio.Future[None] | None = None
        self.closed: asyncio.Future[None] | None = None
        self.paused_reading = False
        #: told when the connection is lost while it waits idle in a pool (the pool lets it go at once)
        self.on_lost: Callable[[Connection], None] | None = None

    # -- the loop's side --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass it

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(httpx.RemoteProtocolError("the upstream switched protocols, which the proxy does not"))
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"the upstream's answer is not HTTP/1.1: {exc}"))
        if self.buffered > READ_HIGH and self.transport is not None and not self.paused_reading:
            self.transport.pause_reading()
            self.paused_reading = True

    def eof_received(self) -> bool:
        self._ended()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.gone = True
        self._ended(exc)
        for fut in (self.closed, self.drained):
            if fut is not None and not fut.done():
                fut.set_result(None)
        if self.on_lost is not None:
            self.on_lost(self)

    def pause_writing(self) -> None:
        if self.drained is None or self.drained.done():
            self.drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def _ended(self, exc: Exception | None = None) -> None:
        """The upstream closed its side: an answer that ends with the connection has ended; one that has
        not come whole is cut."""
        self.keep = False
        if self.until_eof and self.reply is not None and self.reply.done():
            self.complete = True
        elif not self.complete and self.failure is None:
            where = "mid-answer" if self.reply is not None and self.reply.done() else "without answering"
            said = f" ({exc})" if exc is not None else ""
            self._fail(httpx.RemoteProtocolError(f"the upstream closed the connection {where}{said}"))
        self._wake()

    def _fail(self, error: httpx.HTTPError) -> None:
        if self.failure is None:
            self.failure = error
        self.keep = False
        if self.reply is not None and not self.reply.done():
            self.reply.set_exception(error)
        if self.transport is not None:
            self.transport.close()
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    # -- llhttp's callbacks -----------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._headers = []
        self._status = b""

    def on_status(self, status: bytes) -> None:
        self._status += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        self._informational = 100 <= status < 200  # 100 Continue, 103 Early Hints: the answer follows
        if self._informational:
            return
        if self.reply is None or self.reply.done():
            self._fail(httpx.RemoteProtocolError("the upstream answered a request it was not sent"))
            return
        self.keep = self.parser.should_keep_alive()
        self.until_eof = status not in _NO_BODY and not self.head_only and not _delimited(self._headers)
        if self.head_only:  # llhttp cannot be told a HEAD's answer has no body: this one ends here
            self.complete, self.keep = True, False
        self.reply.set_result(Head(status, self._status, self._headers))

    def on_body(self, body: bytes) -> None:
        if self.head_only:
            return
        self.chunks.append(body)
        self.buffered += len(body)
        self._wake()

    def on_message_complete(self) -> None:
        if self._informational:
            self._informational = False
            return
        self.complete = True
        self._wake()

    # -- the exchange -----------------------------------------------------------------------------

    async def send(self, head: bytes, request: httpx.Request, timeout: float | None) -> None:
        """The request written: its head and a body given whole in one write, a streamed body chunk by
        chunk (chunked when it has no length), waiting only when the loop's buffer is full."""
        transport = self.transport
        if self.failure is not None or transport is None or transport.is_closing():
            raise httpx.WriteError("the upstream's connection is closed")
        self.reply = asyncio.get_running_loop().create_future()
        self.head_only = request.method == "HEAD"
        self.complete = self.until_eof = False
        try:
            body = request.content
        except httpx.RequestNotRead:  # a streamed body (the proxy's own bodies are bytes)
            transport.write(head)
            chunked = "chunked" in request.headers.get("transfer-encoding", "").lower()
            await self._streamed(request.stream, chunked, timeout)
        else:
            transport.writelines([head, body] if body else [head])
        await self._drain(timeout)

    async def _streamed(self, stream: object, chunked: bool, timeout: float | None) -> None:
        assert self.transport is not None and isinstance(stream, AsyncIterable)
        async for piece in stream:
            if piece:
                self.transport.writelines([b"%x\r\n" % len(piece), piece, b"\r\n"] if chunked else [piece])
                await self._drain(timeout)
        if chunked:
            self.transport.write(b"0\r\n\r\n")

    async def _drain(self, timeout: float | None) -> None:
        if self.drained is not None and not self.drained.done():
            await waited(self.drained, timeout, httpx.WriteTimeout)
        if self.failure is not None and not (self.reply is not None and self.reply.done()):
            raise httpx.WriteError(str(self.failure))

    async def head(self, timeout: float | None) -> Head:
        """The answer's head, once the parser has it."""
        assert self.reply is not None
        if not self.reply.done():
            try:
                await waited(cast("asyncio.Future[None]", self.reply), timeout, httpx.ReadTimeout)
            except httpx.ReadTimeout:
                self._fail(httpx.ReadTimeout("timed out"))
                raise
        return self.reply.result()

    async def read(self, timeout: float | None) -> bytes | None:
        """Every body byte received and not yet read, as one chunk (None once the body has ended): what
        one read of the socket brought goes on in one piece, so the events that came together are
        relayed with one write, not one write each."""
        while not self.chunks:
            if self.complete:
                return None
            if self.failure is not None:
                raise self.failure
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await waited(self.waiter, timeout, httpx.ReadTimeout)
            finally:
                self.waiter = None
        chunks = self.chunks
        data = chunks.popleft() if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self.buffered = 0
        if self.paused_reading and self.transport is not None:
            self.paused_reading = False
            self.transport.resume_reading()
        return data

    def reusable(self) -> bool:
        """Whether the next request may go on this connection: its answer read whole, kept alive by both
        sides, nothing received since (an upstream that closed it while idle has said so)."""
        transport = self.transport
        return (
            self.complete and self.keep and self.failure is None and not self.gone and not self.chunks
            and transport is not None and not transport.is_closing()
        )  # fmt: skip


def _delimited(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether an answer's body has a declared end (a length, or chunks), not the connection's close."""
    return any(k.lower() in (b"content-length", b"transfer-encoding") for k, _ in headers)


__all__ = ["READ_HIGH", "Connection", "Head", "waited"]

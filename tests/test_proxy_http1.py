"""The proxy's upstream transport on its own (design 44): HTTP/1.1 as the upstreams speak it, scripted
byte for byte by a loopback server (answers whole, chunked, ended by the close, after 1xx, to HEAD),
keep-alive and its limits, and each fault as the httpx exception the proxy's callers catch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

pytest.importorskip("httptools")

from toolreplay._proxy.upstream import WRITTEN, LoopTransport

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]
OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One request's head and body (a length or chunks), as the server received them."""
    head = await reader.readuntil(b"\r\n\r\n")
    lower = head.lower()
    if b"transfer-encoding: chunked" in lower:
        body = b""
        while (size := int((await reader.readuntil(b"\r\n")).strip(), 16)) > 0:
            body += await reader.readexactly(size + 2)
            body = body[:-2]
        await reader.readexactly(2)
        return head, body
    length = next(
        (int(line.split(b":")[1]) for line in lower.split(b"\r\n") if line.startswith(b"content-length:")), 0
    )
    return head, await reader.readexactly(length)


class Server:
    """A loopback server whose every connection runs ``script`` (with the connection's number); what it
    received is kept."""

    def __init__(self, script: Script) -> None:
        self.script, self.connections = script, 0
        self.requests: list[tuple[bytes, bytes]] = []
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                await self.script(reader, writer, self.connections)
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        self.server = await asyncio.start_server(serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def answer_each(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answer: bytes
    ) -> None:
        while True:
            self.requests.append(await read_request(reader))
            writer.write(answer)
            await writer.drain()


def run(body: Callable[[], Awaitable[None]], loop: str) -> None:
    if loop == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        uvloop.run(body())
    else:
        asyncio.run(body())


LOOPS = ["asyncio", pytest.param("uvloop", marks=pytest.mark.skipif("sys.platform == 'win32'"))]
TIMEOUT = {"connect": 2.0, "read": 2.0, "write": 2.0, "pool": 2.0}


def request(url: str, method: str = "POST", content: Any = b'{"a": 1}', **extensions: Any) -> httpx.Request:
    return httpx.Request(method, url + "/v1/x?y=1", content=content, headers={"x-agent": "a"},
                         extensions={"timeout": TIMEOUT, **extensions})  # fmt: skip


async def fetch(t: LoopTransport, req: httpx.Request) -> tuple[httpx.Response, bytes]:
    resp = await t.handle_async_request(req)
    try:
        return resp, b"".join([c async for c in resp.aiter_raw()])
    finally:
        await resp.aclose()


@pytest.mark.parametrize("loop", LOOPS)
def test_whole_and_chunked_answers_and_kept_alive_connections(loop: str) -> None:
    chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"

    async def body() -> None:
        async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
            for answer in (OK, chunked, OK):
                srv.requests.append(await read_request(r))
                w.write(answer)
                await w.drain()

        srv = Server(script)
        async with srv as url:
            t = LoopTransport(httpx.Limits())
            events: list[str] = []

            async def trace(event: str, info: object) -> None:
                events.append(event)

            resp, data = await fetch(t, request(url, trace=trace))
            assert (resp.status_code, data, resp.headers["content-type"]) == (200, b"{}", "application/json")
            assert resp.http_version == "HTTP/1.1" and resp.reason_phrase == "OK" and events == [WRITTEN]
            assert (await fetch(t, request(url)))[1] == b"abcde"
            assert (await fetch(t, request(url)))[1] == b"{}"
            assert srv.connections == 1  # one connection carried all three
            head, sent = srv.requests[0]
            assert head.startswith(b"POST /v1/x?y=1 HTTP/1.1\r\n") and b"x-agent: a\r\n" in head
            assert sent == b'{"a": 1}' and b"Content-Length: 8" in head
            await t.aclose()

    run(body, loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_what_came_together_is_read_as_one_chunk(loop: str) -> None:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    events = [b"data: %d\n\n" % i for i in range(5)]

    async def body() -> None:
        go_on = asyncio.Event()

        async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
            await read_request(r)
            w.write(head + b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events[:4]))
            await w.drain()
            await go_on.wait()
            w.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(events[4]), events[4]))
            await w.drain()

        async with Server(script) as url:
            t = LoopTransport(httpx.Limits())
            resp = await t.handle_async_request(request(url))
            await asyncio.sleep(0.05)  # the four chunks have all come
            got = []
            async for c in resp.aiter_raw():
                got.append(c)
                go_on.set()
            await resp.aclose()
            assert got == [b"".join(events[:4]), events[4]]
            await t.aclose()

    run(body, loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_an_answer_ended_by_the_close_after_an_early_hint_and_a_head_answer(loop: str) -> None:
    async def body() -> None:
        async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
            head, _ = await read_request(r)
            if head.startswith(b"HEAD"):  # a length, and no body: the answer to HEAD
                w.write(b"HTTP/1.1 200 OK\r\ncontent-length: 99\r\n\r\n")
                await w.drain()
                await r.read()  # the proxy closes it: llhttp would wait for 99 bytes
                return
            w.write(b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 200 OK\r\n\r\nto the end")
            await w.drain()

        async with Server(script) as url:
            t = LoopTransport(httpx.Limits())
            resp, data = await fetch(t, request(url))
            assert (resp.status_code, data) == (200, b"to the end")
            resp, data = await fetch(t, request(url, "HEAD", content=None))
            assert (resp.status_code, data, resp.headers["content-length"]) == (200, b"", "99")
            await t.aclose()

    run(body, loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_streamed_body_goes_chunked(loop: str) -> None:
    async def parts() -> AsyncIterator[bytes]:
        for p in (b"one ", b"", b"two"):
            yield p

    async def body() -> None:
        srv = Server(lambda r, w, n: srv.answer_each(r, w, OK))
        async with srv as url:
            t = LoopTransport(httpx.Limits())
            assert (await fetch(t, request(url, content=parts())))[1] == b"{}"
            head, sent = srv.requests[0]
            assert sent == b"one two" and b"Transfer-Encoding: chunked" in head
            await t.aclose()

    run(body, loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_faults_are_httpx_errors(loop: str) -> None:
    async def body() -> None:
        async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
            head, _ = await read_request(r)
            if b"/cut" in head:  # closed mid-answer
                w.write(b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nhalf")
            elif b"/junk" in head:
                w.write(b"NOT HTTP AT ALL\r\n\r\n")
            elif b"/silent" in head:
                await asyncio.sleep(5)
            await w.drain()

        async with Server(script) as url:
            t = LoopTransport(httpx.Limits())
            with pytest.raises(httpx.RemoteProtocolError, match="mid-answer"):
                await fetch(
                    t, httpx.Request("POST", url + "/cut", content=b"x", extensions={"timeout": TIMEOUT})
                )
            with pytest.raises(httpx.RemoteProtocolError, match=r"not HTTP/1\.1"):
                await fetch(
                    t, httpx.Request("POST", url + "/junk", content=b"x", extensions={"timeout": TIMEOUT})
                )
            quick = {**TIMEOUT, "read": 0.2}
            with pytest.raises(httpx.ReadTimeout):
                await fetch(
                    t, httpx.Request("POST", url + "/silent", content=b"x", extensions={"timeout": quick})
                )
            with pytest.raises(httpx.RemoteProtocolError, match="without answering"):  # closed, nothing said
                await fetch(
                    t, httpx.Request("POST", url + "/", content=b"x", extensions={"timeout": TIMEOUT})
                )
            bad = httpx.Request("POST", url, content=b"x", headers={"x-a": "1\r\nx-b: 2"})
            with pytest.raises(httpx.LocalProtocolError, match="line break"):
                await t.handle_async_request(bad)
            assert not t._open  # every failed connection was let go
            await t.aclose()
        with pytest.raises(httpx.ConnectError):
            await t.handle_async_request(request(url))

    run(body, loop)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_connection_the_upstream_closes_while_idle_is_let_go(loop: str) -> None:
    async def body() -> None:
        async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, n: int) -> None:
            srv.requests.append(await read_request(r))
            w.write(OK)
            await w.drain()
            await asyncio.sleep(0.05)  # then closed, while the proxy keeps it idle

        srv = Server(script)
        async with srv as url:
            t = LoopTransport(httpx.Limits())
            assert (await fetch(t, request(url)))[1] == b"{}"
            assert t.open_connections == 1  # kept idle for the next request
            for _ in range(100):
                if not t.open_connections:
                    break
                await asyncio.sleep(0.01)
            assert t.open_connections == 0
            assert (await fetch(t, request(url)))[1] == b"{}"  # the next request opens another
            assert srv.connections == 2 and t.open_connections == 1
            await t.aclose()

    run(body, loop)


@pytest.mark.slow
@pytest.mark.parametrize("loop", LOOPS)
def test_the_pools_limits(loop: str) -> None:
    async def body() -> None:
        srv = Server(lambda r, w, n: srv.answer_each(r, w, OK))
        async with srv as url:
            t = LoopTransport(httpx.Limits(max_connections=1, keepalive_expiry=0.2))
            held = await t.handle_async_request(request(url))  # the one connection, its answer not read
            with pytest.raises(httpx.PoolTimeout):
                await t.handle_async_request(request(url, timeout={**TIMEOUT, "pool": 0.1}))
            waiting = asyncio.ensure_future(fetch(t, request(url)))
            await asyncio.sleep(0.05)
            assert not waiting.done()
            await held.aread()
            await held.aclose()
            assert (await waiting)[1] == b"{}"  # it went on the connection let go
            assert srv.connections == 1
            await asyncio.sleep(0.3)  # idle past keepalive_expiry: a new connection
            await fetch(t, request(url))
            assert srv.connections == 2
            half = await t.handle_async_request(request(url))  # closed before its answer is read: not reused
            await half.aclose()
            await fetch(t, request(url))
            assert srv.connections == 3
            await t.aclose()

    run(body, loop)

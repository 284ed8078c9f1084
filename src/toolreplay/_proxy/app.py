"""The proxy's ASGI app: each request goes to its own wire's upstream with its bytes and headers unchanged
(hop-by-hop headers aside), and the answer comes back chunk by chunk as it arrives (design 44). Recording
and the audit happen on the recorder's thread after the answer has ended.

Every HTTP request goes straight to :meth:`Proxy.handle` (Starlette's Request and Response, without its
router and middleware: a proxy has one route, and the layers cost more than the rest of its own work);
Starlette is the app's shell for the rest (the lifespan).

What the proxy answers itself, in the calling wire's own error shape and without calling the upstream: a
body over the size limit (before or after decompression), a body that is not a JSON object, a path no
wire serves, a missing token. An upstream that cannot be reached or does not answer in time: 502 or 504
in that shape. An upstream that answers an error: its answer as it was. A stream the upstream breaks off:
the wire's own error event after what was sent.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from toolreplay._errors import ToolreplayError
from toolreplay._limits import PROXY_CONNECT_TIMEOUT
from toolreplay._proxy.agents import session_of
from toolreplay._proxy.answers import Relayed, error_response
from toolreplay._proxy.bodies import BodyError, Sliced, decoded, is_json_object, json_value, sliced
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.exchange import Exchange, model_of
from toolreplay._proxy.routes import PROBES, Route, error_wire, resolve
from toolreplay._proxy.translated import Translator
from toolreplay._proxy.translated_stream import frame
from toolreplay._proxy.upstream import LoopTransport, parsed_url
from toolreplay.wires.contract import Wire

if TYPE_CHECKING:
    from toolreplay._proxy.repair import Repairer
    from toolreplay._proxy.worker import RecorderThread

#: Headers that belong to one connection, not to the request (RFC 9110 7.6.1), and those httpx sets
#: itself from the URL and the body (the same values).
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
     "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length"}
)  # fmt: skip
_ANSWER_DROPS = frozenset(h.encode() for h in HOP_BY_HOP - {"content-length"})
_REQUEST_DROPS = frozenset(h.encode() for h in HOP_BY_HOP)
#: The headers a client may carry the proxy's token in (``--token``): the proxy's own, or a key header.
TOKEN_HEADER = "x-toolreplay-token"
_KEY_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")
_KEY_HEADER_NAMES = frozenset(h.encode() for h in _KEY_HEADERS)
_STREAM_TYPES = ("text/event-stream", "application/x-ndjson")
_TAIL = 4096


def header_map(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """A request's headers by lower-case name (the first of a repeated name, as Starlette's ``get``)."""
    out: dict[str, str] = {}
    for k, v in raw:
        name = k.decode("latin-1").lower()
        if name not in out:
            out[name] = v.decode("latin-1")
    return out


class Proxy:
    """The handler behind the app: one shared upstream client, the settings, the recorder."""

    def __init__(
        self, config: ProxyConfig, recorder: RecorderThread | None = None, repairer: Repairer | None = None
    ) -> None:
        self.config = config
        self.recorder = recorder
        self.repairer = repairer
        self.keep = recorder is not None and config.record
        #: The repairs read a model request's body on the event loop; otherwise it is only checked here (the
        #: recorder's thread reads it from the bytes)
        self.reads_body = repairer is not None or bool(config.routes)  # a model route reads it too
        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=200)
        # the transport itself, not a client: the client's layers (default headers, auth, redirects,
        # hooks, cookies) have nothing to do on a request that goes on as it came
        self.transport = LoopTransport(limits)
        timeout = httpx.Timeout(config.timeout, connect=PROXY_CONNECT_TIMEOUT)
        self.extensions = {"timeout": timeout.as_dict()}
        self._routes: dict[tuple[str, str], Route] = {}
        self.translator = (
            Translator(config, self.transport, self.extensions, recorder) if config.routes else None
        )

    async def aclose(self) -> None:
        await self.transport.aclose()
        if self.translator is not None:
            self.translator.close()

    # -- the request ------------------------------------------------------------------------------

    async def handle(self, request: Request) -> Response:
        t0 = time.perf_counter()
        started = time.time()
        scope = request.scope
        path, method = scope["path"], scope["method"]
        query = scope["query_string"].decode("latin-1")
        headers = header_map(scope["headers"])
        if (method, path) in PROBES:
            return Response(status_code=200)
        route = self._route(path, query, headers)
        wire = route.wire if route is not None else error_wire(path, headers)
        status, problem = 0, self._refuse_token(headers)
        if problem is not None:
            status = 401
        elif route is None:
            status, problem = 404, f"toolreplay proxy: no provider path {method} {path}"
        elif headers.get("upgrade", "").lower() == "websocket":
            status, problem = 426, "toolreplay proxy: WebSocket is not served here; use HTTP"
        if route is not None and problem is None:
            try:
                raw = await self._body(request, headers)
                body = self._check(route, method, raw, headers.get("content-encoding", ""))
            except BodyError as exc:
                status, problem = exc.status, f"toolreplay proxy: {exc}"
        if problem is not None:
            self._log_refusal(wire, path, headers, status, problem, started)
            return error_response(wire, status, problem)
        assert route is not None
        if self.translator is not None and (picked := self.translator.pick(request, route, raw, body)):
            return await self.translator.answer(request, picked, t0, started)  # a model route (design 47)
        repairs: tuple[str, ...] = ()
        body = None if isinstance(body, Sliced) else body  # unrouted: the recorder reads its bytes
        received = raw  # the agent's bytes, for the log's digest (hashed on the recorder's thread)
        if self.repairer is not None and isinstance(body, dict):
            raw, repairs = await self._repaired(route, raw, body, headers)
        return await self._forward(request, headers, route, raw, body, t0, started, repairs, received)

    def _route(self, path: str, query: str, headers: Mapping[str, str]) -> Route | None:
        """:func:`resolve`, kept for a model request's path (its route does not depend on the headers)."""
        route = self._routes.get((path, query))
        if route is not None:
            return route
        route = resolve(path, query, headers, self.config.upstreams)
        if route is not None and route.kind == "generate":
            if len(self._routes) >= 1024:  # bounded: a path names its model (Gemini)
                self._routes.clear()
            self._routes[(path, query)] = route
        return route

    async def _repaired(
        self, route: Route, raw: bytes, body: dict[str, Any], headers: Mapping[str, str]
    ) -> tuple[bytes, tuple[str, ...]]:
        """The body with the wire's repairs made (design 46); a repair that fails leaves it as it came."""
        assert self.repairer is not None
        http = route.wire.http
        session = session_of(headers, body, http.session_field if http is not None else "")
        encoded = bool(headers.get("content-encoding", "").strip())
        upstream = self.config.upstreams[route.wire.name]
        try:
            return await self.repairer(route.wire, upstream, raw, body, session, encoded)
        except (ToolreplayError, ValueError, KeyError, IndexError, OSError) as exc:
            return raw, (f"no repair: {type(exc).__name__}: {exc}"[:300],)

    def _log_refusal(
        self, wire: Wire, path: str, headers: Mapping[str, str], status: int, problem: str, started: float
    ) -> None:
        """A request the proxy answered itself still gets its log line (nothing is recorded)."""
        if self.recorder is None:
            return
        self.recorder.expect()
        self.recorder.submit(
            Exchange(
                started=started, wire=wire.name, kind="refused", path=path, model=None,
                upstream=self.config.upstreams.get(wire.name, ""), agent=headers.get("user-agent", "")[:200],
                session=None, body=None, request_bytes=0, status=status, refused=problem,
            )
        )  # fmt: skip

    def _refuse_token(self, headers: Mapping[str, str]) -> str | None:
        token = self.config.token
        if token is None:
            return None
        offered = [headers.get(TOKEN_HEADER, "")]
        offered += [headers.get(h, "").removeprefix("Bearer ").strip() for h in _KEY_HEADERS]
        if any(o and hmac.compare_digest(o.encode(), token.encode()) for o in offered):
            return None
        return f"toolreplay proxy: this proxy needs its token (the {TOKEN_HEADER} header, or as the API key)"

    async def _body(self, request: Request, headers: Mapping[str, str]) -> bytes:
        limit = self.config.max_body
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise BodyError(413, f"the request body is larger than {limit:,} bytes")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BodyError(413, f"the request body is larger than {limit:,} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _check(self, route: Route, method: str, raw: bytes, encoding: str) -> Any:
        """The request's JSON for a model request (refused when it is not an object); None otherwise, and
        None when nothing reads it here (no repairs: the recorder's thread reads it from the bytes). With
        routes and no repairs, its top-level slices (``Sliced``): a route needs only its model to be
        picked (design 53)."""
        if route.kind != "generate":
            return None
        if method != "POST":
            raise BodyError(405, f"{method} is not a model request; POST it")
        plain = decoded(raw, encoding, self.config.max_body)
        if not self.reads_body and is_json_object(plain):
            return None  # pass-through: nothing reads the body, it is only checked
        if self.repairer is None and (top := sliced(plain, route.wire.list_key)) is not None:
            return top  # a route needs its model; a routed body is read on the translation thread
        body = json_value(plain)
        if not isinstance(body, dict):
            raise BodyError(400, f"the request body is a JSON {type(body).__name__}, not an object")
        return body

    def _upstream_headers(
        self, raw: list[tuple[bytes, bytes]], headers: Mapping[str, str], wire: Wire
    ) -> list[tuple[bytes, bytes]]:
        drop: frozenset[bytes] | set[bytes] = _REQUEST_DROPS
        named = headers.get("connection", "")
        if named or self.config.token is not None:
            drop = set(drop)
            drop.update(h.strip().lower().encode("latin-1") for h in named.split(",") if h.strip())
        extra: list[tuple[bytes, bytes]] = []
        if self.config.token is not None:
            assert isinstance(drop, set)
            drop.add(TOKEN_HEADER.encode())
            if TOKEN_HEADER not in headers:
                # the token came as the API key: the upstream's key is the proxy's own, from its environment
                drop.update(_KEY_HEADER_NAMES)
                extra = _own_key(wire)
        kept = [(k, v) for k, v in raw if k.lower() not in drop]
        return kept + extra

    async def _forward(
        self,
        request: Request,
        headers: Mapping[str, str],
        route: Route,
        raw: bytes,
        body: Any,
        t0: float,
        started: float,
        repairs: tuple[str, ...] = (),
        received: bytes = b"",
    ) -> Response:
        scope = request.scope
        sent = httpx.Request(
            scope["method"], parsed_url(route.url), content=raw, extensions=self.extensions,
            headers=self._upstream_headers(scope["headers"], headers, route.wire),
        )  # fmt: skip
        ex = _Relay(self, route, scope["path"], headers, body, len(raw), started, t0)
        ex.repairs, ex.received = repairs, received
        t_send = time.perf_counter()
        try:
            resp = await self.transport.handle_async_request(sent)
        except httpx.TimeoutException:
            ex.finish(504, refused="the upstream did not answer in time")
            return error_response(
                route.wire, 504, f"toolreplay proxy: {_host(route.url)} did not answer in time"
            )
        except httpx.HTTPError as exc:
            ex.finish(502, refused=f"the upstream could not be reached ({type(exc).__name__})")
            return error_response(
                route.wire, 502, f"toolreplay proxy: cannot reach {_host(route.url)} ({type(exc).__name__})"
            )
        ex.t_send, ex.t_headers = t_send, time.perf_counter()
        answer = [(k, v) for k, v in ((k.lower(), v) for k, v in resp.headers.raw) if k not in _ANSWER_DROPS]
        return Relayed(resp.status_code, answer, ex.relay(resp), on_end=lambda: ex.close(resp))


def _own_key(wire: Wire) -> list[tuple[bytes, bytes]]:
    """The key header of ``wire``'s public vessel, from the proxy's environment (none when unset)."""
    from toolreplay._vessels import BUILTIN, public_base_url

    vessel = next(
        (v for v in BUILTIN.values() if v.wire == wire.name and v.base_url == public_base_url(wire.name)),
        None,
    )
    key = os.environ.get(vessel.key_env or "") if vessel is not None else None
    if vessel is None or not key or wire.http is None:
        return []
    made = wire.http.auth_headers(vessel, key)
    return [(k.encode(), v.encode()) for k, v in made.items() if k.lower() in _KEY_HEADERS]


def _host(url: str) -> str:
    return httpx.URL(url).netloc.decode("ascii", "replace")


class _Seen:
    """What has come of an answer so far: its size, first byte, last bytes, and (when recording) its
    chunks, up to the size limit."""

    __slots__ = ("chunks", "first", "keep", "limit", "size", "streamed", "tail")

    def __init__(self, keep: bool, streamed: bool, limit: int) -> None:
        self.keep, self.streamed, self.limit = keep, streamed, limit
        self.chunks: list[bytes] = []
        self.size = 0
        self.first: float | None = None
        self.tail = b""

    def took(self, chunk: bytes) -> None:
        if self.first is None:
            self.first = time.perf_counter()
        self.size += len(chunk)
        if self.keep and self.size <= self.limit:
            self.chunks.append(chunk)
        if self.streamed:
            self.tail = (self.tail + chunk)[-_TAIL:]


class _Relay:
    """One answer on its way back: counts its bytes, keeps them for the recorder when recording, sends the
    wire's error event when the upstream's stream breaks off, and hands the exchange over at the end."""

    def __init__(
        self,
        proxy: Proxy,
        route: Route,
        path: str,
        headers: Mapping[str, str],
        body: Any,
        size: int,
        started: float,
        t0: float,
    ) -> None:
        self.proxy, self.route, self.path, self.headers = proxy, route, path, headers
        self.body, self.size, self.started, self.t0 = body, size, started, t0
        self.t_send = self.t_headers = t0
        self.repairs: tuple[str, ...] = ()
        self.received = b""
        self.seen: _Seen | None = None
        self.cut: str | None = None
        self.encoding = ""
        self.ticket = proxy.recorder.expect() if proxy.recorder is not None else 0

    async def relay(self, resp: httpx.Response) -> AsyncIterator[bytes]:
        """The answer's chunks as they come, then the wire's error event when its stream broke off."""
        self.encoding = encoding = resp.headers.get("content-encoding", "")
        # Gemini's REST stream (no ``alt=sse``) is one JSON array of the chunks, served as JSON
        array = self.route.path_stream and self.route.framing == "json-array" and resp.status_code == 200
        streamed = array or resp.headers.get("content-type", "").startswith(_STREAM_TYPES)
        keep = self.proxy.keep and self.route.kind == "generate"
        self.seen = seen = _Seen(keep, streamed, self.proxy.config.max_body)
        recorder, whole = self.proxy.recorder, self._whole_test(resp, streamed, encoding)
        try:
            async for chunk in resp.aiter_raw():
                seen.took(chunk)
                if whole is not None and recorder is not None and whole(seen):
                    whole = None
                    recorder.answered(self.ticket)  # before the agent can have it whole
                yield chunk
        except httpx.HTTPError as exc:
            self.cut = f"the upstream's answer broke off ({type(exc).__name__})"
        self.cut = self.cut or self._ended_early(resp.status_code, streamed, encoding, seen.tail)
        error = self._error_event(self.cut, streamed and not encoding, seen.tail)
        if error:
            yield error

    async def close(self, resp: httpx.Response) -> None:
        """The upstream's answer closed (its connection back in the pool) and the exchange handed over."""
        await resp.aclose()
        seen = self.seen
        if seen is None or self.proxy.recorder is None:
            if self.proxy.recorder is not None:
                self.finish(resp.status_code, cut="the agent went away before the answer began")
            return
        added = (time.perf_counter() - self.t0) - ((seen.first or self.t_headers) - self.t_send)
        self.finish(
            resp.status_code, answer=b"".join(seen.chunks), encoding=self.encoding, answer_bytes=seen.size,
            streamed=seen.streamed, cut=self.cut, added_ms=added * 1000 if seen.first else 0.0,
        )  # fmt: skip

    def _whole_test(
        self, resp: httpx.Response, streamed: bool, encoding: str
    ) -> Callable[[_Seen], bool] | None:
        """How to tell, before the last chunk is sent on, that it completes the answer (its length, or the
        stream's final event); None when nothing waits on it (no repair) or it cannot be told (a stream
        compressed, a length not given): the exchange is handed over when the answer closes, as always."""
        http = self.route.wire.http
        if self.proxy.repairer is None or self.proxy.recorder is None or http is None:
            return None
        length = resp.headers.get("content-length", "")
        if length.isdigit():
            whole = int(length)  # read once, not on every chunk
            return lambda seen: seen.size >= whole
        if streamed and not encoding and http.stream_end is not None:
            end = http.stream_end
            return lambda seen: end(seen.tail)
        return None

    def _ended_early(self, status: int, streamed: bool, encoding: str, tail: bytes) -> str | None:
        """Why a stream that ended cleanly was still cut short: its last bytes lack the wire's final event
        (a compressed stream cannot be read here: taken as whole)."""
        http = self.route.wire.http
        if status != 200 or not streamed or encoding or http is None or http.stream_end is None:
            return None
        array = self.route.framing == "json-array"  # its last chunk is the final event, then ``]``
        ended = http.stream_end(tail) and (not array or tail.rstrip().endswith(b"]"))
        return None if ended else "the upstream's stream ended before its final event"

    def _error_event(self, cut: str | None, plain_stream: bool, tail: bytes) -> bytes:
        """The wire's own error event that ends a broken stream for the agent (b"" when none is due)."""
        http = self.route.wire.http
        if cut is None or not plain_stream or http is None or http.stream_error is None:
            return b""
        framing = self.route.framing
        event = frame(framing, http.stream_error(f"toolreplay proxy: {cut}", tail))
        return event + b"]" if framing == "json-array" else event  # the array closed after it

    def finish(
        self,
        status: int,
        *,
        refused: str | None = None,
        answer: bytes = b"",
        encoding: str = "",
        answer_bytes: int = 0,
        streamed: bool = False,
        cut: str | None = None,
        added_ms: float = 0.0,
    ) -> None:
        recorder = self.proxy.recorder
        if recorder is None:
            return
        # who asked, from the headers (and the body when it was read here: else the recorder's thread
        # reads the session field and the model from it), worked out only when there is a recorder
        headers, body, http = self.headers, self.body, self.route.wire.http
        field = http.session_field if http is not None else ""
        session = session_of(headers, body, field) if self.route.kind == "generate" else None
        model = self.route.model or model_of(body)
        recorder.submit(
            Exchange(
                started=self.started, wire=self.route.wire.name, kind=self.route.kind, path=self.path,
                model=model, upstream=self.proxy.config.upstreams[self.route.wire.name],
                agent=headers.get("user-agent", "")[:200], session=session, body=body,
                request_bytes=self.size,
                status=status, answer=answer, answer_encoding=encoding, answer_bytes=answer_bytes,
                streamed=streamed, cut=cut, added_ms=added_ms, refused=refused, repairs=self.repairs,
                received=self.received, request_encoding=headers.get("content-encoding", ""),
                framing=self.route.framing if self.route.path_stream else None,
            ),
            self.ticket,
        )  # fmt: skip


def build_app(proxy: Proxy) -> ASGIApp:
    """The app: every HTTP request, whatever its path and method, goes to :meth:`Proxy.handle`; the rest
    (the lifespan) to the Starlette shell, which closes the upstream's connections at shutdown."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await proxy.aclose()

    shell = Starlette(lifespan=lifespan)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await shell(scope, receive, send)
            return
        response = await proxy.handle(Request(scope, receive))
        await response(scope, receive, send)

    return app


__all__ = ["HOP_BY_HOP", "TOKEN_HEADER", "Proxy", "build_app", "error_response", "header_map"]

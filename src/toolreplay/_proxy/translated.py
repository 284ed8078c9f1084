"""The routed path (design 47): a request whose model a route takes is translated for the route's vessel,
sent with that vessel's key (never the agent's), and its answer written back in the agent's own wire.

``Proxy.handle`` asks :meth:`Translator.pick` once the request's path and body are checked; a request no
route takes passes through as before, its bytes untouched. For one a route takes:

1. on the event loop, or on a thread of its own where the store could make it wait (design 61): the body
   is read into the neutral history, the stored conversation it continues found, and the request
   translated for the vessel (``translate``), then prepared as the vessel's request (its endpoint, its
   key by the key-host rule);
2. the request goes to the vessel's endpoint with only that request's headers (content type, accept, the
   vessel's key and version headers, toolreplay's user agent): of the agent's, only the flags its
   wire carries on to an upstream of that same wire (Anthropic's ``anthropic-beta``, design 56);
3. a whole answer is read by the vessel's wire and written whole by the agent's wire's bridge; a stream
   is translated event by event as it arrives (:mod:`.translated_stream`);
4. an upstream error becomes the agent's wire's error shape with the provider's status and message; a
   timeout 504, an unreachable host 502, a stream cut off the agent's wire's error event;
5. the exchange goes to the recorder with the merged history, the answer (its calls under the ids the
   agent saw) and the upstream's issuer.

A routed model's token count (``count_tokens``, ``:countTokens``) is answered here by the estimate.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import httpx
from starlette.requests import Request
from starlette.responses import Response

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ToolreplayError
from toolreplay._history import History
from toolreplay._proxy.agents import session_of
from toolreplay._proxy.answers import Relayed, Said, error_response, upstream_message
from toolreplay._proxy.bodies import BodyError, Sliced, json_body
from toolreplay._proxy.counted import counted
from toolreplay._proxy.exchange import Exchange
from toolreplay._proxy.handover import HandOvers
from toolreplay._proxy.matching import prefix_heads
from toolreplay._proxy.model_routes import pick
from toolreplay._proxy.picked import Picked
from toolreplay._proxy.ready import Ready
from toolreplay._proxy.recent import Base, Recent
from toolreplay._proxy.routes import Route
from toolreplay._proxy.translate_earlier import Unanswerable, earlier_of, names_earlier, rebuilt
from toolreplay._proxy.translated_base import Continued
from toolreplay._proxy.translated_stream import (
    AgentNames,
    Carried,
    Sink,
    answer_chunks,
    as_array,
    frame,
    translated_events,
    written,
)
from toolreplay._proxy.upstream import parsed_url
from toolreplay._steps import Issuer, host_of
from toolreplay.wires import get_wire
from toolreplay.wires.bridge import (
    Bridge,
    Failed,
    FinishReason,
    collect,
    neutral_reply,
    reply_deltas,
)
from toolreplay.wires.contract import Framing, Wire
from toolreplay.wires.reply import Reply

if TYPE_CHECKING:
    from toolreplay._proxy.config import ProxyConfig
    from toolreplay._proxy.worker import RecorderThread

log = logging.getLogger("toolreplay.proxy")
_MEDIA = {"sse": "text/event-stream", "ndjson": "application/x-ndjson", "json-array": "application/json"}
#: The most of an upstream's error body read for its message.
_ERROR_READ = 64 * 1024


class Translator:
    """The routed requests of one proxy: its routes, its upstream client, a thread for what may wait on the
    store (design 61)."""

    def __init__(
        self,
        config: ProxyConfig,
        transport: httpx.AsyncBaseTransport,
        extensions: Mapping[str, Any],
        recorder: RecorderThread | None,
    ) -> None:
        self.config, self.recorder = config, recorder
        #: the proxy's own transport and timeouts: a routed request is sent as pass-through ones are, with
        #: none of a client's layers (its headers are all the vessel's request's)
        self.transport, self.extensions = transport, dict(extensions)
        self.routes = tuple(config.routes)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="toolreplay-proxy-translate")
        #: the conversations answered lately (design 54); None: each read back from the store
        self.recent = Recent() if config.record and config.remember and recorder is not None else None
        if self.recent is not None and recorder is not None:
            recorder.heard, recorder.knows = self.recent.heard, self.recent.known
        self.continued = Continued(config.db, config.record, recorder, self.recent)
        #: the recorded answers' exchanges, handed over once each answer is out (design 63)
        self.handovers = HandOvers() if recorder is not None else None
        self._pool.submit(self._warm)  # the first routed request should not pay for the imports

    def _warm(self) -> None:
        """Load what a routed request uses: the translation, every bridge it may take, the store."""
        import toolreplay._proxy.translate  # noqa: F401

        for wire in (
            {r.vessel.wire for r in self.routes}
            | {r.wire for r in self.routes if r.wire}
            | set(self.config.upstreams)
        ):
            bridge = get_wire(wire).bridge
            if bridge is not None:
                bridge()
        self.continued.open()

    # -- which requests -------------------------------------------------------------------------------

    def pick(self, request: Request, route: Route, raw: bytes, body: Any) -> Picked | None:
        """The route that takes this request, or None (it passes through)."""
        if route.kind == "generate":
            readable = isinstance(body, (dict, Sliced))
            model = route.model or (body.get("model") if readable else None)
            found = pick(self.routes, route.wire.name, model if isinstance(model, str) else None)
            if found is None or not readable:
                return None
            return Picked(route, found, body, len(raw), headers=request.headers)
        http = route.wire.http
        hit = http.count_path.match(request.scope["path"]) if http and http.count_path else None
        if hit is None or request.method != "POST":
            return None
        try:
            counted = json_body(raw, request.headers.get("content-encoding", ""), self.config.max_body)
        except BodyError:
            return None  # the provider says what is wrong with it
        model = hit.groupdict().get("model") or (counted.get("model") if isinstance(counted, dict) else None)
        found = pick(self.routes, route.wire.name, model if isinstance(model, str) else None)
        return (
            Picked(route, found, counted, len(raw), count=True)
            if found and isinstance(counted, dict)
            else None
        )

    # -- the answer -----------------------------------------------------------------------------------

    async def answer(self, request: Request, picked: Picked, t0: float, started: float) -> Response:
        inbound = picked.route.wire
        said = Said(request, picked, started, self.recorder)  # what the proxy answers itself is logged
        if picked.count:
            return said(counted(picked.route.wire, picked.model_route.vessel, picked.body), None)
        if inbound.bridge is None:
            why = f"toolreplay proxy: answers cannot be translated into the {inbound.name} wire yet"
            return said(error_response(inbound, 501, why), why)
        session = session_of(request.headers, picked.body, inbound.http.session_field if inbound.http else "")
        try:
            with self.recorder.serving() if self.recorder is not None else nullcontext():
                ready = await self._readied(picked, session)
        except Unanswerable as exc:  # the earlier turns it names are not kept: the wire's own refusal
            data = jsonenc.encode(exc.body)
            return said(Response(data, exc.status, media_type="application/json"), upstream_message(data))
        except (ToolreplayError, ValueError, TypeError, KeyError) as exc:
            why = f"toolreplay proxy: {picked.model_route.label()}: cannot translate: {exc}"
            return said(error_response(inbound, 400, why), why)
        except Exception as exc:  # a fault of the proxy's own: said in the agent's wire, not a bare 500
            return said(*self._failed(picked, exc))
        ex = _Pending(self, picked, request, ready, session, started, t0)
        return await ex.send()

    async def _readied(self, picked: Picked, session: str | None) -> Ready:
        """:meth:`_ready` on the event loop where nothing it needs can wait: no store, or one the loop
        reads itself and that has the answer at once (design 61); else on the translation thread. A hop
        to a thread and back only adds to the request's time when nothing waits (the interpreter runs one
        thread at a time: the loop is no freer while a thread translates)."""
        if not self.config.record:
            return self._ready(picked, session)
        read = self._read(picked, session, quick=True)
        if read is not None:
            return self._made(picked, *read)
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._ready, picked, session)

    def _failed(self, picked: Picked, exc: Exception) -> tuple[Response, str]:
        """An unexpected failure preparing the request: logged once (with where it failed) and answered
        as a 500 in the agent's wire's error shape, naming the route and what failed."""
        label = picked.model_route.label()
        what = f"{type(exc).__name__}: {exc}"[:300]
        log.error("toolreplay proxy: %s: the request could not be prepared: %s", label, what, exc_info=exc)
        why = f"toolreplay proxy: {label}: the request could not be prepared for the upstream ({what})"
        return error_response(picked.route.wire, 500, why), why

    def _ready(self, picked: Picked, session: str | None) -> Ready:
        read = self._read(picked, session)
        assert read is not None  # only a quick read gives way
        return self._made(picked, *read)

    def _read(self, picked: Picked, session: str | None, quick: bool = False) -> tuple[History, Base] | None:
        """The request's history and what it continues. ``quick``: on the event loop, None where the
        store could make it wait (:meth:`Continued.base`; earlier turns a body names by id, design 55)."""
        from toolreplay._proxy.translate import read_inbound, unsliced

        inbound = picked.route.wire
        whole = unsliced(inbound, picked.body)
        body = whole.body

        def read(b: Mapping[str, Any]) -> History:  # the slices key the memo only for their own body
            return read_inbound(
                inbound, b, path_model=picked.route.model, raws=whole.raws if b is body else None
            )

        if quick and names_earlier(inbound, body):
            return None
        if self.handovers is not None:
            self.handovers.wait()  # what the answers already out leave is known before it is looked up
        c = self.continued
        found = None if quick else rebuilt(inbound, body, c.store(), read, c.settled)  # design 55
        if found is None:
            history = read(body)
            base = c.base(history, session, quick)
            return None if base is None else (history, base)
        # what it continues is the store's (design 55): its exchange is not foreseen (design 54)
        history, stored = found
        return history, Base(stored, 0, tuple(prefix_heads(history.messages)), foreseen=False)

    def _made(self, picked: Picked, history: History, base: Base) -> Ready:
        """The request translated for the vessel over ``base`` and prepared as the vessel's request."""
        from toolreplay._proxy.translate import prepared_request, rendered_request
        from toolreplay._proxy.translate_renders import RENDERS
        from toolreplay._proxy.translate_settings import agent_headers

        inbound, vessel, body = picked.route.wire, picked.model_route.vessel, picked.body
        issuer = Issuer(vessel.wire, host_of(vessel.base_url), vessel.model)
        done = rendered_request(
            inbound,
            history,
            base.history,
            vessel,
            issuer=issuer,
            path_stream=picked.route.path_stream,
            renders=RENDERS,
        )
        prepared = prepared_request(vessel, done)
        sent, said = agent_headers(inbound, vessel.wire, picked.headers, prepared.headers)
        asked = picked.route.model or body.get("model")
        model = asked if isinstance(asked, str) else vessel.model
        return Ready(done, replace(prepared, headers=sent), issuer, base, tuple(said), model)

    def close(self) -> None:
        """The stores closed on the translation thread (SQLite's connection belongs to it; the loop's is
        done with, the loop having stopped), then the thread; the exchanges still being handed over
        first (the recorder is drained after)."""
        if self.handovers is not None:
            self.handovers.close()
        self._pool.submit(self.continued.close)
        self._pool.shutdown(wait=True)


class _Pending:
    """One routed request from the send to the recorder."""

    def __init__(
        self, tr: Translator, picked: Picked, request: Request, ready: Ready, session: str | None,
        started: float, t0: float,
    ) -> None:  # fmt: skip
        self.tr, self.picked, self.ready, self.session = tr, picked, ready, session
        self.started, self.t0 = started, t0
        self.t_send = self.t_answer = t0
        self.began = False
        self._names: AgentNames | None = None
        self.agent = request.headers.get("user-agent", "")[:200]
        self.path = request.scope["path"]  # as routed (building Starlette's URL costs more)
        self.inbound = picked.route.wire
        self.upstream = get_wire(ready.prepared.vessel.wire)
        #: the recorder's number for this request (``expect``): its exchange is waited for by ``settle``
        #: from the moment its answer is out until it is handed over
        self.expected = tr.recorder.expect() if tr.recorder is not None else 0

    @property
    def names(self) -> AgentNames:
        """The agent's names of the answer's tools (the answer's side: asked once the answer comes)."""
        if self._names is None:
            self._names = AgentNames(*self.ready.names)
        return self._names

    async def send(self) -> Response:
        p = self.ready.prepared
        # a stream is asked for uncompressed: a compressing server may hold its events back to fill a block
        coding = (b"accept-encoding", b"identity" if p.stream else b"gzip")
        head = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in p.headers.items()]
        # the answer's side of the translation is made once the request is written (design 58)
        extensions = {**self.tr.extensions, "trace": self.ready.trace}
        sent = httpx.Request("POST", parsed_url(p.url), headers=[*head, coding], content=p.content,
                             extensions=extensions)  # fmt: skip
        host = sent.url.netloc.decode("ascii", "replace")
        self.t_send = time.perf_counter()
        try:
            resp = await self.tr.transport.handle_async_request(sent)
            self.t_answer = time.perf_counter()
        except httpx.TimeoutException:
            return self._refused(504, f"toolreplay proxy: {host} did not answer in time")
        except httpx.HTTPError as exc:
            return self._refused(502, f"toolreplay proxy: cannot reach {host} ({type(exc).__name__})")
        if resp.status_code >= 400:
            return await self._upstream_error(resp)
        streamed = resp.headers.get("content-type", "").startswith((_MEDIA["sse"], _MEDIA["ndjson"]))
        if self.ready.rendered.asked.stream:
            framing = self.picked.route.framing
            headers = [(b"content-type", _MEDIA[framing].encode()), (b"cache-control", b"no-cache")]
            chunks = self._stream(resp, streamed)
            body = as_array(chunks) if framing == "json-array" else chunks
            return Relayed(200, headers, body, on_end=lambda: self._ended(resp))
        return await self._whole(resp, streamed)

    def _bridges(self) -> tuple[Bridge, Bridge]:
        assert self.upstream.bridge is not None and self.inbound.bridge is not None
        return self.upstream.bridge(), self.inbound.bridge()

    async def _upstream_error(self, resp: httpx.Response) -> Response:
        data = b""
        try:
            async for chunk in resp.aiter_bytes():
                data += chunk
                if len(data) > _ERROR_READ:
                    break
        except httpx.HTTPError:
            pass
        finally:
            await resp.aclose()
        message = upstream_message(data)
        keep = {k: v for k, v in resp.headers.items() if k.lower() == "retry-after"}
        self._finish(resp.status_code, refused=f"the upstream answered {resp.status_code}: {message}"[:500])
        return error_response(self.inbound, resp.status_code, message, keep)

    def _refused(self, status: int, message: str) -> Response:
        self._finish(status, refused=message.removeprefix("toolreplay proxy: "))
        return error_response(self.inbound, status, message)

    async def _whole(self, resp: httpx.Response, streamed: bool) -> Response:
        up, agent = self._bridges()
        try:
            if streamed:  # a vessel that only streams (Codex), for an agent that asked for a whole answer
                carried = Carried()
                events = translated_events(
                    answer_chunks(resp), self._framing(self.upstream), up.reader(), Sink(), "sse", carried,
                    self.names, time.perf_counter,
                )  # fmt: skip
                async for _ in events:
                    pass
                reply = collect(carried.deltas)
            else:
                reply = self.names.reply(self._parsed(up, await resp.aread()))
            self.t_answer = time.perf_counter()
        except (httpx.HTTPError, ValueError, TypeError, ToolreplayError) as exc:
            why = f"the upstream's answer cannot be read ({type(exc).__name__}: {exc})"[:500]
            return self._refused(502, f"toolreplay proxy: {why}")
        finally:
            await resp.aclose()
        body, notes = agent.body(reply, self.ready.outbound)
        data = jsonenc.encode(body)
        at = time.perf_counter()
        self._later(lambda: self._finish(200, reply=reply, notes=notes, size=len(data), at=at))
        return Response(data, 200, media_type="application/json")

    def _parsed(self, up: Bridge, data: bytes) -> Reply:
        """A whole answer read by the upstream's wire, its finish reason in neutral words."""
        return neutral_reply(self.upstream.parse_response(jsonenc.loads(data)), up)

    @staticmethod
    def _framing(wire: Wire) -> Framing:
        return wire.http.framing if wire.http is not None else "sse"

    async def _ended(self, resp: httpx.Response) -> None:
        """After a stream's end went out: when the agent was gone before it began (its iterator never
        ran), the upstream's answer is let go and the exchange handed over, so ``drain`` waits for
        nothing."""
        if not self.began:
            await resp.aclose()
            self._later(lambda: self._finish(200, cut="the agent went away before the answer began"))

    async def _stream(self, resp: httpx.Response, streamed: bool) -> AsyncIterator[bytes]:
        self.began = True
        up, agent = self._bridges()
        writer = agent.writer(self.ready.outbound)
        carried, framing = Carried(), self.picked.route.framing
        try:
            if streamed:
                events = translated_events(
                    answer_chunks(resp), self._framing(self.upstream), up.reader(), writer, framing, carried,
                    self.names, time.perf_counter,
                )  # fmt: skip
                async for out in events:
                    carried.size += len(out)
                    yield out
                self.t_answer = carried.came or self.t_answer
            else:  # the upstream answered whole though asked to stream: written as its stream
                reply = self._parsed(up, await resp.aread())
                self.t_answer = carried.first = time.perf_counter()
                deltas = reply_deltas(reply, cast(FinishReason, reply.finish_reason))
                out = written(writer, deltas, carried, framing, self.names)
                out += b"".join(frame(framing, e) for e in writer.close())
                carried.size += len(out)
                yield out
        except (httpx.HTTPError, ValueError, TypeError, ToolreplayError) as exc:
            carried.cut = f"the upstream's answer cannot be read ({type(exc).__name__})"
            yield written(writer, [Failed(f"toolreplay proxy: {carried.cut}")], carried, framing, self.names)
            yield b"".join(frame(framing, e) for e in writer.close())
        finally:
            # queued before anything yields to the loop: the agent, which has the answer's end, may
            # already be sending the request that names it (that request waits for its hand-over)
            try:
                self._later(lambda: self._streamed(carried, writer.notes))
            finally:
                await resp.aclose()

    def _streamed(self, carried: Carried, notes: list[str]) -> None:
        """A stream's exchange handed over (on the hand-over thread: the stream's deltas are all in)."""
        failed = next((d for d in carried.deltas if isinstance(d, Failed)), None)
        self._finish(
            200, reply=collect(carried.deltas), notes=notes, streamed=True,
            cut=carried.cut or (failed.message if failed is not None else None),
            at=carried.first, size=carried.size,
        )  # fmt: skip

    def _later(self, hand_over: Callable[[], None]) -> None:
        """An answer that is out (or about to be): its exchange handed over on the hand-over thread
        (design 63); ``settle`` waits for it meanwhile, as for a pass-through answer's."""
        recorder, handovers = self.tr.recorder, self.tr.handovers
        if recorder is None or handovers is None:
            return
        recorder.answered(self.expected)
        handovers.later(hand_over)

    def _finish(
        self, status: int, *, refused: str | None = None, reply: Reply | None = None,
        notes: list[str] | tuple[str, ...] = (), streamed: bool = False, cut: str | None = None,
        at: float | None = None, size: int = 0,
    ) -> None:  # fmt: skip
        """The exchange to the recorder, and to the memory (an answer that came: on the hand-over thread,
        :meth:`_later`; a refusal, which the memory does not keep: here). ``at``: when the agent's first
        bytes (a stream) or its whole answer went out (None: now)."""
        recorder = self.tr.recorder
        if recorder is None:
            return
        r, route = self.ready, self.picked.model_route
        # the proxy's own time: to the agent's first byte (a stream) or its whole answer, less the
        # upstream's (to its first bytes, or its whole answer)
        done = at or time.perf_counter()
        added = (done - self.t0) - (self.t_answer - self.t_send) if reply is not None else 0.0
        # stored as the agent saw it: its ids and tool names, the upstream's own ids kept for the upstream
        shown = r.translated.agent_reply(reply) if reply is not None else None
        recent = self.tr.recent
        ticket = recent.ticket() if recent is not None and refused is None else None
        ex = Exchange(
                started=self.started, wire=self.inbound.name, kind="generate", path=self.path,
                model=r.outbound.model, upstream=route.vessel.base_url, agent=self.agent,
                session=self.session, body=None, request_bytes=self.picked.size,
                answer_bytes=size, status=status, streamed=streamed, cut=cut, added_ms=added * 1000,
                refused=refused,
                history=r.translated.history, reply=shown, issuer=r.issuer, route=route.label(),
                vessel=route.vessel.name, notes=(*r.translated.notes, *notes), heads=r.base.heads or None,
                ticket=ticket,
                answer_id=r.outbound.answer_id if earlier_of(self.inbound) is not None else None,
        )  # fmt: skip
        if recent is not None and ticket is not None:
            recent.remember(ticket, r.base, ex)  # before the recorder can have written it
        recorder.submit(ex, self.expected)
        if recent is not None and ticket is not None:
            recent.foresee(ticket)  # now, not when the request that continues it comes


__all__ = ["Translator"]

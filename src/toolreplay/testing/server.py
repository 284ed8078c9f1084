"""The provider double: one loopback HTTP server speaking every wire, with a scripted queue of answers."""

from __future__ import annotations

import contextlib
import io
import socket
import struct
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._tokens import bytes_to_tokens
from toolreplay._transport.dump import redact_headers
from toolreplay._vessels import BUILTIN, Vessel, get_vessel
from toolreplay.testing._http import Front, Limits, Received
from toolreplay.testing._records import KEEP_REQUESTS, RecordedRequest, Records
from toolreplay.testing._routes import content_type, double_of, doubled, framed, route
from toolreplay.testing.answers import (
    CHUNKINGS,
    ERROR_KINDS,
    Answer,
    AnswerCall,
    default_message,
    error_body,
    error_event,
    seeded,
    signature_for,
    token_pieces,
)
from toolreplay.testing.checks import Rules, check_request
from toolreplay.testing.prefix_cache import PrefixCache
from toolreplay.testing.script import (
    BrokenArgs,
    Calls,
    Chunking,
    CutStream,
    Error,
    Hang,
    Item,
    NotJSON,
    Reset,
    StreamError,
    Text,
)
from toolreplay.wires.reply import Usage

_OK = Text("ok")
Responder = Callable[["RecordedRequest"], Item | None]


class ProviderDouble:
    """A loopback HTTP server that answers like the providers. See :mod:`toolreplay.testing`."""

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        delay: float = 0.0,
        default: Item | None = _OK,
        require_signatures: bool = True,
        chunking: Chunking | int = "tokens",
        host: str = "127.0.0.1",
        port: int = 0,
        limits: Limits | None = None,
        keep_requests: int | None = KEEP_REQUESTS,
        on_answer: Callable[[RecordedRequest], None] | None = None,
    ) -> None:
        # chunking: how stream deltas are cut when the script does not say (an int: a random cut per
        # text, from that seed, so a parser meets every variant). limits: what one request may take (body
        # size, header and idle timeouts, requests answered at once); keep_requests: how many of the
        # newest requests ``requests`` keeps (None: all); on_answer: called with each request as its
        # status goes out (on the server's threads), so a log misses none the ring has let go.
        self._cut = seeded(chunking) if isinstance(chunking, int) else CHUNKINGS[chunking]
        self.responder = responder
        self.on_answer = on_answer
        self.delay = delay
        self.default = default
        self.require_signatures = require_signatures
        self._host = host
        self._port = port
        self._queue: deque[Item] = deque()
        self._wire_queues: dict[str, deque[Item]] = {}
        self._records = Records(keep_requests)
        self.limits = limits or Limits()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._seq = 0
        self.prefix_cache = PrefixCache()
        """The simulated prompt cache behind the usage the double reports (see ``prefix_cache``)."""
        self._front: Front | None = None

    # -- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> ProviderDouble:
        """Start serving on ``port`` (0: a free one; idempotent)."""
        if self._front is None:
            self._front = Front(self._host, self._port, self._answer_one, self.limits)
        return self

    def _answer_one(self, got: Received) -> None:
        _Handler(got, self)

    def close(self) -> None:
        """Stop serving; hung answers are released."""
        self._stop.set()
        if self._front is not None:
            self._front.close()
            self._front = None

    def __enter__(self) -> ProviderDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ProviderDouble:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # -- addresses ------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server root, ``http://127.0.0.1:<port>``."""
        if self._front is None:
            raise RuntimeError("the provider double is not started (use it as a context manager)")
        host, port = self._front.server_address[:2]
        return f"http://{host!s}:{port}"

    def base_url_for(self, target: str | Vessel) -> str:
        """The base URL to give a vessel (or a wire) so its requests reach this double.

        A vessel (object or name) gets a ``/vessel/<name>`` prefix, so the double applies that vessel's
        rules (its id limit, Codex's demands) and records its name; a bare wire name gets the plain paths
        (the Chat checks then follow OpenAI's own server: ids of at most 40 characters).
        """
        if isinstance(target, Vessel) or target in BUILTIN:
            v = get_vessel(target)
            return f"{self.url}/vessel/{v.name}{double_of(v.wire).base_suffix}"
        served = {w.name: d for w, d in doubled()}
        if target not in served:
            raise ValueError(f"{target!r} is neither a vessel nor a wire; wires: {', '.join(served)}")
        return self.url + served[target].base_suffix

    def vessel(self, name: str | Vessel) -> Vessel:
        """A copy of vessel ``name`` pointed at this double."""
        v = get_vessel(name)
        return replace(v, base_url=self.base_url_for(v))

    # -- script and record ----------------------------------------------------------------------------

    def script(self, *items: Item, wire: str | None = None) -> None:
        """Queue answers, in order (``wire``: only for requests of that wire; they go first)."""
        if wire is not None and wire not in {w.name for w, _ in doubled()}:
            raise ValueError(f"unknown wire {wire!r}")
        with self._lock:
            target = self._queue if wire is None else self._wire_queues.setdefault(wire, deque())
            target.extend(items)

    @property
    def pending(self) -> list[Item]:
        """Items not used yet (wire queues first, then the shared queue)."""
        with self._lock:
            out = [i for q in self._wire_queues.values() for i in q]
            return out + list(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far, in arrival order (the newest ``keep_requests`` of them)."""
        return self._records.all()

    def requests_for(self, wire: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.wire == wire]

    def clear(self) -> None:
        """Forget the queue, the recorded requests and the simulated prompt cache."""
        self.prefix_cache.clear()
        with self._lock:
            self._queue.clear()
            self._wire_queues.clear()
        self._records.clear()

    def _record(self, req: RecordedRequest) -> RecordedRequest:
        return self._records.add(req)

    def _update(self, req: RecordedRequest, **changes: Any) -> RecordedRequest:
        return self._records.update(req, **changes) or replace(req, **changes)

    def _next_item(self, req: RecordedRequest) -> Item | None:
        if self.responder is not None:
            item = self.responder(req)
            if item is not None:
                return item
        with self._lock:
            queue = self._wire_queues.get(req.wire or "")
            if queue:
                return queue.popleft()
            if self._queue:
                return self._queue.popleft()
        return self.default

    def _answer(self, item: Text | Calls | BrokenArgs, wire: str, model: str, req: RecordedRequest) -> Answer:
        with self._lock:
            self._seq += 1
            seq = self._seq
        if isinstance(item, BrokenArgs):
            calls: tuple[AnswerCall, ...] = (
                AnswerCall(item.name, item.raw, item.call_id or double_of(wire).call_id(seq, 0), None),
            )
            text, reasoning, usage = item.text, None, None
        elif isinstance(item, Calls):
            calls = tuple(
                AnswerCall(
                    c.name,
                    dict(c.input),
                    c.call_id or double_of(wire).call_id(seq, k),
                    c.signature
                    if c.signature is not None
                    else (signature_for(seq, k, model) if k == 0 else None),
                )
                for k, c in enumerate(item.calls)
            )
            text, reasoning, usage = item.text, item.reasoning, item.usage
        else:
            calls, text, reasoning, usage = (), item.text, item.reasoning, item.usage
        request = req.body if isinstance(req.body, Mapping) else {}
        if reasoning and not double_of(wire).thinks(BUILTIN.get(req.vessel or ""), model, request):
            reasoning = None  # a model that does not think sends no reasoning (design 32)
        if usage is None:
            usage = self._usage(wire, model, req, text, calls)
        cut = CHUNKINGS[item.chunking] if item.chunking is not None else self._cut
        return Answer(seq, model, text, calls, reasoning, usage, request, cut)

    def _usage(
        self, wire: str, model: str, req: RecordedRequest, text: str, calls: tuple[AnswerCall, ...]
    ) -> Usage:
        """Usage by the documented estimate, the prompt cache simulated (see ``prefix_cache``); the
        cache write is reported by the wires that have a field for it (Anthropic)."""
        out = max(1, bytes_to_tokens(len(text.encode()))) + sum(
            bytes_to_tokens(len(c.arguments.encode())) + 4 for c in calls
        )
        if not isinstance(req.body, Mapping):
            return Usage(max(1, bytes_to_tokens(len(req.raw))), out, 0)
        seen = self.prefix_cache.count(wire, model, req.body)
        return Usage(max(1, seen.prompt_tokens), out, seen.cached_tokens, seen.written_tokens)


def _rules(double: ProviderDouble, wire: str, vessel: str | None, model: str | None) -> Rules:
    v = BUILTIN.get(vessel or "")
    signatures = double.require_signatures
    if v is None:
        limit = double_of(wire).default_max_id_len
        return Rules(max_id_len=limit, require_signatures=signatures, model=model)
    return Rules(v.max_id_len, v.has("stream_only"), signatures, vessel=v, model=model)


class _Handler(BaseHTTPRequestHandler):
    """Answers one request the front has read whole (``got``: its header block, body, or refusal)."""

    server_version = "toolreplay-double/1"
    _reset = False

    def __init__(self, got: Received, double: ProviderDouble) -> None:
        self.got, self.double = got, double
        super().__init__(got.sock, got.address, None)  # type: ignore[arg-type]  # no socketserver here

    def setup(self) -> None:
        super().setup()  # the connection and its writer; the request itself is already read
        self.rfile.close()
        self.rfile = io.BytesIO(self.got.head)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the double records requests instead of logging them."""

    def finish(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            super().finish()

    def do_GET(self) -> None:
        if not self._refused_by_headers("GET"):
            self._json(404, {"error": {"message": f"no route for GET {self.path}"}})

    def _refused_by_headers(self, method: str) -> bool:
        """Answer the front's refusal (a bad or too large Content-Length, headers too large), recorded
        with the status, in the wire's error shape when the path names a wire."""
        if self.got.problem is None:
            return False
        status, message = self.got.problem
        wire, vessel, _, _ = route(self.path.partition("?")[0])
        headers = redact_headers({k.lower(): v for k, v in self.headers.items()})
        req = RecordedRequest(0, method, self.path, wire, vessel, headers, None, b"", False, rejected=message)
        payload = error_body(wire, status, message) if wire else {"error": {"message": message}}
        self._reply(self.double._record(req), status, payload)
        return True

    def do_POST(self) -> None:
        if self._refused_by_headers("POST"):
            return
        path, _, query = self.path.partition("?")
        wire, vessel, model, path_stream = route(path)
        raw = self.got.body
        try:
            body: Any = jsonenc.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = redact_headers({k.lower(): v for k, v in self.headers.items()})
        stream = double_of(wire).wants_stream(body, path_stream) if wire is not None else False
        req = self.double._record(
            RecordedRequest(0, "POST", self.path, wire, vessel, headers, body, raw, stream)
        )
        if wire is None:
            self._reply(req, 404, {"error": {"message": f"no route for POST {path}"}})
            return
        refused = double_of(wire).refuse_url(stream, query)
        if refused:
            self._reply(req, 400, error_body(wire, 400, refused))
            return
        if not isinstance(body, Mapping):
            self._reject(req, wire, "We could not parse the JSON body of your request.")
            return
        named = model or (body.get("model") if isinstance(body.get("model"), str) else None)
        problem = double_of(wire).refuse_headers(headers, body) or check_request(
            wire, body, _rules(self.double, wire, vessel, named)
        )
        if problem:
            self._reject(req, wire, problem)
            return
        item = self.double._next_item(req)
        if item is None:
            self._reply(req, 500, error_body(wire, 500, "provider double: the script is empty"))
            return
        if self.double.delay and self.double._stop.wait(self.double.delay):
            return
        self._act(req, wire, model or str(body.get("model") or "double-model"), item)

    # -- answering ----------------------------------------------------------------------------------

    def _act(self, req: RecordedRequest, wire: str, model: str, item: Item) -> None:
        if isinstance(item, Text | Calls | BrokenArgs):
            self._deliver(req, wire, self.double._answer(item, wire, model, req))
        elif isinstance(item, Error):
            message = item.message or default_message(item.status)
            extra = {"retry-after": str(item.retry_after)} if item.retry_after is not None else {}
            self._reply(req, item.status, error_body(wire, item.status, message), extra)
        elif isinstance(item, NotJSON):
            self._send(req, 200, item.body.encode("utf-8"), item.content_type)
        elif isinstance(item, Hang):
            if item.after_events is None:
                self.double._stop.wait(item.seconds)
                self.close_connection = True
            else:
                answer = self.double._answer(item.then, wire, model, req)
                self._deliver(req, wire, answer, stop_after=item.after_events, hang=item.seconds)
        elif isinstance(item, CutStream):
            answer = self.double._answer(item.then, wire, model, req)
            self._deliver(req, wire, answer, stop_after=item.after_events)
        elif isinstance(item, StreamError):
            self._stream_error(req, wire, model, item)
        elif isinstance(item, Reset):
            if item.after_events is None:
                self._reset_now()
            else:
                answer = self.double._answer(item.then, wire, model, req)
                self._deliver(req, wire, answer, stop_after=item.after_events, reset=True)

    def _deliver(
        self,
        req: RecordedRequest,
        wire: str,
        answer: Answer,
        *,
        stop_after: int | None = None,
        hang: float | None = None,
        reset: bool = False,
    ) -> None:
        if not req.stream:
            data = jsonenc.encode(double_of(wire).body(answer))
            if stop_after is None:
                self._send(req, 200, data, "application/json")
                return
            # A body shorter than its Content-Length: the client sees the connection end mid-body.
            self._start(req, 200, "application/json", length=len(data))
            self._write(data[: max(1, len(data) // 2)])
        else:
            events = double_of(wire).events(answer, answer.cut or token_pieces)
            self._start(req, 200, content_type(wire, req.path))
            for data in framed(wire, req.path, events[:stop_after], stop_after is None):
                self._write(data)
        if stop_after is None:
            return
        if hang is not None:
            self.double._stop.wait(hang)
        if reset:
            self._reset_now()
        self.close_connection = True

    def _stream_error(self, req: RecordedRequest, wire: str, model: str, item: StreamError) -> None:
        status = ERROR_KINDS[item.kind][0]
        if not req.stream:
            self._reply(req, status, error_body(wire, status, item.message))
            return
        answer = self.double._answer(item.then, wire, model, req)
        events = double_of(wire).events(answer, answer.cut or token_pieces)
        events = events[: item.after_events]
        name, error = error_event(wire, item.kind, item.message)
        if isinstance(error, dict) and "sequence_number" in error:
            # a numbered stream (Responses) goes on counting through its error event
            error = {**error, "sequence_number": len(events)}
        self._start(req, 200, content_type(wire, req.path))
        for data in framed(wire, req.path, [*events, (name, error)]):
            self._write(data)

    def _reset_now(self) -> None:
        """Close with SO_LINGER 0: the peer gets a TCP RST, not a clean end."""
        self._reset = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        self.close_connection = True

    def _reject(self, req: RecordedRequest, wire: str, message: str) -> None:
        self.double._update(req, rejected=message)
        self._reply(req, 400, error_body(wire, 400, message))

    def _reply(
        self, req: RecordedRequest, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        self._send(req, status, jsonenc.encode(payload), "application/json", headers)

    def _json(self, status: int, payload: Any) -> None:
        data = jsonenc.encode(payload)
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self._write(data)

    def _send(
        self,
        req: RecordedRequest,
        status: int,
        data: bytes,
        ctype: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._start(req, status, ctype, length=len(data), headers=headers)
        self._write(data)

    def _start(
        self,
        req: RecordedRequest,
        status: int,
        ctype: str,
        *,
        length: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        answered = self.double._update(req, status=status)
        if self.double.on_answer is not None:
            self.double.on_answer(answered)
        self.send_response(status)
        self.send_header("content-type", ctype)
        if length is not None:
            self.send_header("content-length", str(length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _write(self, data: bytes) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.wfile.write(data)
            self.wfile.flush()


def serve(items: Iterable[Item] = (), **kwargs: Any) -> ProviderDouble:
    """A started double with ``items`` queued (close it, or use ``with ProviderDouble() as d``)."""
    double = ProviderDouble(**kwargs).start()
    double.script(*items)
    return double


__all__ = ["ProviderDouble", "RecordedRequest", "Responder", "serve"]

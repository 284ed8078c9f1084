"""What the proxy sends an agent itself: an error in the agent's wire's own shape, and an answer sent on
chunk by chunk as it is made (the upstream's as it arrives, or a translated one as it is written)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.exchange import Exchange
from toolreplay.wires.contract import Wire

if TYPE_CHECKING:
    from toolreplay._proxy.picked import Picked
    from toolreplay._proxy.worker import RecorderThread


def error_response(
    wire: Wire, status: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    """``message`` in ``wire``'s own error shape (``headers``: what goes with it, e.g. ``Retry-After``)."""
    http = wire.http
    body = http.error_body(status, message) if http is not None and http.error_body else {"error": message}
    return Response(jsonenc.encode(body), status, dict(headers or {}), "application/json")


class Relayed(Response):
    """An answer sent on chunk by chunk as it comes (Starlette's StreamingResponse with nothing added: no
        task watching for the agent to go away; when it goes, uvicorn drops what is sent and the answer is
        still read to its end and recorded). Empty chunks are not sent. ``on_end`` runs once the answer's end
        has gone out (or the sending failed): the upstream's connection is put back and the exchange handed
        over only then, so the agent never waits for either. When the agent is gone before the answer's start
    could be sent, the iterator never started: ``on_end`` is what still hands the exchange over."""

    def __init__(
        self,
        status: int,
        raw_headers: list[tuple[bytes, bytes]],
        body: AsyncIterator[bytes],
        *,
        on_end: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.status_code = status
        self.raw_headers = raw_headers
        self.body = b""
        self.background = None
        self._chunks = body
        self._on_end = on_end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            start = {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
            await send(start)
            async for chunk in self._chunks:
                if chunk:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            # an agent gone mid-answer (a server whose send raises on a closed connection) leaves the
            # answer's iterator at a yield: closed here, its own ``finally`` hands the exchange over
            closing = getattr(self._chunks, "aclose", None)
            if closing is not None:
                await closing()
            if self._on_end is not None:
                await self._on_end()


class Said:
    """A routed request the proxy answers itself (a refusal, a fault, a count): its exchange goes to the
    recorder (its ``--log`` line, the console) as a pass-through refusal's does; a refusal's message is
    kept, and nothing is stored (design 55)."""

    def __init__(
        self, request: Request, picked: Picked, started: float, recorder: RecorderThread | None
    ) -> None:
        self.request, self.picked, self.started, self.recorder = request, picked, started, recorder

    def __call__(self, response: Response, why: str | None) -> Response:
        recorder, picked = self.recorder, self.picked
        if recorder is None:
            return response
        route, asked = picked.model_route, picked.route.model or picked.body.get("model")
        refused = why.removeprefix("toolreplay proxy: ")[:500] if why else None
        kind = "count" if picked.count else "generate"
        recorder.expect()
        recorder.submit(
            Exchange(
                started=self.started, wire=picked.route.wire.name, kind=kind,
                path=self.request.url.path, model=asked if isinstance(asked, str) else None,
                upstream=route.vessel.base_url, agent=self.request.headers.get("user-agent", "")[:200],
                session=None, body=None, request_bytes=picked.size, status=response.status_code,
                answer_bytes=len(response.body), refused=refused,
                route=route.label(), vessel=route.vessel.name,
            )
        )  # fmt: skip
        return response


def upstream_message(data: bytes) -> str:
    """The message of a provider's error body (``{"error": {"message"}}``, ``{"error": "..."}``,
    ``{"message"}``), else its text."""
    try:
        body = jsonenc.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace").strip()[:500] or "(no message)"
    err = body.get("error") if isinstance(body, dict) else None
    for found in (
        err.get("message") if isinstance(err, dict) else err,
        body.get("message") if isinstance(body, dict) else None,
    ):
        if isinstance(found, str) and found:
            return found
    return data.decode("utf-8", "replace").strip()[:500]


__all__ = ["Relayed", "Said", "error_response", "upstream_message"]

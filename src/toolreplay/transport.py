"""The HTTP boundary: build a vessel's request, send it (streamed or not), retry, translate errors.

One async implementation (:meth:`Transport.exchange`) and thin wrappers (:meth:`Transport.send`, and
:meth:`Transport.send_sync` / :meth:`Transport.exchange_sync` for synchronous callers)::

    from toolreplay.transport import Transport
    with Transport() as t:                      # or: async with Transport() as t: await t.send(...)
        reply = t.send_sync("kimi", body, on_text=print)

Per wire (``base`` is the vessel's ``base_url`` or the caller's ``base_url``):

=================  ==========================================================  =========================
wire               request                                                     key header
=================  ==========================================================  =========================
openai-chat        POST {base}/chat/completions (``"stream": true`` + usage)   Authorization: Bearer
openai-responses   POST {base}/responses (``"stream": true``)                  Authorization: Bearer
anthropic          POST {base}/v1/messages (``"stream": true``)                x-api-key + anthropic-version
gemini             POST {base}/models/{model}:generateContent                  x-goog-api-key (never ?key=)
                   or :streamGenerateContent?alt=sse
ollama             POST {base}/api/chat (``"stream"`` true/false: NDJSON)      Authorization: Bearer, if any
=================  ==========================================================  =========================

The key comes from the vessel's ``key_env``. When that variable is unset, a loopback base URL gets no key
(local servers need none) and any other URL is refused with a :class:`ConfigError` before anything is sent.
A ``stream_only`` vessel (Codex) always streams.

Errors are translated in one place (:func:`error_for_status`, :func:`error_for_exception`) into the tree
of :mod:`toolreplay.errors`. :class:`RetryPolicy` retries 429, 5xx, timeouts, connection faults and
streams cut short (bounded attempts, exponential backoff with jitter, ``Retry-After`` honoured); it never
retries a 400-class answer or a body that is not the wire's shape. Keys never reach an error, a log line
or a dump (:func:`toolreplay.transport_dump.redact`).

:meth:`Transport.exchange` returns a :class:`SendResult`: the :class:`~toolreplay.wires.reply.Reply` plus
latency, attempts and request size (for the lab); :meth:`Transport.send` returns just the Reply.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import logging
import os
import random
import ssl
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from toolreplay import __version__, jsonenc
from toolreplay.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ConnectionFault,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    ResponseFormatError,
    ServerError,
)
from toolreplay.profiles import Vessel, get_vessel
from toolreplay.transport_dump import RequestDump, redact, redact_headers, register_secret
from toolreplay.wires import wire_module
from toolreplay.wires.reply import Reply

log = logging.getLogger("toolreplay.transport")

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_TIMEOUT = 300.0

TextCallback = Callable[[str], None]
RetryCallback = Callable[[ProviderError, int, float], None]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When and how long to wait before trying again.

    Attempt ``n`` (1-based) that failed with a retryable error waits ``Retry-After`` when the provider
    gave one (a wait longer than ``max_retry_after`` is not waited: the error is raised at once), else
    ``min(max_delay, base_delay * 2 ** (n - 1))`` scaled by a random factor in ``[1 - jitter, 1]``.
    ``sleep`` is injectable so tests run without waiting.
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    jitter: float = 0.5
    max_retry_after: float = 120.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be at least 1, not {self.max_attempts}")
        if not 0 <= self.jitter <= 1:
            raise ConfigError(f"jitter must be between 0 and 1, not {self.jitter}")

    def delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait after failed attempt ``attempt``, or None when no retry should follow."""
        if not error.retryable or attempt >= self.max_attempts:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_retry_after else None
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return backoff * (1 - self.jitter * self.rng.random())


NO_RETRY = RetryPolicy(max_attempts=1)


@dataclass(frozen=True, slots=True)
class SendResult:
    """A reply and how it was obtained.

    ``latency_s``: the successful attempt, request sent to reply parsed; ``total_s``: all attempts and
    waits; ``first_text_s``: when the first text arrived (streams with text only); ``request_bytes``: the
    body size sent; ``status``: the HTTP status of the successful attempt.
    """

    reply: Reply
    latency_s: float
    total_s: float
    attempts: int
    request_bytes: int
    status: int
    first_text_s: float | None = None


@dataclass(frozen=True, slots=True)
class Prepared:
    """One request ready to go: what :func:`prepare` built (headers hold the key: never log them raw)."""

    vessel: Vessel
    url: str
    headers: Mapping[str, str]
    content: bytes
    stream: bool


def is_loopback(url: str) -> bool:
    """True for http(s) URLs on localhost, 127.0.0.0/8 or ::1."""
    import ipaddress

    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_key(vessel: Vessel, base_url: str) -> str | None:
    """The vessel's key, None when it needs or gets none; ConfigError when a remote URL would go keyless."""
    if vessel.key_env is None:
        return None
    key = os.environ.get(vessel.key_env, "").strip()
    if key:
        register_secret(key)
        return key
    if is_loopback(base_url):
        return None
    raise ConfigError(f"{vessel.name}: set {vessel.key_env} or use --base-url for a local server")


def endpoint(vessel: Vessel, base_url: str, model: str, stream: bool) -> str:
    """The URL a request of ``vessel`` goes to."""
    wire = vessel.wire
    if wire == "claude-prompt":
        raise ConfigError(
            f"{vessel.name}: the claude-prompt wire drives the Claude Code CLI, not HTTP (use the turn loop)"
        )
    base = base_url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ConfigError(f"{vessel.name}: base URL {base_url!r} is not an http(s) URL")
    if wire == "openai-chat":
        return f"{base}/chat/completions"
    if wire == "openai-responses":
        return f"{base}/responses"
    if wire == "anthropic":
        return f"{base}/v1/messages"
    if wire == "gemini":
        name = quote(model.removeprefix("models/"), safe="-._")
        return f"{base}/models/{name}:" + ("streamGenerateContent?alt=sse" if stream else "generateContent")
    if wire == "ollama":
        return f"{base}/api/chat"
    raise ConfigError(f"{vessel.name}: wire {wire} is not sent over HTTP")


def _headers(vessel: Vessel, key: str | None, stream: bool) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream" if stream and vessel.wire != "ollama" else "application/json",
        "user-agent": f"toolreplay/{__version__}",
    }
    if vessel.wire == "anthropic":
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if key:
            headers["x-api-key"] = key
    elif vessel.wire == "gemini":
        if key:
            # A header, never a ?key= query: keys must not land in URLs, logs or dumps.
            headers["x-goog-api-key"] = key
    elif key:
        headers["authorization"] = f"Bearer {key}"
    return headers


def _stream_body(wire: str, body: Mapping[str, Any], stream: bool, model: str | None) -> dict[str, Any]:
    out = dict(body)
    if model and wire != "gemini":
        out["model"] = model
    if wire == "openai-chat":
        if stream:
            out["stream"] = True
            out.setdefault("stream_options", {"include_usage": True})
        else:
            # OpenAI refuses stream_options without stream.
            out.pop("stream", None)
            out.pop("stream_options", None)
    elif wire in ("openai-responses", "anthropic"):
        if stream:
            out["stream"] = True
        else:
            out.pop("stream", None)
    elif wire == "ollama":
        out["stream"] = stream  # Ollama streams when the flag is absent
    return out


def prepare(
    vessel: Vessel | str,
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    base_url: str | None = None,
    stream: bool | None = None,
) -> Prepared:
    """The request for ``body`` on ``vessel``: URL, headers (with the key), exact body bytes, stream flag.

    ``model`` overrides the body's ``model`` (Gemini: the model in the URL); ``stream`` None follows the
    body's own ``stream`` flag; a ``stream_only`` vessel always streams.
    """
    v = get_vessel(vessel)
    base = base_url or v.base_url
    streamed = v.has("stream_only") or (bool(body.get("stream")) if stream is None else stream)
    use_model = model or str(body.get("model") or v.model)
    url = endpoint(v, base, use_model, streamed)
    key = resolve_key(v, base)
    content = jsonenc.encode(_stream_body(v.wire, body, streamed, model))
    return Prepared(v, url, _headers(v, key, streamed), content, streamed)


# ---------------------------------------------------------------------------------------------------
# Error translation: the one place where HTTP outcomes become toolreplay errors.


def retry_after(headers: httpx.Headers, body: Any = None, now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, ``Retry-After`` (seconds or HTTP date), or Gemini's
    ``RetryInfo.retryDelay`` in the error body; None when none is given."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                when = None
            if when is not None:
                if when.tzinfo is None:
                    when = when.replace(tzinfo=UTC)
                return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
    return _gemini_retry_delay(body)


def _gemini_retry_delay(body: Any) -> float | None:
    err = body.get("error") if isinstance(body, Mapping) else None
    details = err.get("details") if isinstance(err, Mapping) else None
    for d in details if isinstance(details, list) else ():
        delay = d.get("retryDelay") if isinstance(d, Mapping) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return max(0.0, float(delay[:-1]))
            except ValueError:
                return None
    return None


def provider_message(data: bytes) -> tuple[str, Any]:
    """The provider's own error text from an error body (every wire's shape), and the decoded body."""
    try:
        payload: Any = jsonenc.loads(data) if data else None
    except ValueError:
        payload = None
    found = payload[0] if isinstance(payload, list) and payload else payload
    msg: Any = None
    if isinstance(found, Mapping):
        err = found.get("error")
        if isinstance(err, Mapping):
            msg = err.get("message") or err.get("type")
        elif isinstance(err, str):
            msg = err
        msg = msg or found.get("message") or found.get("detail")
    if not msg:
        msg = data.decode("utf-8", "replace").strip()[:300] or "(empty body)"
    return " ".join(str(msg).split()), found


def error_for_status(vessel: Vessel, status: int, headers: httpx.Headers, data: bytes) -> ProviderError:
    """The error for a non-2xx answer, carrying the provider's own message (keys redacted)."""
    message, payload = provider_message(data)
    text = redact(f"{vessel.name}: HTTP {status}: {message}")
    kw: dict[str, Any] = {"status": status, "vessel": vessel.name}
    if status in (401, 403):
        hint = f" (check {vessel.key_env})" if vessel.key_env else ""
        return AuthenticationError(text + hint, **kw)
    if status == 429:
        return RateLimitError(text, retry_after=retry_after(headers, payload), **kw)
    if status == 408:
        return ProviderTimeout(text, **kw)
    if status >= 500:
        return ServerError(text, retry_after=retry_after(headers, payload), **kw)
    return BadRequestError(text, **kw)


def error_for_exception(vessel: Vessel, exc: httpx.HTTPError) -> ProviderError:
    """The error for a failure below HTTP (timeouts, refused or reset connections, broken encodings)."""
    detail = redact(str(exc) or type(exc).__name__)
    kw: dict[str, Any] = {"vessel": vessel.name}
    if isinstance(exc, httpx.TimeoutException):
        return ProviderTimeout(f"{vessel.name}: no answer in time ({type(exc).__name__}: {detail})", **kw)
    if isinstance(exc, httpx.DecodingError):
        return ResponseFormatError(f"{vessel.name}: the answer could not be decoded ({detail})", **kw)
    return ConnectionFault(f"{vessel.name}: connection failed ({type(exc).__name__}: {detail})", **kw)


def _decode(vessel: Vessel, data: bytes, what: str) -> Any:
    try:
        return jsonenc.loads(data)
    except ValueError:
        snippet = redact(data[:120].decode("utf-8", "replace"))
        raise ResponseFormatError(
            f"{vessel.name}: {what} is not JSON: {snippet!r}", vessel=vessel.name
        ) from None


#: Chat's ``data: [DONE]``: the stream is complete (some compatible servers send no finish_reason).
DONE = "[DONE]"


async def _sse_events(resp: httpx.Response, vessel: Vessel, raw: list[str] | None) -> AsyncIterator[Any]:
    """The decoded ``data`` payloads of an SSE stream; stops at ``[DONE]``; an unfinished event at the
    end of the stream is dropped (the SSE rule), which the parser then reports as a cut stream."""
    data: list[str] = []
    async for line in resp.aiter_lines():
        if raw is not None:
            raw.append(line)
        if line == "":
            if data:
                payload = "\n".join(data)
                data = []
                if payload.strip() == "[DONE]":
                    yield DONE
                    return
                yield _decode(vessel, payload.encode("utf-8"), "a stream event")
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)


async def _ndjson_events(resp: httpx.Response, vessel: Vessel, raw: list[str] | None) -> AsyncIterator[Any]:
    async for line in resp.aiter_lines():
        if raw is not None:
            raw.append(line)
        if line.strip():
            yield _decode(vessel, line.encode("utf-8"), "a stream line")


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying SSL context (httpx's default: certifi, or $SSL_CERT_FILE / $SSL_CERT_DIR) shared by
    every own client: loading the CA bundle costs ~50 ms, paid once per process instead of per client."""
    return httpx.create_ssl_context()


# ---------------------------------------------------------------------------------------------------


class Transport:
    """Sends requests for any HTTP vessel over one ``httpx.AsyncClient``.

    ``client``: inject one (tests use ``httpx.MockTransport``); otherwise the transport makes its own on
    first use and closes it in :meth:`aclose` / :meth:`close`. An own client belongs to the event loop it
    was made on: use one Transport per loop (the sync methods run their own loop). ``dump``: a directory
    (or :class:`RequestDump`) where every request and answer is written.
    """

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        dump: RequestDump | str | Path | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.dump = RequestDump(dump) if isinstance(dump, str | Path) else dump
        self._client = client
        self._own: httpx.AsyncClient | None = None
        self._own_loop: asyncio.AbstractEventLoop | None = None
        self._runner: asyncio.Runner | None = None
        self._sync_lock = threading.Lock()

    # -- client lifecycle ---------------------------------------------------------------------------

    def _get_client(self) -> httpx.AsyncClient:
        if self._client is not None:
            return self._client
        loop = asyncio.get_running_loop()
        if self._own is None:
            self._own = httpx.AsyncClient(timeout=self.timeout, verify=_ssl_context(), follow_redirects=False)
            self._own_loop = loop
        elif self._own_loop is not loop:
            raise ConfigError(
                "this Transport's own HTTP client belongs to another event loop; use one per loop"
            )
        return self._own

    async def aclose(self) -> None:
        """Close the transport's own client (an injected client is the caller's to close)."""
        if self._own is not None and self._own_loop is asyncio.get_running_loop():
            await self._own.aclose()
            self._own = None

    def close(self) -> None:
        """Close what the sync methods opened (their event loop and the own client made on it)."""
        with self._sync_lock:
            if self._runner is not None:
                if self._own is not None and self._own_loop is self._runner.get_loop():
                    self._runner.run(self._own.aclose())
                    self._own = None
                self._runner.close()
                self._runner = None

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sending --------------------------------------------------------------------------------------

    async def send(
        self,
        vessel: Vessel | str,
        body: Mapping[str, Any],
        *,
        model: str | None = None,
        base_url: str | None = None,
        stream: bool | None = None,
        on_text: TextCallback | None = None,
        on_retry: RetryCallback | None = None,
    ) -> Reply:
        """Send ``body`` and return the parsed :class:`Reply` (see :meth:`exchange`)."""
        result = await self.exchange(
            vessel, body, model=model, base_url=base_url, stream=stream, on_text=on_text, on_retry=on_retry
        )
        return result.reply

    async def exchange(
        self,
        vessel: Vessel | str,
        body: Mapping[str, Any],
        *,
        model: str | None = None,
        base_url: str | None = None,
        stream: bool | None = None,
        on_text: TextCallback | None = None,
        on_retry: RetryCallback | None = None,
    ) -> SendResult:
        """Send ``body`` for ``vessel`` with retries; the reply plus latency and attempts.

        ``on_text`` receives each piece of text as it streams in (after a retry the text starts again:
        ``on_retry(error, attempt, delay)`` is called first, so a chat can say so).
        Raises a :class:`~toolreplay.errors.ProviderError` subclass, or ConfigError before sending.
        """
        prep = prepare(vessel, body, model=model, base_url=base_url, stream=stream)
        client = self._get_client()
        start = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                reply, status, latency, first = await self._attempt(client, prep, attempt, on_text)
            except ProviderError as err:
                delay = self.retry.delay(attempt, err)
                if delay is None:
                    raise
                log.info(
                    "%s: attempt %d failed (%s); retrying in %.2fs", prep.vessel.name, attempt, err, delay
                )
                if on_retry is not None:
                    on_retry(err, attempt, delay)
                await self.retry.sleep(delay)
                continue
            return SendResult(
                reply, latency, time.monotonic() - start, attempt, len(prep.content), status, first
            )

    def send_sync(self, vessel: Vessel | str, body: Mapping[str, Any], **kwargs: Any) -> Reply:
        """:meth:`send` for synchronous callers (same keyword arguments)."""
        return self.exchange_sync(vessel, body, **kwargs).reply

    def exchange_sync(self, vessel: Vessel | str, body: Mapping[str, Any], **kwargs: Any) -> SendResult:
        """:meth:`exchange` for synchronous callers, on the transport's own event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise ConfigError("send_sync was called inside a running event loop: await send() instead")
        with self._sync_lock:
            if self._runner is None:
                self._runner = asyncio.Runner()
            return self._runner.run(self.exchange(vessel, body, **kwargs))

    # -- one attempt ----------------------------------------------------------------------------------

    async def _attempt(
        self, client: httpx.AsyncClient, prep: Prepared, attempt: int, on_text: TextCallback | None
    ) -> tuple[Reply, int, float, float | None]:
        name = prep.vessel.name
        n = self.dump.request(name, prep.content) if self.dump else None
        start = time.monotonic()
        status = 0
        try:
            try:
                if prep.stream:
                    reply, status, first = await self._streamed(client, prep, on_text, n, start)
                else:
                    reply, status = await self._whole(client, prep, n)
                    first = None
            except httpx.HTTPError as exc:
                raise error_for_exception(prep.vessel, exc) from None
        except ProviderError as err:
            if err.vessel is None:
                err.vessel = name
            if self.dump and n is not None:
                self.dump.error(n, name, err)
                self._meta(n, prep, attempt, err.status or status, time.monotonic() - start)
            raise
        latency = time.monotonic() - start
        if self.dump and n is not None:
            self._meta(n, prep, attempt, status, latency)
        return reply, status, latency, first

    def _meta(self, n: int, prep: Prepared, attempt: int, status: int, latency: float) -> None:
        assert self.dump is not None
        self.dump.meta(
            n,
            prep.vessel.name,
            {
                "wire": prep.vessel.wire,
                "method": "POST",
                "url": redact(prep.url),
                "headers": redact_headers(prep.headers),
                "stream": prep.stream,
                "attempt": attempt,
                "status": status,
                "latency_s": round(latency, 6),
                "request_bytes": len(prep.content),
            },
        )

    async def _whole(self, client: httpx.AsyncClient, prep: Prepared, n: int | None) -> tuple[Reply, int]:
        resp = await client.post(
            prep.url, content=prep.content, headers=dict(prep.headers), timeout=self.timeout
        )
        data = resp.content
        if self.dump and n is not None:
            self.dump.response(n, prep.vessel.name, data)
        if resp.status_code >= 300:
            raise error_for_status(prep.vessel, resp.status_code, resp.headers, data)
        return self._parse_whole(prep, data), resp.status_code

    def _parse_whole(self, prep: Prepared, data: bytes) -> Reply:
        body = _decode(prep.vessel, data, f"the {prep.vessel.wire} answer")
        try:
            reply: Reply = wire_module(prep.vessel.wire, "response").parse_response(body)
        except ProviderError as err:
            err.vessel = prep.vessel.name
            raise
        return reply

    async def _streamed(
        self,
        client: httpx.AsyncClient,
        prep: Prepared,
        on_text: TextCallback | None,
        n: int | None,
        start: float,
    ) -> tuple[Reply, int, float | None]:
        raw: list[str] | None = [] if self.dump and n is not None else None
        first: float | None = None
        async with client.stream(
            "POST", prep.url, content=prep.content, headers=dict(prep.headers), timeout=self.timeout
        ) as resp:
            ctype = resp.headers.get("content-type", "")
            if resp.status_code >= 300 or ctype.startswith(("application/json", "text/html")):
                # An error, a server that ignored the stream flag and answered whole, or a proxy's page.
                data = await resp.aread()
                if self.dump and n is not None:
                    self.dump.response(n, prep.vessel.name, data)
                if resp.status_code >= 300:
                    raise error_for_status(prep.vessel, resp.status_code, resp.headers, data)
                return self._parse_whole(prep, data), resp.status_code, None
            parser = wire_module(prep.vessel.wire, "response").StreamParser()
            ndjson = prep.vessel.wire == "ollama"
            events = (_ndjson_events if ndjson else _sse_events)(resp, prep.vessel, raw)
            try:
                async for event in events:
                    if event is DONE:
                        if prep.vessel.wire == "openai-chat":
                            parser.mark_done()
                        continue
                    piece = parser.feed(event)
                    if piece:
                        if first is None:
                            first = time.monotonic() - start
                        if on_text is not None:
                            on_text(piece)
                reply: Reply = parser.finish()
            finally:
                if raw is not None and n is not None and self.dump is not None:
                    text = "\n".join(raw) + ("\n" if raw else "")
                    suffix = "ndjson" if ndjson else "sse"
                    self.dump.response(n, prep.vessel.name, text.encode("utf-8"), suffix=suffix)
            return reply, resp.status_code, first


__all__ = [
    "NO_RETRY",
    "Prepared",
    "RetryPolicy",
    "SendResult",
    "Transport",
    "endpoint",
    "error_for_exception",
    "error_for_status",
    "is_loopback",
    "prepare",
    "provider_message",
    "resolve_key",
    "retry_after",
]

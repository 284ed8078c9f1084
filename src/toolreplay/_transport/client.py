"""The HTTP boundary: send a vessel's request (streamed or not), retry, translate errors, dump.

One async implementation (:meth:`Transport.exchange`) and thin wrappers (:meth:`Transport.send`, and
:meth:`Transport.send_sync` / :meth:`Transport.exchange_sync` for synchronous callers)::

    from toolreplay._transport.client import Transport
    with Transport() as t:                      # or: async with Transport() as t: await t.send(...)
        reply = t.send_sync("kimi", body, on_text=print)

Requests are built by :func:`~toolreplay._transport.request.prepare` (URL, key header, exact body bytes
from :func:`toolreplay._jsonenc.encode`, stream flag per wire); errors are translated in one place,
:mod:`toolreplay._transport.errors`; keys are kept out of errors, logs and dumps by
:func:`toolreplay._transport.dump.redact`; ``dump=DIR`` writes every request and answer
(:class:`~toolreplay._transport.dump.RequestDump`).

:class:`RetryPolicy` retries 429, 5xx, timeouts, connection faults and streams cut short (bounded
attempts, exponential backoff with jitter, ``Retry-After`` honoured); it never retries a 400-class answer
or a body that is not the wire's shape.

:meth:`Transport.exchange` returns a :class:`SendResult`: the :class:`~toolreplay.wires.reply.Reply` plus
latency, attempts and request size (for the lab); :meth:`Transport.send` returns just the Reply.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError, ProviderError, ResponseFormatError
from toolreplay._limits import CONNECT_TIMEOUT, READ_TIMEOUT, check_timeout
from toolreplay._transport.dump import RequestDump, redact, redact_headers
from toolreplay._transport.errors import error_for_exception, error_for_status, provider_message, retry_after
from toolreplay._transport.policy import NO_RETRY, AttemptBudget, BudgetSpent, RetryPolicy, within
from toolreplay._transport.request import (
    Prepared,
    endpoint,
    is_loopback,
    prepare,
    resolve_key,
)
from toolreplay._transport.tls import ssl_context
from toolreplay._vessels import Vessel
from toolreplay.wires import get_wire
from toolreplay.wires.reply import Reply

log = logging.getLogger("toolreplay._transport.client")

TextCallback = Callable[[str], None]
RetryCallback = Callable[[ProviderError, int, float], None]


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


# ---------------------------------------------------------------------------------------------------


def _decode(vessel: Vessel, data: bytes, what: str) -> Any:
    try:
        return jsonenc.loads(data)
    except json.JSONDecodeError:
        snippet = redact(data[:120].decode("utf-8", "replace"))
        raise ResponseFormatError(
            f"{vessel.name}: {what} is not JSON: {snippet!r}", vessel=vessel.name
        ) from None
    except ValueError as exc:  # JSON beyond the reader's limits (nesting, digits): said as such
        raise ResponseFormatError(
            f"{vessel.name}: {what} cannot be read: {exc}", vessel=vessel.name
        ) from None


#: Chat's ``data: [DONE]``: the stream is complete (some compatible servers send no finish_reason).
DONE = "[DONE]"


_EOL = re.compile(r"\r\n|\r|\n")


async def _lines(resp: httpx.Response) -> AsyncIterator[str]:
    """The lines of a streamed answer, ended only by CRLF, LF or CR (the SSE rule; NDJSON too).

    Not ``httpx``'s ``aiter_lines``: it splits like ``str.splitlines``, also at U+2028, U+0085 and other
    characters JSON allows raw inside a string, which cut an event holding one of them in two
    ("a stream event is not JSON").
    """
    rest = ""
    async for piece in resp.aiter_text():
        text = rest + piece
        start = 0
        for m in _EOL.finditer(text):
            if m.group() == "\r" and m.end() == len(text):
                break  # maybe the first half of a CRLF: the next piece says
            yield text[start : m.start()]
            start = m.end()
        rest = text[start:]
    if rest:
        yield rest.removesuffix("\r")


async def _sse_events(resp: httpx.Response, vessel: Vessel, raw: list[str] | None) -> AsyncIterator[Any]:
    """The decoded ``data`` payloads of an SSE stream; stops at ``[DONE]``; an unfinished event at the
    end of the stream is dropped (the SSE rule), which the parser then reports as a cut stream."""
    data: list[str] = []
    async for line in _lines(resp):
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
    async for line in _lines(resp):
        if raw is not None:
            raw.append(line)
        if line.strip():
            yield _decode(vessel, line.encode("utf-8"), "a stream line")


def _name_vessel(err: ProviderError, name: str) -> None:
    """Errors raised by the wires' parsers name the wire; every error leaving the transport names the
    vessel first, like the HTTP errors do (``kimi: openai-chat stream error: Overloaded``), and holds
    no key (a stream's error event may quote the key it was sent, as a 401 body does)."""
    if err.vessel is None:
        err.vessel = name
    if err.args and isinstance(err.args[0], str):
        text = redact(err.args[0])
        err.args = (text if text.startswith(f"{name}: ") else f"{name}: {text}", *err.args[1:])


# ---------------------------------------------------------------------------------------------------


class Transport:
    """Sends requests for any HTTP vessel over one ``httpx.AsyncClient``.

    ``client``: inject one (tests use ``httpx.MockTransport``); otherwise the transport makes its own on
    first use and closes it in :meth:`aclose` / :meth:`close`. An own client belongs to the event loop it
    was made on: use one Transport per loop (the sync methods run their own loop). ``timeout``: seconds
    for each read (a whole answer, or the next piece of a stream); connecting gets at most
    ``CONNECT_TIMEOUT``. ``dump``: a directory (or :class:`RequestDump`) where every request and answer
    is written. ``deadline``: seconds one send may take, all its attempts and waits included.
    """

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = READ_TIMEOUT,
        dump: RequestDump | str | Path | None = None,
        deadline: float | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy()
        check_timeout(timeout)
        self.deadline = check_timeout(deadline)
        self.timeout = timeout
        # Connecting never legitimately takes long; waiting for a long generation can.
        self._timeouts = httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT))
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
            self._own = httpx.AsyncClient(
                timeout=self._timeouts, verify=ssl_context(), follow_redirects=False
            )
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
        send_key: bool = False,
    ) -> Reply:
        """Send ``body`` and return the parsed :class:`Reply` (see :meth:`exchange`)."""
        result = await self.exchange(
            vessel,
            body,
            model=model,
            base_url=base_url,
            stream=stream,
            on_text=on_text,
            on_retry=on_retry,
            send_key=send_key,
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
        send_key: bool = False,
        budget: AttemptBudget | None = None,
    ) -> SendResult:
        """Send ``body`` for ``vessel`` with retries; the reply plus latency and attempts.

        ``on_text`` receives each piece of text as it streams in (after a retry the text starts again:
        ``on_retry(error, attempt, delay)`` is called first, so a chat can say so).
        ``send_key``: the key may go to a ``base_url`` on another host than the vessel's (``--send-key``);
        ``budget``: every attempt, retries included, takes one from it (:class:`BudgetSpent` when spent).
        Raises a :class:`~toolreplay._errors.ProviderError` subclass, or ConfigError before sending.
        """
        prep = prepare(vessel, body, model=model, base_url=base_url, stream=stream, send_key=send_key)
        async with within(self.deadline, prep.vessel.name, "the request, retries included"):
            return await self._exchange(prep, on_text, on_retry, budget)

    async def _exchange(
        self,
        prep: Prepared,
        on_text: TextCallback | None,
        on_retry: RetryCallback | None,
        budget: AttemptBudget | None,
    ) -> SendResult:
        client = self._get_client()
        start = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            if budget is not None:
                budget.take(prep.vessel.name)
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
            _name_vessel(err, name)
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
            prep.url, content=prep.content, headers=dict(prep.headers), timeout=self._timeouts
        )
        data = resp.content
        if self.dump and n is not None:
            self.dump.response(n, prep.vessel.name, data)
        if resp.status_code >= 300:
            raise error_for_status(prep.vessel, resp.status_code, resp.headers, data)
        return self._parse_whole(prep, data), resp.status_code

    def _parse_whole(self, prep: Prepared, data: bytes) -> Reply:
        body = _decode(prep.vessel, data, f"the {prep.vessel.wire} answer")
        reply: Reply = get_wire(prep.vessel.wire).parse_response(body)
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
            "POST", prep.url, content=prep.content, headers=dict(prep.headers), timeout=self._timeouts
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
            wire = get_wire(prep.vessel.wire)
            parser = wire.stream_parser()
            ndjson = wire.http is not None and wire.http.framing == "ndjson"
            events = (_ndjson_events if ndjson else _sse_events)(resp, prep.vessel, raw)
            try:
                async for event in events:
                    if event is DONE:
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
    "AttemptBudget",
    "BudgetSpent",
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

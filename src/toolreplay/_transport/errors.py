"""Error translation: the one place where HTTP outcomes become the errors of :mod:`toolreplay._errors`.

:func:`error_for_status` turns a non-2xx answer into AuthenticationError (401/403), RateLimitError (429,
with ``retry_after``), ProviderTimeout (408), ServerError (5xx) or BadRequestError (other 4xx), each
carrying the provider's own message (read from every wire's error shape by :func:`provider_message`);
:func:`error_for_exception` turns httpx's failures below HTTP into ProviderTimeout, ConnectionFault or
ResponseFormatError. Messages are one line, start with the vessel's name, and have keys redacted.
"""

from __future__ import annotations

import email.utils
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionFault,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    ResponseFormatError,
    ServerError,
)
from toolreplay._transport.dump import redact
from toolreplay._vessels import Vessel


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


__all__ = ["error_for_exception", "error_for_status", "provider_message", "retry_after"]

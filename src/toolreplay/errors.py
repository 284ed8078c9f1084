"""The error tree of toolreplay.

Every error the library raises on purpose derives from :class:`ToolreplayError`, so a caller can catch
one class. The CLI prints ``str(error)`` (one line a person can act on) and exits non-zero.

    ToolreplayError
    ├── HistoryError          a history file or record is malformed (names file, message, field)
    ├── ConfigError           an unknown vessel, a bad vessel file, a missing key, a bad option
    ├── StoreError            the database refused (conflicting message id, migration failure)
    ├── ImportFormatError     an input file in no known format / not the format asked for
    ├── WireError             a body a wire cannot read (bad request dump, bad response)
    └── ProviderError         the HTTP boundary (raised by the transport only)
        ├── AuthenticationError   401/403
        ├── BadRequestError       400/404/409/413/422: the provider's own message, never retried
        ├── RateLimitError        429 (retried, honouring Retry-After)
        ├── ServerError           5xx (retried)
        ├── ProviderTimeout       the provider did not answer in time (retried)
        ├── ConnectionFault       refused, reset, a stream cut short (retried)
        └── ResponseFormatError   a 2xx body that is not what the wire promises (not retried)
"""

from __future__ import annotations


def shown(text: str) -> str:
    """``text`` as it appears inside a one-line message: escaped when it holds line breaks or controls."""
    return text if text.isprintable() else repr(text)[1:-1]


class ToolreplayError(Exception):
    """Base class of every error toolreplay raises on purpose."""


class HistoryError(ToolreplayError):
    """A history (file, dict or stored record) is malformed.

    The message names where: ``history.json: message 7 (id m7): tool_uses[3]: not an object``.
    """

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        index: int | None = None,
        message_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.index = index
        self.message_id = message_id
        self.field = field
        super().__init__(self._format())

    def _format(self) -> str:
        parts: list[str] = []
        if self.source:
            parts.append(self.source)
        if self.index is not None or self.message_id is not None:
            where = f"message {self.index}" if self.index is not None else "message"
            if self.message_id is not None:
                where += f" (id {self.message_id})"
            parts.append(where)
        if self.field:
            parts.append(self.field)
        parts.append(self.problem)
        return ": ".join(parts)


class ConfigError(ToolreplayError):
    """A configuration problem: unknown vessel, bad vessel file, missing key, bad option."""


class StoreError(ToolreplayError):
    """The store refused an operation (a conflicting message, a failed migration)."""


class ImportFormatError(ToolreplayError):
    """An input file is in no known format, or not in the format asked for."""


class WireError(ToolreplayError):
    """A request or response body that a wire cannot read."""


class ProviderError(ToolreplayError):
    """An error at the HTTP boundary. ``status`` is the HTTP status when there was one."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        vessel: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.vessel = vessel
        self.retry_after = retry_after
        super().__init__(message)


class AuthenticationError(ProviderError):
    """401/403: the key is missing, wrong or not allowed. Never retried."""


class BadRequestError(ProviderError):
    """400-class: the provider rejected the body; the message is the provider's own. Never retried."""


class RateLimitError(ProviderError):
    """429: retried with backoff, honouring ``Retry-After``."""

    retryable = True


class ServerError(ProviderError):
    """5xx: retried with backoff."""

    retryable = True


class ProviderTimeout(ProviderError):
    """No answer in time: retried with backoff."""

    retryable = True


class ConnectionFault(ProviderError):
    """Connection refused or reset, or a stream cut before its final event: retried."""

    retryable = True


class ResponseFormatError(ProviderError):
    """A 2xx answer whose body is not what the wire promises (not JSON, broken events)."""


__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ConfigError",
    "ConnectionFault",
    "HistoryError",
    "ImportFormatError",
    "ProviderError",
    "ProviderTimeout",
    "RateLimitError",
    "ResponseFormatError",
    "ServerError",
    "StoreError",
    "ToolreplayError",
    "WireError",
    "shown",
]

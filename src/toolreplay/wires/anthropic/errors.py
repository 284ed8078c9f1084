"""Anthropic's error envelopes: the body of a refused request and the ``error`` event inside a stream."""

from __future__ import annotations

from typing import Any

_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
          529: "overloaded_error"}  # fmt: skip


def error_type(status: int) -> str:
    return _TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def error_status(kind: str) -> int | None:
    """The HTTP status an error ``type`` stands for (``api_error`` 500), None for a type not known."""
    if kind == "api_error":
        return 500
    return next((status for status, name in _TYPES.items() if name == kind), None)


def error_body(status: int, message: str) -> dict[str, Any]:
    """``{"type": "error", "error": {"type": ..., "message": ...}}``."""
    return {"type": "error", "error": {"type": error_type(status), "message": message}}


def stream_error(message: str, tail: bytes) -> tuple[str | None, dict[str, Any]]:
    """The ``event: error`` Anthropic sends when a stream fails part-way (``api_error``)."""
    return "error", error_body(500, message)


def stream_end(tail: bytes) -> bool:
    """``message_stop`` (or Anthropic's own ``error`` event) ends every Messages stream."""
    return b"message_stop" in tail or b'"type":"error"' in tail or b'"type": "error"' in tail


__all__ = ["error_body", "error_status", "error_type", "stream_end", "stream_error"]

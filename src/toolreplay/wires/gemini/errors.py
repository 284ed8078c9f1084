"""Google's error status object, as a body and inside a stream."""

from __future__ import annotations

from typing import Any

GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    """``{"error": {"code", "message", "status"}}``."""
    state = GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
    return {"error": {"code": status, "message": message, "status": state}}


def stream_error(message: str, tail: bytes) -> tuple[str | None, dict[str, Any]]:
    return None, error_body(500, message)


def stream_end(tail: bytes) -> bool:
    """Gemini's last chunk carries the candidate's ``finishReason`` (or the stream is an error)."""
    return b'"finishReason"' in tail or b'"error"' in tail


__all__ = ["GOOGLE_STATUS", "error_body", "stream_end", "stream_error"]

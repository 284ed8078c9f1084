"""OpenAI's error object (Chat and Responses alike) and Chat's error chunk inside a stream."""

from __future__ import annotations

from typing import Any


def error_body(status: int, message: str) -> dict[str, Any]:
    """``{"error": {"message", "type", "param", "code"}}``."""
    kind = (
        "rate_limit_exceeded"
        if status == 429
        else ("server_error" if status >= 500 else "invalid_request_error")
    )
    code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def stream_error(message: str, tail: bytes) -> tuple[str | None, dict[str, Any]]:
    """A ``data: {"error": {...}}`` chunk: what OpenAI sends when a stream fails part-way."""
    return None, error_body(500, message)


def stream_end(tail: bytes) -> bool:
    """``data: [DONE]`` ends OpenAI's streams; a compatible server that sends none ends with the
    ``finish_reason`` chunk (the usage chunk after it is small); an error chunk ends it too."""
    return (
        b"[DONE]" in tail
        or b'"finish_reason":"' in tail
        or b'"finish_reason": "' in tail
        or b'"error"' in tail
    )


__all__ = ["error_body", "stream_end", "stream_error"]

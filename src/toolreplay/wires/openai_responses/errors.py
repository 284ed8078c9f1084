"""The Responses stream's ``error`` event (the error body is OpenAI's object, as Chat's)."""

from __future__ import annotations

import re
from typing import Any

_NUMBER = re.compile(rb'"sequence_number"\s*:\s*(\d+)')


def stream_error(message: str, tail: bytes) -> tuple[str | None, dict[str, Any]]:
    """``event: error``, numbered after the last event sent (``sequence_number``: a client checks the
    order)."""
    numbers = _NUMBER.findall(tail)
    seq = int(numbers[-1]) + 1 if numbers else 0
    error = {"type": "error", "code": "server_error", "message": message, "param": None}
    return "error", {**error, "sequence_number": seq}


def stream_end(tail: bytes) -> bool:
    """A Responses stream ends with ``response.completed``, ``.incomplete`` or ``.failed``, or ``error``."""
    return any(
        m in tail
        for m in (b"response.completed", b"response.incomplete", b"response.failed", b"event: error")
    )


__all__ = ["stream_end", "stream_error"]

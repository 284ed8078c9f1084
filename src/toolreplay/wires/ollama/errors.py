"""Ollama's error shape: ``{"error": "..."}``, as a body and as a stream line."""

from __future__ import annotations

from typing import Any


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": message}


def stream_error(message: str, tail: bytes) -> tuple[str | None, dict[str, Any]]:
    return None, {"error": message}


def stream_end(tail: bytes) -> bool:
    """Ollama's last line says ``"done": true`` (or is an error)."""
    return b'"done":true' in tail or b'"done": true' in tail or b'"error"' in tail


__all__ = ["error_body", "stream_end", "stream_error"]

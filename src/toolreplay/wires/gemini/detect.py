"""Recognising Gemini bodies: the audit's sniffing and ``import --from auto``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires.gemini.render import LIST_KEY


def sniff(body: Mapping[str, Any]) -> float:
    """A ``contents`` list: no other wire has one."""
    return 1.0 if isinstance(body.get(LIST_KEY), list) else 0.0


def is_element(value: Any) -> bool:
    return isinstance(value, Mapping) and "parts" in value


def marks(body: Any, els: Sequence[Any]) -> str | None:
    if els and all(isinstance(c, Mapping) and "parts" in c for c in els):
        return None
    return "no 'contents' list of contents with 'parts'"


__all__ = ["is_element", "marks", "sniff"]

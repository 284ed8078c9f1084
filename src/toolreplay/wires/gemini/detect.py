"""Recognising Gemini bodies: the audit's sniffing and ``import --from auto``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires.evidence import Evidence, Proof
from toolreplay.wires.gemini.render import LIST_KEY


def sniff(body: Mapping[str, Any]) -> Evidence | None:
    """A ``contents`` list: no other wire has one."""
    return Evidence(Proof.KEY, ("a 'contents' list",)) if isinstance(body.get(LIST_KEY), list) else None


def is_element(value: Any) -> bool:
    return isinstance(value, Mapping) and "parts" in value


def marks(body: Any, els: Sequence[Any]) -> str | None:
    if els and all(isinstance(c, Mapping) and "parts" in c for c in els):
        return None
    return "no 'contents' list of contents with 'parts'"


__all__ = ["is_element", "marks", "sniff"]

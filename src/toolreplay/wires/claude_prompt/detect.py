"""Recognising claude-prompt bodies (the audit's sniffing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay.wires.claude_prompt.render import LIST_KEY
from toolreplay.wires.evidence import Evidence, Proof


def sniff(body: Mapping[str, Any]) -> Evidence | None:
    """A string ``prompt`` and no ``messages`` list."""
    if not isinstance(body.get(LIST_KEY), str) or isinstance(body.get("messages"), list):
        return None
    return Evidence(Proof.KEY, ("a string 'prompt'",))


def holds(obj: Mapping[str, Any]) -> bool:
    return isinstance(obj.get(LIST_KEY), str)


__all__ = ["holds", "sniff"]

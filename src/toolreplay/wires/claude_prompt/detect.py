"""Recognising claude-prompt bodies (the audit's sniffing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay.wires.claude_prompt.render import LIST_KEY


def sniff(body: Mapping[str, Any]) -> float:
    """A string ``prompt`` and no ``messages`` list."""
    return 0.95 if isinstance(body.get(LIST_KEY), str) and not isinstance(body.get("messages"), list) else 0.0


def holds(obj: Mapping[str, Any]) -> bool:
    return isinstance(obj.get(LIST_KEY), str)


__all__ = ["holds", "sniff"]

"""A stand-in for the turn loop's Transport, shared by the tests that script a provider's answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay.wires.reply import Reply


class Scripted:
    """Stands in for the Transport: answers each send with the next scripted Reply, keeps the bodies."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []

    async def send(self, vessel: Any, body: Mapping[str, Any], **kw: Any) -> Reply:
        self.bodies.append(dict(body))
        return self.replies.pop(0)

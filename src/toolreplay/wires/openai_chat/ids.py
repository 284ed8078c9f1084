"""Kimi's call ids (Moonshot's Chat API): ``functions.<name>:<index>``, with a running index over the calls
of a request (design 7), for a vessel whose ``id_policy`` is ``kimi``.

The Chat wire's id policy hook (``Wire.call_ids``) names calls this way and its rules check it; no other
wire names them (a ``kimi`` vessel on another wire gets that wire's derived ids).
"""

from __future__ import annotations

#: The id policy (``Vessel.id_policy``) whose calls are named by :func:`kimi_id`.
KIMI = "kimi"


def kimi_id(name: str, index: int) -> str:
    """Call ``index`` of a request (0, 1, ...), of the tool sent as ``name``."""
    return f"functions.{name}:{index}"


__all__ = ["KIMI", "kimi_id"]

"""The Anthropic Messages side of the bridge between wires (design 51): its streams read into neutral
deltas (``bridge_read.py``), and deltas or a whole reply written as its streams and ``message`` bodies
(``bridge_write.py``). Loaded by ``WIRE.bridge`` on first use."""

from __future__ import annotations

from toolreplay.wires.anthropic.bridge_read import Reader, stop_reason_of
from toolreplay.wires.anthropic.bridge_write import Writer, body
from toolreplay.wires.bridge import Bridge

BRIDGE = Bridge(reader=Reader, writer=Writer, body=body, reason=stop_reason_of)

__all__ = ["BRIDGE"]

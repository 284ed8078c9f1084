"""One module per wire, each with pure functions; this package maps a wire name to its module.

Every wire module exposes:

* ``WIRE``: its name;
* ``render(turns, opts) -> dict``: the request body from prepared turn messages (no I/O);

and, as the wire grows, ``parse_response`` (answer body -> :class:`toolreplay.wires.reply.Reply`),
``parse_stream`` (events -> Reply) and ``parse_request`` (a request body -> a stored history).
Modules are imported on first use, so importing toolreplay stays light.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from toolreplay.errors import ConfigError
from toolreplay.replay import TurnMessage
from toolreplay.wires._common import RenderOptions

MODULES: dict[str, str] = {
    "openai-chat": "toolreplay.wires.openai_chat",
    "openai-responses": "toolreplay.wires.openai_responses",
    "anthropic": "toolreplay.wires.anthropic",
    "gemini": "toolreplay.wires.gemini",
    "ollama": "toolreplay.wires.ollama",
    "claude-prompt": "toolreplay.wires.claude_prompt",
}


def wire_module(wire: str) -> ModuleType:
    """The module of ``wire``; an unknown name lists the known ones."""
    try:
        path = MODULES[wire]
    except KeyError:
        raise ConfigError(f"unknown wire {wire!r}; known wires: {', '.join(MODULES)}") from None
    return importlib.import_module(path)


def render_wire(wire: str, turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """Render ``turns`` with ``wire``'s module."""
    body: dict[str, Any] = wire_module(wire).render(turns, opts)
    return body


__all__ = ["MODULES", "RenderOptions", "render_wire", "wire_module"]

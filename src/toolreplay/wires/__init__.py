"""One package per wire, each with pure functions; this module dispatches by wire name.

Every wire package ``toolreplay.wires.<pkg>`` has three modules:

* ``render.py``: ``render(turns, opts) -> dict``, the request body from prepared turn messages (no I/O);
* ``response.py``: ``parse_response(body) -> Reply`` for a whole answer, and ``StreamParser`` that is fed
  the decoded stream events (SSE ``data`` payloads, or NDJSON lines for Ollama) one by one and gives the
  same :class:`~toolreplay.wires.reply.Reply` at the end;
* ``request.py``: ``parse_request(body) -> History``, a request body (or just its messages / input /
  contents list) read back into the stored history (for importers and the audit).

Modules are imported on first use, so importing toolreplay stays light.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from toolreplay._errors import ConfigError
from toolreplay._replay import TurnMessage
from toolreplay.wires._common import RenderOptions

#: wire name -> package under toolreplay.wires
PACKAGES: dict[str, str] = {
    "openai-chat": "openai_chat",
    "openai-responses": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
    "claude-prompt": "claude_prompt",
}


def wire_module(wire: str, part: str = "render") -> ModuleType:
    """The ``part`` module (render, response, request) of ``wire``; an unknown wire lists the known ones."""
    try:
        pkg = PACKAGES[wire]
    except KeyError:
        raise ConfigError(f"unknown wire {wire!r}; known wires: {', '.join(PACKAGES)}") from None
    return importlib.import_module(f"toolreplay.wires.{pkg}.{part}")


def render_wire(wire: str, turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """Render ``turns`` with ``wire``'s renderer."""
    body: dict[str, Any] = wire_module(wire, "render").render(turns, opts)
    return body


def parse_response(wire: str, body: Mapping[str, Any]) -> Any:
    """A whole (non-streamed) answer body parsed by ``wire`` into a Reply."""
    return wire_module(wire, "response").parse_response(body)


def parse_request(wire: str, body: Any) -> Any:
    """A request body (or its message list) read back into a History by ``wire``."""
    return wire_module(wire, "request").parse_request(body)


__all__ = ["PACKAGES", "RenderOptions", "parse_request", "parse_response", "render_wire", "wire_module"]

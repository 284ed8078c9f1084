"""toolreplay: replay an agent's earlier tool calls as calls, in each provider's own wire shape.

Public API (these names stay): :func:`load_history`, :func:`render`, :func:`encode`, :func:`vessels`,
plus the stored-history values and the replay seam. Attributes are loaded on first use so that
``import toolreplay`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "load_history": "toolreplay._history",
    "History": "toolreplay._history",
    "Message": "toolreplay._history",
    "ToolCall": "toolreplay._history",
    "ToolSpec": "toolreplay._history",
    "normalize_tool_uses": "toolreplay._history",
    "history_to_dict": "toolreplay._history",
    "reply_calls": "toolreplay._replay",
    "prepare_turn_messages": "toolreplay._replay",
    "ReplayCall": "toolreplay._replay",
    "ReplaySettings": "toolreplay._replay",
    "TurnMessage": "toolreplay._replay",
    "render": "toolreplay._api",
    "encode": "toolreplay._jsonenc",
    "vessels": "toolreplay._vessels",
    "get_vessel": "toolreplay._vessels",
    "Vessel": "toolreplay._vessels",
    "ToolreplayError": "toolreplay._errors",
    "run_turn": "toolreplay._loop",
    "run_turn_async": "toolreplay._loop",
}

__all__ = [
    "History",
    "Message",
    "ReplayCall",
    "ReplaySettings",
    "ToolCall",
    "ToolSpec",
    "ToolreplayError",
    "TurnMessage",
    "Vessel",
    "__version__",
    "encode",
    "get_vessel",
    "history_to_dict",
    "load_history",
    "normalize_tool_uses",
    "prepare_turn_messages",
    "render",
    "reply_calls",
    "run_turn",
    "run_turn_async",
    "vessels",
]

if TYPE_CHECKING:
    from toolreplay._api import render
    from toolreplay._errors import ToolreplayError
    from toolreplay._history import (
        History,
        Message,
        ToolCall,
        ToolSpec,
        history_to_dict,
        load_history,
        normalize_tool_uses,
    )
    from toolreplay._jsonenc import encode
    from toolreplay._loop import run_turn, run_turn_async
    from toolreplay._replay import (
        ReplayCall,
        ReplaySettings,
        TurnMessage,
        prepare_turn_messages,
        reply_calls,
    )
    from toolreplay._vessels import Vessel, get_vessel, vessels


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolreplay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

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
    "load_history": "toolreplay.history",
    "History": "toolreplay.history",
    "Message": "toolreplay.history",
    "ToolCall": "toolreplay.history",
    "ToolSpec": "toolreplay.history",
    "normalize_tool_uses": "toolreplay.history",
    "history_to_dict": "toolreplay.history",
    "reply_calls": "toolreplay.replay",
    "prepare_turn_messages": "toolreplay.replay",
    "ReplayCall": "toolreplay.replay",
    "ReplaySettings": "toolreplay.replay",
    "TurnMessage": "toolreplay.replay",
    "render": "toolreplay.api",
    "encode": "toolreplay.jsonenc",
    "vessels": "toolreplay.profiles",
    "get_vessel": "toolreplay.profiles",
    "Vessel": "toolreplay.profiles",
    "ToolreplayError": "toolreplay.errors",
    "run_turn": "toolreplay.loop",
    "run_turn_async": "toolreplay.loop",
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
    from toolreplay.api import render
    from toolreplay.errors import ToolreplayError
    from toolreplay.history import (
        History,
        Message,
        ToolCall,
        ToolSpec,
        history_to_dict,
        load_history,
        normalize_tool_uses,
    )
    from toolreplay.jsonenc import encode
    from toolreplay.loop import run_turn, run_turn_async
    from toolreplay.profiles import Vessel, get_vessel, vessels
    from toolreplay.replay import (
        ReplayCall,
        ReplaySettings,
        TurnMessage,
        prepare_turn_messages,
        reply_calls,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolreplay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

"""toolreplay: replay an agent's earlier tool calls as calls, in each provider's own wire shape.

Every public name lives here, in this module's ``__all__``; ``dir(toolreplay)`` lists them and
``help(toolreplay.NAME)`` explains each. The modules behind them are private (their names start with an
underscore) and may move. Public modules: ``toolreplay.model`` (the neutral model), ``toolreplay.errors``
(the error tree), ``toolreplay.jsonenc`` (deterministic JSON), ``toolreplay.ids`` (derived call ids); public
subpackages: ``toolreplay.wires`` (the wire contract) and ``toolreplay.testing`` (the provider doubles).

The neutral model (one module, :mod:`toolreplay.model`, read it to know what a conversation is):
    History, Message, ToolCall, ToolSpec, Step, Reasoning, Text, ServerTool, Piece, Part, Issuer,
    RequestSettings, Usage; the kinds: Role, Status, CallKind, ToolKind, PartKind, Sent
Histories:
    load_history, history_to_dict, normalize_tool_uses, read_history (any format ``import`` reads),
    ImportBatch
Replay and render:
    render, encode, RenderCache, RenderArgs, prepare_turn_messages, reply_calls, ReplayCall, ReplaySettings,
    TurnMessage
Long conversations (the context budget):
    ContextBudget
Vessels:
    vessels, get_vessel, Vessel
A live turn:
    run_turn, run_turn_async, TurnOptions, TurnResult, Usage,
    TurnEvent, TextDelta, CallStarted, CallFinished, Retrying, Flagged, ContextTrimmed
Tools:
    build_registry, tool, Tool, ToolRegistry, ToolError
The store and the coop todo board:
    open_store, Store, ConversationInfo, ImportResult, board_of, TodoBoard, Todo
Errors (all derive from ToolreplayError):
    ToolreplayError, HistoryError, ConfigError, StoreError, ImportFormatError, WireError,
    ProviderError, AuthenticationError, BadRequestError, RateLimitError, ServerError, ProviderTimeout,
    ConnectionFault, ResponseFormatError

``import toolreplay`` is light: each name is imported on first use.
"""

from __future__ import annotations

import importlib

# Not `from typing import TYPE_CHECKING`: typing (and re, which it imports) would be most of what
# `import toolreplay` and `toolreplay --help` cost (design 31). Type checkers read this name as True.
TYPE_CHECKING = False

_MODULES: dict[str, tuple[str, ...]] = {
    "toolreplay.model": (
        "History", "Issuer", "Message", "Part", "Piece", "Reasoning", "RequestSettings", "ServerTool",
        "Step", "Text", "ToolCall", "ToolSpec", "Usage", "CallKind", "PartKind", "Role", "Sent", "Status",
        "ToolKind",
    ),
    "toolreplay._history": ("history_to_dict", "load_history", "normalize_tool_uses"),
    "toolreplay._importers": ("ImportBatch", "read_history"),
    "toolreplay._replay": (
        "ReplayCall", "ReplaySettings", "TurnMessage", "prepare_turn_messages", "reply_calls",
    ),
    "toolreplay._api": ("render",),
    "toolreplay._budget": ("ContextBudget",),
    "toolreplay._jsonenc": ("encode",),
    "toolreplay._render_cache": ("RenderCache",),
    "toolreplay._render_options": ("RenderArgs",),
    "toolreplay._vessels": ("Vessel", "get_vessel", "vessels"),
    "toolreplay._loop": (
        "CallFinished", "CallStarted", "ContextTrimmed", "Flagged", "Retrying", "TextDelta", "TurnEvent",
        "TurnOptions", "TurnResult", "run_turn", "run_turn_async",
    ),
    "toolreplay._tools": ("Tool", "ToolError", "ToolRegistry", "build_registry", "tool"),
    "toolreplay._store": ("ConversationInfo", "ImportResult", "Store", "open_store"),
    "toolreplay._store.board": ("Todo", "TodoBoard", "board_of"),
    "toolreplay._version": ("__version__",),
    "toolreplay._errors": (
        "AuthenticationError", "BadRequestError", "ConfigError", "ConnectionFault", "HistoryError",
        "ImportFormatError", "ProviderError", "ProviderTimeout", "RateLimitError", "ResponseFormatError",
        "ServerError", "StoreError", "ToolreplayError", "WireError",
    ),
}  # fmt: skip
_EXPORTS: dict[str, str] = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CallFinished",
    "CallKind",
    "CallStarted",
    "ConfigError",
    "ConnectionFault",
    "ContextBudget",
    "ContextTrimmed",
    "ConversationInfo",
    "Flagged",
    "History",
    "HistoryError",
    "ImportBatch",
    "ImportFormatError",
    "ImportResult",
    "Issuer",
    "Message",
    "Part",
    "PartKind",
    "Piece",
    "ProviderError",
    "ProviderTimeout",
    "RateLimitError",
    "Reasoning",
    "RenderArgs",
    "RenderCache",
    "ReplayCall",
    "ReplaySettings",
    "RequestSettings",
    "ResponseFormatError",
    "Retrying",
    "Role",
    "Sent",
    "ServerError",
    "ServerTool",
    "Status",
    "Step",
    "Store",
    "StoreError",
    "Text",
    "TextDelta",
    "Todo",
    "TodoBoard",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolKind",
    "ToolRegistry",
    "ToolSpec",
    "ToolreplayError",
    "TurnEvent",
    "TurnMessage",
    "TurnOptions",
    "TurnResult",
    "Usage",
    "Vessel",
    "WireError",
    "__version__",
    "board_of",
    "build_registry",
    "encode",
    "get_vessel",
    "history_to_dict",
    "load_history",
    "normalize_tool_uses",
    "open_store",
    "prepare_turn_messages",
    "read_history",
    "render",
    "reply_calls",
    "run_turn",
    "run_turn_async",
    "tool",
    "vessels",
]

if TYPE_CHECKING:
    from typing import Any

    from toolreplay._api import render
    from toolreplay._budget import ContextBudget
    from toolreplay._errors import (
        AuthenticationError,
        BadRequestError,
        ConfigError,
        ConnectionFault,
        HistoryError,
        ImportFormatError,
        ProviderError,
        ProviderTimeout,
        RateLimitError,
        ResponseFormatError,
        ServerError,
        StoreError,
        ToolreplayError,
        WireError,
    )
    from toolreplay._history import history_to_dict, load_history, normalize_tool_uses
    from toolreplay._importers import ImportBatch, read_history
    from toolreplay._jsonenc import encode
    from toolreplay._loop import (
        CallFinished,
        CallStarted,
        ContextTrimmed,
        Flagged,
        Retrying,
        TextDelta,
        TurnEvent,
        TurnOptions,
        TurnResult,
        run_turn,
        run_turn_async,
    )
    from toolreplay._render_cache import RenderCache
    from toolreplay._render_options import RenderArgs
    from toolreplay._replay import (
        ReplayCall,
        ReplaySettings,
        TurnMessage,
        prepare_turn_messages,
        reply_calls,
    )
    from toolreplay._store import ConversationInfo, ImportResult, Store, open_store
    from toolreplay._store.board import Todo, TodoBoard, board_of
    from toolreplay._tools import Tool, ToolError, ToolRegistry, build_registry, tool
    from toolreplay._version import __version__
    from toolreplay._vessels import Vessel, get_vessel, vessels
    from toolreplay.model import (
        CallKind,
        History,
        Issuer,
        Message,
        Part,
        PartKind,
        Piece,
        Reasoning,
        RequestSettings,
        Role,
        Sent,
        ServerTool,
        Status,
        Step,
        Text,
        ToolCall,
        ToolKind,
        ToolSpec,
        Usage,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolreplay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)

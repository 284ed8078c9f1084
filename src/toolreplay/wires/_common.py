"""What every wire shares: render options, tool declarations, tool-name and call-id mapping.

Pure functions only. A wire module imports from here and from :mod:`toolreplay.replay`, never from
another wire.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolreplay.history import ToolSpec
from toolreplay.replay import ReplayCall, TurnMessage

#: Tool names every wire accepts (OpenAI's rule is the strictest: ``^[a-zA-Z0-9_-]{1,64}$``).
_TOOL_NAME_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TOOL_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """Everything a wire needs besides the turn messages. Built from a vessel plus the caller's options.

    ``id_policy``: ``derived`` uses the replay's ids (``replay_<stem>_<n>``); ``kimi`` uses
    ``functions.<name>:<index>`` with a running index over the request's calls (Kimi's documented form).
    ``max_id_len``: the longest call id the server takes (OpenAI Chat: 40); longer ids are shortened
    deterministically. ``flags``: the vessel's quirk flags (see :mod:`toolreplay.profiles`).
    """

    model: str
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = False
    id_policy: str = "derived"
    max_id_len: int | None = None
    flags: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    tool_choice: str | None = None


def wire_tool_name(name: str) -> str:
    """A tool name every wire accepts, mapped deterministically (the same for calls and definitions).

    Names that already fit ``^[A-Za-z0-9_-]{1,64}$`` are kept. Others have each forbidden character
    replaced by ``_`` and, when that changed anything or the name is too long, a short hash of the
    original appended, so two different names never map to one.
    """
    if _TOOL_NAME_OK.match(name):
        return name
    cleaned = _TOOL_NAME_BAD.sub("_", name) or "tool"
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned[:55]}_{digest}"


def renamed_for_wire(names: Iterable[str]) -> dict[str, str]:
    """The names that :func:`wire_tool_name` changes, old -> new (for warnings and the audit)."""
    return {n: w for n in names if (w := wire_tool_name(n)) != n}


def fit_id(call_id: str, max_len: int | None) -> str:
    """A call id shortened deterministically to ``max_len`` (prefix plus a hash of the whole id)."""
    if max_len is None or len(call_id) <= max_len:
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8")).hexdigest()[:12]
    return f"{call_id[: max_len - 13]}_{digest}"


class IdMapper:
    """Maps replayed call ids to a wire's id rules, in request order, the same way for call and answer."""

    __slots__ = ("_index", "_max_len", "_policy")

    def __init__(self, opts: RenderOptions) -> None:
        self._policy = opts.id_policy
        self._max_len = opts.max_id_len
        self._index = 0

    def __call__(self, call: ReplayCall) -> str:
        if self._policy == "kimi":
            out = f"functions.{wire_tool_name(call.name)}:{self._index}"
        else:
            out = fit_id(call.call_id, self._max_len)
        self._index += 1
        return out


def infer_schema(inputs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A minimal JSON schema covering the inputs seen in the history (property names and JSON types)."""
    props: dict[str, Any] = {}
    for value in inputs:
        for key, v in value.items():
            if key in props:
                continue
            props[key] = {"type": _json_type(v)}
    return {"type": "object", "properties": props}


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if v is None:
        return "null"
    return "object"


def declared_tools(turns: Sequence[TurnMessage], tools: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
    """The given tools, plus a minimal inferred definition for every tool the replayed calls use.

    Anthropic rejects a request that holds ``tool_use`` blocks but defines no tools ("Requests which
    include `tool_use` or `tool_result` blocks must define tools"), so every body declares every tool
    its history uses. Order: the given tools, then inferred ones in order of first use.
    """
    known = {t.name for t in tools}
    # Inferred from a tool's first call only, so the definition stays the same bytes as the history
    # grows (Anthropic's cache prefix starts with the tools: a changed definition invalidates it all).
    seen: dict[str, Mapping[str, Any]] = {}
    for t in turns:
        for c in t.calls:
            if c.name not in known and c.name not in seen:
                seen[c.name] = c.input
    if not seen:
        return tuple(tools)
    extra = tuple(
        ToolSpec(name, "Inferred from earlier calls in this conversation.", infer_schema([first]))
        for name, first in seen.items()
    )
    return tuple(tools) + extra

"""Anthropic's prompt-cache breakpoints (design 36): ``cache_control`` markers on a whole request body.

Anthropic's Messages API caches a prompt prefix only up to a block that carries ``"cache_control":
{"type": "ephemeral"}`` (at most 4 per request); a body without one is never cached. :func:`finish`
places the vessel's ``cache_breakpoints`` (``RenderOptions.cache_breakpoints``, 0: none) on a rendered
body, in this order of value:

1. **the tail**: the last markable block of the last message, so the whole prompt is written and the
   next request, which starts with all of it, reads it;
2. **the stable head**: the system prompt (sent as one text block to carry the marker) or, without one,
   the last tool definition: what still hits when the budget's window moves and the messages change;
3. and 4. **the ends of the earlier requests**: the last markable block of each earlier user message,
   newest first. In the turn loop every request ends with a user message (the turn's words, or a step's
   tool results), so the previous request's end carries a marker of its own and is read exactly, however
   many blocks a tool-heavy step added after it (the server looks back only about 20 blocks from a
   marker for an earlier entry); the one before it still hits when the previous request failed.

Thinking blocks never carry a marker (Anthropic refuses it; they are cached as part of what precedes a
later marker); blank text is not markable. The body's elements are never changed in place: a marked
message, block, system or tool is a copy (the incremental renderer's cached elements stay as rendered).
Only the markers differ between consecutive requests, and the cache key ignores them (design 36).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.wires.anthropic.render import LIST_KEY
from toolreplay.wires.contract import list_elements

if TYPE_CHECKING:
    from toolreplay.wires.common import RenderOptions

#: Anthropic's limit on ``cache_control`` markers per request (a fifth is a 400).
MAX_BREAKPOINTS = 4
#: Block kinds that may carry a marker (not ``thinking`` / ``redacted_thinking``).
MARKABLE = frozenset({"text", "image", "document", "tool_use", "tool_result"})
MARKER_KEY = "cache_control"


def _marker() -> dict[str, str]:
    return {"type": "ephemeral"}


def _markable(block: Any) -> bool:
    if not isinstance(block, Mapping) or block.get("type") not in MARKABLE:
        return False
    return block["type"] != "text" or (isinstance(block.get("text"), str) and bool(block["text"].strip()))


def _last_markable(message: Any) -> int | None:
    """The index of the last block of ``message`` that may carry a marker (0 for plain string content)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return 0 if content.strip() else None
    if not isinstance(content, list):
        return None
    return next((j for j in range(len(content) - 1, -1, -1) if _markable(content[j])), None)


def _marked(message: Mapping[str, Any], j: int) -> dict[str, Any]:
    """A copy of ``message`` whose block ``j`` carries the marker (string content becomes its text block,
    which Anthropic documents as the same content)."""
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    blocks[j] = {**blocks[j], MARKER_KEY: _marker()}
    return {**message, "content": blocks}


def _anchors(messages: list[Any]) -> list[tuple[int, int]]:
    """(message, block) of each place a marker may go in the list, newest first: the last message that has
    a markable block, then every earlier user message that has one."""
    out: list[tuple[int, int]] = []
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if out and not (isinstance(m, Mapping) and m.get("role") == "user"):
            continue
        j = _last_markable(m)
        if j is not None:
            out.append((i, j))
    return out


def _mark_head(body: dict[str, Any]) -> bool:
    """The marker at the end of the stable head: the system prompt, else the last tool. False: neither."""
    system = body.get("system")
    if isinstance(system, str) and system.strip():
        body["system"] = [{"type": "text", "text": system, MARKER_KEY: _marker()}]
        return True
    if isinstance(system, list) and system and _markable(system[-1]):
        body["system"] = [*system[:-1], {**system[-1], MARKER_KEY: _marker()}]
        return True
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[-1], Mapping):
        body["tools"] = [*tools[:-1], {**tools[-1], MARKER_KEY: _marker()}]
        return True
    return False


def finish(body: dict[str, Any], opts: RenderOptions) -> dict[str, Any]:
    """``body`` with ``opts.cache_breakpoints`` markers placed (see the module docstring); the same
    body, untouched, when that is 0. The count was checked where it was set (``_vessels``: at most
    ``Wire.max_breakpoints``); a hand-made ``RenderOptions`` above it gets what it asked for, and
    the body rules say so."""
    left = opts.cache_breakpoints
    if left <= 0:
        return body
    messages = body.get(LIST_KEY)
    messages = list(messages) if isinstance(messages, list) else []
    anchors = _anchors(messages)
    chosen = anchors[:1]
    left -= len(chosen)
    if left and _mark_head(body):
        left -= 1
    chosen += anchors[1 : 1 + left]
    for i, j in chosen:
        messages[i] = _marked(messages[i], j)
    if chosen:
        body[LIST_KEY] = messages
    return body


def unmarked(body: Mapping[str, Any]) -> list[Any]:
    """The body's messages with their markers taken out: what ``cache-diff`` and the byte-stability
    property compare (a marker moves every turn; the content before it does not)."""
    out: list[Any] = []
    for m in list_elements(body, LIST_KEY):
        content = m.get("content") if isinstance(m, Mapping) else None
        if isinstance(content, list) and any(isinstance(b, Mapping) and MARKER_KEY in b for b in content):
            bare = [
                {k: v for k, v in b.items() if k != MARKER_KEY} if isinstance(b, Mapping) else b
                for b in content
            ]
            m = {**m, "content": bare}
        out.append(m)
    return out


def count_markers(body: Mapping[str, Any]) -> int:
    """How many blocks of ``body`` carry a marker (tools, system blocks, message blocks and the blocks
    inside a tool result), as Anthropic counts them against :data:`MAX_BREAKPOINTS`."""
    n = 0
    stack: list[Any] = [body.get("tools"), body.get("system"), body.get(LIST_KEY)]
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, Mapping):
            n += MARKER_KEY in x
            stack.append(x.get("content"))
    return n


__all__ = ["MARKABLE", "MAX_BREAKPOINTS", "count_markers", "finish", "unmarked"]

"""Does the prefix stay put? Compare two consecutive requests the way a prompt cache sees them.

Providers cache a request's prefix: a turn is cheap only when everything the previous turn sent comes
back unchanged at the start of the next request. :func:`cache_diff` reports, for two request bodies:

* the **element-wise reuse** of the earlier request's message list (Chat/Ollama/Anthropic ``messages``,
  Responses ``input``, Gemini ``contents``, claude-prompt transcript lines): how many of its elements come
  back, byte for byte and in place, at the head of the later list; 100% when the earlier list is a prefix
  of the later one. This is the headline (design 14);
* the **shared byte prefix** of the two bodies (encoded as sent: compact JSON, key order as in the file;
  or the files' own bytes with ``raw=True``), with the offset where they diverge and an excerpt of both
  sides there. Even a perfect prefix diverges somewhere (where the earlier list ends), so this number is
  shown beside the headline, not instead of it;
* which other top-level fields changed (model, system prompt, tools: a changed tool definition or system
  prompt invalidates Anthropic's whole cache, whatever the messages do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._audit.body import RequestBody, load_request
from toolreplay._jsonenc import common_prefix

EXCERPT = 48


@dataclass(frozen=True, slots=True)
class CacheDiff:
    """The comparison of an earlier request with the next one (see the module docstring)."""

    earlier: str
    later: str
    wire: str
    list_key: str
    earlier_elements: int
    later_elements: int
    shared_elements: int
    is_prefix: bool
    element_reuse: float
    first_changed: int | None
    earlier_bytes: int
    later_bytes: int
    shared_bytes: int
    byte_reuse: float
    diverge_offset: int | None
    earlier_excerpt: str
    later_excerpt: str
    changed_fields: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["changed_fields"] = list(self.changed_fields)
        return out


def message_list(body: Mapping[str, Any], wire: str) -> list[Any]:
    """The elements of ``body``'s message list (claude-prompt: its transcript lines)."""
    from toolreplay.wires import get_wire

    return get_wire(wire).body_elements(body)


def _excerpt(data: bytes, offset: int) -> str:
    start = max(0, offset - EXCERPT // 2)
    piece = data[start : offset + EXCERPT].decode("utf-8", "replace")
    lead = "…" if start > 0 else ""
    tail = "…" if offset + EXCERPT < len(data) else ""
    return lead + piece.replace("\n", "\\n") + tail


def _elements_reused(a: Sequence[Any], b: Sequence[Any]) -> tuple[int, int | None]:
    for i, item in enumerate(a):
        if i >= len(b) or jsonenc.encode(item) != jsonenc.encode(b[i]):
            return i, i
    return len(a), None


def _changed_fields(a: Mapping[str, Any], b: Mapping[str, Any], list_key: str) -> tuple[str, ...]:
    keys = list(a) + [k for k in b if k not in a]
    return tuple(
        k
        for k in keys
        if k != list_key and (k not in a or k not in b or jsonenc.encode(a[k]) != jsonenc.encode(b[k]))
    )


def cache_diff(earlier: RequestBody, later: RequestBody, *, raw: bool = False) -> CacheDiff:
    """Compare two requests (see the module docstring); ``raw`` compares the files' own bytes."""
    from toolreplay.wires import get_wire

    wire = earlier.wire
    w = get_wire(wire)
    a_list, b_list = message_list(earlier.body, wire), message_list(later.body, later.wire)
    shared, first_changed = _elements_reused(a_list, b_list)
    if raw and earlier.raw is not None and later.raw is not None:
        a_bytes, b_bytes = earlier.raw, later.raw
    else:
        a_bytes, b_bytes = jsonenc.encode(earlier.body), jsonenc.encode(later.body)
    common = common_prefix(a_bytes, b_bytes)
    diverge = None if common == len(a_bytes) == len(b_bytes) else common
    return CacheDiff(
        earlier=earlier.source,
        later=later.source,
        wire=wire if later.wire == wire else f"{wire} -> {later.wire}",
        list_key=w.label,
        earlier_elements=len(a_list),
        later_elements=len(b_list),
        shared_elements=shared,
        is_prefix=first_changed is None,
        element_reuse=100.0 if not a_list else round(100.0 * shared / len(a_list), 1),
        first_changed=first_changed,
        earlier_bytes=len(a_bytes),
        later_bytes=len(b_bytes),
        shared_bytes=common,
        byte_reuse=100.0 if not a_bytes else round(100.0 * common / len(a_bytes), 1),
        diverge_offset=diverge,
        earlier_excerpt="" if diverge is None else _excerpt(a_bytes, diverge),
        later_excerpt="" if diverge is None else _excerpt(b_bytes, diverge),
        changed_fields=_changed_fields(earlier.body, later.body, w.list_key),
    )


def cache_diff_files(
    earlier: str | Path, later: str | Path, *, raw: bool = False, wire: str | None = None
) -> CacheDiff:
    """:func:`cache_diff` of two request files (bare bodies, transport dumps, other tools' dumps)."""
    return cache_diff(load_request(earlier, wire=wire), load_request(later, wire=wire), raw=raw)


def format_cache_diff(d: CacheDiff) -> str:
    """The human-readable report printed by ``toolreplay cache-diff``."""
    unit = d.list_key
    lines = [f"{d.earlier} -> {d.later} ({d.wire})"]
    head = (
        f"{d.element_reuse:.1f}% of the earlier {unit} reused: "
        f"{d.shared_elements} of {d.earlier_elements} elements"
    )
    if d.is_prefix:
        lines.append(f"{head}; the earlier list is a prefix of the later one ({d.later_elements} elements)")
    else:
        lines.append(
            f"{head}; NOT a prefix: element {d.first_changed} differs or is gone "
            f"(later list: {d.later_elements} elements)"
        )
    lines.append(
        f"shared byte prefix: {d.shared_bytes:,} of {d.earlier_bytes:,} bytes ({d.byte_reuse:.1f}%)"
        + (
            "; identical requests"
            if d.diverge_offset is None
            else f"; they diverge at byte {d.diverge_offset:,}"
        )
    )
    if d.diverge_offset is not None:
        lines.append(f"  earlier: {d.earlier_excerpt}")
        lines.append(f"  later:   {d.later_excerpt}")
    if d.changed_fields:
        lines.append(f"other fields changed: {', '.join(d.changed_fields)}")
    else:
        lines.append("other fields: unchanged")
    return "\n".join(lines)


__all__ = [
    "CacheDiff",
    "cache_diff",
    "cache_diff_files",
    "common_prefix",
    "format_cache_diff",
    "message_list",
]

"""Where each message of a parsed request stands in the body: one numbering for everything the audit says.

The wire parsers fold a body into a stored history (Chat's ``tool`` messages join the call they answer,
Anthropic's ``system`` is not in ``messages``), so a history index is not a body index. The audit names
every message by its place in the body instead (``messages[4]``, ``contents[2]``, ``input[7]``): the path a
reader finds with ``jq``, the same the parser's warnings use. :func:`body_paths` finds it by parsing growing
prefixes of the body's list: history message ``j`` starts at the first element whose prefix holds ``j + 1``
messages (messages that come from outside the list, a separate system prompt, are named by their key).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay._errors import WireError

#: Bodies longer than this are not mapped (the prefixes cost a second or more): their messages keep the
#: parsed history's numbering, said as such.
MAX_MAPPED = 300


def _count(wire: str, body: Mapping[str, Any], key: str, items: Sequence[Any], n: int) -> int:
    from toolreplay.wires import parse_request

    try:
        return len(parse_request(wire, {**body, key: list(items[:n])}).messages)
    except WireError:
        return -1  # a prefix the parser refuses (cut inside a pair it checks): judged by a longer one


def body_paths(wire: str, body: Mapping[str, Any], messages: int) -> list[str]:
    """The body path of each of the parsed history's ``messages`` (see the module docstring)."""
    from toolreplay.wires import get_wire

    key = get_wire(wire).list_key
    items = body.get(key) if key else None
    if not key or not isinstance(items, list) or len(items) > MAX_MAPPED:
        return [f"message {j} (of the parsed request)" for j in range(messages)]
    outside = max(0, _count(wire, body, key, items, 0))
    head = next((k for k in ("system", "instructions", "systemInstruction") if k in body), key)
    paths = [head] * outside
    for i in range(len(items)):
        if len(paths) >= messages:
            break
        seen = _count(wire, body, key, items, i + 1)
        paths.extend(f"{key}[{i}]" for _ in range(max(0, seen - len(paths))))
    paths.extend(f"{key}[?]" for _ in range(messages - len(paths)))
    return paths[:messages]


__all__ = ["body_paths"]

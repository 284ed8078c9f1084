"""What a render tells its caller it changed (the body is valid either way): tool names sent under
another name, free-form and hosted tools a wire cannot declare, parts a wire cannot carry, system
messages moved, reasoning left out, and each wire's own notes.

Above the registry (it asks :func:`~toolreplay.wires.get_wire` what a wire carries), so kept apart from
:mod:`toolreplay.wires.common`, which the registry itself imports.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import chain

from toolreplay.model import ToolSpec
from toolreplay.wires import get_wire
from toolreplay.wires.common import name_warnings
from toolreplay.wires.replayed import TurnMessage, every_call, leading_system

_WARNINGS = operator.attrgetter("warnings")
_KIND = operator.attrgetter("kind")
_ROLE = operator.attrgetter("role")
_PARTS = operator.attrgetter("parts")


def render_warnings(turns: Sequence[TurnMessage], tools: Sequence[ToolSpec], wire: str) -> list[str]:
    """What a render changed that the caller may want to know (the body is valid either way).

    One warning per tool name the wires cannot express, saying what it is sent as (the mapping of
    :func:`wire_tool_name` is the same on every wire, for calls, answers and definitions alike); what the
    replay left out of each message (reasoning and signatures for another vessel, design 17); and the
    wire's own notes (``Wire.render_notes``: Gemini's stored thought signatures that are not base64).
    """
    out = name_warnings(turns, tools)
    out.extend(chain.from_iterable(map(_WARNINGS, turns)))  # what the replay left out (design 17)
    out.extend(mid_system_warnings(turns, wire))
    out.extend(part_warnings(turns, wire))
    out.extend(user_part_warnings(turns, wire))
    out.extend(tool_kind_warnings(turns, tools, wire))
    notes = get_wire(wire).render_notes
    if notes is not None:
        out.extend(notes(turns))
    return out


def tool_kind_warnings(turns: Sequence[TurnMessage], tools: Sequence[ToolSpec], wire: str) -> list[str]:
    """One warning per free-form tool (declared, or used by a replayed call) on a wire without free-form
    tools (``Wire.tool_kinds``): declared as a function of one string ``input``, its calls sent as
    function calls of ``{"input": text}``; one per tool a provider runs itself that this wire cannot
    declare (another wire's, or a wire without hosted tools): left out."""
    kinds = get_wire(wire).tool_kinds
    out: list[str] = []
    if "custom" not in kinds:
        names = [t.name for t in tools if t.kind == "custom"]
        if "custom" in map(_KIND, every_call(turns)):  # scanned at C speed: most conversations hold none
            names += [c.name for c in every_call(turns) if c.kind == "custom"]
        out.extend(
            f"free-form tool {name!r}: declared on {wire} as a function of one string 'input', its calls "
            'sent as function calls of {"input": text}'
            for name in dict.fromkeys(names)
        )
    for t in tools:
        if t.kind == "hosted" and ("hosted" not in kinds or not (t.sent and wire in t.sent)):
            whose = ", ".join(t.sent) if t.sent else "unknown"
            out.append(f"tool {t.name!r} runs at the provider ({whose}): not declared on {wire}")
    return out


def mid_system_warnings(turns: Sequence[TurnMessage], wire: str) -> list[str]:
    """One warning per system message in the middle of the conversation on a wire that takes none there
    (it travels as a user message, see :func:`~toolreplay.wires.replayed.split_system`)."""
    if get_wire(wire).mid_system:
        return []
    lead = leading_system(turns)
    if "system" not in map(_ROLE, turns[lead:]):
        return []
    return [
        f"message {t.message_id}: a system message in the middle of the conversation is sent as a user "
        f"message on {wire}"
        for t in turns[lead:]
        if t.role == "system"
    ]


def part_warnings(turns: Sequence[TurnMessage], wire: str) -> list[str]:
    """One warning per answer part the wire cannot carry (it travels as its name in the answer's text)."""
    kinds = get_wire(wire).part_kinds
    if not any(map(_PARTS, every_call(turns))):  # no answer holds a part (the common case)
        return []
    return [
        f"message {t.message_id}: call {c.call_id}: the answer's {p.label()} cannot travel on {wire}: "
        "sent as its name in the answer's text"
        for t in turns
        for c in t.calls
        for p in c.parts
        if p.kind not in kinds
    ]


def user_part_warnings(turns: Sequence[TurnMessage], wire: str) -> list[str]:
    """One warning per part of a user message the wire cannot carry (it travels as its name)."""
    carries = get_wire(wire).carries
    if not any(map(_PARTS, turns)):
        return []
    return [
        f"message {t.message_id}: the user's {p.label()} cannot travel on {wire}: sent as its name in the "
        "message's text"
        for t in turns
        for p in t.parts
        if p.kind != "text" and (carries is None or not carries(p))
    ]


__all__ = [
    "mid_system_warnings",
    "part_warnings",
    "render_warnings",
    "tool_kind_warnings",
    "user_part_warnings",
]

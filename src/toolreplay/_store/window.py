"""The store's view for long conversations: the outline the context budget plans from, a window of
messages by position, and each response's usage (shared by the backends; ``?`` placeholders)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from toolreplay._history import Message
from toolreplay._store.rows import message_row
from toolreplay._store.schema import INSERT_MESSAGE, MESSAGE_COLUMNS, TOOL_USE_COLUMNS
from toolreplay._tokens import replay_size
from toolreplay.wires.reply import Usage

#: :data:`~toolreplay._store.schema.INSERT_MESSAGE` with the planning size (migration 0007 on).
INSERT_SIZED = INSERT_MESSAGE.replace(")\n    VALUES (", ", size)\n    VALUES (?, ", 1)
assert INSERT_SIZED != INSERT_MESSAGE, "INSERT_MESSAGE changed shape: INSERT_SIZED needs its size column"


def sized_row(conversation_id: str, position: int, m: Message) -> tuple[Any, ...]:
    """The parameters of :data:`INSERT_SIZED` for ``m``."""
    return (*message_row(conversation_id, position, m), replay_size(m))


SET_SIZE = "UPDATE messages SET size = ? WHERE conversation_id = ? AND id = ?"
COUNTS = """SELECT (SELECT COUNT(*) FROM messages WHERE conversation_id = ?),
    (SELECT COUNT(*) FROM tool_uses WHERE conversation_id = ?)"""
LOAD_OUTLINE = """SELECT position, id, role, size FROM messages WHERE conversation_id = ? AND position >= ?
    ORDER BY position"""
_RANGE = "conversation_id = ? AND position >= ? AND position < ?"
LOAD_MESSAGE_RANGE = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {_RANGE} ORDER BY position"
#: No position is this large: a range without an end.
END = 2**62
LOAD_TOOL_USE_RANGE = f"""SELECT {TOOL_USE_COLUMNS} FROM tool_uses WHERE conversation_id = ? AND message_id IN
    (SELECT id FROM messages WHERE {_RANGE}) ORDER BY message_id, position"""
USAGE_COLUMNS = "input_tokens, output_tokens, cached_tokens, cache_write_tokens, model"
INSERT_USAGE = f"""INSERT INTO usage (conversation_id, message_id, step, {USAGE_COLUMNS})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
# A removed message or conversation takes its usage rows with it (they reference the message).
DELETE_MESSAGE_USAGE = "DELETE FROM usage WHERE conversation_id = ? AND message_id = ?"
DELETE_CONVERSATION_USAGE = "DELETE FROM usage WHERE conversation_id = ?"
LOAD_USAGE = f"""SELECT u.message_id, u.step, {", ".join("u." + c for c in USAGE_COLUMNS.split(", "))}
    FROM usage u JOIN messages m ON m.conversation_id = u.conversation_id AND m.id = u.message_id
    WHERE u.conversation_id = ? AND m.position >= ? AND m.position < ? ORDER BY m.position, u.step"""


# --------------------------------------------------------------------------------------------------
# usage and the outline (the context budget's view of a conversation)


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One response's usage as stored: the reply it belongs to, the step of the turn (1, 2, ...)."""

    message_id: str
    step: int
    usage: Usage
    model: str | None = None


OutlineRow = tuple[int, str, str, int]
"""One message as the context budget sees it: (position, id, role, planning size)."""


def usage_row(cid: str, message_id: str, step: int, u: Usage, model: str | None) -> tuple[Any, ...]:
    """The parameters of :data:`INSERT_USAGE`."""
    return (
        cid,
        message_id,
        step,
        u.input_tokens,
        u.output_tokens,
        u.cached_tokens,
        u.cache_write_tokens,
        model,
    )


def usage_from_rows(rows: Iterable[Sequence[Any]]) -> list[UsageRecord]:
    return [
        UsageRecord(mid, int(step), Usage(*(None if x is None else int(x) for x in (i, o, c, w))), model)
        for mid, step, i, o, c, w, model in rows
    ]

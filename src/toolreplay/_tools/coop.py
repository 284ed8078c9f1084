"""The ``coop`` tool: a todo board kept in the same database as the conversations.

One tool with an ``action`` field, the shape agents already use (the bundled demo stores such calls)::

    {"action": "add", "text": "rotate the staging keys"}  -> status: added #14
    {"action": "list"}                   (open todos; "status": "closed" or "all" for the others)
    {"action": "show", "id": 14}         -> #14 open  rotate the staging keys
    {"action": "close", "id": 14, "text": "done in prod"}  -> status: closed
    {"action": "reopen", "id": 14}       -> status: open
    {"action": "note", "id": 14, "text": "waiting for ops"}
    {"action": "edit", "id": 14, "text": "rotate the staging and prod keys"}

Answers are short text. A bad action, a missing or unknown id, a missing text raise
:class:`~toolreplay._tools.ToolError`, so the model gets a clear error answer (``is_error``). The same
function serves ``toolreplay coop ...`` by hand, so a person and a model see the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay._history import ToolSpec
from toolreplay._store.board import Todo, TodoBoard
from toolreplay._tools.core import Tool, ToolError

ACTIONS: tuple[str, ...] = ("add", "list", "show", "close", "reopen", "note", "edit")
LIST_STATUSES: tuple[str, ...] = ("open", "closed", "all")

COOP_SPEC = ToolSpec(
    name="coop",
    description=(
        "The shared todo board. Actions: add (text), list (status: open, closed or all; default open), "
        "show (id), close (id, optional text as a note), reopen (id), note (id, text), edit (id, text)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "id": {"type": "integer", "description": "The todo number (show, close, reopen, note, edit)."},
            "text": {
                "type": "string",
                "description": "The todo text (add, edit) or a note (note, close).",
            },
            "status": {
                "type": "string",
                "enum": list(LIST_STATUSES),
                "description": "Which todos list shows (default: open).",
            },
        },
        "required": ["action"],
    },
)


#: The largest todo number a store can hold (SQLite and PostgreSQL integers are 64-bit): a larger one from
#: a model ("id": 10**30) is answered as an error, not an OverflowError inside the store.
MAX_TODO_ID = 2**63 - 1


def _todo_id(args: Mapping[str, Any], action: str) -> int:
    raw = args.get("id")
    if raw is None:
        raise ToolError(f"error: {action} needs the todo number in the field id")
    value: int | None = None
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    elif isinstance(raw, str):
        digits = raw.strip().lstrip("#")
        # ASCII digits only: str.isdigit() also accepts "²" and "٣", which int() then refuses.
        if digits.isascii() and digits.isdigit() and len(digits) <= 19:
            value = int(digits)
    if value is None or not 1 <= value <= MAX_TODO_ID:
        raise ToolError(f"error: id must be a todo number like 12, not {_shown(raw)}")
    return value


def _shown(raw: Any) -> str:
    if isinstance(raw, int) and raw.bit_length() > 64:  # repr of a 5,000-digit int raises ValueError
        return "a number that large"
    text = repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."


def _text(args: Mapping[str, Any], action: str, *, required: bool) -> str:
    raw = args.get("text")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        if required:
            raise ToolError(f"error: {action} needs the text in the field text")
        return ""
    if not isinstance(raw, str):
        raise ToolError(f"error: text must be a string, not {type(raw).__name__}")
    return raw.strip()


def _get(board: TodoBoard, todo_id: int) -> Todo:
    found = board.get(todo_id)
    if found is None:
        raise ToolError(f"error: there is no todo #{todo_id}")
    return found


def format_todo(t: Todo) -> str:
    """One line per todo, as ``list`` shows it: ``#12 open  fix the flaky build``."""
    return f"#{t.id} {t.status}  {t.text}"


def _joined_note(old: str, new: str) -> str:
    return f"{old}\n{new}" if old else new


def _list(board: TodoBoard, args: Mapping[str, Any]) -> str:
    status = args.get("status") or "open"
    if status not in LIST_STATUSES:
        raise ToolError(f"error: status must be one of {', '.join(LIST_STATUSES)}, not {status!r}")
    todos = board.todos(None if status == "all" else str(status))
    if not todos:
        return "no todos" if status == "all" else f"no {status} todos"
    return "\n".join(format_todo(t) for t in todos)


def _set_status(board: TodoBoard, args: Mapping[str, Any], action: str, status: str) -> str:
    todo_id = _todo_id(args, action)
    current = _get(board, todo_id)
    note = _text(args, action, required=False)
    if current.status == status and not note:
        return f"status: {status} (#{todo_id} was already {status})"
    board.update(todo_id, status=status, note=_joined_note(current.note, note) if note else None)
    return f"status: {status}"


def run_coop(board: TodoBoard, args: Mapping[str, Any]) -> str:
    """Run one coop action on ``board``; raises :class:`ToolError` with a clear message on bad input."""
    action = args.get("action")
    if action not in ACTIONS:
        shown = "missing" if action is None else repr(action)
        raise ToolError(f"error: action is {shown}; use one of {', '.join(ACTIONS)}")
    if action == "add":
        added = board.add(_text(args, "add", required=True))
        return f"status: added #{added.id}"
    if action == "list":
        return _list(board, args)
    if action == "close":
        return _set_status(board, args, "close", "closed")
    if action == "reopen":
        return _set_status(board, args, "reopen", "open")
    todo_id = _todo_id(args, str(action))
    current = _get(board, todo_id)
    if action == "show":
        return format_todo(current) + (f"\nnote: {current.note}" if current.note else "")
    text = _text(args, str(action), required=True)
    if action == "note":
        board.update(todo_id, note=_joined_note(current.note, text))
        return f"status: noted on #{todo_id}"
    board.update(todo_id, text=text)  # edit
    return f"status: edited #{todo_id}"


def coop_tool(board: TodoBoard) -> Tool:
    """The coop tool bound to ``board``."""

    def coop(args: Mapping[str, Any]) -> str:
        return run_coop(board, args)

    return Tool(COOP_SPEC, coop)


__all__ = ["ACTIONS", "COOP_SPEC", "coop_tool", "format_todo", "run_coop"]

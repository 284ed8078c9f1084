"""``llm-logs``: simonw/llm's SQLite ``logs.db`` (``llm logs path`` says where it is).

The tables read (their schema is llm's own ``migrations.py``: ``m010_create_new_log_tables``,
``m017_tools_tables``, ``m021_tool_results_exception``):

* ``conversations(id, name, model)``; ``responses(id, model, prompt, system, response, conversation_id,
  datetime_utc, ...)``, one row per model call, in the order llm wrote them (``rowid``);
* ``tool_calls(id, response_id, tool_id, name, arguments, tool_call_id)``: the calls a response made;
* ``tool_results(id, response_id, tool_id, name, output, tool_call_id, exception)``: the answers, logged
  on the *next* response, the one whose prompt carried them back to the model;
* ``tools(id, hash, name, description, input_schema)`` joined through ``tool_responses``: definitions.

Each response becomes: its tool results (answers to the calls before), its prompt (a user message, when
not empty), then the model's reply (text and calls). A tool chain is several responses with empty prompts:
one agent turn, one stored reply. ``datetime_utc`` is kept as ``created_at``; a result with an
``exception`` is a failed call. A system prompt that changes within a conversation, attachments and
fragments are reported, not kept. Older databases without the tool tables import their words only.
``--conversation ID`` imports one conversation, otherwise every conversation that has responses.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from contextlib import closing
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ImportFormatError
from toolreplay._history import History, ToolSpec
from toolreplay._importers._source import Document, Format, Reading
from toolreplay.wires.turns import (
    AgentSaid,
    Answers,
    Call,
    Event,
    Result,
    SaidPart,
    SystemText,
    UserText,
    arguments_input,
    assemble,
    tool_spec,
)

NAME = "llm-logs"
_REQUIRED = ("conversations", "responses")


#: Seconds reading one database may take: an untrusted file can make a query as slow as it likes (a
#: generated column that builds megabytes per row), so SQLite is interrupted after this.
READ_SECONDS = 60.0


def _connect(doc: Document) -> sqlite3.Connection:
    # read-only: importing never changes the user's llm database
    db = sqlite3.connect(f"{doc.path.resolve().as_uri()}?mode=ro", uri=True)
    limit = READ_SECONDS
    deadline = time.monotonic() + limit
    db.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    db.execute("PRAGMA trusted_schema = OFF")  # no function a schema names runs unless it is harmless
    return db


def _why(exc: Exception) -> str:
    if isinstance(exc, sqlite3.OperationalError) and str(exc) == "interrupted":
        return f"reading it took longer than {READ_SECONDS:g} s"
    return str(exc)


def _tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}  # table names are ours, not input


def sniff(doc: Document) -> str | None:
    """None when ``doc`` is an llm ``logs.db``, else why not."""
    if doc.kind != "sqlite":
        return "not an SQLite database"
    try:
        with closing(_connect(doc)) as db:
            tables = _tables(db)
    except (sqlite3.Error, UnicodeDecodeError) as exc:  # a damaged page can hold a name not UTF-8
        return f"an SQLite database that cannot be read ({_why(exc)})"
    missing = [t for t in _REQUIRED if t not in tables]
    if missing:
        return f"an SQLite database without llm's {', '.join(missing)} table(s)"
    return None


def _tools(db: sqlite3.Connection, tables: set[str], response_ids: Sequence[str]) -> tuple[ToolSpec, ...]:
    if not {"tools", "tool_responses"} <= tables or not response_ids:
        return ()
    marks = ",".join("?" * len(response_ids))
    rows = db.execute(
        "SELECT DISTINCT t.id, t.name, t.description, t.input_schema FROM tools t "
        f"JOIN tool_responses tr ON tr.tool_id = t.id WHERE tr.response_id IN ({marks}) ORDER BY t.id",
        list(response_ids),
    ).fetchall()
    out: list[ToolSpec] = []
    for _, name, desc, schema in ([_text(v) for v in row] for row in rows):
        try:
            params = jsonenc.loads(schema) if schema else None
        except ValueError:
            params = None
        spec = tool_spec(name, desc, params)
        if spec is not None:
            out.append(spec)
    return tuple(out)


def _text(value: Any) -> str | None:
    """A text column's value as text: SQLite keeps whatever was written (a number, a blob) whatever the
    column's declared type, and the history holds strings."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _by_response(db: sqlite3.Connection, sql: str, rid: str) -> list[tuple[Any, ...]]:
    return [tuple(_text(v) for v in row) for row in db.execute(sql, (rid,))]


_CALLS_SQL = "SELECT name, arguments, tool_call_id FROM tool_calls WHERE response_id = ? ORDER BY id"


def _result_sql(db: sqlite3.Connection) -> str:
    # ``exception`` came with m021: an older database's results are all successes
    exc_col = "exception" in _columns(db, "tool_results")
    return (
        f"SELECT name, output, tool_call_id, {'exception' if exc_col else 'NULL'} FROM tool_results "
        "WHERE response_id = ? ORDER BY id"
    )


def _calls(db: sqlite3.Connection, rid: str, where: str, warnings: list[str]) -> list[Call]:
    """The calls response ``rid`` made, in the order llm logged them."""
    out: list[Call] = []
    for name, arguments, tcid in _by_response(db, _CALLS_SQL, rid):
        if not name:
            warnings.append(f"{where}: a call without a tool name is not kept")
            continue
        value, problem = arguments_input(arguments)
        if problem:
            warnings.append(f"{where}: call {name}: {problem}")
        out.append(Call(name, value, tcid or None))
    return out


def _unkept(db: sqlite3.Connection, tables: set[str], rid: str, where: str) -> list[str]:
    """Attachments and fragments of response ``rid``: reported, not kept."""
    out: list[str] = []
    for table in ("prompt_attachments", "prompt_fragments", "system_fragments"):
        if table in tables:
            n = db.execute(f"SELECT count(*) FROM {table} WHERE response_id = ?", (rid,)).fetchone()[0]
            if n:
                out.append(f"{where}: {n} {table.replace('_', ' ')} not kept")
    return out


def _conversation(db: sqlite3.Connection, tables: set[str], cid: str, src: str) -> History:
    rows = db.execute(
        "SELECT id, prompt, system, response, datetime_utc FROM responses WHERE conversation_id = ? "
        "ORDER BY rowid",
        (cid,),
    ).fetchall()
    warnings: list[str] = []
    events: list[Event] = []
    result_sql = _result_sql(db) if "tool_results" in tables else None
    system: str | None = None
    for rid, *texts in rows:
        prompt, sys_text, response, when = (_text(v) for v in texts)
        where = f"{src}: response {rid}"
        if sys_text and system is None:
            system = sys_text
            events.append(SystemText(sys_text, where))
        elif sys_text and sys_text != system:
            warnings.append(f"{where}: a changed system prompt is not kept (a stored history has one)")
        results = [
            Result(output or "", tcid or None, name, exc is not None, f"{where} tool_results")
            for name, output, tcid, exc in (_by_response(db, result_sql, rid) if result_sql else [])
        ]
        if results:
            events.append(Answers(results, where))
        if prompt:
            events.append(UserText(prompt, where, when))
        parts: list[SaidPart] = [response] if response else []
        if "tool_calls" in tables:
            parts.extend(_calls(db, rid, where, warnings))
        events.append(AgentSaid(parts, where, None, when))
        warnings.extend(_unkept(db, tables, rid, where))
    tools = _tools(db, tables, [r[0] for r in rows])
    return assemble(events, conversation_id=cid, tools=tools, warnings=warnings)


def read(doc: Document, conversation: str | None) -> Reading:
    """Every conversation of the database that has responses, or just ``conversation``."""
    try:
        return _read(doc, conversation)
    except (sqlite3.Error, UnicodeDecodeError) as exc:  # a damaged file: its first pages may read
        raise ImportFormatError(f"{doc.source}: cannot be read as llm's logs.db ({_why(exc)})") from None


def _read(doc: Document, conversation: str | None) -> Reading:
    with closing(_connect(doc)) as db:
        tables = _tables(db)
        ids = [
            str(_text(r[0]))
            for r in db.execute(
                "SELECT c.id FROM conversations c WHERE EXISTS "
                "(SELECT 1 FROM responses r WHERE r.conversation_id = c.id) ORDER BY c.id"
            )
        ]
        if conversation is not None:
            if conversation not in ids:
                shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
                raise ImportFormatError(
                    f"{doc.source}: no conversation {conversation!r} with responses; "
                    f"it holds: {shown or 'none'}"
                )
            ids = [conversation]
        found = tuple(_conversation(db, tables, cid, doc.source) for cid in ids)
    return Reading(found)


FORMAT = Format(
    NAME,
    "simonw/llm's SQLite logs.db (tool calls and results included)",
    sniff,
    read,
    claims=lambda doc: doc.kind == "sqlite",  # no other format reads SQLite
)

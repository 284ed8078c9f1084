"""The store's schema: named, append-only migrations and the SQL every backend shares.

Each migration is ``Migration(name, sqlite, postgres)``: the statements that create or change the schema in
each dialect, run in order inside one transaction, then recorded in ``schema_migrations(name, applied_at)``.
Rules that keep old databases upgradable:

* never edit or reorder a migration that has shipped; add a new one at the end;
* a backend applies, in list order, every migration whose name is not yet in ``schema_migrations``;
* a database that holds a migration name this list does not know was made by a newer toolreplay, and is
  refused rather than guessed at.

Both dialects keep JSON as ``TEXT`` on purpose: the key order of a stored input is part of what is replayed
(byte-stable requests), and PostgreSQL's ``jsonb`` would reorder keys. Queries below use ``?`` placeholders
(SQLite's style); :func:`pg` turns them into psycopg's ``%s``. None of them holds a literal ``?`` or ``%``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Dialect = Literal["sqlite", "postgres"]


@dataclass(frozen=True, slots=True)
class Migration:
    """One named schema step, spelled for each dialect."""

    name: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]

    def statements(self, dialect: Dialect) -> tuple[str, ...]:
        return self.sqlite if dialect == "sqlite" else self.postgres


def _same(*statements: str) -> tuple[str, ...]:
    return statements


_MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
)
MIGRATIONS_TABLE: dict[Dialect, str] = {"sqlite": _MIGRATIONS_TABLE, "postgres": _MIGRATIONS_TABLE}
#: The tables of an SQLite file (those named ``sqlite_...`` are SQLite's own), to tell a foreign database.
SQLITE_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"

_CONVERSATIONS = """CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    tools TEXT
)"""

# ``position`` is the total order of a conversation: 0, 1, 2, ... with no gaps (each writer appends at
# MAX(position) + 1 under the write lock) and no duplicates (the UNIQUE constraint backs that up).
_MESSAGES = """CREATE TABLE messages (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    position INTEGER NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT,
    vessel TEXT,
    provider_data TEXT,
    meta TEXT,
    PRIMARY KEY (conversation_id, id),
    UNIQUE (conversation_id, position)
)"""

# One row per call. ``input`` is the stored input as JSON text (a string input is a JSON string, so raw
# text and a JSON object stay distinguishable); ``answer`` is NULL when none was recorded.
_TOOL_USES = """CREATE TABLE tool_uses (
    conversation_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    input TEXT NOT NULL,
    answer TEXT,
    call_id TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    provider_data TEXT,
    PRIMARY KEY (conversation_id, message_id, position),
    FOREIGN KEY (conversation_id, message_id) REFERENCES messages (conversation_id, id)
)"""

_USAGE = """CREATE TABLE usage (
    conversation_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    input_tokens BIGINT,
    output_tokens BIGINT,
    cached_tokens BIGINT,
    cache_write_tokens BIGINT,
    model TEXT,
    PRIMARY KEY (conversation_id, message_id, step),
    FOREIGN KEY (conversation_id, message_id) REFERENCES messages (conversation_id, id)
)"""
_FRAGMENTS = """CREATE TABLE render_fragments (
    conversation_id TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    stem TEXT NOT NULL,
    calls INTEGER NOT NULL,
    declares TEXT,
    items TEXT NOT NULL,
    PRIMARY KEY (conversation_id, key, seq)
)"""
_SETS = """CREATE TABLE render_fragment_sets (
    conversation_id TEXT NOT NULL,
    key TEXT NOT NULL,
    used BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, key)
)"""
# The render fragments of migration 0010 (design 35), dropped again by 0013: one row per message of a
# rendered list, per settings key, and the sets kept per conversation. Kept here so 0010 stays as it ran.
FRAGMENT_TABLES = (
    _FRAGMENTS,
    _SETS,
    "CREATE INDEX render_fragments_message ON render_fragments (conversation_id, message_id)",
)

_SIZE_COLUMN = "ALTER TABLE messages ADD COLUMN size INTEGER"
_PARTS_COLUMN = "ALTER TABLE messages ADD COLUMN parts TEXT"
_OUTLINE_INDEX = "CREATE INDEX messages_outline ON messages (conversation_id, position, role, size, id)"
# 0008: what only a step's issuer gets, and the running sums (design 33); sizes counted again, with steps.
_RUNNING = (
    "ALTER TABLE messages ADD COLUMN issued TEXT",
    "ALTER TABLE messages ADD COLUMN run_size BIGINT",
    "ALTER TABLE messages ADD COLUMN run_calls BIGINT",
    "UPDATE messages SET size = NULL",
    "CREATE INDEX messages_run_size ON messages (conversation_id, run_size)",
)

# 0011: what a request carried beyond the neutral fields (design 38): its settings, and how each message
# and call stood in its body.
_AS_SENT = (
    "ALTER TABLE conversations ADD COLUMN requests TEXT",
    "ALTER TABLE messages ADD COLUMN sent TEXT",
    "ALTER TABLE tool_uses ADD COLUMN kind TEXT",
    "ALTER TABLE tool_uses ADD COLUMN sent TEXT",
)
# 0014: the id the proxy gave an answer on a wire whose server keeps answers (Responses'
# ``previous_response_id``, design 55), on the reply it is stored as.
_ANSWER_IDS = (
    "ALTER TABLE messages ADD COLUMN answer_id TEXT",
    "CREATE INDEX messages_answer_id ON messages (answer_id)",
)
# Every answer id a reply was given, one per answer it took (a reply of several steps took several):
# ``steps``, how many of its steps it had then (NULL: not known, the reply as it is; ids of 0014).
_ANSWER_STEPS = (
    """CREATE TABLE answer_ids (
    answer_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    steps INTEGER,
    PRIMARY KEY (answer_id, conversation_id, message_id),
    FOREIGN KEY (conversation_id, message_id) REFERENCES messages (conversation_id, id)
)""",
    "INSERT INTO answer_ids (answer_id, conversation_id, message_id) "
    "SELECT answer_id, conversation_id, id FROM messages WHERE answer_id IS NOT NULL",
)
_DROP_FRAGMENTS = ("DROP TABLE IF EXISTS render_fragments", "DROP TABLE IF EXISTS render_fragment_sets")
_ORIGIN = (
    "ALTER TABLE conversations ADD COLUMN origin TEXT",
    "ALTER TABLE conversations ADD COLUMN session TEXT",
    "ALTER TABLE conversations ADD COLUMN head TEXT",
    "ALTER TABLE conversations ADD COLUMN seen TEXT",
    "CREATE INDEX conversations_head ON conversations (head)",
    "CREATE INDEX conversations_session ON conversations (session)",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_conversations_messages_tool_uses",
        sqlite=_same(_CONVERSATIONS, _MESSAGES, _TOOL_USES),
        postgres=_same(_CONVERSATIONS, _MESSAGES, _TOOL_USES),
    ),
    Migration(
        "0002_todos",
        sqlite=(
            """CREATE TABLE todos (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
    note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
)""",
        ),
        postgres=(
            """CREATE TABLE todos (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
    note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
)""",
        ),
    ),
    Migration(
        "0003_message_created_at_index",
        # ``history list`` reads each conversation's latest created_at.
        sqlite=_same("CREATE INDEX messages_created_at ON messages (conversation_id, created_at)"),
        postgres=_same("CREATE INDEX messages_created_at ON messages (conversation_id, created_at)"),
    ),
    Migration(
        "0004_tool_uses_clustered",
        # A load reads all of a conversation's calls in primary-key order. SQLite: a WITHOUT ROWID table
        # keeps the rows in that order themselves (a rowid table reads the key index, then each row
        # elsewhere); the rows are copied over, the table dropped and the copy renamed (SQLite cannot
        # change a table's layout in place). PostgreSQL: the heap is written once in key order.
        sqlite=(
            _TOOL_USES.replace("CREATE TABLE tool_uses", "CREATE TABLE tool_uses_clustered", 1)
            + " WITHOUT ROWID",
            "INSERT INTO tool_uses_clustered SELECT conversation_id, message_id, position, name, input, "
            "answer, call_id, is_error, provider_data FROM tool_uses",
            "DROP TABLE tool_uses",
            "ALTER TABLE tool_uses_clustered RENAME TO tool_uses",
        ),
        postgres=_same("CLUSTER tool_uses USING tool_uses_pkey"),
    ),
    Migration(
        "0005_reply_steps_answer_parts",
        # A reply's record of its steps (reasoning and words before each group of calls, with the issuer,
        # design 16-17) and an answer's parts (images, documents). Both NULL for everything stored
        # before: such a reply reads as one step of all its calls, such an answer as its text.
        sqlite=_same(
            "ALTER TABLE messages ADD COLUMN steps TEXT", "ALTER TABLE tool_uses ADD COLUMN parts TEXT"
        ),
        postgres=_same(
            "ALTER TABLE messages ADD COLUMN steps TEXT", "ALTER TABLE tool_uses ADD COLUMN parts TEXT"
        ),
    ),
    # 0006 and 0007 were numbered while 0005 was being written elsewhere; migrations run by name, in list
    # order, so one numbered before applied ones still runs (tests/test_store_window.py).
    Migration(
        "0006_usage",
        # Each response's usage, per step of a turn, with the provider's prompt-cache figures
        # (``toolreplay stats``). NULL where the provider did not report a figure.
        sqlite=_same(_USAGE),
        postgres=_same(_USAGE),
    ),
    Migration(
        "0007_message_size",
        # The planning size of each message (``_tokens.replay_size``): the context budget chooses its
        # window from these and the roles alone, through a covering index, without reading the texts.
        # NULL for messages stored before: computed and written back the first time they are needed.
        sqlite=_same(_SIZE_COLUMN, _OUTLINE_INDEX),
        postgres=_same(_SIZE_COLUMN, _OUTLINE_INDEX),
    ),
    Migration(
        "0008_message_running_size",
        # The planning size now counts a reply's steps and answer parts, and keeps apart what goes back
        # only to a step's issuer (``issued``: JSON, per issuer); ``run_size`` and ``run_calls`` are the
        # running sums of the sizes and of the calls through each message, so the context budget finds
        # its window and ``history show`` its counts with an index lookup, at any length. NULL for
        # messages stored before: computed and written back, for the whole conversation, the first time
        # they are needed.
        sqlite=_RUNNING,
        postgres=_RUNNING,
    ),
    Migration(
        "0009_user_message_parts",
        # A user message's content in order when it holds more than words (images, documents). NULL for
        # every message stored before, which reads as its text alone.
        sqlite=_same(_PARTS_COLUMN),
        postgres=_same(_PARTS_COLUMN),
    ),
    Migration(
        "0010_render_fragments",
        # What each stored message rendered into, per wire and settings (design 35), so a new process
        # rendered a long conversation from them. Rows were a cache: 0013 drops them, losing nothing.
        sqlite=_same(*FRAGMENT_TABLES),
        postgres=_same(*FRAGMENT_TABLES),
    ),
    Migration(
        "0011_as_sent",
        # Everything a request carried has a place (design 38): ``conversations.requests`` the settings of
        # each recorded request (JSON list, oldest first), ``messages.sent`` and ``tool_uses.sent`` how a
        # message or a call and its answer stood in their body (JSON, per wire), ``tool_uses.kind`` a
        # free-form call (``custom``; NULL: a function call). NULL for everything stored before, which
        # reads as it did.
        sqlite=_AS_SENT,
        postgres=_AS_SENT,
    ),
    Migration(
        "0012_conversation_origin",
        # Where a conversation the proxy recorded came from (``origin``: JSON with the agent's user-agent,
        # the wire, the upstream, the conversation it was rewritten from), the agent's session (its
        # session header), ``head``: a digest of its messages on the neutral model, by which the next
        # request finds the conversation it continues, and ``seen`` when it was last written (see
        # _store/origins.py). NULL for every other one.
        sqlite=_ORIGIN,
        postgres=_ORIGIN,
    ),
    Migration(
        "0013_drop_render_fragments",
        # The render fragments of 0010 did not pay end to end (design 35: loading them cost what they
        # saved in the render), so they are gone: their tables with their rows (a cache) and the index.
        sqlite=_same(*_DROP_FRAGMENTS),
        postgres=_same(*_DROP_FRAGMENTS),
    ),
    Migration(
        "0014_answer_ids",
        # ``messages.answer_id``: the id the proxy gave the answer a reply holds, where the agent's wire
        # names earlier answers by id (Responses' ``previous_response_id``, design 55); NULL elsewhere.
        sqlite=_ANSWER_IDS,
        postgres=_ANSWER_IDS,
    ),
    Migration(
        "0015_answer_steps",
        # ``answer_ids``: every id the proxy gave a reply's answers, with how many steps the reply had at
        # each, so an id a later step superseded still names the reply as it stood (design 55);
        # ``messages.answer_id`` keeps the latest.
        sqlite=_ANSWER_STEPS,
        postgres=_ANSWER_STEPS,
    ),
)

MIGRATION_NAMES: tuple[str, ...] = tuple(m.name for m in MIGRATIONS)

# --------------------------------------------------------------------------------------------------
# queries shared by the backends (``?`` placeholders; see :func:`pg`)

APPLIED_MIGRATIONS = "SELECT name FROM schema_migrations"
RECORD_MIGRATION = "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)"

CONVERSATION_EXISTS = "SELECT tools, requests FROM conversations WHERE id = ?"
ENSURE_CONVERSATION = "INSERT INTO conversations (id, tools) VALUES (?, ?) ON CONFLICT (id) DO NOTHING"
SET_TOOLS = "UPDATE conversations SET tools = ? WHERE id = ?"
SET_REQUESTS = "UPDATE conversations SET requests = ? WHERE id = ?"


def list_conversations(collate: str = "") -> str:
    """``history list``'s query; ``collate`` (PostgreSQL: `` COLLATE "C"``) makes text compare as bytes,
    as SQLite's does, so the listing sorts the same on every backend."""
    return f"""SELECT c.id,
    (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id),
    (SELECT COUNT(*) FROM tool_uses t WHERE t.conversation_id = c.id),
    (SELECT MAX(m.created_at{collate}) FROM messages m WHERE m.conversation_id = c.id),
    c.origin
FROM conversations c
ORDER BY c.id{collate}"""


LIST_CONVERSATIONS = list_conversations()

MESSAGE_COLUMNS = "id, role, text, status, created_at, vessel, provider_data, meta, steps, parts, sent"
LOAD_MESSAGES = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY position"
TOOL_USE_COLUMNS = "message_id, name, input, answer, call_id, is_error, provider_data, parts, kind, sent"
LOAD_TOOL_USES = (
    f"SELECT {TOOL_USE_COLUMNS} FROM tool_uses WHERE conversation_id = ? ORDER BY message_id, position"
)
LOAD_MESSAGE = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? AND id = ?"
LOAD_MESSAGE_TOOL_USES = (
    f"SELECT {TOOL_USE_COLUMNS} FROM tool_uses WHERE conversation_id = ? AND message_id = ? ORDER BY position"
)

NEXT_POSITION = "SELECT COALESCE(MAX(position), -1) + 1 FROM messages WHERE conversation_id = ?"
INSERT_MESSAGE = """INSERT INTO messages
    (conversation_id, position, id, role, text, status, created_at, vessel, provider_data, meta, steps,
    parts, sent)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_TOOL_USE = """INSERT INTO tool_uses
    (conversation_id, message_id, position, name, input, answer, call_id, is_error, provider_data, parts,
    kind, sent)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
NEXT_TOOL_POSITION = (
    "SELECT COALESCE(MAX(position), -1) + 1 FROM tool_uses WHERE conversation_id = ? AND message_id = ?"
)
FIND_OPEN_CALL = """SELECT position, name, input, answer FROM tool_uses
    WHERE conversation_id = ? AND message_id = ? AND call_id = ?
    ORDER BY position DESC LIMIT 1"""
# A call without a provider id (Gemini sends none) is matched only with the reply's latest call, and only
# when that one has no id either: the turn loop records such a call before it runs and right after.
FIND_LAST_IDLESS_CALL = """SELECT position, name, input, answer FROM (
    SELECT position, name, input, answer, call_id FROM tool_uses
    WHERE conversation_id = ? AND message_id = ? ORDER BY position DESC LIMIT 1
) AS latest WHERE call_id IS NULL"""
SET_CALL_ANSWER = """UPDATE tool_uses SET answer = ?, is_error = ?, provider_data = ?, parts = ?
    WHERE conversation_id = ? AND message_id = ? AND position = ?"""
# Removing a message: its calls first (they reference it), then the message; the later messages then move
# up one place in two steps, through negative positions, because UNIQUE (conversation_id, position) is
# checked row by row and a single ``position - 1`` could collide with a row not yet moved.
DELETE_MESSAGE_TOOL_USES = "DELETE FROM tool_uses WHERE conversation_id = ? AND message_id = ?"
DELETE_MESSAGE = "DELETE FROM messages WHERE conversation_id = ? AND id = ?"
MESSAGE_POSITION = "SELECT position FROM messages WHERE conversation_id = ? AND id = ?"
PARK_LATER_MESSAGES = "UPDATE messages SET position = -position WHERE conversation_id = ? AND position > ?"
UNPARK_LATER_MESSAGES = (
    "UPDATE messages SET position = -position - 1 WHERE conversation_id = ? AND position < 0"
)
DELETE_CONVERSATION_TOOL_USES = "DELETE FROM tool_uses WHERE conversation_id = ?"
DELETE_CONVERSATION_MESSAGES = "DELETE FROM messages WHERE conversation_id = ?"
DELETE_CONVERSATION = "DELETE FROM conversations WHERE id = ?"
# Taken first by every write to a conversation where the database locks rows (PostgreSQL, FOR UPDATE).
LOCK_CONVERSATION = "SELECT 1 FROM conversations WHERE id = ?"
MESSAGE_STATE = "SELECT role, status, position FROM messages WHERE conversation_id = ? AND id = ?"
MESSAGE_STATUS = "SELECT status FROM messages WHERE conversation_id = ? AND id = ?"
FINISH_REPLY = """UPDATE messages SET text = ?, status = ?, provider_data = ?, meta = ?, steps = ?
    WHERE conversation_id = ? AND id = ?"""


def pg(sql: str) -> str:
    """A shared query in psycopg's placeholder style (``?`` becomes ``%s``)."""
    return sql.replace("?", "%s")

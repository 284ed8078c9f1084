"""Helpers for the load, crash and PostgreSQL tests: raw position checks and the load writer process.

Run as a script, this module is one load writer (see :func:`write_turns`)::

    python tests/helpers_load.py URL WRITER TURNS GO_FILE

It opens the store, prints ``ready``, waits for ``GO_FILE`` to exist (so every writer starts at once and
interpreter start-up is not timed), appends its turns, and prints ``done <unix time>``.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

CALLS_PER_REPLY = 3


def is_pg(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def sqlite_positions(path: str, cid: str) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT position FROM messages WHERE conversation_id = ? ORDER BY position", (cid,)
        ).fetchall()
    finally:
        conn.close()
    return [int(r[0]) for r in rows]


def pg_positions(url: str, cid: str) -> list[int]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT position FROM messages WHERE conversation_id = %s ORDER BY position", (cid,)
        ).fetchall()
    return [int(r[0]) for r in rows]


def positions(url: str, cid: str) -> list[int]:
    """The stored positions of a conversation, read with SQL (the store's API does not show them)."""
    return pg_positions(url, cid) if is_pg(url) else sqlite_positions(url, cid)


def turn_calls(writer: str, k: int, conversation: str) -> tuple[Any, ...]:
    from toolreplay._history import ToolCall

    return tuple(
        ToolCall(
            "coop", {"w": writer, "k": k, "c": j, "in": conversation}, f"ok {writer} {k} {j}", f"call_{j}"
        )
        for j in range(CALLS_PER_REPLY)
    )


def write_turns(url: str, writer: str, turns: int, go: Path) -> None:
    """Append ``turns`` turns to the shared conversation and as many to this writer's own one, alternately.

    A turn is a user message and a reply with three calls. Writers with an even number store the reply in
    one ``append_message``; odd ones the way the turn loop does (``begin_reply``, ``record_call`` three
    times, ``finish_reply``), so readers meet in-progress replies too.
    """
    from toolreplay._history import Message
    from toolreplay._store import open_store

    store = open_store(url)
    live = int(writer.lstrip("w")) % 2 == 1
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.002)
    for k in range(turns):
        for cid in ("shared", f"own-{writer}"):
            store.append_message(cid, Message(f"{writer}-u{k}", "user", f"turn {k}"))
            calls = turn_calls(writer, k, cid)
            if live:
                store.begin_reply(cid, f"{writer}-a{k}", vessel="kimi", created_at=None)
                for c in calls:
                    store.record_call(cid, f"{writer}-a{k}", c)
                store.finish_reply(cid, f"{writer}-a{k}", text=f"done {k}")
            else:
                store.append_message(cid, Message(f"{writer}-a{k}", "assistant", f"done {k}", calls))
    print(f"done {time.time():.6f}", flush=True)
    store.close()


if __name__ == "__main__":
    write_turns(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))

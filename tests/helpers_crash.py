"""The crash test's tool and its self-kill harness (tests/test_crash.py).

* ``TOOLS`` (``--tools helpers_crash:TOOLS``): one tool, ``work``, that appends ``start <token>`` to the
  file named by ``$CRASH_MARKERS`` (flushed and fsynced before it does anything else), sleeps the
  milliseconds it is asked to, appends ``done <token>`` and answers ``did <token>``. The markers say which
  calls were executed, whatever happened to the process afterwards.
* Run as a script, ``python tests/helpers_crash.py KILL_AT turn ARGS...`` runs the real ``toolreplay``
  command line, having set a SQLite trace on every store it opens that sends SIGKILL to the process itself
  just before its ``KILL_AT``-th write statement (``BEGIN IMMEDIATE``, ``INSERT``, ``UPDATE`` or
  ``COMMIT``): a kill in the middle of a transaction or right at its commit, at a chosen point.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import time
from collections.abc import Mapping
from typing import Any

from toolreplay._history import ToolSpec
from toolreplay._tools import Tool

WRITES = ("BEGIN IMMEDIATE", "INSERT", "UPDATE", "COMMIT")


def _mark(line: str) -> None:
    path = os.environ["CRASH_MARKERS"]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def work(args: Mapping[str, Any]) -> str:
    token = str(args["token"])
    _mark(f"start {token}")
    time.sleep(int(args.get("ms", 0)) / 1000)
    _mark(f"done {token}")
    return f"did {token}"


TOOLS = [
    Tool(
        ToolSpec(
            "work",
            "Do one piece of work",
            {"type": "object", "properties": {"token": {"type": "string"}, "ms": {"type": "integer"}}},
        ),
        work,
    )
]


def _install_self_kill(kill_at: int) -> None:
    """Make every SQLiteStore opened from now on SIGKILL this process before its ``kill_at``-th write."""
    from toolreplay._store import sqlite as store_sqlite

    seen = [0]

    def trace(statement: str) -> None:
        if statement.lstrip().upper().startswith(WRITES):
            seen[0] += 1
            if seen[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        conn.set_trace_callback(trace)
        return conn

    store_sqlite.sqlite3.connect = connect  # type: ignore[assignment]


if __name__ == "__main__":
    _install_self_kill(int(sys.argv[1]))
    from toolreplay._cli import main

    sys.argv = ["toolreplay", *sys.argv[2:]]
    main()

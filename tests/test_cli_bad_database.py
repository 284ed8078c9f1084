"""A database that cannot be used (a directory, read-only, corrupt, another program's file) is one line."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from helpers_cli import one_line_error, run, write_file
from toolreplay._history import load_history
from toolreplay._store.sqlite import SQLiteStore

# -- the database: a directory, read-only, another program's file, a corrupt file -----------------------


def test_a_directory_as_the_database(tmp_path: Path) -> None:
    line = one_line_error(run("history", "list", "--db", str(tmp_path)))
    assert line == f"Error: {tmp_path}: is a directory, not a database file (e.g. {tmp_path}/toolreplay.db)"


@pytest.mark.parametrize(("cut", "problem"), [(0, "file is not a database"), (3000, "malformed")])
def test_a_corrupt_database_is_one_line(tmp_path: Path, demo_path: Path, cut: int, problem: str) -> None:
    real = tmp_path / "real.db"
    with SQLiteStore(real) as s:
        s.import_history(load_history(demo_path))
    content = real.read_bytes()[:cut] if cut else b"garbage " * 100
    db = write_file(tmp_path, "bad.db", content)
    line = one_line_error(run("history", "list", "--db", str(db)))
    assert line.startswith(f"Error: {db}: not a usable SQLite database (") and problem in line
    assert db.read_bytes() == content  # left as it was


def test_another_programs_sqlite_file_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "logs.db"  # llm's logs.db has a conversations table too
    with closing(sqlite3.connect(db)) as c, c:
        c.execute("CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT)")
        c.execute("CREATE TABLE responses (id TEXT)")
    line = one_line_error(run("history", "list", "--db", str(db)))
    assert line == (
        f"Error: {db}: not a toolreplay database (it holds other tables: conversations, responses); "
        f"name another --db, or bring its conversations in with: toolreplay import {db}"
    )
    with closing(sqlite3.connect(db)) as c:
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        mode = c.execute("PRAGMA journal_mode").fetchone()[0]
    assert tables == {"conversations", "responses"} and mode == "delete"  # not touched


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` made unwritable, for root too: root ignores permission bits but not the immutable flag
    (``chattr +i``, which only root may set); anyone else gets ``chmod a-w``."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & 0o555)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    assert made.returncode == 0, f"root needs chattr +i to make {path} read-only: {made.stderr.strip()}"
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="chattr and /proc are Linux's")
def test_a_read_only_database_and_directory(tmp_path: Path, demo_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    db = ro / "t.db"
    assert run("import", str(demo_path), "--db", str(db)).exit_code == 0
    with read_only(db), read_only(ro):
        line = one_line_error(run("history", "list", "--db", str(db)))
        assert "cannot open the database for writing (the file is read-only)" in line
        line = one_line_error(run("import", str(demo_path), "--db", str(ro / "new.db")))
        assert f"cannot create the database (its directory {ro} is not writable)" in line
    # a directory no one may create files in, root included
    line = one_line_error(run("import", str(demo_path), "--db", "/proc/self/new.db"))
    assert "cannot create the database (its directory /proc/self is not writable)" in line
    assert run("history", "list", "--db", str(db)).exit_code == 0  # writable again: nothing was left broken

"""A store that finds no room says so, and that nothing stored was lost.

A full disk was reported as "not a usable SQLite database (disk I/O error)" (SQLite cannot grow its
shared-memory file), which reads like a corrupt store. The real test mounts a tiny tmpfs (root only) and
fills it; SQLite's own "database or disk is full" is also reached anywhere through a page limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers_cli import conversations, one_line_error, run
from toolreplay._errors import StoreError
from toolreplay._history import load_history
from toolreplay._store.sqlite import SQLiteStore
from toolreplay.testing import ProviderDouble, Text

NOTHING_LOST = "nothing already stored was lost: free some space and run the command again"


def _big(tmp_path: Path, n: int = 300) -> Path:
    """A conversation of about ``n`` * 4 KB."""
    msgs = [
        {"id": f"b{i}", "role": "user" if i % 2 == 0 else "assistant", "text": f"{i} " * 2000}
        for i in range(n)
    ]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"id": "big", "messages": msgs}), encoding="utf-8")
    return path


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB filesystem of its own (tmpfs), unmounted after the test."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("a full disk needs a filesystem of its own: mounting a tmpfs needs root on Linux")
    disk = tmp_path / "disk"
    disk.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True, text=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (a container without the right): {made.stderr.strip()}")
    try:
        yield disk
    finally:
        if subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(disk)], check=True)


def _fill(disk: Path, leave: int = 0) -> Path:
    """Fill ``disk`` but ``leave`` bytes (about: a block of slack)."""
    filler = disk / "filler"
    st = os.statvfs(disk)
    room = st.f_bavail * st.f_frsize - leave
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while room > 0:
            room -= os.write(fd, b"\0" * min(room, 1 << 16))
        while not leave:
            os.write(fd, b"\0" * 4096)  # until the kernel says no space
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_is_said_and_nothing_is_lost(tiny_disk: Path, tmp_path: Path, demo_path: Path) -> None:
    db = tiny_disk / "t.db"
    assert run("import", str(demo_path), "--db", str(db)).exit_code == 0
    filler = _fill(tiny_disk)
    full = f"the disk is full (no room left in {tiny_disk}); {NOTHING_LOST}"
    assert one_line_error(run("history", "list", "--db", str(db))) == (
        f"Error: {db}: cannot open the database: {full}"
    )
    new = tiny_disk / "new.db"
    assert one_line_error(run("history", "list", "--db", str(new))) == (
        f"Error: {new}: cannot create the database: {full}"
    )
    filler.unlink()
    new.unlink()
    # Room to open, not to write the import: the transaction is refused whole.
    filler = _fill(tiny_disk, leave=150_000)
    line = one_line_error(run("import", str(_big(tmp_path)), "--db", str(db)))
    assert line == f"Error: {db}: conversation 'big': the import was not written: {full}", line
    filler.unlink()
    assert conversations(db) == ["demo-chief"]
    with SQLiteStore(db) as s:
        assert s.load("demo-chief") == load_history(demo_path)


def test_a_turn_on_a_full_disk_says_so(tiny_disk: Path) -> None:
    db = tiny_disk / "t.db"
    with ProviderDouble() as double:
        double.script(Text("one"), Text("two"))
        base = ["-v", "kimi", "--cid", "a", "-u", double.url, "--db", str(db)]
        assert run("turn", "hi", *base).exit_code == 0
        filler = _fill(tiny_disk, leave=60_000)
        line = one_line_error(run("turn", "x" * 300_000, *base))
        filler.unlink()
    assert (
        f"Error: {db}: " in line and f"the disk is full (no room left in {tiny_disk}); {NOTHING_LOST}" in line
    )
    with SQLiteStore(db) as s:
        assert [m.text for m in s.load("a").messages] == ["hi", "one"]


def test_sqlite_full_at_a_size_limit_is_said(tmp_path: Path, demo_path: Path) -> None:
    """SQLITE_FULL with room on the disk (a quota, the database's page limit): no room, nothing lost."""
    db = tmp_path / "t.db"
    with SQLiteStore(db) as s:
        s.import_history(load_history(demo_path))
        pages = s._conn.execute("PRAGMA page_count").fetchone()[0]
        s._conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # this connection's limit only
        with pytest.raises(StoreError) as exc:
            s.import_history(load_history(_big(tmp_path)))
    assert str(exc.value) == (
        f"{db}: conversation 'big': the import was not written: no room to write (database or disk is "
        f"full: a disk quota, or the database's size limit); {NOTHING_LOST}"
    )
    assert conversations(db) == ["demo-chief"]

"""Importing an untrusted SQLite file (issue 15, item 11): only the 16-byte header is read to sniff it
(a 1.5 GB file was read whole), and the database is read with a time limit (a generated column could
keep ``import --dry-run`` busy without end)."""

from __future__ import annotations

import sqlite3
import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolreplay._cli import cli
from toolreplay._importers import _source, llm_logs


def test_sniffing_reads_only_the_header(tmp_path: Path) -> None:
    big = tmp_path / "big.db"
    with big.open("wb") as f:
        f.write(b"SQLite format 3\x00")
        f.truncate(200_000_000)  # sparse: no disk used, but read whole it is 200 MB of memory
    tracemalloc.start()
    try:
        doc = _source.read_document(big)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert doc.kind == "sqlite"
    assert peak < 20_000_000
    big.unlink()  # else the leak guard reads its 200 MB in search of a key (5 s)


def _stalling_logs_db(path: Path) -> None:
    with sqlite3.connect(path) as db:
        # every read of a conversation id builds 4 MB of hex, and the importer's first query compares
        # each id with every response: as slow as the file's author likes (here about 10,000 reads)
        generated = "id TEXT GENERATED ALWAYS AS (hex(zeroblob(2000000)) || n)"
        db.execute(f"CREATE TABLE conversations (n INTEGER, {generated})")
        db.execute("CREATE TABLE responses (id TEXT, conversation_id TEXT)")
        db.executemany("INSERT INTO conversations (n) VALUES (?)", [(i,) for i in range(50)])
        db.executemany("INSERT INTO responses VALUES (?, 'x')", [(str(i),) for i in range(200)])


@pytest.mark.slow
def test_a_stalling_database_is_stopped_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "logs.db"
    _stalling_logs_db(path)
    monkeypatch.setattr(llm_logs, "READ_SECONDS", 0.3)
    start = time.monotonic()
    r = CliRunner().invoke(cli, ["import", str(path), "--dry-run", "--db", str(tmp_path / "t.db")])
    assert time.monotonic() - start < 10
    assert r.exit_code == 1, r.output
    assert r.stderr.count("\n") == 1 and "took longer than 0.3 s" in r.stderr

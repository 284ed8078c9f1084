"""The recorder's benchmark cannot rot (no timing judged here): its exchanges are recorded without a
failure, the pass-through session continues one conversation, and its table says before and after."""

from __future__ import annotations

from pathlib import Path

from bench import recorder as bench

from toolreplay._store import open_store


def test_the_benchmarks_exchanges_are_recorded(tmp_path: Path) -> None:
    for kind in bench.KINDS:
        db = str(tmp_path / f"{kind[:4]}.db")
        times = bench.timed(kind, db, 3, warm=1)  # raises when an exchange is not recorded
        assert len(times) == 3 and all(t > 0 for t in times)
        store = open_store(db)
        try:
            listed = store.list_conversations()
        finally:
            store.close()
        if kind == bench.KINDS[0]:  # one growing session
            assert len(listed) == 1 and listed[0].messages >= 3, listed
        else:  # the same body again and again: conversations of their own or the one it continues
            assert listed and all(c.calls >= 90 for c in listed), listed


def test_the_table_gives_the_ratio() -> None:
    lines = bench._table([("SQLite", bench.KINDS[0], 10.0, 2.5)], "abc1234", 100)
    assert lines[-1] == "| SQLite | pass-through, continued | 10.00 | 2.50 | 4.00x |"
    assert "abc1234" in lines[0]

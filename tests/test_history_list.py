"""`history list`: newest first, -n, -q text search, --json."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from toolreplay._cli import cli
from toolreplay._history import History, Message, ToolCall
from toolreplay._store.sqlite import SQLiteStore


def _conv(cid: str, when: str, text: str, call: ToolCall | None = None) -> History:
    reply = Message("m2", "assistant", "ok", (call,) if call else (), created_at=when)
    return History(cid, (Message("m1", "user", text, created_at=when), reply))


def test_newest_first_count_query_and_json(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with SQLiteStore(db) as s:
        s.import_history(_conv("alpha", "2026-01-01T00:00:00Z", "Close #12 please."))
        s.import_history(
            _conv(
                "beta",
                "2026-03-01T00:00:00Z",
                "hi",
                ToolCall("coop", {"action": "close", "id": 12}, "closed"),
            )
        )
        s.import_history(_conv("gamma", "2026-02-01T00:00:00Z", "nothing to see"))

    def listed(*args: str) -> list[dict[str, object]]:
        res = CliRunner().invoke(cli, ["history", "list", "--db", str(db), "--json", *args])
        assert res.exit_code == 0, res.output
        out: list[dict[str, object]] = json.loads(res.stdout)
        return out

    assert [r["id"] for r in listed()] == ["beta", "gamma", "alpha"]
    assert listed("-n", "1") == [
        {"id": "beta", "messages": 2, "calls": 1, "updated_at": "2026-03-01T00:00:00Z"}
    ]
    # text, a call's name or input, case-insensitive
    assert [r["id"] for r in listed("-q", "CLOSE")] == ["beta", "alpha"]
    assert [r["id"] for r in listed("-q", '"id": 12')] == ["beta"]
    assert listed("-q", "absent") == []
    res = CliRunner().invoke(cli, ["history", "list", "--db", str(db), "-q", "absent"])
    assert res.exit_code == 0 and "No conversation holds 'absent'" in res.output
    res = CliRunner().invoke(cli, ["history", "list", "--db", str(db), "-n", "2"])
    assert res.output.index("beta") < res.output.index("gamma") and "alpha" not in res.output

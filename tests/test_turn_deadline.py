"""A turn has a total deadline (issue 15, item 8): a server that accepts and never answers held a turn
for about 20 minutes (a 300 s read timeout, four attempts). ``--timeout`` bounds the whole turn, retries
included; the lab bounds each trial and ``check`` each vessel the same way."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from click.testing import CliRunner

from toolreplay._cli import cli
from toolreplay._loop import TurnOptions
from toolreplay.testing import Hang, ProviderDouble, Text


def test_the_default_deadline_is_well_under_twenty_minutes() -> None:
    assert TurnOptions().timeout is not None and TurnOptions().timeout <= 600


def test_turn_timeout_bounds_every_attempt_together(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with ProviderDouble() as double:
        double.script(*[Hang(seconds=30)] * 4)
        start = time.monotonic()
        base = double.base_url_for("kimi")
        args = [
            "turn",
            "hi",
            "--vessel",
            "kimi",
            "--conversation",
            "c",
            "--base-url",
            base,
            "--timeout",
            "1.5",
        ]
        r = CliRunner().invoke(cli, [*args, "--db", str(db)])
        took = time.monotonic() - start
    assert r.exit_code == 1
    assert r.stderr == (
        "Error: kimi: the turn took longer than 1.5 s (--timeout) (the reply a2 is stored as interrupted)\n"
    )
    assert took < 15
    with sqlite3.connect(db) as conn:
        assert [s for (s,) in conn.execute("SELECT status FROM messages ORDER BY position")] == [
            "complete",
            "interrupted",
        ]


def test_check_and_lab_take_the_same_option(tmp_path: Path, demo_path: Path) -> None:
    with ProviderDouble() as double:
        double.script(Hang(seconds=30), Hang(seconds=30), Text("late"))
        base = double.base_url_for("kimi")
        r = CliRunner().invoke(cli, ["check", "--vessel", "kimi", "--base-url", base, "--timeout", "1"])
        assert r.exit_code == 1 and "took longer than 1 s" in r.output
        args = ["lab", str(demo_path), "--at", "m10", "--vessel", "kimi", "--modes", "native",
                "--trials", "1",
                "--expect", "coop:close", "--base-url", base, "--timeout", "1", "--no-chart"]  # fmt: skip
        r = CliRunner().invoke(cli, [*args, "--db", str(tmp_path / "l.db")])
        # the one trial ended in the deadline's error, so no trial was counted: exit 1 (issue 24)
        assert r.exit_code == 1, r.output
        assert "took longer than 1 s" in r.stderr
        assert "no trial was counted" in r.stderr

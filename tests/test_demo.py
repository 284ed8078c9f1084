"""``toolreplay demo``: offline, idempotent, shows each reply plain vs native, and takes new sections."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from toolreplay._cli import cli
from toolreplay._cli import demo as demo_mod
from toolreplay._history import History
from toolreplay._store.sqlite import SQLiteStore

WIDE = {"COLUMNS": "160"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "demo.db")


def test_demo_shows_plain_and_native(db: str) -> None:
    res = CliRunner().invoke(cli, ["demo", "--db", db], env=WIDE)
    assert res.exit_code == 0, res.output
    out = res.output
    assert "plain: words only" in out and "native: calls replayed as calls" in out
    # calls highlighted in the native column only, with their answers and derived ids
    assert 'call coop {"action":"close","id":12,"text":"build is green"}' in out
    assert "-> status: closed" in out and "replay_m05_0" in out
    row = next(line for line in out.splitlines() if line.startswith("│ m05"))
    assert "Closed #12." in row.split("│")[2] and "call coop" not in row.split("│")[2]
    # the renamed MCP tool, the cut-short input, the reply that only said it acted
    assert "stored as mcp__coop__coop, replayed as coop" in out
    assert '{"input_excerpt":' in out and "sent as input_excerpt" in out
    assert "the first 500 of them" in out
    assert 'm11 says "Great, I\'ll close #14 now." but made no call' in out
    assert "no call" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith(f"Stored in {db} (conversation demo-chief). Try next: toolreplay history show")


def test_demo_twice_changes_nothing(db: str) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, ["demo", "--db", db], env=WIDE)
    second = runner.invoke(cli, ["demo", "--db", db], env=WIDE)
    assert first.exit_code == second.exit_code == 0
    assert "(12 added)" in first.output and "already there, unchanged" in second.output
    with SQLiteStore(db) as s:
        assert [c.messages for c in s.list_conversations()] == [12]
        assert s.load("demo-chief") == demo_mod.load_demo_history()


def test_demo_uses_the_default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    res = CliRunner().invoke(cli, ["demo"], env=WIDE)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "xdg" / "toolreplay" / "toolreplay.db").is_file()


def test_sections_are_pluggable(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, int, bool]] = []

    def extra(ctx: demo_mod.DemoContext) -> None:
        native_calls = sum(len(t.calls) for t in ctx.native)
        plain_calls = sum(len(t.calls) for t in ctx.plain)
        seen.append((native_calls, plain_calls, ctx.db == db))
        ctx.console.print("EXTRA SECTION RAN")

    monkeypatch.setattr(demo_mod, "SECTIONS", [*demo_mod.SECTIONS, extra])
    res = CliRunner().invoke(cli, ["demo", "--db", db], env=WIDE)
    assert res.exit_code == 0, res.output
    assert seen == [(4, 0, True)] and "EXTRA SECTION RAN" in res.output
    # run_demo also takes its own list
    console = Console(record=True, width=120)
    ctx = demo_mod.run_demo(db, console, sections=[extra])
    text = console.export_text()
    assert "EXTRA SECTION RAN" in text and "plain: words only" not in text
    assert ctx.imported.added == 0 and ctx.imported.unchanged == 12


def test_demo_shows_but_does_not_store_over_a_conflicting_stored_copy(db: str) -> None:
    # An upgrade changes the bundled demo (its Gemini signature did): the demo still runs, stores
    # nothing, leaves the stored copy as it was, and says why.
    h = demo_mod.load_demo_history()
    changed = dataclasses.replace(h.messages[4], text="something else")
    with SQLiteStore(db) as s:
        s.import_history(History(h.id, (*h.messages[:4], changed)))
    res = CliRunner().invoke(cli, ["demo", "--db", db])
    assert res.exit_code == 0, res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith(f"Not stored: {db} already holds a different demo-chief")
    assert "'m05'" in last and "text" in last
    with SQLiteStore(db) as s:
        assert s.load(h.id).messages[4].text == "something else"


@pytest.mark.slow
def test_demo_through_the_entry_point_offline(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"XDG_DATA_HOME": str(tmp_path / "xdg"), "COLUMNS": "120"})
    # an unusable proxy: any attempt to reach the network would fail loudly rather than succeed
    env.update({"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"})
    out = subprocess.run(
        [sys.executable, "-m", "toolreplay", "demo"], capture_output=True, text=True, env=env, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert "Stored in" in out.stdout and "replay_m07_0" in out.stdout

"""``toolreplay history list|show`` and ``toolreplay replay``: click's runner and the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers_common import DEMO, SECTION_2
from toolreplay._cli import cli
from toolreplay._history import History, Message, ToolCall, history_to_dict, load_history
from toolreplay._store.sqlite import SQLiteStore


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "cli.db")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def section2(tmp_path: Path) -> Path:
    path = tmp_path / "conv-1.json"
    path.write_text(json.dumps(SECTION_2), encoding="utf-8")
    return path


def stored(db: str, *histories: History) -> None:
    with SQLiteStore(db) as s:
        for h in histories:
            s.import_history(h)


def test_history_list_empty_then_filled(runner: CliRunner, db: str) -> None:
    res = runner.invoke(cli, ["history", "list", "--db", db])
    assert res.exit_code == 0, res.output
    assert "No conversations stored" in res.output and "toolreplay demo" in res.output
    stored(db, load_history(DEMO), History("other", (Message("u", "user", "hi"),)))
    res = runner.invoke(cli, ["history", "list", "--db", db], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    row = next(line for line in lines if "demo-chief" in line)
    assert row.split("│")[1:5] == [" demo-chief ", "       12 ", "     4 ", " 2026-11-02T11:30:00Z "]
    assert any("other" in line and " - " in line for line in lines)  # no created_at: shown as -
    for header in ("id", "messages", "calls", "updated"):
        assert header in res.output


def test_db_from_environment(runner: CliRunner, db: str) -> None:
    stored(db, load_history(DEMO))
    res = runner.invoke(cli, ["history", "list"], env={"TOOLREPLAY_DB": db, "COLUMNS": "120"})
    assert res.exit_code == 0 and "demo-chief" in res.output


def test_history_show_json_is_the_file_format(runner: CliRunner, db: str) -> None:
    h = load_history(DEMO)
    stored(db, h)
    res = runner.invoke(cli, ["history", "show", "demo-chief", "--json", "--db", db])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data == history_to_dict(h)
    assert load_history(data) == h  # the printed record reads back as the same history
    m07 = next(m for m in data["messages"] if m["id"] == "m07")
    assert m07["tool_uses"] == [
        {
            "tool_name": "mcp__coop__coop",
            "tool_input": {"action": "close", "id": 13, "text": "README merged"},
            "id": "toolu_01A9",
        },
        {"tool_name": "result", "tool_input": "status: closed", "tool_use_id": "toolu_01A9"},
    ]


def test_history_show_human_view(runner: CliRunner, db: str) -> None:
    h = History(
        "marks",
        (
            Message("u1", "user", "close #14"),
            Message("a1", "assistant", "I'll close #14 now.", meta={"said_without_doing": True}),
            Message(
                "a2",
                "assistant",
                "",
                (ToolCall("coop", {"action": "close", "id": 14}, None),),
                status="interrupted",
            ),
            Message(
                "a3",
                "assistant",
                "",
                (ToolCall("coop", "{broken", "status: [bold]closed[/]", is_error=True),),
                status="in_progress",
            ),
        ),
    )
    stored(db, h)
    res = runner.invoke(cli, ["history", "show", "marks", "--db", db], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    out = res.output
    assert "marks: 4 messages, 2 calls" in out
    a1 = out[out.index("[1] a1") :].splitlines()[0]
    assert "[said without doing]" in a1
    assert "[interrupted]" in out[out.index("[2] a2") :].splitlines()[0]
    assert "[in progress]" in out[out.index("[3] a3") :].splitlines()[0]
    assert 'call 0: coop {"action":"close","id":14}' in out
    assert "(no answer recorded)" in out
    assert "-> error: status: [bold]closed[/]" in out  # stored text is shown as text, not as markup
    assert "(stored as raw text, not a JSON object)" in out


def test_history_show_missing_is_one_line(runner: CliRunner, db: str) -> None:
    res = runner.invoke(cli, ["history", "show", "nope", "--db", db])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [f"Error: no conversation 'nope' in {db}"]


def test_replay_section_2_file(runner: CliRunner, section2: Path) -> None:
    res = runner.invoke(cli, ["replay", str(section2), "--mode", "native"])
    assert res.exit_code == 0, res.output
    turns = json.loads(res.output)
    assert [t["message_id"] for t in turns] == ["m1", "m2", "m3", "m4"]
    assert turns[1]["calls"] == [
        {
            "id": "replay_m2_0",
            "name": "coop",
            "input": {"action": "close", "id": 12},
            "arguments": '{"action":"close","id":12}',
            "answer": "status: closed",
        }
    ]
    assert turns[3]["calls"] == []
    assert set(turns[0]) == {"role", "message_id", "text", "calls"}


def test_replay_modes_and_upto(runner: CliRunner, section2: Path) -> None:
    plain = json.loads(runner.invoke(cli, ["replay", str(section2), "--mode", "plain"]).output)
    assert all(t["calls"] == [] for t in plain)
    prose = json.loads(runner.invoke(cli, ["replay", str(section2), "--mode", "prose"]).output)
    assert prose[2]["text"].startswith("[Tool calls made in the previous reply]\n- coop(")
    assert "status: closed" in prose[2]["text"] and prose[2]["text"].endswith("And #13?")
    cut = json.loads(runner.invoke(cli, ["replay", str(section2), "--upto", "m2"]).output)
    assert [t["message_id"] for t in cut] == ["m1", "m2"]


def test_replay_stored_conversation(runner: CliRunner, db: str) -> None:
    stored(db, load_history(DEMO))
    res = runner.invoke(cli, ["replay", "demo-chief", "--db", db])
    assert res.exit_code == 0, res.output
    turns = {t["message_id"]: t for t in json.loads(res.output)}
    assert turns["m07"]["calls"][0]["name"] == "coop"  # mcp__coop__coop, one vocabulary
    assert list(turns["m09"]["calls"][0]["input"]) == ["input_excerpt"]
    assert turns["m11"]["calls"] == []
    limited = json.loads(runner.invoke(cli, ["replay", "demo-chief", "--db", db, "--max-chars", "40"]).output)
    m03 = next(t for t in limited if t["message_id"] == "m03")
    assert len(m03["calls"][0]["answer"]) <= 40


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("this is not json", "not JSON"),
        ('{"messages": [{"role": "user", "text": "x"}]}', "message 0: id: missing or not a string"),
        # read as `import` reads it: the closest format's reason, naming the field
        (
            '{"messages": [{"id": "a", "role": "robot"}]}',
            "closest is toolreplay (messages[0].role is 'robot'",
        ),
    ],
)
def test_replay_bad_file_is_one_line(runner: CliRunner, tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    res = runner.invoke(cli, ["replay", str(path)])
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and expected in lines[0], res.output


def test_replay_errors(runner: CliRunner, section2: Path, db: str) -> None:
    res = runner.invoke(cli, ["replay", str(section2), "--upto", "m9"])
    assert res.exit_code == 1 and "no message with id 'm9'" in res.output
    res = runner.invoke(cli, ["replay", "no-such-thing", "--db", db])
    assert res.exit_code == 1 and "neither a history file nor a stored conversation" in res.output
    res = runner.invoke(cli, ["replay", str(section2), "--mode", "loud"])
    assert res.exit_code == 2 and "loud" in res.output


def test_replay_warns_about_results_it_drops(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "orphan.json"
    path.write_text(
        json.dumps(
            {
                "messages": [
                    {
                        "id": "a1",
                        "role": "assistant",
                        "text": "x",
                        "tool_uses": [{"tool_name": "result", "tool_input": "lost"}],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    res = runner.invoke(cli, ["replay", str(path)])
    assert res.exit_code == 0
    assert "warning:" in res.stderr and "a1" in res.stderr and "tool_uses[0]" in res.stderr
    assert json.loads(res.stdout)[0]["calls"] == []


def test_real_entry_point(section2: Path, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    out = subprocess.run(
        [sys.executable, "-m", "toolreplay", "replay", str(section2), "--mode", "native"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[1]["calls"][0]["id"] == "replay_m2_0"
    bad = subprocess.run(
        [sys.executable, "-m", "toolreplay", "history", "show", "missing"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == [
        f"Error: no conversation 'missing' in {tmp_path / 'data' / 'toolreplay' / 'toolreplay.db'}"
    ]
    assert "Traceback" not in bad.stderr

"""What a person reads: help text, history show, the demo, at the widths terminals have."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helpers_cli import invoke, one_line_error, run, write_file, write_json
from toolreplay._cli import COMMANDS

# -- what a person reads ---------------------------------------------------------------------------------


def test_history_show_counts_and_error_answers(tmp_path: Path) -> None:
    hist = {
        "id": "h",
        "messages": [
            {"id": "m1", "role": "user", "text": "Close #99."},
            {
                "id": "m2",
                "role": "assistant",
                "text": "There is no #99.",
                "tool_uses": [
                    {"name": "coop", "input": {"action": "close", "id": 99}, "answer": "error: no todo #99",
                     "is_error": True},
                    {"name": "other", "input": {}, "answer": "boom", "is_error": True},
                ],
            },
        ],
    }  # fmt: skip
    path = write_file(tmp_path, "h.json", json.dumps(hist))
    db = str(tmp_path / "t.db")
    assert run("import", str(path), "--db", db).exit_code == 0
    out = run("history", "show", "h", "--db", db).stdout
    assert "h: 2 messages, 2 calls" in out
    assert "    -> error: no todo #99" in out and "error error" not in out
    assert "    -> error: boom" in out
    single = {"id": "s", "messages": [hist["messages"][0]]}  # type: ignore[index]
    assert run("import", str(write_file(tmp_path, "s.json", json.dumps(single))), "--db", db).exit_code == 0
    assert "s: 1 message, 0 calls" in run("history", "show", "s", "--db", db).stdout


def test_coop_by_hand_refuses_empty_text(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    res = run("coop", "add", " ", "--db", db)
    assert res.exit_code == 2 and "Invalid value for 'TEXT': must not be empty" in res.stderr
    assert run("coop", "add", "a todo", "--db", db).stdout == "status: added #1\n"
    res = run("coop", "note", "1", "", "--db", db)
    assert res.exit_code == 2 and "must not be empty" in res.stderr
    assert one_line_error(run("coop", "close", "7", "--db", db)) == "Error: there is no todo #7"


def test_every_command_has_help_and_consistent_tool_options() -> None:
    top = run("--help")
    assert top.exit_code == 0
    for name, (_, _, short) in COMMANDS.items():
        assert f"{name}" in top.stdout and short in top.stdout.replace("\n ", " ")
        res = run(name, "--help")
        assert res.exit_code == 0, (name, res.output)
        assert res.stdout.startswith(f"Usage: toolreplay {name} ")
    for name in ("turn", "chat", "mcp"):
        assert "--tools coop|MODULE:ATTR" in run(name, "--help").stdout
    # short help in the group listing is a whole sentence, not cut with "..."
    assert "...\n" not in run("history", "--help").stdout.split("Commands:")[1]


def test_demo_tells_the_command_that_runs_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from toolreplay._cli.demo import program_name

    monkeypatch.setattr(sys, "argv", ["/somewhere/not/on/path/toolreplay", "demo"])
    monkeypatch.setenv("PATH", str(tmp_path))
    assert program_name() == "/somewhere/not/on/path/toolreplay"  # outside the working directory
    exe = tmp_path / "bin" / "toolreplay"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(exe), "demo"])
    monkeypatch.chdir(tmp_path)
    assert program_name() == "bin/toolreplay"  # python3 scripts/dev.py demo: .venv/bin/toolreplay
    monkeypatch.setenv("PATH", str(exe.parent))
    assert program_name() == "toolreplay"
    monkeypatch.setattr(sys, "argv", ["-c"])
    assert program_name() == "toolreplay"


# -- the demo's vessel section at 80 columns ----------------------------------------------------


def test_demo_vessels_section_reads_at_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from toolreplay._cli import demo, demo_context
    from toolreplay._cli.demo_vessels import demo_vessels_section

    monkeypatch.setattr(demo_context, "program_name", lambda: ".venv/bin/toolreplay")
    console = Console(record=True, width=80)
    demo.run_demo(str(tmp_path / "d.db"), console, sections=[demo_vessels_section])
    text = console.export_text().split("\nStored in ")[0]  # run_demo's own closing line is not the section's
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "functions.coop:0" in text and "replay_m03_0" in text  # ids whole, not cut
    for shown in (
        "asst coop(close 12 …)",
        "tool status: closed",
        "user [coop(close 12 …)]",
        "asst coop(list)",
    ):
        assert shown in text
    assert '{"role"' not in text  # summaries, not raw JSON cut at the column
    assert "try: .venv/bin/toolreplay render <file or id>" in " ".join(text.split())


# -- help: one metavar per kind of value, the same options everywhere ----------------------------


def _help(*cmd: str) -> str:
    r = invoke(*cmd, "--help", terminal_width=200)
    assert r.exit_code == 0, r.output
    return " ".join(r.stdout.split())


def test_help_uses_one_metavar_per_kind_of_value() -> None:
    for cmd in ("render", "turn", "chat", "check", "lab"):
        assert "--model NAME" in _help(cmd), cmd
    for cmd in ("render", "audit"):
        assert "--prompt-template FILE " in _help(cmd), cmd
        assert "tokenizer_config.json" in _help(cmd)
    for cmd in ("check", "lab"):
        assert "--vessel NAME[,NAME...]" in _help(cmd) and "repeat or comma-separate" in _help(cmd), cmd
    assert "--trials INTEGER " in _help("lab") and "--concurrency INTEGER " in _help("lab")
    for cmd in ("render", "lab"):
        assert "--tools coop|FILE.json|MODULE:ATTR" in _help(cmd) and "nothing is run" in _help(cmd), cmd
    for cmd in ("turn", "chat"):
        assert "--tools coop|MODULE:ATTR" in _help(cmd) and "run by toolreplay" in _help(cmd), cmd


def test_lab_trials_and_concurrency_must_be_positive(demo_path: Path) -> None:
    """Refused by LabConfig's check (``_limits``), with the line the API gets, exit 1."""
    base = ["lab", str(demo_path), "--vessel", "ollama", "--at", "m12", "--expect", "coop:close"]
    for opt in ("--trials", "--concurrency"):
        r = invoke(*base, opt, "0")
        assert r.exit_code == 1 and f"Error: {opt[2:]} must be at least 1, not 0" in r.stderr


def test_lab_and_check_take_repeated_and_comma_separated_vessels(demo_path: Path) -> None:
    r = invoke(
        "lab", str(demo_path), "--vessel", "kimi,openai", "--vessel", "ollama", "--at", "m12",
        "--expect", "coop:close", "--trials", "1", "--max-requests", "1", "--base-url", "http://127.0.0.1:9",
    )  # fmt: skip
    assert r.exit_code == 1
    assert "this run would send 9 requests" in r.stderr  # 3 vessels x 3 modes x 1 trial
    r = invoke("check", "--offline", "--vessel", "kimi,openai", "--vessel", "gemini", "--vessel", "kimi")
    assert r.exit_code == 0, r.output
    assert [line.split()[0] for line in r.stdout.splitlines()[1:]] == ["kimi", "openai", "gemini"]


def test_render_and_lab_take_module_attr_tools(
    tmp_path: Path, demo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "qa_weather_tools.py").write_text(
        "from toolreplay._tools import tool\n\n"
        "SCHEMA = {'type': 'object', 'properties': {'city': {'type': 'string'}}}\n\n"
        "@tool('weather', 'Weather in a city', SCHEMA)\n"
        "def WEATHER(args):\n    return 'sunny'\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    r = invoke("render", str(demo_path), "--vessel", "openai", "--tools", "qa_weather_tools:WEATHER,coop")
    assert r.exit_code == 0, r.output
    names = [t["function"]["name"] for t in json.loads(r.stdout)["tools"]]
    assert names[:2] == ["weather", "coop"]
    defs = write_json(tmp_path, "defs.json", [{"name": "lookup", "parameters": {"type": "object"}}])
    r = invoke(
        "render",
        str(demo_path),
        "--vessel",
        "openai",
        "--tools",
        str(defs),
        "--tools",
        "qa_weather_tools:WEATHER",
    )
    assert r.exit_code == 0, r.output
    assert [t["function"]["name"] for t in json.loads(r.stdout)["tools"]][:2] == ["lookup", "weather"]
    r = invoke("render", str(demo_path), "--vessel", "openai", "--tools", "qa_weather_tools:NOPE")
    assert r.exit_code == 1 and "qa_weather_tools has no attribute 'NOPE'" in r.stderr

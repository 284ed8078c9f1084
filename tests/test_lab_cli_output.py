"""What `toolreplay lab` prints, in order: the help names the test the output uses, the title stands on
one line above a one-vessel table, the "resumed" line comes before the table on the same stream, and a
run that counted nothing fails with one line."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers_cli import one_line_error, run
from toolreplay._cli import cli
from toolreplay._lab.scripted import ScriptedAgent
from toolreplay.testing import ProviderDouble

TITLE = "demo-chief at m10: does the next turn call coop:close? (95% Wilson intervals)"


def test_the_help_names_boschloos_test() -> None:
    out = run("lab", "--help")
    assert out.exit_code == 0
    text = " ".join(out.output.split())
    assert "Boschloo's exact test" in text and "Fisher's without scipy" in text
    assert "Fisher's exact test of native" not in text


def test_title_on_one_line_and_resumed_before_the_table(tmp_path: Path, demo_path: Path) -> None:
    with ProviderDouble(responder=ScriptedAgent()) as double:
        args = ["lab", str(demo_path), "--at", "m10", "-v", "kimi", "-u", double.base_url_for("kimi"),
                "--trials", "2", "--expect", "coop:close", "--out", str(tmp_path / "run"),
                "--no-chart"]  # fmt: skip
        first = CliRunner().invoke(cli, args, terminal_width=80)
        again = CliRunner().invoke(cli, args, terminal_width=80)
    assert first.exit_code == 0 and again.exit_code == 0, first.output + again.output
    lines = first.stdout.splitlines()
    assert TITLE in lines  # whole, though the one-vessel table under it is narrower
    assert lines.index(TITLE) + 1 == next(i for i, x in enumerate(lines) if x.startswith("┏"))
    out = again.stdout
    assert out.index("resumed: 6 trials were already in") < out.index(TITLE) < out.index("2 of 2 called")
    assert "resumed" not in again.stderr
    assert not first.stderr.startswith("\n")  # no blank line where a progress bar would stand


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_a_dead_server_fails_with_one_line(tmp_path: Path, demo_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    res = run("lab", str(demo_path), "--at", "m10", "-v", "openai-compatible", "-u", url, "--modes",
              "native", "--trials", "2", "--expect", "coop:close", "--out", str(tmp_path / "o"),
              "--no-chart")  # fmt: skip
    line = one_line_error(res)
    assert line.startswith("Error: no trial was counted: all 2 trials sent ended in errors")
    assert "connection failed" in line and "errors.jsonl" in line
    assert res.stdout == ""  # no table of "no trials"

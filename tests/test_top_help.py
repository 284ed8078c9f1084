"""``toolreplay --help`` is click's text without importing click: the same bytes at every width, and it
costs far less than the 100 ms over the interpreter's own start that the issue allows."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from click.formatting import HelpFormatter
from click.testing import CliRunner

from toolreplay._cli import COMMANDS, cli
from toolreplay._cli._help import top_help, width

SRC = str(Path(__file__).resolve().parent.parent / "src")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("size", [50, 51, 60, 72, 76, 77, 78, 79, 80, 100, 140, 200])
def test_the_fast_help_is_clicks_text(size: int) -> None:
    click_text = CliRunner().invoke(cli, ["--help"], prog_name="toolreplay", terminal_width=size).output
    assert top_help(size) == click_text


@pytest.mark.parametrize("columns", [None, "", "junk", "-3", "0", "20", "52", "79", "80", "81", "300"])
def test_the_width_is_read_as_click_reads_it(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert width() == HelpFormatter().width


def test_help_imports_neither_click_nor_a_command() -> None:
    code = (
        "import sys\n"
        "from toolreplay._cli import main\n"
        "assert main(['--help']) == 0 and main(['-h']) == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'toolreplay', 'shutil')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip().splitlines()[-1]
    # the command table is its own small module (read by the help and the click group alike: design 20)
    assert (
        loaded == "['toolreplay', 'toolreplay._cli', 'toolreplay._cli._commands', 'toolreplay._cli._help']"
    ), loaded
    assert all(name in done.stdout for name in COMMANDS)


def test_anything_else_goes_to_click() -> None:
    for args, said in ((["--version"], "toolreplay, version"), (["history", "-h"], "history [OPTIONS]")):
        done = subprocess.run(
            [sys.executable, "-m", "toolreplay", *args], capture_output=True, text=True, env=ENV, timeout=60
        )
        assert done.returncode == 0 and said in done.stdout, done
    done = subprocess.run(
        [sys.executable, "-m", "toolreplay", "--help", "x"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert "Usage: toolreplay [OPTIONS] COMMAND [ARGS]..." in done.stdout  # click's own handling


def _cpu_ms(args: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, stdout=subprocess.DEVNULL, env=ENV, check=True, timeout=60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


@pytest.mark.slow
def test_help_costs_well_under_100_ms_over_the_interpreter() -> None:
    """CPU time (wall time means little on a loaded machine), paired runs, the median difference."""
    differences = []
    for _ in range(15):
        start = _cpu_ms([sys.executable, "-c", "pass"])
        differences.append(_cpu_ms([sys.executable, "-m", "toolreplay", "--help"]) - start)
    assert statistics.median(differences) < 100, differences

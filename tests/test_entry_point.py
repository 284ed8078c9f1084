"""The real entry point (``python -m toolreplay``, no traceback, offline demo) and the import cost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers_cli import conversations, good_with, write_file

# -- the real entry point and the import cost -----------------------------------------------------------


def _entry(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.slow
def test_entry_point_bad_input_is_one_line_without_traceback(tmp_path: Path) -> None:
    bad = write_file(tmp_path, "bad.json", good_with(tool_uses={"a": 1}))
    db = tmp_path / "t.db"
    for args in (["replay", str(bad)], ["import", str(bad), "--db", str(db)], ["history", "show", "x"]):
        proc = _entry(*args, env={"TOOLREPLAY_DB": str(db)})
        assert proc.returncode == 1, proc
        assert proc.stdout == "" and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("Error: "), proc.stderr
    assert conversations(db) == []


@pytest.mark.slow
def test_entry_point_demo_runs_offline_and_says_what_next(tmp_path: Path) -> None:
    proc = _entry("demo", "--db", str(tmp_path / "d.db"), env={"COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "Try next:" in proc.stdout and "history show demo-chief" in proc.stdout
    assert conversations(tmp_path / "d.db") == ["demo-chief"]


HEAVY = ("httpx", "rich", "click", "pydantic", "jinja2", "scipy", "matplotlib", "psycopg", "mcp", "anthropic")


def test_import_toolreplay_stays_light() -> None:
    code = (
        "import sys, toolreplay\n"
        "from toolreplay import load_history, prepare_turn_messages, History, ToolreplayError\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"import toolreplay loaded: {proc.stdout.strip()}"

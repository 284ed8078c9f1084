"""The package imports, the CLI answers, the bundled example replays."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import toolreplay


def test_public_api_names() -> None:
    for name in ("load_history", "render", "encode", "vessels"):
        assert callable(getattr(toolreplay, name))


def test_cli_help_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "toolreplay._cli", "--help"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "Usage: toolreplay" in out.stdout


def test_demo_history_loads(demo_path: Path) -> None:
    h = toolreplay.load_history(demo_path)
    assert h.id == "demo-chief"
    assert not h.warnings

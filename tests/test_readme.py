"""The README stays true: its --help text, its vessel list, and the example it walks through."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

import toolreplay
from toolreplay._cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _block_after(marker: str) -> str:
    start = README.index(marker) + len(marker)
    return README[start : README.index("```", start)].strip("\n")


def test_readme_help_is_current() -> None:
    result = CliRunner().invoke(cli, ["--help"], prog_name="toolreplay", terminal_width=80)
    assert result.exit_code == 0
    assert _block_after("$ toolreplay --help\n").strip() == result.output.strip()


def test_readme_vessel_list_is_current() -> None:
    listed = re.search(r"^# (\[.*'claude'\])$", README, re.M)
    assert listed is not None
    assert listed.group(1) == repr([v.name for v in toolreplay.vessels()])


def test_readme_example_replays_as_shown() -> None:
    h = toolreplay.load_history(ROOT / "examples" / "conv-1.json")
    turns = toolreplay.prepare_turn_messages(h, "native", upto="m2")
    assert [c.as_json() for c in turns[1].calls] == [
        {
            "id": "replay_m2_0",
            "name": "coop",
            "input": {"action": "close", "id": 12},
            "arguments": '{"action":"close","id":12}',
            "answer": "status: closed",
        }
    ]
    shown = re.search(r"\$ toolreplay render conv-1 --vessel gemini\n(.*)\.\.\.\n", README)
    assert shown is not None
    body = toolreplay.encode(toolreplay.render(h, vessel="gemini")).decode()
    assert body.startswith(shown.group(1))

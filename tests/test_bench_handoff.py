"""The bench's handoff case (issue 6 §4): the same figures as tests/test_handoff.py, no timing asserted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import ROOT

if str(ROOT) not in sys.path:  # the bench package lives beside src/, not inside it
    sys.path.insert(0, str(ROOT))

from bench.cases import QUICK
from bench.handoff import handoff_rows, one_pass

DEMO = ROOT / "src" / "toolreplay" / "data" / "demo.json"


def test_one_pass_counts_every_kept_call_as_a_call_on_every_vessel() -> None:
    h = one_pass(DEMO, ["kimi", "anthropic", "gemini", "claude"])
    assert (h.conversations, h.calls) == (1, 4)
    for name, v in h.vessels.items():
        assert (v.kept, v.as_call, v.invalid_bodies) == (4, 4, 0), name
        assert set(v.seconds) == {"render", "validate", "audit"} and all(s > 0 for s in v.seconds.values())


@pytest.mark.slow
def test_rows_on_the_real_transcripts(shared_dir: Path) -> None:
    rows = handoff_rows(QUICK, shared_dir / "data" / "transcripts" / "dev.jsonl")
    assert rows[0].measure.startswith("real transcripts: import 40 conversations (325 calls)")
    assert "97" in rows[0].value and "195 answers" in rows[0].value
    assert len(rows) == 1 + 11 and all(r.ok for r in rows[1:])
    assert all(r.value.startswith("291 of 291 kept calls as calls, 0 invalid bodies") for r in rows[1:])


def test_rows_without_the_file(tmp_path: Path) -> None:
    rows = handoff_rows(QUICK, tmp_path / "absent.jsonl")
    assert len(rows) == 1 and rows[0].ok is None and "skipped" in rows[0].value

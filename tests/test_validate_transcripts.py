"""Every vessel's body validates for real transcripts (``data/transcripts/dev.jsonl`` of the shared
material) and for generated histories."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

import toolreplay
from conftest import NO_SHARED, SHARED, load_transcripts
from toolreplay._audit.validate import check_body, rule_problems
from toolreplay._history import History
from wire_helpers import VESSELS, histories, history_from_transcript

pytestmark = pytest.mark.slow  # every real transcript against the specs: see design 26

TRANSCRIPTS = load_transcripts()
SPECS = SHARED / "specs" if SHARED is not None else None


def test_transcripts_convert() -> None:
    if not TRANSCRIPTS:
        pytest.skip(NO_SHARED)
    total = 0
    for i, conv in enumerate(TRANSCRIPTS):
        h = history_from_transcript(conv, f"t{i}")
        assert not h.warnings, h.warnings  # every result pairs with its call
        total += sum(len(m.tool_uses) for m in h.messages)
    assert total > 300


@pytest.mark.parametrize("vessel", VESSELS)
def test_every_transcript_validates(vessel: str) -> None:
    if not TRANSCRIPTS or SPECS is None:
        pytest.skip(NO_SHARED)
    for i, conv in enumerate(TRANSCRIPTS):
        h = history_from_transcript(conv, f"t{i}")
        for mode in ("native", "plain"):
            report = check_body(vessel, toolreplay.render(h, vessel, mode=mode), specs_dir=SPECS)
            assert report.problems == (), (conv["source"], mode, report.problems[:5])
            assert report.unchecked == ()


@pytest.mark.parametrize("vessel", VESSELS)
@given(h=histories())
def test_generated_histories_pass_the_rules(vessel: str, h: History) -> None:
    assert rule_problems(vessel, toolreplay.render(h, vessel)) == []


@pytest.mark.parametrize("vessel", VESSELS)
@settings(max_examples=40)
@given(h=histories())
def test_generated_histories_pass_the_specs(vessel: str, h: History) -> None:
    if SPECS is None:
        pytest.skip(NO_SHARED)
    report = check_body(vessel, toolreplay.render(h, vessel), specs_dir=Path(SPECS))
    assert report.problems == ()

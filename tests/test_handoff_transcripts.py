"""Real transcripts as a standing test (issue 6 §4): every conversation of
``data/transcripts/dev.jsonl`` in the shared material (``$TOOLREPLAY_SHARED``) through import, the store,
every vessel's render, validation and the calls-as-calls check.

Skipped with a reason when the shared material is absent (a user's clone).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from test_handoff import VESSELS, assert_handoff, figures
from toolreplay._importers import ImportBatch, read_file, store_batch
from toolreplay._store import open_store


@cache
def _batch(shared: Path) -> ImportBatch:
    return read_file(shared / "data" / "transcripts" / "dev.jsonl")


def test_dev_transcripts_import(shared_dir: Path) -> None:
    batch = _batch(shared_dir)
    assert (batch.format, batch.detected) == ("tau-bench", True)
    f = figures(batch, [])
    # the counts of SOURCES.md: 40 conversations, 325 agent calls, 97 calls by the simulated user
    assert (f["conversations"], f["calls"], f["user_simulator_calls_left_out"]) == (40, 325, 97)
    assert f["calls_cut_by_12_call_window"] == 34  # the replay bound (one 32-call turn, one 14-call...)
    assert f["warnings"] == 8  # one per telecom conversation: the simulated user's calls kept aside
    # real quirks kept: a 32-call agent turn, text beside calls, empty answers, ids reused across turns
    replies = [m for h in batch.conversations for m in h.messages if m.tool_uses]
    assert max(len(m.tool_uses) for m in replies) == 32
    assert sum(1 for m in replies if any(s.words for s in m.steps)) == 27  # words ride with their step
    assert sum(1 for m in replies if len([s for s in m.steps if s.calls]) > 1) == 49  # called, read, called
    assert sum(c.answer == "" for m in replies for c in m.tool_uses) == 8
    assert all(c.answer is not None for m in replies for c in m.tool_uses)  # every call paired
    reused = 0
    for h in batch.conversations:
        ids = [c.call_id for m in h.messages for c in m.tool_uses]
        reused += len(ids) - len(set(ids))
    assert reused == 14  # SOURCES.md: 14 re-used call ids, each paired with its own answer


def test_dev_transcripts_store_round_trip(shared_dir: Path, tmp_path: Path) -> None:
    batch = _batch(shared_dir)
    store = open_store(str(tmp_path / "t.db"))
    try:
        first = store_batch(store, batch)
        again = store_batch(store, batch)
        assert all(d.error is None for d in first + again)
        assert sum(d.result.added for d in again if d.result) == 0  # idempotent
        for h in batch.conversations[::7]:
            stored = store.load(h.id)
            assert stored.messages == h.messages  # meta (text pieces, user calls) and created_at kept
    finally:
        store.close()


@pytest.mark.parametrize("vessel", VESSELS)
def test_dev_transcripts_hand_off_to(vessel: str, shared_dir: Path) -> None:
    for h in _batch(shared_dir).conversations:
        assert_handoff(h, vessel)

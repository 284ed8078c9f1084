"""The real-transcripts handoff (issue 6 §4) as a bench case: every conversation of ``dev.jsonl`` through
import, every vessel's render, validation (the wire rules) and the audit's calls-as-calls count, timed.

The counting follows ``tests/test_handoff.py`` (``figures``): kept calls are those the replay keeps (the
last 12 of each reply), and a vessel's count is what the audit reads back from its body as calls. The
logic lives here so the bench does not import the tests.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.cases import Config, Row, ms
from bench.histories import default_transcripts_path
from bench.timing import median


@dataclass
class VesselFigures:
    """What one vessel carried, over every conversation, and what producing it cost."""

    kept: int = 0
    as_call: int = 0
    invalid_bodies: int = 0
    seconds: dict[str, float] = field(default_factory=lambda: {"render": 0.0, "validate": 0.0, "audit": 0.0})


@dataclass
class Handoff:
    """The figures of one pass over the file."""

    conversations: int
    calls: int
    left_out: int
    warnings: int
    window_cut: int
    inputs_cut: int
    answers_cut: int
    import_seconds: float
    vessels: dict[str, VesselFigures]


def _replay_cuts(histories: list[Any]) -> tuple[int, int, int]:
    from toolreplay._replay import DEFAULT_SETTINGS, prepare_turn_messages

    window = inputs = answers = 0
    for h in histories:
        window += sum(max(0, len(m.tool_uses) - DEFAULT_SETTINGS.max_calls) for m in h.messages)
        for t in prepare_turn_messages(h, "native"):
            inputs += sum("input_excerpt" in c.patches for c in t.calls)
            answers += sum("answer_cut" in c.patches for c in t.calls)
    return window, inputs, answers


def one_pass(path: Path, vessels: list[str]) -> Handoff:
    """Import ``path``, then render, validate and audit every conversation on every vessel (timed)."""
    from toolreplay._api import render
    from toolreplay._audit.body import RequestBody
    from toolreplay._audit.report import audit_request
    from toolreplay._audit.validate import rule_problems
    from toolreplay._importers import read_file
    from toolreplay._replay import prepare_turn_messages
    from toolreplay._vessels import BUILTIN

    t0 = time.perf_counter()
    batch = read_file(path)
    import_seconds = time.perf_counter() - t0
    kept = {h.id: sum(len(t.calls) for t in prepare_turn_messages(h, "native")) for h in batch.conversations}
    per: dict[str, VesselFigures] = {}
    for name in vessels:
        f = per[name] = VesselFigures()
        wire = BUILTIN[name].wire
        for h in batch.conversations:
            t0 = time.perf_counter()
            body = render(h, name)
            t1 = time.perf_counter()
            problems = list(rule_problems(name, body))
            t2 = time.perf_counter()
            report = audit_request(RequestBody(body, wire, f"{h.id} on {name}"), h)
            _, as_call, _, _ = report.counts()
            t3 = time.perf_counter()
            f.seconds["render"] += t1 - t0
            f.seconds["validate"] += t2 - t1
            f.seconds["audit"] += t3 - t2
            f.kept += kept[h.id]
            f.as_call += as_call
            f.invalid_bodies += bool(problems)
    window, inputs, answers = _replay_cuts(list(batch.conversations))
    return Handoff(
        len(batch.conversations),
        batch.calls,
        batch.left_out,
        len(batch.warnings),
        window,
        inputs,
        answers,
        import_seconds,
        per,
    )


def handoff_rows(cfg: Config, path: Path | None = None) -> list[Row]:
    """The handoff's figures and timings: the median of a few passes (the counts must agree each time)."""
    from toolreplay._vessels import BUILTIN

    path = path or default_transcripts_path()
    if not path.is_file():
        return [
            Row(
                "handoff",
                "real transcripts: import, render, validate, audit",
                "",
                "skipped: no dev.jsonl",
                None,
            )
        ]
    vessels = list(BUILTIN)
    passes = [one_pass(path, vessels) for _ in range(3 if cfg.quick else 5)]
    first = passes[0]
    counts = {
        (p.conversations, p.calls, tuple((v.kept, v.as_call) for v in p.vessels.values())) for p in passes
    }
    stable = len(counts) == 1
    rows = [
        Row(
            "handoff",
            f"real transcripts: import {first.conversations} conversations ({first.calls:,} calls)",
            "",
            f"{ms(median([p.import_seconds for p in passes]))} (user-simulator calls left out: "
            f"{first.left_out}; warnings: {first.warnings}; bounds cut: {first.window_cut} calls by the "
            f"12-call window, {first.inputs_cut} inputs, {first.answers_cut} answers)",
            None if stable else False,
        )
    ]
    for name in vessels:
        v = first.vessels[name]
        t = {k: median([p.vessels[name].seconds[k] for p in passes]) for k in v.seconds}
        all_calls = v.as_call == v.kept and v.invalid_bodies == 0 and stable
        rows.append(
            Row(
                "handoff",
                f"{name}: render, validate, audit every conversation",
                "every kept call as a call, valid",
                f"{v.as_call:,} of {v.kept:,} kept calls as calls, {v.invalid_bodies} invalid bodies; "
                f"render {ms(t['render'])}, validate {ms(t['validate'])}, audit {ms(t['audit'])}",
                all_calls,
            )
        )
    return rows


__all__ = ["Handoff", "handoff_rows", "one_pass"]

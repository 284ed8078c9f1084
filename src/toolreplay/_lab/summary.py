"""A lab run's numbers: per vessel and mode the classes, the call rate with its 95% Wilson interval, and
per vessel Fisher's exact test of native against each other mode (called vs not called)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolreplay._lab.classify import TRIAL_CLASSES
from toolreplay._lab.stats import Interval, fisher_exact, wilson


@dataclass(frozen=True, slots=True)
class CellSummary:
    """One vessel and mode: how many trials fell in each class, and the call rate."""

    vessel: str
    mode: str
    trials: int
    counts: Mapping[str, int]
    interval: Interval

    @property
    def called(self) -> int:
        return self.counts.get("called", 0)

    @property
    def rate(self) -> float:
        return self.called / self.trials if self.trials else 0.0

    def cell_text(self) -> str:
        """``9 of 9 called`` (the table's words)."""
        return f"{self.called} of {self.trials} called"

    def as_json(self) -> dict[str, Any]:
        return {
            "vessel": self.vessel,
            "mode": self.mode,
            "trials": self.trials,
            "counts": dict(self.counts),
            "called": self.called,
            "rate": round(self.rate, 4),
            "wilson95": self.interval.as_json(),
        }


@dataclass(frozen=True, slots=True)
class Comparison:
    """Fisher's exact test (two-sided) between two modes of one vessel: called vs not called."""

    vessel: str
    a: str
    b: str
    table: tuple[tuple[int, int], tuple[int, int]]
    p_value: float

    def as_json(self) -> dict[str, Any]:
        return {
            "vessel": self.vessel,
            "modes": [self.a, self.b],
            "table": [list(self.table[0]), list(self.table[1])],
            "p_value": self.p_value,
        }


@dataclass(frozen=True, slots=True)
class Summary:
    """The whole run: cells in vessel and mode order, and the comparisons."""

    vessels: tuple[str, ...]
    modes: tuple[str, ...]
    cells: tuple[CellSummary, ...]
    comparisons: tuple[Comparison, ...]

    def cell(self, vessel: str, mode: str) -> CellSummary | None:
        return next((c for c in self.cells if c.vessel == vessel and c.mode == mode), None)

    def as_json(self) -> dict[str, Any]:
        return {
            "vessels": list(self.vessels),
            "modes": list(self.modes),
            "cells": [c.as_json() for c in self.cells],
            "comparisons": [c.as_json() for c in self.comparisons],
        }


def summarize(records: Iterable[Mapping[str, Any]], vessels: Sequence[str], modes: Sequence[str]) -> Summary:
    """The summary of trial records (``vessel``, ``mode``, ``class``), in the given vessel and mode order."""
    counts: dict[tuple[str, str], dict[str, int]] = {
        (v, m): dict.fromkeys(TRIAL_CLASSES, 0) for v in vessels for m in modes
    }
    for r in records:
        key = (str(r.get("vessel")), str(r.get("mode")))
        cls = r.get("class")
        if key in counts and cls in counts[key]:
            counts[key][str(cls)] += 1
    cells = []
    for v in vessels:
        for m in modes:
            c = counts[(v, m)]
            n = sum(c.values())
            cells.append(CellSummary(v, m, n, c, wilson(c["called"], n)))
    comparisons = []
    for v in vessels:
        if "native" not in modes:
            break
        native = counts[(v, "native")]
        n_native = sum(native.values())
        for other in (m for m in modes if m != "native"):
            o = counts[(v, other)]
            n_other = sum(o.values())
            if not n_native or not n_other:
                continue
            table = ((native["called"], n_native - native["called"]), (o["called"], n_other - o["called"]))
            comparisons.append(Comparison(v, "native", other, table, fisher_exact(table)))
    return Summary(tuple(vessels), tuple(modes), tuple(cells), tuple(comparisons))


def percent(x: float) -> str:
    return f"{100 * x:.0f}%"


def format_p(p: float) -> str:
    return f"p = {p:.2g}" if p >= 0.0001 else "p < 0.0001"


def table_rows(summary: Summary) -> list[list[str]]:
    """The table as text rows: a header (``mode``, vessels), then one row per mode.

    Each cell: ``9 of 9 called``, its 95% Wilson interval, and the trials that said without doing.
    """
    rows = [["mode", *summary.vessels]]
    for m in summary.modes:
        row = [m]
        for v in summary.vessels:
            c = summary.cell(v, m)
            if c is None or not c.trials:
                row.append("no trials")
                continue
            text = f"{c.cell_text()}\n[{percent(c.interval.low)}–{percent(c.interval.high)}]"
            said = c.counts.get("said_without_doing", 0)
            if said:
                text += f"\n{said} said without doing"
            row.append(text)
        rows.append(row)
    return rows


def comparison_lines(summary: Summary) -> list[str]:
    """``kimi: native 9/9 vs plain 3/16, Fisher's exact test p = 0.00011`` per comparison."""
    out = []
    for c in summary.comparisons:
        (a1, a0), (b1, b0) = c.table
        out.append(
            f"{c.vessel}: {c.a} {a1}/{a1 + a0} vs {c.b} {b1}/{b1 + b0} called, "
            f"Fisher's exact test (two-sided) {format_p(c.p_value)}"
        )
    return out


def format_summary(summary: Summary) -> str:
    """The table and the tests as plain text (the CLI prints a rich table of the same rows)."""
    rows = table_rows(summary)
    flat = [[cell.replace("\n", " ") for cell in row] for row in rows]
    widths = [max(len(r[i]) for r in flat) for i in range(len(flat[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in flat]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([*lines, "", *comparison_lines(summary)])


__all__ = [
    "CellSummary",
    "Comparison",
    "Summary",
    "comparison_lines",
    "format_summary",
    "summarize",
    "table_rows",
]

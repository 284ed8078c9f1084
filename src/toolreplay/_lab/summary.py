"""A lab run's numbers: per vessel and mode the classes, the call rate with its 95% Wilson interval and
the errored trials left out; per vessel native against each other mode.

Each comparison answers the question fixed before the run: does native replay raise the call rate? It
carries the one-sided p (Boschloo's exact test, or Fisher's without scipy; ``test`` names it), Holm's
correction of that p across every comparison of the run, the two-sided Fisher p, and the difference in
call rates with Newcombe's 95% interval. Trials that ended in errors are not counted in any of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from toolreplay._lab.classify import PLAIN_REASONS, TRIAL_CLASSES
from toolreplay._lab.stats import Interval, fisher_exact, holm, newcombe, one_sided, wilson

if TYPE_CHECKING:
    from toolreplay._lab.sequential import EarlyStop

Table = tuple[tuple[int, int], tuple[int, int]]


@dataclass(frozen=True, slots=True)
class CellSummary:
    """One vessel and mode: how many trials fell in each class, the call rate, the errors left out."""

    vessel: str
    mode: str
    trials: int
    counts: Mapping[str, int]
    interval: Interval
    errors: int = 0
    reasons: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """Per class, the trials whose reason is not the class's plain one (``cut off``, ``faked the tool's
    answer``: design 43)."""

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
            "errors": self.errors,
            "reasons": {k: dict(v) for k, v in self.reasons.items()},
        }


@dataclass(frozen=True, slots=True)
class Comparison:
    """Native (``a``) against another mode (``b``) of one vessel: called vs not called.

    ``p_holm`` is filled in once every comparison of the run is known (:func:`summarize`).
    """

    vessel: str
    a: str
    b: str
    table: Table
    p_one_sided: float
    test: str
    p_two_sided: float
    rate_difference: float
    ci95: Interval
    p_holm: float = 1.0

    def as_json(self) -> dict[str, Any]:
        return {
            "vessel": self.vessel,
            "modes": [self.a, self.b],
            "table": [list(self.table[0]), list(self.table[1])],
            "alternative": f"{self.a} calls more often than {self.b}",
            "test": self.test,
            "p_one_sided": self.p_one_sided,
            "p_holm": self.p_holm,
            "p_two_sided": self.p_two_sided,
            "rate_difference": self.rate_difference,
            "rate_difference_ci95": [self.ci95.low, self.ci95.high],
        }


def compare(vessel: str, a: str, b: str, table: Table) -> Comparison:
    """The tests of one table ``((a called, a not), (b called, b not))``; ``p_holm`` left at 1."""
    (a1, a0), (b1, b0) = table
    p, test = one_sided(table)
    diff, ci = newcombe(a1, a1 + a0, b1, b1 + b0)
    return Comparison(vessel, a, b, table, p, test, fisher_exact(table), diff, ci)


@dataclass(frozen=True, slots=True)
class Summary:
    """The whole run: cells in vessel and mode order, and the comparisons."""

    vessels: tuple[str, ...]
    modes: tuple[str, ...]
    cells: tuple[CellSummary, ...]
    comparisons: tuple[Comparison, ...]
    early: EarlyStop | None = None  # what --until-clear did, when it ran

    def cell(self, vessel: str, mode: str) -> CellSummary | None:
        return next((c for c in self.cells if c.vessel == vessel and c.mode == mode), None)

    def as_json(self) -> dict[str, Any]:
        return {
            "vessels": list(self.vessels),
            "modes": list(self.modes),
            "cells": [c.as_json() for c in self.cells],
            "comparisons": [c.as_json() for c in self.comparisons],
            **({"until_clear": self.early.as_json()} if self.early else {}),
        }


def summarize(
    records: Iterable[Mapping[str, Any]],
    vessels: Sequence[str],
    modes: Sequence[str],
    errors: Mapping[tuple[str, str], int] | None = None,
) -> Summary:
    """The summary of trial records (``vessel``, ``mode``, ``class``), in the given vessel and mode order.

    ``errors`` counts, per ``(vessel, mode)``, the trials that ended in errors and are left out.
    """
    counts: dict[tuple[str, str], dict[str, int]] = {
        (v, m): dict.fromkeys(TRIAL_CLASSES, 0) for v in vessels for m in modes
    }
    reasons: dict[tuple[str, str], dict[str, dict[str, int]]] = {key: {} for key in counts}
    for r in records:
        key = (str(r.get("vessel")), str(r.get("mode")))
        cls = r.get("class")
        if key in counts and cls in counts[key]:
            counts[key][str(cls)] += 1
            why = r.get("reason")
            if isinstance(why, str) and why != PLAIN_REASONS[str(cls)]:
                per = reasons[key].setdefault(str(cls), {})
                per[why] = per.get(why, 0) + 1
    cells = []
    for v in vessels:
        for m in modes:
            c = counts[(v, m)]
            n = sum(c.values())
            left_out = (errors or {}).get((v, m), 0)
            cells.append(CellSummary(v, m, n, c, wilson(c["called"], n), left_out, reasons[(v, m)]))
    tables = [(v, other, table) for v in vessels for other, table in native_tables(counts, v, modes)]
    comparisons = [compare(v, "native", other, table) for v, other, table in tables]
    adjusted = holm([c.p_one_sided for c in comparisons])
    comparisons = [replace(c, p_holm=p) for c, p in zip(comparisons, adjusted, strict=True)]
    return Summary(tuple(vessels), tuple(modes), tuple(cells), tuple(comparisons))


def native_tables(
    counts: Mapping[tuple[str, str], Mapping[str, int]], vessel: str, modes: Sequence[str]
) -> list[tuple[str, Table]]:
    """``(other mode, table)`` of native against each other mode of ``vessel`` with trials on both sides."""
    if "native" not in modes:
        return []
    native = counts[(vessel, "native")]
    n_native = sum(native.values())
    out = []
    for other in (m for m in modes if m != "native"):
        o = counts[(vessel, other)]
        n_other = sum(o.values())
        if n_native and n_other:
            out.append(
                (
                    other,
                    ((native["called"], n_native - native["called"]), (o["called"], n_other - o["called"])),
                )
            )
    return out


def percent(x: float) -> str:
    return f"{100 * x:.0f}%"


def format_p(p: float) -> str:
    return f"p = {p:.2g}" if p >= 0.0001 else "p < 0.0001"


def table_rows(summary: Summary) -> list[list[str]]:
    """The table as text rows: a header (``mode``, vessels), then one row per mode.

    Each cell: ``9 of 9 called``, its 95% Wilson interval, then every other class with its count and the
    reasons that are not the class's plain one (``2 other tool (1 cut off)``), and the trials that ended
    in errors (left out of the counts).
    """
    rows = [["mode", *summary.vessels]]
    for m in summary.modes:
        row = [m]
        for v in summary.vessels:
            c = summary.cell(v, m)
            if c is None or not c.trials:
                row.append(
                    f"no trials\n{c.errors} errored, left out" if c is not None and c.errors else "no trials"
                )
                continue
            lines = [c.cell_text(), f"[{percent(c.interval.low)}–{percent(c.interval.high)}]"]
            lines += [_class_line(c, cls) for cls in TRIAL_CLASSES if cls != "called"]
            if c.errors:
                lines.append(f"{c.errors} errored, left out")
            row.append("\n".join(lines))
        rows.append(row)
    return rows


CLASS_WORDS = {"other_tool": "other tool", "said_without_doing": "said without doing", "neither": "neither"}


def _class_line(c: CellSummary, cls: str) -> str:
    """``2 said without doing (1 faked the tool's answer)``."""
    why = c.reasons.get(cls) or {}
    extra = f" ({', '.join(f'{n} {reason}' for reason, n in sorted(why.items()))})" if why else ""
    return f"{c.counts.get(cls, 0)} {CLASS_WORDS[cls]}{extra}"


def points(x: float) -> str:
    """A difference of rates in percentage points, signed: ``+26``."""
    return f"{100 * x:+.0f}"


TEST_NAMES = {"boschloo": "Boschloo's exact test", "fisher": "Fisher's exact test"}


def comparison_lines(summary: Summary) -> list[str]:
    """Per comparison the effect first, then the one-sided corrected p; then the errored trials left out.

    ``kimi, native vs plain: +26 points [+1 to +45], one-sided p = 0.047 after Holm (Boschloo's exact
    test; 0.024 before Holm, two-sided Fisher p = 0.075); native 14/14, plain 20/27 called``
    """
    out = []
    for c in summary.comparisons:
        (a1, a0), (b1, b0) = c.table
        out.append(
            f"{c.vessel}, {c.a} vs {c.b}: {points(c.rate_difference)} points "
            f"[{points(c.ci95.low)} to {points(c.ci95.high)}], one-sided {format_p(c.p_holm)} after Holm "
            f"({TEST_NAMES.get(c.test, c.test)}; {format_p(c.p_one_sided)} before Holm, two-sided Fisher "
            f"{format_p(c.p_two_sided)}); {c.a} {a1}/{a1 + a0}, {c.b} {b1}/{b1 + b0} called"
        )
    if out:
        out.insert(
            0, f"native against each other mode ({len(out)} comparisons; effect in points, 95% interval):"
        )
    out.append(errors_line(summary))
    if summary.early is not None:
        out += summary.early.lines()
    return out


def errors_line(summary: Summary) -> str:
    """How many trials ended in errors and were left out of the counts, per cell."""
    cells = [c for c in summary.cells if c.errors]
    if not cells:
        return "no trial ended in an error: every trial sent is counted"
    total = sum(c.errors for c in cells)
    where = ", ".join(f"{c.vessel} {c.mode} {c.errors}" for c in cells)
    said = "trial ended in an error and is" if total == 1 else "trials ended in errors and are"
    return f"{total} {said} left out of the counts ({where})"


def format_summary(summary: Summary) -> str:
    """The tests (the effect and the corrected p first), then the table, as plain text.

    The CLI prints the same lines and a rich table of the same rows.
    """
    rows = table_rows(summary)
    flat = [[cell.replace("\n", " ") for cell in row] for row in rows]
    widths = [max(len(r[i]) for r in flat) for i in range(len(flat[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in flat]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([*comparison_lines(summary), "", *lines])


__all__ = [
    "CellSummary",
    "Comparison",
    "Summary",
    "compare",
    "comparison_lines",
    "errors_line",
    "format_summary",
    "summarize",
    "table_rows",
]

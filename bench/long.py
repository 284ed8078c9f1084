"""Issue 14's bench cases: a 100,000-message conversation (SQLite, and PostgreSQL when
``TOOLREPLAY_BENCH_PG`` names a server) and the prompt cache over 50 turns against the doubles.

* long: the turn's own time before its request leaves (CPU time of the process from ``run_turn`` to the
  transport's send, the machine's other load left out; wall time beside it), after the process's first
  turn of that vessel on a new conversation (its one-time cost, the lazy imports, shown beside it);
  ``history show -n 20``; and the turn's peak memory (tracemalloc).
* cache: 50 turns on the codex, gemini and anthropic vessels against the doubles, native replay, without
  and with a context budget (and, on a vessel that places prompt-cache breakpoints, without them: design
  34); the simulated cache hit rate per turn (the first request of each turn), and the lowest rate between
  two steps of the budget's window (target: above 90%).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.cases import Config, Row, ms
from bench.histories import synthetic_history
from toolreplay._budget import ContextBudget
from toolreplay._history import History
from toolreplay._loop import TurnOptions, run_turn
from toolreplay._store import Store, open_store
from toolreplay.wires.reply import Reply

LONG_VESSELS = ("anthropic", "gemini", "codex")


class _Clock:
    """Stands in for the transport: notes the process and wall time when the request would leave."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.wall = 0.0

    async def send(self, vessel: Any, body: Any, **kw: Any) -> Reply:
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return Reply(text="Noted.")


def _fill(store: Store, messages: int) -> None:
    h = synthetic_history(messages // 2, 3, 7)
    store.import_history(History("long", h.messages, h.tools))


def _timed_turn(store: Store, conversation: str, vessel: str) -> tuple[float, float]:
    """CPU and wall time of one turn from ``run_turn`` to the send."""
    clock = _Clock()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    run_turn(conversation, "What is still open?", vessel, store=store, transport=clock)  # type: ignore[arg-type]
    return clock.cpu - cpu0, clock.wall - wall0


def _turn_rows(store: Store, backend: str, messages: int) -> list[Row]:
    """Per vessel: the process's first turn of that vessel on a short conversation (what any turn of a
    new process pays: the lazy imports, the first use of each table), then one turn of the long
    conversation timed (CPU and wall, from ``run_turn`` to the send), then one more under tracemalloc
    for its peak memory (tracing slows Python down, so it is not timed)."""
    rows = []
    for vessel in LONG_VESSELS:
        first, _ = _timed_turn(store, f"short-{vessel}", vessel)
        cpu, wall = _timed_turn(store, "long", vessel)
        tracemalloc.start()
        run_turn("long", "And now?", vessel, store=store, transport=_Clock())  # type: ignore[arg-type]
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append(
            Row(
                "long",
                f"{backend}, {messages:,} messages, {vessel}: a turn's own time before the request leaves",
                "< 1 s",
                f"{ms(cpu)} CPU ({ms(wall)} wall), peak {peak / 2**20:.1f} MiB traced; the process's first "
                f"turn of this vessel, on a new conversation: {ms(first)} CPU",
                cpu < 1.0,
            )
        )
    return rows


def _show_row(url: str, backend: str, messages: int) -> Row:
    from click.testing import CliRunner

    from toolreplay._cli import cli

    cpu0, wall0 = time.process_time(), time.perf_counter()
    res = CliRunner().invoke(
        cli, ["history", "show", "long", "-n", "20", "--db", url], env={"COLUMNS": "120"}
    )
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    ok = res.exit_code == 0 and "shown, newest first" in res.output
    return Row("long", f"{backend}, {messages:,} messages: history show -n 20", "< 1 s",
               f"{ms(cpu)} CPU ({ms(wall)} wall)", ok and cpu < 1.0)  # fmt: skip


def long_rows(cfg: Config) -> list[Row]:
    messages = 2_000 if cfg.quick else 100_000
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench-key-not-sent")
    os.environ.setdefault("GEMINI_API_KEY", "bench-key-not-sent")
    os.environ.setdefault("CODEX_API_KEY", "bench-key-not-sent")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        backends = [("SQLite", str(Path(tmp) / "long.db"))]
        pg = os.environ.get("TOOLREPLAY_BENCH_PG")
        if pg:
            backends.append(("PostgreSQL", pg))
        else:
            rows.append(
                Row("long", "PostgreSQL", "", "skipped: set TOOLREPLAY_BENCH_PG to a fresh database", None)
            )
        for backend, url in backends:
            store = open_store(url)
            try:
                t0 = time.perf_counter()
                _fill(store, messages)
                rows.append(
                    Row(
                        "long",
                        f"{backend}: import {messages:,} messages",
                        "",
                        ms(time.perf_counter() - t0),
                        None,
                    )
                )
                rows += _turn_rows(store, backend, messages)
            finally:
                store.close()
            rows.append(_show_row(url, backend, messages))
    return rows


# --------------------------------------------------------------------------------------------------
# the prompt cache against the doubles


def _cache_run(
    vessel: str, turns: int, budget: int | None, marks: int | None = None
) -> tuple[list[float], list[int]]:
    """The simulated hit rate of each turn's first request (cached prompt tokens / prompt tokens), and
    how many of the oldest messages each turn left out; ``marks``: the prompt-cache breakpoints (None:
    the vessel's)."""
    from toolreplay._store.sqlite import SQLiteStore
    from toolreplay._tools import build_registry
    from toolreplay.testing import Call, Calls, ProviderDouble, Text

    with tempfile.TemporaryDirectory() as tmp, ProviderDouble() as double:
        store = SQLiteStore(Path(tmp) / "cache.db")
        context = ContextBudget(max_tokens=budget) if budget else ContextBudget(max_tokens=10**9)
        dropped = []
        for n in range(1, turns + 1):
            double.script(
                Calls([Call("coop", {"action": "close", "id": n, "note": "done " * 20})]),
                Text(f"Closed #{n}; " + "the board is tidy. " * 20),
            )
            text = f"Todo #{n} is finished: " + "details " * 60
            options = TurnOptions(dry_tools=True, context=context, cache_breakpoints=marks)
            result = run_turn(f"c{vessel}", text, double.vessel(vessel), build_registry(["coop"], store),
                              store=store, options=options)  # fmt: skip
            dropped.append(int(((result.reply.meta or {}).get("context") or {}).get("dropped", 0)))
        records = [r for r in store.load_usage(f"c{vessel}") if r.step == 1]
        store.close()
    rates = [(r.usage.cached_tokens or 0) / r.usage.input_tokens for r in records if r.usage.input_tokens]
    return rates, dropped


#: The budget of the cache case: small enough that the window moves several times in 50 turns (each turn
#: adds about 500 estimated tokens), so both the reuse between steps and the cost of a step show.
CACHE_BUDGET = 8_000


def _cache_row(
    vessel: str, turns: int, label: str, rates: list[float], dropped: list[int], target: bool = True
) -> Row:
    """From turn 10 on (earlier prompts are short, so one new turn is a large share of them), the lowest
    rate of a turn whose window did not move; the turns where it moved, and the mean over every turn.
    ``target``: the > 90% target applies (not to a run that shows what the cache does without markers)."""
    steps = [i + 1 for i in range(1, len(dropped)) if dropped[i] != dropped[i - 1]]
    between = [r for i, r in enumerate(rates) if i >= 9 and i + 1 not in steps]
    low = min(between) if between else 0.0
    at_steps = [rates[t - 1] for t in steps]
    moved = (
        f"window moved at {len(steps)} turns ({', '.join(map(str, steps))}; hit rate there "
        f"{100 * min(at_steps):.0f}-{100 * max(at_steps):.0f}%)"
        if steps
        else "window never moved"
    )
    return Row(
        "cache",
        f"{vessel}, {turns} turns, {label}: simulated hit rate per turn, between budget steps",
        "> 90%" if target else "—",
        f"lowest {100 * low:.1f}% (turns 10-{turns} between steps), mean of all turns "
        f"{100 * statistics.fmean(rates):.1f}%; {moved}; per turn: "
        + " ".join(f"{100 * r:.0f}" for r in rates),
        low > 0.9 if target else None,
    )


def cache_rows(cfg: Config) -> list[Row]:
    from toolreplay._vessels import get_vessel

    turns = 20 if cfg.quick else 50
    rows: list[Row] = []
    for vessel in LONG_VESSELS:
        runs: list[tuple[str, int | None, int | None]] = [
            ("native replay, whole history", None, None),
            (f"native replay, budget {CACHE_BUDGET:,}", CACHE_BUDGET, None),
        ]
        if get_vessel(vessel).cache_breakpoints:  # design 36: what the markers are worth
            runs.append(("native replay, whole history, no cache breakpoints", None, 0))
        for label, budget, marks in runs:
            rates, dropped = _cache_run(vessel, turns, budget, marks)
            rows.append(_cache_row(vessel, turns, label, rates, dropped, target=marks is None))
    return rows

"""``lab --until-clear`` by simulation: its false-positive rate when the two modes' true call rates are
equal, and the requests it saves when native clearly raises the rate.

Each simulated run draws the trials of one pair (native and another mode, ``trials`` each) from the given
true rates and applies the lab's own procedure: the schedule of :class:`toolreplay._lab.sequential.Schedule`
(rounds, O'Brien-Fleming-type boundaries) and the lab's one-sided test, looked up in a table of p values
computed once per look (Fisher's one-sided test in pure Python; Boschloo's with scipy, which the lab uses
when scipy is installed). A run is a false positive when it crosses a boundary although the rates are
equal; the rate over many runs must stay at or under alpha within its Monte Carlo error
(``alpha + 3 * sqrt(alpha * (1 - alpha) / runs)``). numpy draws the runs when installed; pure Python
otherwise.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from bench.cases import Config, Row
from toolreplay._lab.sequential import Schedule
from toolreplay._lab.stats import fisher_greater_fallback, one_sided

PTable = list[list[float]]  # p[x][y]: native called x of n, the other mode y of n


def fisher(n: int) -> PTable:
    return [[fisher_greater_fallback([[x, n - x], [y, n - y]]) for y in range(n + 1)] for x in range(n + 1)]


def boschloo(n: int) -> PTable:
    """The lab's test with scipy installed (``one_sided`` names it; refuse to time anything else)."""
    out = [[one_sided([[x, n - x], [y, n - y]]) for y in range(n + 1)] for x in range(n + 1)]
    assert all(test == "boschloo" for row in out for _, test in row), "scipy is not installed"
    return [[p for p, _ in row] for row in out]


TESTS: dict[str, Callable[[int], PTable]] = {"fisher": fisher, "boschloo": boschloo}


@functools.cache
def p_tables(test: str, at: tuple[int, ...]) -> tuple[PTable, ...]:
    return tuple(TESTS[test](n) for n in at)


@dataclass(frozen=True, slots=True)
class Simulated:
    """What ``runs`` simulated pairs did: how many crossed a boundary, and the trials they used."""

    runs: int
    crossed: int
    trials_used: int  # per mode, summed over the runs
    planned: int  # per mode, per run

    @property
    def rate(self) -> float:
        return self.crossed / self.runs

    @property
    def saved(self) -> float:
        """The share of the planned requests not sent."""
        return 1 - self.trials_used / (self.runs * self.planned)

    def mc_bound(self, alpha: float) -> float:
        """``alpha`` plus three Monte Carlo standard errors of a rate of ``alpha`` over these runs."""
        return alpha + 3 * math.sqrt(alpha * (1 - alpha) / self.runs)


def _stop_look(
    x_at: list[int], y_at: list[int], tables: tuple[PTable, ...], schedule: Schedule
) -> int | None:
    for k, (x, y) in enumerate(zip(x_at, y_at, strict=True)):
        if tables[k][x][y] <= schedule.thresholds[k]:
            return k
    return None


def _simulate_python(
    schedule: Schedule, tables: tuple[PTable, ...], rates: tuple[float, float], runs: int, seed: int
) -> Simulated:
    rng = random.Random(seed)
    crossed = used = 0
    for _ in range(runs):
        a = [rng.random() < rates[0] for _ in range(schedule.trials)]
        b = [rng.random() < rates[1] for _ in range(schedule.trials)]
        look = _stop_look(
            [sum(a[:n]) for n in schedule.looks], [sum(b[:n]) for n in schedule.looks], tables, schedule
        )
        crossed += look is not None
        used += schedule.looks[look] if look is not None else schedule.trials
    return Simulated(runs, crossed, used, schedule.trials)


def _simulate_numpy(
    schedule: Schedule, tables: tuple[PTable, ...], rates: tuple[float, float], runs: int, seed: int
) -> Simulated:
    import numpy as np

    rng = np.random.default_rng(seed)
    cols = [n - 1 for n in schedule.looks]
    x = np.cumsum(rng.random((runs, schedule.trials)) < rates[0], axis=1)[:, cols]
    y = np.cumsum(rng.random((runs, schedule.trials)) < rates[1], axis=1)[:, cols]
    hit = np.stack(
        [np.asarray(tables[k])[x[:, k], y[:, k]] <= schedule.thresholds[k] for k in range(len(cols))], axis=1
    )
    any_hit = hit.any(axis=1)
    first = np.where(any_hit, hit.argmax(axis=1), len(cols) - 1)
    used = np.where(any_hit, np.asarray(schedule.looks)[first], schedule.trials)
    return Simulated(runs, int(any_hit.sum()), int(used.sum()), schedule.trials)


def simulate(
    trials: int,
    rates: tuple[float, float],
    runs: int,
    *,
    seed: int = 17,
    test: str = "fisher",
    numpy: bool = True,
) -> Simulated:
    """``runs`` simulated pairs at the true call ``rates`` (native, other), ``trials`` planned per mode."""
    schedule = Schedule.plan(trials)
    tables = p_tables(test, schedule.looks)
    if numpy:
        try:
            return _simulate_numpy(schedule, tables, rates, runs, seed)
        except ImportError:
            pass
    return _simulate_python(schedule, tables, rates, runs, seed)


def early_stop_rows(cfg: Config) -> list[Row]:
    """False-positive rates at equal rates, and the requests saved on a clear effect."""
    runs = 2_000 if cfg.quick else 20_000
    tests = ["fisher"] if cfg.quick else ["fisher", "boschloo"]
    try:
        import scipy  # noqa: F401
    except ImportError:
        tests = ["fisher"]
    rows = []
    for test in tests:
        for rate in (0.2, 0.5, 0.8):
            sim = simulate(20, (rate, rate), runs, test=test)
            bound = sim.mc_bound(0.05)
            rows.append(
                Row(
                    "early-stop",
                    f"false positives, {test}, both modes call at {rate:.0%}, 20 trials planned, {runs} runs",
                    "<= 0.05",
                    f"{sim.rate:.4f} (Monte Carlo bound {bound:.4f}; {sim.saved:.0%} of requests not sent)",
                    sim.rate <= bound,
                )
            )
        sim = simulate(20, (0.9, 0.3), runs, test=test)
        rows.append(
            Row(
                "early-stop",
                f"clear effect, {test}: native 90% vs 30%, 20 trials planned, {runs} runs",
                "—",
                f"{sim.saved:.0%} of requests saved ({2 * sim.trials_used / sim.runs:.1f} of 40 per pair); "
                f"crossed in {sim.rate:.1%} of runs",
                None,
            )
        )
    return rows


__all__ = ["Simulated", "early_stop_rows", "simulate"]

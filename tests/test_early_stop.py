"""``lab --until-clear``: the boundaries against published values, and its error rate by simulation."""

from __future__ import annotations

import pytest
from bench.early_stop import simulate

from toolreplay._lab.sequential import ALPHA, Schedule, boundaries, check_look, looks, spent


def test_boundaries_match_the_published_obrien_fleming_type_values() -> None:
    # Lan-DeMets O'Brien-Fleming-type spending, 5 equally spaced looks, one-sided 0.025 (gsDesign's sfLDOF)
    got = boundaries((0.2, 0.4, 0.6, 0.8, 1.0), 0.025)
    assert got == pytest.approx((4.8769, 3.3569, 2.6803, 2.2898, 2.0310), abs=2e-3)
    assert boundaries((1.0,), 0.05) == pytest.approx((1.6449,), abs=1e-4)  # one look: the fixed test


def test_spending_and_looks() -> None:
    assert spent(0.0) == 0.0 and spent(1.0) == pytest.approx(ALPHA)
    steps = [spent(t / 10) for t in range(11)]
    assert steps == sorted(steps) and steps[2] < 1e-4  # almost nothing spent early
    assert looks(20) == (4, 8, 12, 16, 20) and looks(3) == (1, 2, 3) and looks(7) == (2, 3, 5, 6, 7)
    plan = Schedule.plan(20)
    assert list(plan.thresholds) == sorted(plan.thresholds) and plan.thresholds[-1] < ALPHA


@pytest.mark.slow
def test_check_look_uses_only_the_trials_of_the_rounds_so_far() -> None:
    plan = Schedule.plan(20)
    native = [{"vessel": "v", "mode": "native", "trial": i, "class": "called"} for i in range(20)]
    plain = [{"vessel": "v", "mode": "plain", "trial": i, "class": "neither"} for i in range(20)]
    assert check_look(plan, 0, native + plain, [("v", "plain")]) == []  # 4 vs 0 of 4: not yet clear
    (stop,) = check_look(plan, 1, native + plain, [("v", "plain")])  # 8 of 8 vs 0 of 8
    assert (stop.trials, stop.look) == (8, 1) and stop.p <= stop.boundary == plan.thresholds[1]


@pytest.mark.parametrize("numpy", [True, False])
def test_false_positive_rate_stays_at_alpha_within_monte_carlo_error(numpy: bool) -> None:
    """Equal true rates: the share of runs that cross a boundary is at most alpha plus 3 standard errors."""
    if numpy:
        pytest.importorskip("numpy")
    runs = 4_000 if numpy else 400  # pure Python draws each trial: fewer runs, a wider bound
    for rate in (0.3, 0.6):
        sim = simulate(20, (rate, rate), runs, seed=2026, numpy=numpy)
        assert sim.runs == runs and sim.rate <= sim.mc_bound(ALPHA), (rate, sim)
    clear = simulate(20, (0.95, 0.3), runs, seed=2026, numpy=numpy)
    assert clear.rate > 0.9 and clear.saved > 0.2, clear  # a clear effect stops early

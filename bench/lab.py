"""The lab's throughput: trials against a provider double that answers after a fixed latency."""

from __future__ import annotations

import time
from pathlib import Path

from bench.cases import Config, Row

#: The bundled conversation and the user turn where the agent should act (as the lab's own tests use).
AT = "m10"


def lab_rows(cfg: Config) -> list[Row]:
    """``cfg.lab_trials`` trials at concurrency ``cfg.lab_concurrency`` against the ideal wall time
    (trials x latency / concurrency), through the lab's public runner and the shipped provider double."""
    import toolreplay
    from toolreplay.history import load_history
    from toolreplay.lab.plan import LabConfig
    from toolreplay.lab.runner import run_lab
    from toolreplay.testing import ProviderDouble
    from toolreplay.transport import Transport

    history = load_history(Path(toolreplay.__file__).parent / "data" / "demo.json")
    ideal = cfg.lab_trials * cfg.lab_latency / cfg.lab_concurrency
    with ProviderDouble(delay=cfg.lab_latency) as double:
        lab = LabConfig(
            history=history,
            at=AT,
            vessels=(double.vessel("openai"),),
            modes=("native",),
            trials=cfg.lab_trials,
            expect_tool="coop",
            concurrency=cfg.lab_concurrency,
        )
        t0 = time.perf_counter()
        outcome = run_lab(lab, transport=Transport(), chart=False)
        took = time.perf_counter() - t0
        answered = len(double.requests)
    done = f"{outcome.sent} sent, {answered} answered, {len(outcome.errors)} failed"
    ratio = took / ideal
    return [
        Row(
            "lab",
            f"lab: {cfg.lab_trials} trials, double answering after {cfg.lab_latency * 1000:.0f} ms, "
            f"concurrency {cfg.lab_concurrency}",
            "≤ 1.3x ideal",
            f"{ratio:.2f}x ({took:.2f} s vs ideal {ideal:.2f} s; {done})",
            ratio <= 1.3 and outcome.sent == cfg.lab_trials and not outcome.errors,
        )
    ]

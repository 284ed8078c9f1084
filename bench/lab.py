"""The lab's throughput: trials against a provider double that answers after a fixed latency.

The double runs in a process of its own, as a provider does: in the lab's own interpreter its request
handling would take the lab's CPU and GIL, and the figure would measure the double as much as the lab.
The same run with the double inside the lab's process is reported beside it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from bench.cases import Config, Row

#: The bundled conversation and the user turn where the agent should act (as the lab's own tests use).
AT = "m10"
VESSEL = "openai"

_SERVE = """
import sys
from toolreplay.testing import ProviderDouble
with ProviderDouble(delay=float(sys.argv[1])) as d:
    print(d.base_url_for(sys.argv[2]), flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def double_process(latency: float) -> Iterator[str]:
    """A provider double in its own process; yields the base URL for :data:`VESSEL`."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVE, str(latency), VESSEL],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url:
            raise RuntimeError("the provider double did not start")
        yield url
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


def _run(cfg: Config, base_url: str) -> tuple[float, int, int]:
    """Wall seconds of one lab run of ``cfg.lab_trials`` trials; trials sent; trials failed."""
    import toolreplay
    from toolreplay._history import load_history
    from toolreplay._lab.plan import LabConfig
    from toolreplay._lab.runner import run_lab
    from toolreplay._transport.client import Transport
    from toolreplay._vessels import get_vessel

    history = load_history(Path(toolreplay.__file__).parent / "data" / "demo.json")
    lab = LabConfig(
        history=history,
        at=AT,
        vessels=(dataclasses.replace(get_vessel(VESSEL), base_url=base_url),),
        modes=("native",),
        trials=cfg.lab_trials,
        expect_tool="coop",
        concurrency=cfg.lab_concurrency,
    )
    t0 = time.perf_counter()
    outcome = run_lab(lab, transport=Transport(), chart=False)
    return time.perf_counter() - t0, outcome.sent, len(outcome.errors)


def lab_rows(cfg: Config) -> list[Row]:
    """``cfg.lab_trials`` trials at concurrency ``cfg.lab_concurrency`` against the ideal wall time
    (trials x latency / concurrency), through the lab's public runner and the shipped provider double."""
    from toolreplay.testing import ProviderDouble

    ideal = cfg.lab_trials * cfg.lab_latency / cfg.lab_concurrency
    what = (
        f"lab: {cfg.lab_trials} trials, double answering after {cfg.lab_latency * 1000:.0f} ms, "
        f"concurrency {cfg.lab_concurrency}"
    )
    runs = []
    with double_process(cfg.lab_latency) as url:
        for _ in range(cfg.lab_runs):
            runs.append(_run(cfg, url))
    took, sent, failed = sorted(runs)[len(runs) // 2]  # the median run
    ratio = took / ideal
    rows = [
        Row(
            "lab",
            f"{what} (double in its own process; median of {cfg.lab_runs} runs)",
            "≤ 1.3x ideal",
            f"{ratio:.2f}x ({took:.2f} s vs ideal {ideal:.2f} s; {sent} sent, {failed} failed)",
            ratio <= 1.3 and sent == cfg.lab_trials and not failed,
        )
    ]
    with ProviderDouble(delay=cfg.lab_latency) as double:
        took, sent, failed = _run(cfg, double.base_url_for(VESSEL))
    rows.append(
        Row(
            "lab",
            f"{what} (double inside the lab's process)",
            "",
            f"{took / ideal:.2f}x ({took:.2f} s; {sent} sent, {failed} failed)",
            None,
        )
    )
    return rows

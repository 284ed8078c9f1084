"""The benchmarks' processor-time reading (``bench/cpu.py``) counts what a contender spends: every thread
of its process and the processes it started; and the translation benchmark's
table of it says each contender's figure and toolreplay's against LiteLLM's."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from conftest import ROOT

if str(ROOT) not in sys.path:  # the bench package lives beside src/, not inside it
    sys.path.insert(0, str(ROOT))

from bench import cpu
from bench import proxy_translate as bench

pytestmark = pytest.mark.skipif(cpu.spent(os.getpid()) is None, reason="no /proc schedstat here")


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_thread_of_the_process_counts_and_the_main_thread_is_told_apart() -> None:
    before = cpu.spent(os.getpid())
    t = threading.Thread(target=_burn, args=(0.15,))
    t.start()
    t.join()
    after = cpu.spent(os.getpid())
    assert before is not None and after is not None
    d = after - before
    assert d.total >= 0.12e9  # the thread's time is the process's
    assert d.main < d.total - 0.1e9  # and not the main thread's
    got = cpu.per_request(before, after, 10)
    assert got is not None and got[0] == pytest.approx(d.total / 10 / 1e6) and got[1] < got[0]


@pytest.mark.slow
def test_a_started_process_counts_while_it_lives() -> None:
    code = (
        "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\ntime.sleep(30)"
    )
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        before = cpu.spent(os.getpid())
        time.sleep(1.0)  # the child burns its 0.3 s meanwhile, then sleeps (still alive)
        after = cpu.spent(os.getpid())
    finally:
        child.kill()
        child.wait()
    assert before is not None and after is not None
    assert (after - before).total >= 0.2e9


def test_a_process_that_is_not_there_is_not_measured() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert cpu.spent(gone.pid) is None
    assert cpu.per_request(None, cpu.Spent(1, 1), 3) is None


def test_the_table_says_each_figure_and_the_ratio_to_litellm() -> None:
    lines = bench.cpu_table({
        "upstream direct": (0.3, 0.3), "toolreplay routed": (1.6, 1.5),
        "toolreplay routed, recording": (3.2, 2.0), "litellm proxy": (32.0, 30.0),
    })  # fmt: skip
    assert "| toolreplay routed | 1.60 | 1.50 |" in lines
    assert "- toolreplay routed: 1.60 ms per request against LiteLLM's 32.00 ms: 20.0x less" in lines
    assert (
        "- toolreplay routed, recording: 3.20 ms per request against LiteLLM's 32.00 ms: 10.0x less" in lines
    )
    alone = bench.cpu_table({"upstream direct": (0.3, 0.3), "toolreplay routed": None})
    assert "| toolreplay routed | - | - |" in alone and not any(x.startswith("- ") for x in alone)
    assert bench.cpu_table({"toolreplay routed": None}) == [
        "(not measured: this system's /proc gives no schedstat)"
    ]


def test_the_requests_counted_are_the_ones_latency_sends() -> None:
    assert bench.sent_each(8, 30) == 2 * (15 + 240) and bench.sent_each(2, 5) == 2 * (5 + 10)

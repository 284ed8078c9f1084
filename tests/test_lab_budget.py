"""``lab --max-requests`` counts every attempt, retries included (issue 15, item 6): cut streams and 5xx
answers used to be retried outside the budget (10 allowed, 40 sent)."""

from __future__ import annotations

from pathlib import Path

from test_lab import config, fast_transport
from toolreplay._lab.runner import run_lab
from toolreplay.testing import Error, ProviderDouble


def test_retries_count_against_max_requests(tmp_path: Path, demo_path: Path) -> None:
    with ProviderDouble() as double:
        double.script(*[Error(500, "overloaded")] * 100)
        cfg = config(double, demo_path, vessels=("kimi",), modes=("native",), trials=10, max_requests=10)
        outcome = run_lab(cfg, out=tmp_path, transport=fast_transport(), chart=False)
        assert len(double.requests) == 10
    assert outcome.stopped and outcome.sent == 10
    assert (tmp_path / "summary.json").is_file()


def test_the_command_says_the_budget_stopped_it(tmp_path: Path, demo_path: Path) -> None:
    from click.testing import CliRunner

    from toolreplay._cli import cli

    with ProviderDouble() as double:
        double.script(*[Error(500, "overloaded")] * 100)
        base = double.base_url_for("kimi")
        args = ["lab", str(demo_path), "--at", "m10", "--vessel", "kimi", "--modes", "native",
                "--trials", "3",
                "--expect", "coop:close", "--max-requests", "5", "--base-url", base, "--no-chart",
                "--out", str(tmp_path / "lab"), "--db", str(tmp_path / "l.db")]  # fmt: skip
        r = CliRunner().invoke(cli, args)
        assert len(double.requests) <= 5
    # every trial sent failed: nothing was counted, so the run fails with one line that says both
    assert r.exit_code == 1, r.output
    assert r.stderr.count("\n") == 1 and "no trial was counted" in r.stderr
    assert "the --max-requests budget is spent" in r.stderr

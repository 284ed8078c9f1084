"""The lab checks what it needs before the first request, and prints its table whatever the chart does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolreplay._cli import cli
from toolreplay._errors import ConfigError
from toolreplay._lab.scripted import ScriptedAgent
from toolreplay.testing import ProviderDouble


def _args(demo: Path, url: str, out: Path, *extra: str) -> list[str]:
    return ["lab", str(demo), "--at", "m10", "-v", "kimi", "--trials", "2", "--expect", "coop:close",
            "--out", str(out), "-u", url, *extra]  # fmt: skip


def test_a_missing_chart_library_refuses_before_any_request(
    tmp_path: Path, demo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    with ProviderDouble(responder=ScriptedAgent()) as double:
        res = CliRunner().invoke(cli, _args(demo_path, double.url, tmp_path / "run"))
        assert res.exit_code == 1
        assert (
            "the lab chart needs matplotlib: pip install 'toolreplay[lab]', or pass --no-chart" in res.output
        )
        assert "(nothing was sent)" in res.output
        assert double.requests == []
        res = CliRunner().invoke(cli, _args(demo_path, double.url, tmp_path / "run", "--no-chart"))
        assert res.exit_code == 0, res.output
        assert len(double.requests) == 6


def test_the_table_is_printed_when_the_chart_fails(
    tmp_path: Path, demo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> Path:
        raise ConfigError("the disk is full")

    monkeypatch.setattr("toolreplay._lab.chart.write_chart", broken)
    with ProviderDouble(responder=ScriptedAgent()) as double:
        res = CliRunner().invoke(cli, _args(demo_path, double.url, tmp_path / "run"))
    assert res.exit_code == 1
    assert "2 of 2 called" in res.output  # the table
    assert res.output.rstrip().endswith(
        "Error: the table above is complete, but chart.png was not drawn: the disk is full"
    )
    assert (tmp_path / "run" / "trials.jsonl").is_file() and (tmp_path / "run" / "summary.json").is_file()

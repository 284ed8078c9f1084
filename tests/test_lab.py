"""The lab against the provider doubles: the table, the classes, resume, the budget guard, errors, CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolreplay._cli import cli
from toolreplay._errors import ConfigError
from toolreplay._history import load_history
from toolreplay._lab.plan import LabConfig, parse_modes, plan_cells
from toolreplay._lab.runner import load_records, run_lab
from toolreplay._lab.scripted import ScriptedAgent
from toolreplay._lab.summary import format_summary
from toolreplay._transport.client import RetryPolicy, Transport
from toolreplay.testing import Error, ProviderDouble, Text

VESSELS = ("kimi", "anthropic", "gemini")


async def _no_wait(_: float) -> None:
    return None


def config(double: ProviderDouble, demo: Path, **kw: Any) -> LabConfig:
    base: dict[str, Any] = {
        "history": load_history(demo),
        "at": "m10",
        "vessels": tuple(double.vessel(v) for v in kw.pop("vessels", VESSELS)),
        "trials": 6,
        "expect_tool": "coop",
        "expect_action": "close",
        "concurrency": 3,
    }
    base.update(kw)
    return LabConfig(**base)


def fast_transport() -> Transport:
    return Transport(retry=RetryPolicy(sleep=_no_wait))


def expected_counts(agent: ScriptedAgent, cfg: LabConfig) -> dict[tuple[str, str], dict[str, int]]:
    """What the scripted agent answers k = 0..trials-1 to each cell's request, classified."""
    fresh = ScriptedAgent(**{k: getattr(agent, k) for k in ("call", "claim", "seed")})
    out: dict[tuple[str, str], dict[str, int]] = {}
    for cell in plan_cells(cfg):
        kind = fresh.kind(cell.body, cell.vessel.wire)
        counts = {"called": 0, "other_tool": 0, "said_without_doing": 0, "neither": 0}
        from toolreplay._jsonenc import encode

        for _ in range(cfg.trials):
            rng = fresh.draw(encode(cell.body))
            if rng.random() < fresh.call[kind]:
                counts["called"] += 1
            elif rng.random() < fresh.claim:
                counts["said_without_doing"] += 1
            else:
                counts["neither"] += 1
        out[cell.key] = counts
    return out


@pytest.mark.slow
def test_table_classes_and_files(tmp_path: Path, demo_path: Path) -> None:
    agent = ScriptedAgent()
    with ProviderDouble(responder=agent) as double:
        cfg = config(double, demo_path)
        outcome = run_lab(cfg, out=tmp_path / "run", transport=fast_transport())
        bodies = {(r.vessel, json.dumps(r.body.get("tools") or r.body.get("tools"))) for r in double.requests}
        requests = double.requests
    assert outcome.sent == 3 * 3 * 6 and not outcome.errors and not outcome.stopped
    want = expected_counts(agent, cfg)
    for cell in outcome.summary.cells:
        assert dict(cell.counts) == want[(cell.vessel, cell.mode)], (cell.vessel, cell.mode)
        if cell.mode == "native":
            assert cell.cell_text() == "6 of 6 called"
    # the same tools and system prompt in every mode of a vessel (design 8): one tools value per vessel
    assert len(bodies) == len(VESSELS)
    systems = {
        (r.vessel, json.dumps(r.body.get("system") or r.body.get("systemInstruction"))) for r in requests
    }
    assert len(systems) == len(VESSELS)
    text = format_summary(outcome.summary)
    assert "6 of 6 called [61%–100%]" in text
    assert "kimi, native vs plain: +" in text and "after Holm (Boschloo's exact test;" in text
    assert "no trial ended in an error" in text
    run = tmp_path / "run"
    lines = [json.loads(x) for x in (run / "trials.jsonl").read_text().splitlines()]
    assert len(lines) == 54
    assert set(lines[0]) >= {
        "vessel",
        "mode",
        "trial",
        "request_hash",
        "class",
        "text",
        "calls",
        "usage",
        "latency_s",
    }
    said = [x for x in lines if x["class"] == "said_without_doing"]
    assert said and all(x["text"] == "Closed #14." and x["claim"]["action"] == "close" for x in said)
    called = [x for x in lines if x["class"] == "called"]
    assert all(
        x["calls"][0]["name"] == "coop" and x["calls"][0]["input"]["action"] == "close" for x in called
    )
    summary = json.loads((run / "summary.json").read_text())
    assert summary["complete"] is True and summary["expect"] == "coop:close" and len(summary["cells"]) == 9
    assert (run / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in (run / "requests").iterdir())[0] == "anthropic-native.json"


def test_resume_after_a_stop_and_a_cut_line(tmp_path: Path, demo_path: Path) -> None:
    agent = ScriptedAgent()
    out = tmp_path / "run"
    with ProviderDouble(responder=agent) as double:
        cfg = config(double, demo_path, concurrency=2)
        first = run_lab(cfg, out=out, transport=fast_transport(), stop_after=10, chart=False)
        assert first.stopped and 10 <= first.sent < 54
        kept = len((out / "trials.jsonl").read_text().splitlines())
        assert kept == first.sent
        with (out / "trials.jsonl").open("a") as fh:
            fh.write('{"vessel": "kimi", "mode": "pla')  # a line cut by a kill
        second = run_lab(cfg, out=out, transport=fast_transport(), chart=False)
        total_requests = len(double.requests)
    assert second.resumed == kept and second.sent == 54 - kept and second.broken_lines == 1
    assert total_requests == 54  # nothing paid twice
    want = expected_counts(agent, cfg)
    assert {(c.vessel, c.mode): dict(c.counts) for c in second.summary.cells} == want
    done, stale, broken = load_records(out / "trials.jsonl", second.cells)
    assert (len(done), stale, broken) == (54, 0, 1)


@pytest.mark.slow
def test_a_changed_request_is_not_counted(tmp_path: Path, demo_path: Path) -> None:
    with ProviderDouble(responder=ScriptedAgent()) as double:
        run_lab(config(double, demo_path, vessels=("kimi",), trials=2), out=tmp_path, chart=False)
        again = run_lab(
            config(double, demo_path, vessels=("kimi",), trials=2, temperature=0.7), out=tmp_path, chart=False
        )
    assert again.stale == 6 and again.resumed == 0 and again.sent == 6


def test_max_requests_guard(tmp_path: Path, demo_path: Path) -> None:
    with ProviderDouble(responder=ScriptedAgent()) as double:
        with pytest.raises(ConfigError, match=r"would send 54 requests.*--max-requests 50"):
            run_lab(config(double, demo_path, max_requests=50), out=tmp_path)
        assert double.requests == []
        # what is already done does not count against the budget
        run_lab(
            config(double, demo_path, vessels=("kimi",), trials=2, max_requests=6), out=tmp_path, chart=False
        )
        done = run_lab(
            config(double, demo_path, vessels=("kimi",), trials=3, max_requests=3), out=tmp_path, chart=False
        )
    assert done.sent == 3 and done.resumed == 6


def test_errors_retries_and_dead_cells(tmp_path: Path, demo_path: Path) -> None:
    seen: dict[str, int] = {}

    def responder(req: Any) -> Any:
        if req.vessel == "anthropic":  # the anthropic vessel's cell dies
            return Error(400, "messages: bad request for this test")
        seen[req.wire] = seen.get(req.wire, 0) + 1
        if seen[req.wire] == 1:
            return Error(500)  # transient: the transport retries it
        return Text("Closed #14.")

    with ProviderDouble(responder=responder) as double:
        cfg = config(
            double, demo_path, vessels=("kimi", "anthropic"), modes=("native",), trials=3, concurrency=1
        )
        outcome = run_lab(cfg, out=tmp_path, transport=fast_transport(), chart=False)
        anthropic_requests = len(double.requests_for("anthropic"))
    kimi = outcome.summary.cell("kimi", "native")
    assert kimi is not None and kimi.trials == 3 and kimi.counts["said_without_doing"] == 3
    assert anthropic_requests == 1  # a 400 is not retried, and stops the rest of that cell
    assert [e["error"] for e in outcome.errors] == ["BadRequestError"]
    assert "bad request for this test" in (tmp_path / "errors.jsonl").read_text()
    # the errored trial is left out of the counts, and the summary says so (per cell)
    anthropic = outcome.summary.cell("anthropic", "native")
    assert anthropic is not None and anthropic.trials == 0 and anthropic.errors == 1 and kimi.errors == 0
    assert "1 trial ended in an error and is left out of the counts (anthropic native 1)" in format_summary(
        outcome.summary
    )
    cells = json.loads((tmp_path / "summary.json").read_text())["cells"]
    assert [c["errors"] for c in cells] == [0, 1]


def test_config_checks(demo_path: Path) -> None:
    with ProviderDouble() as double:
        with pytest.raises(ConfigError, match="message m11 is an assistant message"):
            plan_cells(config(double, demo_path, at="m11"))
        with pytest.raises(ConfigError, match="no tool named web_search"):
            plan_cells(config(double, demo_path, expect_tool="web_search"))
        with pytest.raises(ConfigError, match="trials must be at least 1, not 0"):
            config(double, demo_path, trials=0)
    with pytest.raises(ConfigError, match="not a replay mode"):
        parse_modes("plain,words")


def _vessel_file(tmp_path: Path, double: ProviderDouble, names: tuple[str, ...]) -> Path:
    path = tmp_path / "vessels.toml"
    path.write_text(
        "".join(f'[vessels.{n}]\nbase_url = "{double.base_url_for(n)}"\n' for n in names), encoding="utf-8"
    )
    return path


def test_cli(tmp_path: Path, demo_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ProviderDouble(responder=ScriptedAgent()) as double:
        monkeypatch.setenv("TOOLREPLAY_VESSELS", str(_vessel_file(tmp_path, double, ("kimi", "gemini"))))
        args = ["lab", str(demo_path), "--at", "m10", "--vessel", "kimi,gemini", "--trials", "4",
                "--expect", "coop:close", "--out", str(tmp_path / "run"), "--no-chart"]  # fmt: skip
        out = CliRunner().invoke(cli, args)
        assert out.exit_code == 0, out.output
        assert "4 of 4 called" in out.output and "gemini, native vs prose: +" in out.output
        # the effect and the corrected one-sided p come before the table
        assert out.output.index("native vs prose") < out.output.index("4 of 4 called")
        again = CliRunner().invoke(cli, args)
        assert "resumed: 24 trials" in again.output
        refused = CliRunner().invoke(
            cli, [*args[:6], "--trials", "50", "--expect", "coop", "--max-requests", "10"]
        )
        assert refused.exit_code == 1 and "--max-requests 10" in refused.output
        assert len(double.requests) == 24


@pytest.mark.slow
def test_killed_run_resumes(tmp_path: Path, demo_path: Path) -> None:
    """SIGKILL a lab run in the middle; the rerun sends only what was not written."""
    with ProviderDouble(responder=ScriptedAgent(), delay=0.05) as double:
        vessels = _vessel_file(tmp_path, double, ("kimi",))
        out = tmp_path / "run"
        args = [
            sys.executable, "-m", "toolreplay._cli", "lab", str(demo_path), "--at", "m10", "--vessel", "kimi",
            "--trials", "40", "--expect", "coop:close", "--out", str(out), "--concurrency", "2", "--no-chart",
        ]  # fmt: skip
        env = {**os.environ, "TOOLREPLAY_VESSELS": str(vessels)}
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        trials = out / "trials.jsonl"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (
            not trials.exists() or len(trials.read_text().splitlines()) < 5
        ):
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        written = len([x for x in trials.read_text().splitlines() if x.strip()])
        assert 5 <= written < 120
        history = load_history(demo_path)
        kimi = (double.vessel("kimi"),)
        cfg = LabConfig(
            history=history, at="m10", vessels=kimi, trials=40, expect_tool="coop", expect_action="close"
        )
        rerun = run_lab(cfg, out=out, chart=False)
        sent_before = len(double.requests) - rerun.sent
    assert rerun.resumed + rerun.sent == 120
    assert rerun.summary.cell("kimi", "native") is not None
    # at most the requests in flight at the kill (concurrency 2) were paid twice
    assert sent_before - rerun.resumed <= 2


def test_until_clear_stops_a_clear_pair_early_and_says_why(tmp_path: Path, demo_path: Path) -> None:
    """Native always calls, plain 15% of the time: the pair crosses a boundary before the planned 20."""
    with ProviderDouble(responder=ScriptedAgent()) as double:
        cfg = config(
            double, demo_path, vessels=("kimi",), modes=("plain", "native"), trials=20, until_clear=True
        )
        outcome = run_lab(cfg, out=tmp_path, transport=fast_transport(), chart=False)
        sent = len(double.requests)
    early = outcome.summary.early
    assert early is not None and early.schedule.looks == (4, 8, 12, 16, 20)
    (stop,) = early.stops
    assert (stop.vessel, stop.other) == ("kimi", "plain") and stop.p <= stop.boundary
    assert sent == outcome.sent == 2 * stop.trials < 40  # the rounds after the crossing were not sent
    assert all(c.trials == stop.trials for c in outcome.summary.cells)
    text = format_summary(outcome.summary)
    assert f"kimi, native vs plain: stopped after round {stop.look + 1} of 5 ({stop.trials} of 20" in text
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["until_clear"]["stopped"][0]["trials_per_mode"] == stop.trials
    assert doc["until_clear"]["p_boundaries"] == list(early.schedule.thresholds)


def test_until_clear_runs_every_round_without_an_effect(tmp_path: Path, demo_path: Path) -> None:
    agent = ScriptedAgent(call={"as_calls": 0.5, "prose": 0.5, "plain": 0.5})
    with ProviderDouble(responder=agent) as double:
        cfg = config(
            double, demo_path, vessels=("kimi",), modes=("plain", "native"), trials=8, until_clear=True
        )
        outcome = run_lab(cfg, transport=fast_transport(), chart=False)
        with pytest.raises(ConfigError, match="--until-clear tests native against the other modes"):
            config(double, demo_path, modes=("plain", "prose"), until_clear=True)
    early = outcome.summary.early
    assert early is not None and early.stops == () and early.not_stopped == (("kimi", "plain"),)
    assert outcome.sent == 16
    assert "kimi, native vs plain: did not cross a boundary" in format_summary(outcome.summary)

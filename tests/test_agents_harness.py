"""The real-agent harness's own parts, without npm: install failures, skip versus fail under CI, the
completion check, the kept request form, and the responder's reading of real requests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentlib import AgentRun, AgentUnavailable, SentRequest, ensure, load_capture
from agentlib.fixtures import unavailable
from agentlib.responders import DONE, PLANS, SIDE, for_agent
from toolreplay.testing import Calls, RecordedRequest, Text


def test_without_npm_an_agent_is_unavailable_and_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOLREPLAY_AGENTS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm here
    with pytest.raises(AgentUnavailable, match="npm is not on PATH"):
        ensure("codex")


def test_a_failed_install_is_unavailable_with_npm_s_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bin" / "npm"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'npm error code E404' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("TOOLREPLAY_AGENTS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    with pytest.raises(
        AgentUnavailable, match=r"npm install @openai/codex@0\.171\.0 failed \(exit 1\).*E404"
    ):
        ensure("codex")


def test_unavailable_skips_outside_ci_and_fails_under_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no npm"):
        unavailable("no npm")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="unavailable under CI: no npm"):
        unavailable("no npm")


def _run(tmp_path: Path, **changes: object) -> AgentRun:
    capture = load_capture("claude")
    (tmp_path / "work").mkdir(parents=True)
    (tmp_path / "work" / "notes.txt").write_text("hello\n")
    run = AgentRun("claude", 0, "", "", 1.0, capture.requests, {}, tmp_path / "work", tmp_path / "home")
    return dataclasses.replace(run, **changes)  # type: ignore[arg-type]


def test_check_completed_passes_a_clean_run_and_names_each_problem(tmp_path: Path) -> None:
    run = _run(tmp_path)
    run.check_completed()
    refused = dataclasses.replace(run.requests[1], status=400, rejected="messages.1: no")
    cases = {
        "exit code 1": {"exit_code": 1},
        "no exit within the timeout": {"exit_code": None},
        "refused by the double": {"requests": (run.requests[0], refused, run.requests[2])},
        "2 attempt": {"net": {"Ip:OutNoRoutes": 2}},
        "did not listen": {"via_error": "the middle program did not listen on 18081 in 20 s"},
    }
    for words, change in cases.items():
        with pytest.raises(AssertionError, match=words):
            _run(tmp_path / words.replace(" ", "-"), **change).check_completed()


def test_a_sent_request_keeps_its_bytes_as_text_or_base64() -> None:
    for raw in (b'{"a": "\\u00e9 \xc3\xa9"}', b"\xff\xfe not utf-8"):
        sent = SentRequest(0, "POST", "/v1/messages", "anthropic", {"x": "y"}, raw, 200, None, True, "side")
        assert SentRequest.from_json(sent.to_json()) == sent


def _recorded(r: SentRequest) -> RecordedRequest:
    return RecordedRequest(r.index, r.method, r.path, r.wire, None, r.headers, r.body, r.raw, r.stream)


@pytest.mark.parametrize("agent", ["opencode-chat", "codex"])
def test_the_responder_calls_the_plan_in_order_and_answers_side_requests_with_words(agent: str) -> None:
    capture = load_capture(agent)
    responder = for_agent(agent, capture.work)
    answers = [responder(_recorded(r)) for r in capture.requests]
    plan = PLANS[agent.split("-")[0]]
    calls = [a for a in answers if isinstance(a, Calls)]
    assert [c.calls[0].name for c in calls] == [s.tool for s in plan]
    assert calls[0].calls[0].input == plan[0].input(capture.work)
    assert isinstance(answers[-1], Text) and answers[-1].text == DONE
    sides = [a for r, a in zip(capture.requests, answers, strict=True) if r.role == "side"]
    assert all(isinstance(a, Text) and a.text == SIDE for a in sides)
    assert len(sides) == (1 if agent.startswith("opencode") else 0)  # opencode asks for a title

"""The real agent CLIs, installed from npm at their pins, do a two-call task against the strict double.

Each agent runs offline in a network namespace with only loopback (tests/agentlib, docs/real-agents.md):
Claude Code on the Anthropic wire, Codex CLI on Responses, opencode on Chat and on Anthropic, Gemini CLI
on Gemini. The double answers with the agent's own tools (write the file, read it back), then words.
A run passes when the agent exits 0, notes.txt holds hello, the double's provider rules accepted every
request, and the kernel counted no attempt to reach an address beyond loopback. Without npm (or a
namespace) these tests skip with the reason; under CI=true they fail instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlib import AGENTS, AgentRun, AgentUnavailable, Middle, run_in_namespace
from agentlib.fixtures import unavailable
from agentlib.responders import PLANS, answered, declared
from agentlib.runner import DOUBLE_PORT
from toolreplay import read_history, render

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("agent", AGENTS)
def test_agent_does_the_task_against_the_strict_double(
    agent: str, real_agent: Callable[..., AgentRun]
) -> None:
    run = real_agent(agent)
    run.check_completed()
    assert all(r.status == 200 and r.rejected is None for r in run.requests), run.report()
    # the main loop: the task, then one call of the plan per answer, each answered before the next
    plan = PLANS[agent.split("-")[0]]
    last = run.main[-1]
    assert answered(run.wire, last.body) == len(plan), run.report()
    assert {s.tool for s in plan} <= set(declared(run.wire, last.body))
    assert all(r.wire == run.wire for r in run.requests if r.method == "POST")
    # issue 22: every request of this live run, read into the neutral model, renders back as it was sent
    for r in run.main:
        batch = read_history(r.body)
        assert render(batch.conversations[0], as_sent=True) == r.body, f"{agent}: {r.role}"


def _namespace(fn: Callable[[], AgentRun]) -> AgentRun:
    try:
        return fn()
    except AgentUnavailable as exc:
        unavailable(str(exc))
        raise


REACH_OUT = """
import socket, sys
for addr in (("10.1.2.3", 443), ("192.0.2.1", 80)):
    try:
        socket.create_connection(addr, timeout=2)
    except OSError as exc:
        print(addr, exc.errno)
try:
    socket.getaddrinfo("registry.npmjs.org", 443)
except OSError as exc:
    print("dns", exc)
"""


def test_the_namespace_counts_every_attempt_beyond_loopback(tmp_path: Path) -> None:
    """The check that fails a run: two connections and a DNS lookup (to the machine's resolver), each
    refused at once inside the namespace and counted by the kernel."""
    run = _namespace(lambda: run_in_namespace([sys.executable, "-c", REACH_OUT], tmp_path))
    assert run.exit_code == 0, run.report()
    assert run.outside >= 2, run.report()
    with pytest.raises(AssertionError, match="attempt"):
        run.check_completed()


def test_a_loopback_only_program_counts_nothing(tmp_path: Path) -> None:
    code = (
        f"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{DOUBLE_PORT}/nowhere', timeout=5))"
    )
    run = _namespace(lambda: run_in_namespace([sys.executable, "-c", code], tmp_path))
    assert run.outside == 0, run.report()
    assert [(r.method, r.path, r.status) for r in run.requests] == [("GET", "/nowhere", 404)]


def test_a_middle_program_runs_in_the_namespace_between_agent_and_double(tmp_path: Path) -> None:
    """``via``: a program started inside the namespace before the agent ({double} filled in); here a
    plain forwarder, as the proxy will be, shows the agent's request reaching the double through it."""
    forwarder = Path(__file__).parent / "agentlib" / "forwarder.py"
    body = '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}'
    code = (
        "import urllib.request as u\n"
        f"r = u.Request('http://127.0.0.1:18081/v1/messages', data={body!r}.encode(),"
        " headers={'content-type': 'application/json', 'anthropic-version': '2023-06-01'})\n"
        "print(u.urlopen(r, timeout=10).read().decode())\n"
    )
    via = Middle([sys.executable, str(forwarder), "18081", "{double}"], 18081)
    run = _namespace(lambda: run_in_namespace([sys.executable, "-c", code], tmp_path, via=via))
    assert run.exit_code == 0, run.report()
    assert [r.raw for r in run.requests] == [body.encode()], run.report()
    assert run.requests[0].role == "side"

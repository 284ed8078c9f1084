"""The kept runs of the real agents (tests/data/agents/, made by ``python scripts/agents.py capture``),
checked without npm: each is complete, and every request in it, sent again byte for byte to a fresh
double, still passes the double's provider rules and gets the same reading from the responder (main
loop step or side request). A double rule that would refuse what a real agent sends fails here."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from agentlib import AGENTS, PINS, Capture, load_capture
from agentlib.agents import TASK
from agentlib.harness import WIRES, package_of
from agentlib.responders import PLANS, answered, declared, for_agent
from toolreplay.testing import ProviderDouble

#: Headers a client sets per connection; everything else is sent again as the agent sent it.
_HOP = {"host", "content-length", "connection", "accept-encoding"}


@pytest.fixture(params=AGENTS)
def capture(request: pytest.FixtureRequest) -> Capture:
    return load_capture(str(request.param))


def test_each_capture_is_a_whole_run_of_its_pinned_agent(capture: Capture) -> None:
    pin = PINS[package_of(capture.agent)]
    assert capture.pin == f"{pin.package}@{pin.version}"
    assert capture.wire == WIRES[capture.agent][0]
    assert all(r.status == 200 and r.rejected is None for r in capture.requests)
    plan = PLANS[package_of(capture.agent)]
    assert [r.role for r in capture.main] == [f"main {k}" for k in range(len(plan) + 1)]
    for r in capture.main:
        assert TASK in r.raw.decode()
        assert {s.tool for s in plan} <= set(declared(capture.wire, r.body))
    assert answered(capture.wire, capture.main[-1].body) == len(plan)


def _send(url: str, method: str, raw: bytes, headers: dict[str, str]) -> int:
    req = urllib.request.Request(url, data=raw, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_every_captured_request_passes_the_double_again(capture: Capture) -> None:
    responder = for_agent(capture.agent, capture.work)
    with ProviderDouble(responder=responder, default=None) as double:
        for r in capture.requests:
            # the double records key headers redacted; a fake key in their place
            headers = {k: ("x" if v == "[redacted]" else v) for k, v in r.headers.items() if k not in _HOP}
            status = _send(double.url + r.path, r.method, r.raw, headers)
            got = double.requests[-1]
            assert (status, got.rejected) == (200, None), f"request {r.index} ({r.path}): {got.rejected}"
            assert got.raw == r.raw
    assert [role for _, role in responder.log or []] == [r.role for r in capture.requests]

"""Real agent CLIs on another wire's model (design 47): each agent through ``toolreplay proxy --route`` to
a provider double of another wire (the harness of docs/real-agents.md: npm-installed pins, a
loopback-only namespace). Each completes its task; every upstream request passes the upstream double's
provider rules, its earlier calls as calls and its own reasoning back from the store; no key the agent
holds and no token of ours reaches the upstream."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlib import AgentRun, Middle
from agentlib.runner import DOUBLE_PORT
from toolreplay.wires import get_wire

ROOT = Path(__file__).resolve().parent.parent
PORT = 18083
DOUBLE = f"http://127.0.0.1:{DOUBLE_PORT}"
UPSTREAMS = ("anthropic={double}", "openai-chat={double}/v1", "openai-responses={double}/v1",
             "gemini={double}/v1beta", "ollama={double}")  # fmt: skip
#: (agent, its wire, the route, the vessel's upstream wire, whether the upstream's model thinks).
CASES = [
    ("claude", "anthropic", "claude-*=kimi:kimi-k2-thinking", "openai-chat", True),
    ("claude", "anthropic", "claude-*=gemini:gemini-3-pro-preview", "gemini", True),
    ("claude", "anthropic", "claude-*=openai:gpt-4.1", "openai-chat", False),
    ("codex", "openai-responses", "openai-responses:*=anthropic:claude-sonnet-4-5", "anthropic", True),
    ("codex", "openai-responses", "openai-responses:*=kimi:kimi-k2-thinking", "openai-chat", True),
    ("codex", "openai-responses", "openai-responses:*=gemini:gemini-3-pro-preview", "gemini", True),
    ("opencode-anthropic", "anthropic", "anthropic:*=kimi:kimi-k2-thinking", "openai-chat", True),
    ("opencode-chat", "openai-chat", "openai-chat:*=anthropic:claude-sonnet-4-5", "anthropic", True),
    ("opencode-chat", "openai-chat", "openai-chat:*=gemini:gemini-3-pro-preview", "gemini", True),
    ("gemini", "gemini", "gemini:*=kimi:kimi-k2-thinking", "openai-chat", True),
    ("gemini", "gemini", "gemini:*=openai:gpt-4.1", "openai-chat", False),
]


def _proxy(tmp: Path, route: str, vessel: str) -> Middle:
    """The proxy with the route, the vessel pointed at the double (its profile's URL: no key is needed
    on loopback), every other wire passed through to the double."""
    vessels = tmp / "vessels.toml"
    suffix = get_wire(get_vessel_wire(vessel)).http.base_suffix  # type: ignore[union-attr]
    vessels.write_text(
        f'[vessels.{vessel}]\nbase_url = "{DOUBLE}/vessel/{vessel}{suffix}"\n', encoding="utf-8"
    )
    argv = [sys.executable, "-m", "toolreplay", "proxy", "-p", str(PORT), "--db", str(tmp / "agents.db")]
    argv += ["--log", str(tmp / "proxy.log"), "--route", route]
    for u in UPSTREAMS:
        argv += ["--upstream", u]
    env = {"PYTHONPATH": str(ROOT / "src"), "TOOLREPLAY_VESSELS": str(vessels)}
    return Middle(argv, PORT, env)


def get_vessel_wire(name: str) -> str:
    from toolreplay._vessels import BUILTIN

    return BUILTIN[name].wire


@pytest.mark.slow
@pytest.mark.parametrize(
    ("agent", "wire", "route", "upstream", "thinks"),
    CASES,
    ids=[f"{c[0]}-{c[2].split('=')[1]}" for c in CASES],
)
def test_a_real_agent_completes_its_task_on_another_wires_model(
    agent: str, wire: str, route: str, upstream: str, thinks: bool, real_agent: Callable[..., AgentRun],
    tmp_path: Path,
) -> None:  # fmt: skip
    vessel = route.split("=", 1)[1].split(":")[0]
    run = real_agent(agent, via=_proxy(tmp_path, route, vessel))
    run.check_completed()
    routed = [r for r in run.requests if r.method == "POST" and f"/vessel/{vessel}/" in r.path]
    assert routed and all(r.wire == upstream for r in routed), run.report()
    main = [r for r in routed if r.role.startswith("main")]
    assert len(main) >= 3, run.report()
    # the last main-loop request carries both earlier calls as calls (the double's rules refuse them
    # otherwise) and, from a model that thinks, its own reasoning for each (which the agent, not asked
    # to show it or unable to carry it, may never have had)
    assert main[-1].role == "main 2", run.report()
    if thinks:
        assert main[-1].raw.count(b"The user wants notes.txt with hello") >= 2, run.report()
    assert not [r for r in routed if b"toolreplay.r1." in r.raw], run.report()
    logged: list[dict[str, Any]] = [json.loads(x) for x in (tmp_path / "proxy.log").read_text().splitlines()]
    assert {e.get("vessel") for e in logged if e.get("route")} == {vessel}, logged

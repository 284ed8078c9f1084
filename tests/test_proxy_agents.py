"""The real agent CLIs through ``toolreplay proxy`` to the provider double (the harness of
docs/real-agents.md: npm-installed pins, a loopback-only namespace): each completes its task, every
request passes the double's provider rules through the proxy, and the store holds the conversation with
every call answered, which the live audit saw carried as calls."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlib import AgentRun, Middle

ROOT = Path(__file__).resolve().parent.parent
PORT = 18082
UPSTREAMS = ("anthropic={double}", "openai-chat={double}/v1", "openai-responses={double}/v1",
             "gemini={double}/v1beta", "ollama={double}")  # fmt: skip


def _proxy(tmp: Path) -> Middle:
    argv = [sys.executable, "-m", "toolreplay", "proxy", "-p", str(PORT), "--db", str(tmp / "agents.db")]
    argv += ["--log", str(tmp / "proxy.log")]
    for u in UPSTREAMS:
        argv += ["--upstream", u]
    return Middle(argv, PORT, {"PYTHONPATH": str(ROOT / "src")})


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["claude", "codex", "opencode-chat", "opencode-anthropic", "gemini"])
def test_a_real_agent_completes_its_task_through_the_proxy_and_is_recorded(
    agent: str, real_agent: Callable[..., AgentRun], tmp_path: Path
) -> None:
    from toolreplay._store import open_store

    run = real_agent(agent, via=_proxy(tmp_path))
    run.check_completed()
    logged: list[dict[str, Any]] = [json.loads(x) for x in (tmp_path / "proxy.log").read_text().splitlines()]
    main = [r for r in logged if r["status"] == 200 and r["conversation"]]
    assert main, run.report()
    # what reached the double is byte for byte what the agent sent the proxy: the digest the proxy logged
    # of each request as it came in, against the bytes the double received, request by request
    reached = [hashlib.sha256(r.raw).hexdigest() for r in run.requests if r.method == "POST"]
    sent = [r["sha256"] for r in logged if "sha256" in r and not r["repairs"]]
    assert sorted(sent) == sorted(reached), run.report()
    store = open_store(str(tmp_path / "agents.db"))
    try:
        histories = [store.load(c.id) for c in store.list_conversations()]
    finally:
        store.close()
    # the main loop's conversation: one reply holding both calls with their answers, every step issued by
    # the double behind the proxy (its wire, its host)
    replies = [m for h in histories for m in h.messages if m.role == "assistant" and len(m.tool_uses) >= 2]
    assert replies, [h.messages for h in histories]
    (reply,) = replies
    assert all(c.answer is not None for c in reply.tool_uses), reply
    assert reply.steps and all(s.issuer is not None and s.issuer.host == "127.0.0.1" for s in reply.steps)
    # and the live audit of its last request saw both earlier calls carried as calls
    last = max(main, key=lambda r: r["audit"].get("calls", 0))
    assert last["audit"]["calls"] == last["audit"]["as_call"] == 2, last
    assert last["audit"]["missing"] == last["audit"]["as_text"] == last["audit"]["ids_changed"] == 0, last

"""Codex CLI (the real one, at its pin) does a two-call task on streams the Responses bridge writer wrote:
it runs the free-form apply_patch call and the shell call, shows the reasoning, and sends back our items
as it got them (the reasoning's token as ``encrypted_content``, the same item ids and ``call_id``s), so
the proxy can put the upstream's own reasoning and ids back. Offline, in a network namespace; skipped
without npm or a namespace (failed under CI), as the other real-agent tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentlib.fixtures import unavailable
from agentlib.harness import isolation
from agentlib.install import AgentUnavailable, ensure
from bridge_codex_run import KIMI, outbound, scripted
from helpers_common import ROOT, TESTS
from toolreplay.model import Reasoning
from toolreplay.wires.bridge import seal

pytestmark = pytest.mark.slow


def _run(tmp: Path) -> dict[str, Any]:
    try:
        ensure("codex")
        command, drop = isolation()
    except AgentUnavailable as exc:
        unavailable(str(exc))
    if drop:  # the harness's runner drops back from sudo's root; this small script does not
        unavailable("the namespace needs sudo here; this check runs only without it")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT / "src")])}
    cmd = [*command, sys.executable, str(TESTS / "bridge_codex_run.py"), str(tmp)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert (tmp / "result.json").is_file(), done.stderr[-3000:]
    result: dict[str, Any] = json.loads((tmp / "result.json").read_text())
    return result


def _items(request: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [i for i in request["body"].get("input", []) if isinstance(i, dict) and i.get("type") == kind]


def test_codex_does_the_task_on_the_writers_streams_and_sends_our_items_back(tmp_path: Path) -> None:
    result = _run(tmp_path)
    assert result["exit"] == 0, result["stderr"]
    assert result["notes"] == "hello\n"
    main = [r for r in result["requests"] if r["method"] == "POST" and r["path"].endswith("/responses")]
    assert len(main) == 3, [r["path"] for r in result["requests"]]
    work = tmp_path / "work"
    tokens = []
    for step in (0, 1):
        piece = next(p for p in scripted(step, work).said if isinstance(p, Reasoning))
        tokens.append(seal(KIMI, piece))
    last = main[2]
    assert [(i["id"], i.get("encrypted_content")) for i in _items(last, "reasoning")] == [
        ("rs_tr0_0", tokens[0]),
        ("rs_tr1_0", tokens[1]),
    ]
    (patch,) = _items(last, "custom_tool_call")
    (shell,) = _items(last, "function_call")
    assert (patch["id"], patch["call_id"]) == ("ctc_tr0_1", outbound(0, "m").call_id(0, None, "apply_patch"))
    assert (shell["id"], shell["call_id"]) == ("fc_tr1_2", outbound(1, "m").call_id(0, None, "exec_command"))
    answered = {
        i["call_id"]
        for kind in ("custom_tool_call_output", "function_call_output")
        for i in _items(last, kind)
    }
    assert answered == {patch["call_id"], shell["call_id"]}
    events = [json.loads(line) for line in result["stdout"].splitlines() if line.startswith("{")]
    shown = [e["item"] for e in events if e.get("type") == "item.completed"]
    assert [i["text"] for i in shown if i["type"] == "reasoning"] == [
        f"Step {k}: thinking." for k in range(3)
    ]
    assert [i["text"] for i in shown if i["type"] == "agent_message"] == [
        "Now reading.",
        "notes.txt holds hello.",
    ]
    (usage,) = [e["usage"] for e in events if e.get("type") == "turn.completed"]
    assert (usage["input_tokens"], usage["cached_input_tokens"], usage["output_tokens"]) == (600, 450, 25)

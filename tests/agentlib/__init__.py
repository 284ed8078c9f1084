"""The test library that drives the real coding agent CLIs (Claude Code, Codex CLI, opencode, Gemini
CLI), installed from npm at pinned versions, offline in a network namespace, against the provider double.

    from agentlib import run_agent

    run = run_agent("codex", tmp_path)         # AgentUnavailable when it cannot run here
    run.check_completed()                      # exit 0, notes.txt holds hello, nothing refused or leaked
    bodies = [r.body for r in run.requests]    # every request, bytes as sent (r.raw), headers, path

In tests, the fixture ``real_agent`` (from :mod:`agentlib.fixtures`) does the same and skips with the
reason when the agent cannot run here (fails instead under ``CI=true``); ``agent_capture(name)`` reads
the captured run kept in ``tests/data/agents/`` for tests that need no npm. See docs/real-agents.md.
"""

from agentlib.captures import CAPTURES, Capture, load_capture, save_capture
from agentlib.harness import (
    AGENTS,
    WIRES,
    AgentRun,
    Middle,
    SentRequest,
    base_url,
    isolation,
    run_agent,
    run_in_namespace,
)
from agentlib.install import PINS, AgentUnavailable, ensure

__all__ = [
    "AGENTS",
    "CAPTURES",
    "PINS",
    "WIRES",
    "AgentRun",
    "AgentUnavailable",
    "Capture",
    "Middle",
    "SentRequest",
    "base_url",
    "ensure",
    "isolation",
    "load_capture",
    "run_agent",
    "run_in_namespace",
    "save_capture",
]

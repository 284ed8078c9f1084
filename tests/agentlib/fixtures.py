"""Pytest fixtures for the real agents (a plugin the suite's conftest loads).

* ``real_agent(name, **kw)``: runs the agent (:func:`agentlib.run_agent`) in a fresh temporary folder
  and returns its :class:`~agentlib.AgentRun`; when it cannot run here (no npm, an install that failed, no
  network namespace) the test is skipped with the reason, or fails under ``CI=true``, where npm is
  expected and a quiet skip would hide a broken install.
* ``agent_capture(name)``: the kept run in ``tests/data/agents/`` (no npm needed).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlib.captures import Capture, load_capture
from agentlib.harness import AgentRun, run_agent
from agentlib.install import AgentUnavailable


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Skip the test with ``reason``, or fail it under CI."""
    if in_ci():
        pytest.fail(f"real agent unavailable under CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def real_agent(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., AgentRun]:
    def run(agent: str, **kwargs: Any) -> AgentRun:
        tmp = Path(tmp_path_factory.mktemp(f"agent-{agent}"))
        try:
            return run_agent(agent, tmp, **kwargs)
        except AgentUnavailable as exc:
            unavailable(str(exc))
            raise  # unreachable: skip and fail raise

    return run


@pytest.fixture
def agent_capture() -> Callable[[str], Capture]:
    return load_capture

"""Captured runs of the real agents, kept in ``tests/data/agents/<agent>.json`` for tests without npm.

Each file holds one run's every request (method, path, headers as the double recorded them, the body
text exactly as sent), what the double answered, the agent's pin and the wire. The keys in them are the
harness's fake ones. ``python scripts/agents.py capture [AGENT...]`` runs the agents again and
rewrites their files (after a pin changes).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlib.harness import AGENTS, WIRES, AgentRun, SentRequest, package_of, run_agent
from agentlib.install import PINS

CAPTURES = Path(__file__).resolve().parent.parent / "data" / "agents"


@dataclass(frozen=True, slots=True)
class Capture:
    """One kept run: ``agent`` (one of AGENTS), its npm ``pin``, its ``wire``, and its requests."""

    agent: str
    pin: str
    wire: str
    work: str
    requests: tuple[SentRequest, ...]

    @property
    def main(self) -> list[SentRequest]:
        return [r for r in self.requests if r.role.startswith("main")]

    @property
    def bodies(self) -> list[Any]:
        """Every request body (parsed), in the order sent."""
        return [r.body for r in self.requests if r.raw]


def _pin(agent: str) -> str:
    p = PINS[package_of(agent)]
    return f"{p.package}@{p.version}"


def save_capture(run: AgentRun, where: Path = CAPTURES) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    data = {
        "agent": run.agent,
        "pin": _pin(run.agent),
        "wire": run.wire,
        "work": str(run.work),
        "requests": [r.to_json() for r in run.requests],
    }
    path = where / f"{run.agent}.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _capture(data: Mapping[str, Any]) -> Capture:
    requests = tuple(SentRequest.from_json(r) for r in data["requests"])
    return Capture(str(data["agent"]), str(data["pin"]), str(data["wire"]), str(data["work"]), requests)


def load_capture(agent: str, where: Path = CAPTURES) -> Capture:
    """The kept run of ``agent``; FileNotFoundError names the file when it is absent."""
    if agent not in WIRES:
        raise KeyError(f"unknown agent {agent!r}; agents: {', '.join(AGENTS)}")
    path = where / f"{agent}.json"
    return _capture(json.loads(path.read_text(encoding="utf-8")))


def main(argv: list[str]) -> int:
    for agent in argv or list(AGENTS):
        # a fixed root, so a capture recorded again names the same paths (and none of this machine's)
        tmp = Path(tempfile.gettempdir()) / f"toolreplay-{agent}-run"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        run = run_agent(agent, tmp)
        run.check_completed()
        print(f"{agent}: {len(run.requests)} requests in {run.seconds:.1f} s -> {save_capture(run)}")
    return 0

"""Run one real agent CLI, offline, in its own network namespace, against the provider double.

``run_agent("claude", tmp_path)`` installs the agent if needed (see :mod:`agentlib.install`), writes
its configuration under ``tmp_path/home``, and runs ``tests/agentlib/runner.py`` under ``unshare -n``:
inside, only loopback exists; the double listens on ``127.0.0.1:18080`` and answers with the
:mod:`agentlib.responders` plan; the agent runs in ``tmp_path/work``. The result, an :class:`AgentRun`,
holds every request the agent sent (bytes as received, headers, path), what the double answered, the
agent's output, and the namespace's count of attempts to reach anything but loopback.

``via=Middle(argv, port)`` starts another program inside the same namespace first (the proxy) and points
the agent at it instead of the double: ``{double}`` in its arguments becomes the double's root URL.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from agentlib.agents import Launch, setup
from agentlib.install import PINS, AgentUnavailable, ensure
from agentlib.runner import DOUBLE_PORT

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
#: The agents the harness runs: one per agent and wire (opencode speaks two).
AGENTS = ("claude", "codex", "opencode-chat", "opencode-anthropic", "gemini")
#: Each agent's wire, and what its base URL adds to a server's root (the path its SDK appends after).
WIRES: dict[str, tuple[str, str]] = {
    "claude": ("anthropic", ""),
    "codex": ("openai-responses", "/v1"),
    "opencode-chat": ("openai-chat", "/v1"),
    "opencode-anthropic": ("anthropic", "/v1"),
    "gemini": ("gemini", ""),
}
#: Seconds an agent gets to finish the task (a run takes 1 to 8 s on two cores).
TIMEOUT = 120.0
#: The counters that go up when the agent tries to reach an address other than loopback.
OUTSIDE = ("Ip:OutNoRoutes", "Ip6OutNoRoutes")

#: The folder the agent works in, inside the run's temporary root ("task": a kept capture names no
#: folder that reads as a path of the machine it was recorded on).
TASK_DIR = "task"


def package_of(agent: str) -> str:
    """The install pin's key of an agent name (``opencode-chat`` is the opencode package)."""
    return agent.split("-")[0]


def base_url(agent: str, root: str = f"http://127.0.0.1:{DOUBLE_PORT}") -> str:
    """The base URL that points ``agent`` at a server whose root is ``root``."""
    return root.rstrip("/") + WIRES[agent][1]


@dataclass(frozen=True, slots=True)
class Middle:
    """A program to put between the agent and the double, started in the namespace (the proxy).
    ``{double}`` in ``argv`` is replaced by the double's root URL; the agent is pointed at
    ``http://127.0.0.1:{port}``; the run waits until ``port`` listens."""

    argv: Sequence[str]
    port: int
    env: Mapping[str, str] = field(default_factory=lambda: {})


@dataclass(frozen=True, slots=True)
class SentRequest:
    """One request an agent sent, as the double received it. ``headers``: lower-case names, key values
    redacted by the double; ``raw``: the body's bytes exactly; ``role``: ``main K`` (the main loop,
    carrying K tool results) or ``side`` (a title, a summary, a probe), as the responder read it."""

    index: int
    method: str
    path: str
    wire: str | None
    headers: Mapping[str, str]
    raw: bytes
    status: int
    rejected: str | None
    stream: bool
    role: str = ""

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None

    def to_json(self) -> dict[str, Any]:
        try:
            text: dict[str, str] = {"body_text": self.raw.decode("utf-8")}
        except UnicodeDecodeError:
            text = {"body_base64": base64.b64encode(self.raw).decode("ascii")}
        keep = ("index", "method", "path", "wire", "status", "rejected", "stream", "role")
        return {**{k: getattr(self, k) for k in keep}, "headers": dict(self.headers), **text}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SentRequest:
        if "body_text" in d:
            raw = str(d["body_text"]).encode("utf-8")
        else:
            raw = base64.b64decode(d.get("body_base64") or d.get("raw") or "")
        return cls(
            int(d.get("index", 0)),
            str(d["method"]),
            str(d["path"]),
            d.get("wire"),
            dict(d.get("headers") or {}),
            raw,
            int(d.get("status", 0)),
            d.get("rejected"),
            bool(d.get("stream")),
            str(d.get("role", "")),
        )


@dataclass(frozen=True, slots=True)
class AgentRun:
    """What one run of a real agent did."""

    agent: str
    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    requests: tuple[SentRequest, ...]
    net: Mapping[str, int]
    work: Path
    home: Path
    via_output: str = ""
    #: Why the middle program (``via``) did not serve, when it did not.
    via_error: str = ""

    @property
    def wire(self) -> str:
        return WIRES[self.agent][0] if self.agent in WIRES else ""

    @property
    def notes(self) -> str | None:
        """The text of the task's file, None when the agent did not make it."""
        path = self.work / "notes.txt"
        return path.read_text(encoding="utf-8") if path.is_file() else None

    @property
    def outside(self) -> int:
        """Attempts to reach an address other than loopback (DNS queries included)."""
        return sum(self.net.get(k, 0) for k in OUTSIDE)

    @property
    def main(self) -> list[SentRequest]:
        return [r for r in self.requests if r.role.startswith("main")]

    @property
    def rejected(self) -> list[SentRequest]:
        return [r for r in self.requests if r.rejected or r.status >= 400]

    def report(self) -> str:
        """Everything needed to see why a run failed, for an assertion message."""
        lines = [
            f"{self.agent}: exit {self.exit_code} after {self.seconds:.1f} s; net counters {dict(self.net)}"
        ]
        for r in self.requests:
            lines.append(f"  {r.index} {r.method} {r.path} -> {r.status} [{r.role}] {r.rejected or ''}")
        lines += ["stdout:", self.stdout[-3000:], "stderr:", self.stderr[-3000:]]
        if self.via_output:
            lines += ["middle:", self.via_output[-3000:]]
        return "\n".join(lines)

    def check_completed(self) -> None:
        """Raise AssertionError (with :meth:`report`) unless the run did the task cleanly: exit 0, the
        file holds hello, every request accepted, nothing tried beyond loopback, the main loop seen."""
        problems = []
        if self.exit_code is None:
            problems.append("no exit within the timeout")
        elif self.exit_code != 0:
            problems.append(f"exit code {self.exit_code}")
        if (self.notes or "").strip() != "hello":
            problems.append(f"notes.txt holds {self.notes!r}")
        if self.rejected:
            problems.append(f"{len(self.rejected)} request(s) refused by the double")
        if self.via_error:
            problems.append(self.via_error)
        if self.outside:
            problems.append(f"{self.outside} attempt(s) to reach beyond loopback")
        if len(self.main) < 3:
            problems.append(f"{len(self.main)} main-loop request(s), 3 expected (call, call, words)")
        if problems:
            raise AssertionError("; ".join(problems) + "\n" + self.report())


@cache
def isolation() -> tuple[tuple[str, ...], bool]:
    """The command prefix that makes a new network namespace here, and whether the runner must drop
    back from root to the caller (through sudo); AgentUnavailable says why there is none."""
    if shutil.which("unshare") is None:
        raise AgentUnavailable("unshare (util-linux) is not on PATH: the agents run in a network namespace")
    if os.geteuid() == 0:
        return ("unshare", "-n"), False
    probe = subprocess.run(["unshare", "-r", "-n", "true"], capture_output=True)
    if probe.returncode == 0:
        return ("unshare", "-r", "-n"), False
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        return ("sudo", "-n", "unshare", "-n"), True
    raise AgentUnavailable(
        "no network namespace: not root, user namespaces refused, no password-less sudo "
        f"({probe.stderr.decode(errors='replace').strip()})"
    )


def _spec(
    launch: Launch,
    agent: str,
    tmp: Path,
    via: Middle | None,
    responder: str,
    timeout: float,
    responder_args: Sequence[str] = (),
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "argv": launch.argv,
        "env": launch.env,
        "cwd": launch.cwd,
        "timeout": timeout,
        "responder": responder,
        "responder_args": [agent, str(tmp / TASK_DIR), *responder_args],
        "result": str(tmp / "result.json"),
        "sys_path": [str(HERE.parent), str(ROOT / "src")],
    }
    if via is not None:
        double = f"http://127.0.0.1:{DOUBLE_PORT}"
        argv = [a.replace("{double}", double) for a in via.argv]
        spec.update(via=argv, via_port=via.port, via_env=dict(via.env))
    return spec


def _folders(tmp: Path) -> tuple[Path, Path]:
    home, work = tmp / "home", tmp / TASK_DIR
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    return home, work


def run_agent(
    agent: str,
    tmp: Path,
    *,
    via: Middle | None = None,
    responder: str = "agentlib.responders:for_agent",
    responder_args: Sequence[str] = (),
    args: Sequence[str] = (),
    timeout: float = TIMEOUT,
) -> AgentRun:
    """Run ``agent`` (one of :data:`AGENTS`) on the task in ``tmp/work``; AgentUnavailable when it
    cannot run here. ``responder``: ``module:factory``, called with (agent, work folder,
    ``*responder_args``) in the namespace, returning the double's responder. ``args``: more arguments
    for the agent's command line (``--continue``: a later turn of the conversation the agent keeps under
    ``tmp/home``, which a run in the same ``tmp`` finds)."""
    if agent not in WIRES:
        raise KeyError(f"unknown agent {agent!r}; agents: {', '.join(AGENTS)}")
    ensure(package_of(agent))
    prefix = isolation()  # before anything is written: no namespace, no run
    home, work = _folders(tmp)
    root = f"http://127.0.0.1:{via.port if via else DOUBLE_PORT}"
    launch = setup(agent, base_url(agent, root), home, work)
    launch = Launch([*launch.argv, *args], launch.env, launch.cwd)
    spec = _spec(launch, agent, tmp, via, responder, timeout, responder_args)
    return _execute(prefix, spec, agent, tmp)


def run_in_namespace(
    argv: Sequence[str],
    tmp: Path,
    *,
    agent: str = "claude",
    env: Mapping[str, str] | None = None,
    via: Middle | None = None,
    responder: str = "agentlib.responders:for_agent",
    timeout: float = TIMEOUT,
) -> AgentRun:
    """Run any command the way :func:`run_agent` runs an agent (same namespace, double and responder,
    as ``agent``'s plan; ``env``: its whole environment, by default only PATH and HOME)."""
    prefix = isolation()
    home, work = _folders(tmp)
    whole = dict(env) if env is not None else {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}
    launch = Launch(list(argv), whole, str(work))
    return _execute(prefix, _spec(launch, agent, tmp, via, responder, timeout), agent, tmp)


def _execute(prefix: tuple[tuple[str, ...], bool], spec: dict[str, Any], agent: str, tmp: Path) -> AgentRun:
    command, drop = prefix
    if drop:
        spec["drop_to"] = [os.getuid(), os.getgid()]
    spec_path = tmp / "spec.json"
    spec_path.write_text(json.dumps(spec, indent=1))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(spec["sys_path"])}
    cmd = [*command, sys.executable, str(HERE / "runner.py"), str(spec_path)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=spec["timeout"] + 60)
    result_path = tmp / "result.json"
    if not result_path.is_file():
        raise AssertionError(f"the runner wrote no result (exit {done.returncode}): {done.stderr[-3000:]}")
    return _read(agent, json.loads(result_path.read_text()), tmp)


def _read(agent: str, out: Mapping[str, Any], tmp: Path) -> AgentRun:
    roles = {int(k): str(role) for k, role in out.get("responder_log") or []}
    requests = tuple(
        SentRequest.from_json({**r, "index": k, "role": roles.get(k, "")})
        for k, r in enumerate(out.get("requests") or [])
    )
    before, after = out.get("net_before") or {}, out.get("net_after") or {}
    return AgentRun(
        agent,
        out.get("exit"),
        str(out.get("stdout", "")),
        str(out.get("stderr", "")),
        float(out.get("seconds", 0.0)),
        requests,
        {k: int(after.get(k, 0)) - int(before.get(k, 0)) for k in after},
        tmp / TASK_DIR,
        tmp / "home",
        str(out.get("via_output", "")),
        str(out.get("via_error", "")),
    )


__all__ = [
    "AGENTS",
    "PINS",
    "AgentRun",
    "AgentUnavailable",
    "Middle",
    "SentRequest",
    "base_url",
    "isolation",
    "run_agent",
    "run_in_namespace",
]

"""The real agent CLIs, installed once from npm at their pinned versions into a cache folder.

Each agent gets its own npm prefix, ``<cache>/<package>@<version>`` (``@scope/name`` written
``scope+name``), with the npm cache inside it, so nothing is shared with the user's global npm set-up and a
second run on the same machine installs nothing. The cache is ``$TOOLREPLAY_AGENTS_CACHE``, else
``$XDG_CACHE_HOME/toolreplay/agents``, else ``~/.cache/toolreplay/agents``. A finished install leaves a
``.installed`` mark; a lock file keeps two test workers from installing the same agent at once.

``python scripts/agents.py install`` installs the four agents and says where they are.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Pin:
    """One agent CLI from npm: its package, exact version and the command its package installs."""

    package: str
    version: str
    command: str

    @property
    def folder(self) -> str:
        return f"{self.package.removeprefix('@').replace('/', '+')}@{self.version}"


PINS: dict[str, Pin] = {
    "claude": Pin("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": Pin("@openai/codex", "0.171.0", "codex"),
    "opencode": Pin("opencode-ai", "1.18.33", "opencode"),
    "gemini": Pin("@google/gemini-cli", "0.61.0", "gemini"),
}
#: An install that takes longer than this is a failure (four agents take ~20 s each on a fast line).
INSTALL_TIMEOUT = 600.0


class AgentUnavailable(RuntimeError):
    """An agent that cannot be installed here (no npm, no network to the registry, a failed install)."""


def cache_root() -> Path:
    if os.environ.get("TOOLREPLAY_AGENTS_CACHE"):
        return Path(os.environ["TOOLREPLAY_AGENTS_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolreplay" / "agents"


def prefix_of(agent: str) -> Path:
    return cache_root() / PINS[agent].folder


def binary_of(agent: str) -> Path:
    return prefix_of(agent) / "node_modules" / ".bin" / PINS[agent].command


def installed(agent: str) -> bool:
    return (prefix_of(agent) / ".installed").is_file() and binary_of(agent).exists()


def _npm_install(pin: Pin, prefix: Path, npm: str) -> None:
    # cwd is the prefix itself: run elsewhere, a folder named like the spec ("opencode-ai@1.18.33", the
    # cache's own) is taken by npm for a local package to install.
    cmd = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save"]
    cmd += ["--cache", str(prefix / ".npm"), "--loglevel=error", f"{pin.package}@{pin.version}"]
    try:
        done = subprocess.run(cmd, cwd=prefix, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AgentUnavailable(
            f"npm install {pin.package}@{pin.version}: no end after {INSTALL_TIMEOUT:.0f} s"
        ) from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise AgentUnavailable(
            f"npm install {pin.package}@{pin.version} failed (exit {done.returncode}): " + " | ".join(tail)
        )


def ensure(agent: str) -> Path:
    """The agent's command, installed first if it is not yet; AgentUnavailable says why it cannot be."""
    if agent not in PINS:
        raise KeyError(f"unknown agent {agent!r}; agents: {', '.join(PINS)}")
    if installed(agent):
        return binary_of(agent)
    npm = shutil.which("npm")
    if npm is None:
        raise AgentUnavailable("npm is not on PATH: the real agent CLIs are installed from npm")
    prefix = prefix_of(agent)
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix.parent / f".{PINS[agent].folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed(agent):
            _npm_install(PINS[agent], prefix, npm)
            if not binary_of(agent).exists():
                raise AgentUnavailable(
                    f"npm installed {PINS[agent].package} but {binary_of(agent)} is absent"
                )
            (prefix / ".installed").write_text(f"{PINS[agent].package}@{PINS[agent].version}\n")
    return binary_of(agent)


def main(argv: list[str]) -> int:
    agents = [a for a in argv if not a.startswith("-")] or list(PINS)
    for agent in agents:
        start = time.monotonic()
        try:
            path = ensure(agent)
        except AgentUnavailable as exc:
            print(f"{agent}: {exc}", file=sys.stderr)
            return 1
        print(f"{agent}: {path} ({time.monotonic() - start:.1f} s)")
    return 0

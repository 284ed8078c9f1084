"""Every README console example runs as a newcomer would run it, and prints what the README shows.

The test does what the README says: it starts each `toolreplay double` a block names (on a free port
instead of the README's, substituted everywhere), then runs every other `$ ` command of every console
block in order, in one shell environment of its own (fresh data and config directories, no key), from a
directory holding the repository's `examples/`. Each command's output (stdout and stderr) must match the
lines the README shows under it, allowing for timestamps (any ISO time matches any other), a line `...`
(any number of lines) and a line ending in `...` (a prefix). The Python example that runs a turn runs
against the double too.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")

pytestmark = pytest.mark.slow


@dataclass
class Example:
    command: str
    expected: list[str] = field(default_factory=list)


def console_blocks(text: str) -> Iterator[list[Example]]:
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        examples: list[Example] = []
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("$ "):
                command = line[2:]
                while command.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    command = command.rstrip()[:-1] + " " + lines[i].strip()
                examples.append(Example(command))
            elif examples:
                examples[-1].expected.append(line)
            i += 1
        yield examples


def matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` (with ``...`` lines and ``...`` endings) against ``actual``, times made equal."""
    exp = [TIME.sub("<time>", e) for e in expected]
    act = [TIME.sub("<time>", a.rstrip()) for a in actual]
    while act and not act[-1]:
        act.pop()

    def at(i: int, j: int) -> bool:
        if i == len(exp):
            return j == len(act)
        if exp[i].strip() == "...":
            return any(at(i + 1, k) for k in range(j, len(act) + 1))
        if j == len(act):
            return False
        line = exp[i].rstrip()
        ok = act[j].startswith(line[:-3]) if line.endswith("...") else act[j] == line
        return ok and at(i + 1, j + 1)

    return at(0, 0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Session:
    """The newcomer's two terminals: doubles in the background, commands in the foreground."""

    def __init__(self, tmp: Path) -> None:
        self.cwd = tmp / "work"
        self.cwd.mkdir()
        (self.cwd / "examples").symlink_to(ROOT / "examples")
        self.data = tmp / "data"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_API_KEY") and not k.startswith("TOOLREPLAY")
        }
        self.env.update(
            XDG_DATA_HOME=str(self.data),
            XDG_CONFIG_HOME=str(tmp / "config"),
            PYTHONUNBUFFERED="1",
            COLUMNS="80",
            TERM="dumb",
            NO_COLOR="1",
        )
        self.env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), self.env.get("PYTHONPATH", "")])
        self.ports: dict[str, str] = {}
        self.doubles: list[subprocess.Popen[str]] = []
        self.tool = f"{shlex.quote(sys.executable)} -m toolreplay"

    def local(self, text: str) -> str:
        for readme_port, port in self.ports.items():
            text = text.replace(f"127.0.0.1:{readme_port}", f"127.0.0.1:{port}")
        return text

    def shown(self, text: str) -> str:
        """Output as the README shows it: its ports and its data directory."""
        for readme_port, port in self.ports.items():
            text = text.replace(f"127.0.0.1:{port}", f"127.0.0.1:{readme_port}")
        return text.replace(str(self.data), "~/.local/share")

    def start_double(self, example: Example) -> None:
        readme_port = re.search(r"--port (\d+)", example.command)
        assert readme_port, "a README double names its port, so the commands after it can"
        self.ports[readme_port.group(1)] = str(free_port())
        command = self.local(example.command).replace("toolreplay", self.tool, 1)
        command = command.replace(
            f"--port {readme_port.group(1)}", f"--port {self.ports[readme_port.group(1)]}"
        )
        # exec: the shell becomes the double, so terminating the process stops the server itself
        proc = subprocess.Popen(
            "exec " + command,
            shell=True,
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # the second terminal: its request log is not compared
            text=True,
        )
        self.doubles.append(proc)
        assert proc.stdout is not None
        banner: list[str] = []
        for line in proc.stdout:
            banner.append(self.shown(line.rstrip("\n")))
            if line.startswith("Ctrl-C"):
                break
        assert matches(example.expected, banner), "\n".join(["$ " + example.command, *banner])

    def run(self, example: Example) -> None:
        command = self.local(example.command)
        command = re.sub(r"(^|&&|\|)\s*toolreplay\b", lambda m: f"{m.group(1)} {self.tool}", command)
        done = subprocess.run(
            command,
            shell=True,
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=300,
        )
        actual = self.shown(done.stdout).splitlines()
        shown = "\n".join(["$ " + example.command, *actual])
        assert done.returncode == 0, shown
        assert matches(example.expected, actual), shown

    def close(self) -> None:
        for proc in self.doubles:
            proc.terminate()
            proc.communicate(timeout=10)


def test_the_matcher_allows_only_times_and_elisions() -> None:
    assert matches(["a 2026-01-01T00:00:00Z", "...", "z"], ["a 2027-02-02T11:11:11Z", "b", "c", "z"])
    assert matches(["{...", "x"], ["{abc", "x"])
    assert not matches(["a", "b"], ["a", "c"])
    assert not matches(["a"], ["a", "extra"])
    assert not matches(["...", "z"], ["a", "b"])


@pytest.mark.slow
def test_every_readme_console_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    session = Session(tmp_path)
    ran = 0
    try:
        for block in console_blocks(README):
            for example in block:
                if example.command.startswith("toolreplay double"):
                    session.start_double(example)
                else:
                    session.run(example)
                    ran += 1
        python = re.search(r"```python\n(from toolreplay import run_turn.*?)```", README, re.S)
        assert python, "the README's run_turn example"
        code = session.local(python.group(1))
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=session.cwd, env=session.env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        shown = re.search(r"# prints: (.*)", python.group(1))
        assert shown and done.stdout.strip() == shown.group(1).strip()
    finally:
        session.close()
    assert ran >= 15 and len(session.doubles) == 2

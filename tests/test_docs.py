"""The documentation: vessel pages generated from the table, the site builds with warnings as errors, and
the quickstart's console examples run against `toolreplay double` as written."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from test_readme_examples import Session, console_blocks

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> object:
    spec = importlib.util.spec_from_file_location("vessel_docs", ROOT / "scripts" / "vessel_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_docs_are_current() -> None:
    """The vessel pages, and every list of wires or vessels in the README, mkdocs.yml and docs/, are what
    scripts/vessel_docs.py writes from the registry and the vessel table now."""
    gen = _generator()
    assert gen.stale() == [], "run python scripts/vessel_docs.py"  # type: ignore[attr-defined]
    from toolreplay._vessels import BUILTIN

    made = gen.generated()  # type: ignore[attr-defined]
    pages = {p for p in made if p.startswith("docs/vessels/")}
    assert pages == {f"docs/vessels/{name}.md" for name in BUILTIN} | {"docs/vessels/index.md"}
    assert all(f"vessels/{name}.md" in made["mkdocs.yml"] for name in BUILTIN), "each page is in the nav"


def test_a_stale_generated_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = _generator()
    for rel in ("README.md", "mkdocs.yml", "docs", "examples"):
        src = ROOT / rel
        if src.is_dir():
            shutil.copytree(src, tmp_path / rel)
        else:
            shutil.copy(src, tmp_path / rel)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "OUT", tmp_path / "docs" / "vessels")
    assert gen.stale() == []  # type: ignore[attr-defined]
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("| [glm](", "| [zhipu]("), encoding="utf-8")
    (tmp_path / "docs" / "vessels" / "gone.md").write_text("# gone\n", encoding="utf-8")
    assert gen.stale() == ["README.md", "docs/vessels/gone.md"]  # type: ignore[attr-defined]
    assert gen.main([]) == 0 and gen.stale() == []  # type: ignore[attr-defined]
    assert not (tmp_path / "docs" / "vessels" / "gone.md").exists()


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (the dev extra installs it)")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "vessels" / "kimi" / "index.html").is_file()
    api = (tmp_path / "site" / "python-api" / "index.html").read_text(encoding="utf-8")
    assert "ProviderDouble" in api and "run_turn" in api  # the reference is generated from the docstrings


@pytest.mark.slow
def test_the_quickstart_runs_as_written(tmp_path: Path) -> None:
    session = Session(tmp_path)
    ran = 0
    try:
        text = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
        for block in console_blocks(text):
            for example in block:
                if example.command.startswith("toolreplay double"):
                    session.start_double(example)
                else:
                    session.run(example)
                    ran += 1
    finally:
        session.close()
    assert ran == 4 and len(session.doubles) == 1


def test_every_vessel_pages_example_runs_against_the_double(tmp_path: Path) -> None:
    """Each vessel page's "Try it" command, copied as written, gets the echo's call answered by the real
    coop tool (the claude page says why the double cannot stand in for the Claude Code CLI)."""
    from toolreplay._cli import cli
    from toolreplay._vessels import BUILTIN
    from toolreplay.testing import ProviderDouble
    from toolreplay.testing.playbook import Playbook
    from toolreplay.wires import get_wire

    pages = sorted(p for p in (ROOT / "docs" / "vessels").glob("*.md") if p.name != "index.md")
    ran = []
    with ProviderDouble(responder=Playbook.of([])) as double:  # what `toolreplay double` serves
        for page in pages:
            found = re.search(r"## Try it\n.*?```sh\n(.*?)\n```", page.read_text(encoding="utf-8"), re.S)
            assert found, f"{page}: no Try it example"
            args = shlex.split(found.group(1).replace("http://127.0.0.1:8765", double.url))
            assert args[0] == "toolreplay", page
            if get_wire(BUILTIN[page.stem].wire).http is None:  # a vessel a program drives (claude)
                assert "-u" not in args and "double cannot stand" in page.read_text(encoding="utf-8")
                continue
            res = CliRunner().invoke(cli, [*args[1:], "--db", str(tmp_path / "t.db")])
            assert res.exit_code == 0, (page.name, res.output)
            assert "coop answered: no open todos" in res.output, (page.name, res.output)
            ran.append(page.stem)
    assert sorted(ran) == sorted(n for n, v in BUILTIN.items() if get_wire(v.wire).http is not None)

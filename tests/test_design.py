"""docs/design.md stays the document the code cites: every "design N" names one of its sections."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "design.md"
CITED = re.compile(r"\bdesign (\d+)\b")
# The old spelling, from before the decisions lived in the repository.
OLD = re.compile(r"\bDECISIONS \d+")


def _sections() -> dict[int, str]:
    found = re.findall(r"^### (\d+)\. (.+)$", DESIGN.read_text(encoding="utf-8"), re.M)
    return {int(n): title for n, title in found}


def _texts() -> list[Path]:
    files = [ROOT / "README.md", DESIGN]
    for folder in ("src", "tests", "bench", "scripts", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md", ".toml", ".sh") and "__pycache__" not in path.parts:
                files.append(path)
    return files


def test_sections_are_numbered_in_order_without_gaps() -> None:
    numbers = list(_sections())
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) >= 19  # the behaviour decisions, then the shape of the code


def test_every_design_citation_resolves() -> None:
    sections = _sections()
    bad: list[str] = []
    for path in _texts():
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in CITED.finditer(text):
            if int(m.group(1)) not in sections:
                line = text.count("\n", 0, m.start()) + 1
                bad.append(
                    f"{path.relative_to(ROOT)}:{line}: {m.group(0)} is not a section of docs/design.md"
                )
        for m in OLD.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{path.relative_to(ROOT)}:{line}: cite {m.group(0)!r} as 'design N' (docs/design.md)")
    assert not bad, "\n".join(bad)


def test_the_citations_are_used() -> None:
    # at least the decisions the code has always cited are still cited (a sweep that dropped them all
    # would make the test above pass vacuously)
    cited = {int(n) for p in _texts() if p != DESIGN for n in CITED.findall(p.read_text(encoding="utf-8"))}
    assert {1, 2, 4, 6, 8, 9, 10, 11, 12, 13} <= cited


def test_the_readme_architecture_names_every_module_and_folder() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Architecture")
    begin = readme.index("```\nsrc/toolreplay/", start)
    block = readme[begin : readme.index("\n```\n", begin)]
    pkg = ROOT / "src" / "toolreplay"
    present = {p.name + ("/" if p.is_dir() else "") for p in pkg.iterdir() if p.name != "__pycache__"}
    present -= {"__main__.py", "py.typed", "data/"}  # the entry point and the package data
    named = set(re.findall(r"(?<![\w.])(_?[a-z_]+(?:\.py|/))", block)) - {"src/", "toolreplay/"}
    named -= {"tests/", "bench/", "docs/", "scripts/", "dev.py", "http.py", "claude.py", "core.py"}
    named -= {"sqlite.py", "postgres.py", "window.py", "board.py", "replies.py"}
    assert present - named == set(), "modules or folders the README's architecture leaves out"
    assert named - present == set(), "names in the README's architecture that are not in src/toolreplay"

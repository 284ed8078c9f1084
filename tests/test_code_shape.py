"""The shape the code keeps (issue 11), checked so it stays:

* no module in ``src/`` over 500 lines, no function over 50 (its body, the docstring left out);
* no function, method or class in ``src/`` over radon's grade C (cyclomatic complexity 20 at most);
* no module outside ``wires/`` (and the vessel table, which is data) compares with a wire's name, keys a
  table by wire names, or imports a wire's private helper: what a wire knows lives in its package;
* no file of the repository cites the shared material by a path relative to the checkout: the project
  stands alone (tests and scripts name it by ``$TOOLREPLAY_SHARED``).

Each check reports every offender with its place, so one run lists all there is to mend. ``PENDING``
names the few offenders whose fix is under way elsewhere; the checks fail on any other offender, and on a
pending one that is fixed, so the list can only shrink.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from toolreplay.wires import wire_names

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "toolreplay"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 50
#: radon's grade C ends at 20; D starts at 21.
MAX_COMPLEXITY = 20
#: Offenders whose fix is under way elsewhere (none now): the checks fail on any other offender, and on a
#: pending one once it is fixed, so the list can only shrink.
PENDING: frozenset[str] = frozenset()
#: Built-in wire names, as a literal in code outside wires/ would spell them.
WIRES = frozenset(wire_names())


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the function's end."""
    body = fn.body
    first = body[0]
    is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if is_doc and isinstance(first.value.value, str) and len(body) > 1:  # type: ignore[attr-defined]
        first = body[1]
    return (fn.end_lineno or first.lineno) - first.lineno + 1


def _size_offenders() -> dict[str, str]:
    over: dict[str, str] = {}
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            over[f"{_rel(path)}: module"] = f"{_rel(path)}: {lines} lines (at most {MAX_MODULE_LINES})"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _body_lines(node)
                if n > MAX_FUNCTION_LINES:
                    why = f"{_rel(path)}:{node.lineno} {node.name}: {n} lines (at most 50)"
                    over[f"{_rel(path)}: {node.name}"] = why
    return over


def test_modules_and_functions_stay_short() -> None:
    over = _size_offenders()
    new = [why for key, why in over.items() if key not in PENDING]
    assert not new, "\n".join(new)
    # a pending module or function now within the limits must leave PENDING
    fixed = sorted(k for k in PENDING if k not in over and not _complex(k))
    assert not fixed, "fixed, so take them out of PENDING: " + ", ".join(fixed)


def _complexity_offenders() -> dict[str, str]:
    radon = pytest.importorskip("radon.complexity")  # the dev extra has it
    over: dict[str, str] = {}
    for path in _modules():
        for block in radon.cc_visit(path.read_text(encoding="utf-8")):
            if block.complexity > MAX_COMPLEXITY:
                grade = radon.cc_rank(block.complexity)
                why = f"{_rel(path)}:{block.lineno} {block.fullname}: {block.complexity} ({grade})"
                over[f"{_rel(path)}: {block.name}"] = why
    return over


def _complex(key: str) -> bool:
    return key in _complexity_offenders()


def test_no_block_is_more_complex_than_grade_c() -> None:
    new = [why for key, why in _complexity_offenders().items() if key not in PENDING]
    assert not new, "\n".join(new)


def _wire_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in WIRES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(isinstance(e, ast.Constant) and e.value in WIRES for e in node.elts)
    return False


def _wire_knowledge(node: ast.AST) -> str | None:
    """What ``node`` knows about particular wires that only the wire should know, or None."""
    if isinstance(node, ast.Compare) and any(map(_wire_literal, [node.left, *node.comparators])):
        return "compares with a wire name"
    if isinstance(node, ast.Dict) and any(k is not None and _wire_literal(k) for k in node.keys):
        return "a table keyed by wire names"
    if isinstance(node, ast.match_case) and _wire_literal(getattr(node.pattern, "value", ast.Constant(0))):
        return "matches a wire name"
    if isinstance(node, ast.ImportFrom) and node.module:
        names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        private = [m for m in names if m.startswith("toolreplay.wires.") and "._" in m[len("toolreplay") :]]
        if private:
            return f"imports a wire's private helper ({private[0]})"
    return None


def test_wire_knowledge_stays_in_the_wire_packages() -> None:
    found: list[str] = []
    for path in _modules():
        rel = path.relative_to(SRC)
        # a wire's package knows its wire; the shared wire modules (wires/common.py...) know none (the
        # registry, wires/__init__.py, lists them all)
        in_package = rel.parts[0] == "wires" and len(rel.parts) > 2
        if in_package or rel.as_posix() == "wires/__init__.py" or rel.name == "_vessels.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            what = _wire_knowledge(node)
            if what:
                found.append(f"{_rel(path)}:{getattr(node, 'lineno', '?')}: {what}")
    assert not found, "\n".join(found)


def test_the_checks_above_can_fail() -> None:
    tree = ast.parse('if wire == "gemini":\n    pass\nfrom toolreplay.wires._rules import Ids\n')
    assert sorted(w for n in ast.walk(tree) if (w := _wire_knowledge(n))) == [
        "compares with a wire name",
        "imports a wire's private helper (toolreplay.wires._rules)",
    ]
    long_fn = ast.parse("def f():\n    '''doc'''\n" + "    x = 1\n" * 51).body[0]
    assert isinstance(long_fn, ast.FunctionDef) and _body_lines(long_fn) == 51


# The sibling directory a checkout's tests read, spelled relative to the checkout.
SIBLING = re.compile(r"\.\./shared\b")


def test_nothing_cites_the_shared_material_by_a_relative_path() -> None:
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    cited: list[str] = []
    for name in filter(None, listed):
        path = ROOT / name
        if name.startswith("wip/") or not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # a binary file (an image, a bundle)
            continue
        for m in SIBLING.finditer(text):
            cited.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}")
    assert not cited, "cite the shared material as $TOOLREPLAY_SHARED:\n" + "\n".join(cited)

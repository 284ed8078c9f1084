"""No circles in the imports (issue 23, design 20), counted the strict way, so no cycle hides:

* every ``import`` and ``from ... import`` counts, at module level, inside a function (a lazy import kept
  for start-up speed, design 31) and under ``if TYPE_CHECKING:`` alike;
* ``from X import name`` is an edge to the module ``X.name`` when there is one, else to ``X``; the parent
  packages Python imports on the way are not counted (they are their own nodes);
* the package root's lazy export table (``_MODULES`` in ``toolreplay/__init__.py``) is an edge from the
  package to each module it names: ``toolreplay.render`` imports ``toolreplay._api`` on first use.

On that graph there is no cycle between modules, none between the top-level modules and packages of
toolreplay, and none between the wire packages (each package under ``wires/`` and ``testing/`` its own
node; a package's ``__main__`` belongs to its package). Three layering rules ride along: ``wires/``
imports nothing from ``testing/``, ``_cli/``, ``_store/`` or ``_loop/``; and ``_api`` (the public
functions) is a leaf, as httpx's is: nothing inside toolreplay imports it but the package's lazy export
table. A third: the importers and the doubles of ``testing/`` reach a wire only through its contract, never
inside its own package.

A failure prints each cycle as a chain of imports, each with the file and line that makes it. The layer
diagram of design 20 is checked against the same graph: each top-level module or package is on one line
of it, and imports only what is on the lines below.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
#: The package root's lazy export table: module -> the names it exports.
LAZY_TABLE = "_MODULES"
#: What ``wires/`` never imports (the wires sit below the doubles, the CLI, the store and the loop).
WIRES_NEVER = ("testing", "_cli", "_store", "_loop")

#: module -> {module it imports: (file, line) of the first import that says so}
Graph = dict[str, dict[str, tuple[str, int]]]


def modules(src: Path, package: str = "toolreplay") -> dict[str, Path]:
    """Every module of ``package`` under ``src``, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _targets(name: str, path: Path, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative: from the module's package, one level up per dot after the first
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        here = here[: len(here) - (node.level - 1)]
        base = ".".join(here + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def _lazy_table(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """The module names in the package root's lazy export table, with their lines."""
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == LAZY_TABLE and isinstance(node.value, ast.Dict):
            for key in node.value.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    yield key.value, key.lineno


#: The fields that hold statements: an import is a statement, so the walk need not enter an expression
#: (most of a module's nodes), and reads every import at any depth at a fifth of ``ast.walk``'s cost.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """Every statement of ``tree`` at any depth (in functions, classes, ``if``, ``try``, ``with``, ...)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        for name in _BODIES:
            stack.extend(getattr(node, name, ()))


def import_graph(src: Path = SRC, package: str = "toolreplay") -> Graph:
    """The import graph of ``package``, counted as this module's docstring says."""
    known = modules(src, package)
    graph: Graph = {m: {} for m in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        where = path.relative_to(src).as_posix()
        edges: list[tuple[str, int]] = []
        for node in _statements(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges.extend((t, node.lineno) for t in _targets(name, path, node, known))
        if name == package:
            edges.extend(_lazy_table(tree))
        for target, line in sorted(edges, key=lambda e: e[1]):
            if target in known and target != name:
                graph[name].setdefault(target, (where, line))
    return graph


@functools.cache
def source_graph() -> Graph:
    """toolreplay's own graph, parsed once for all the checks here."""
    return import_graph()


def top_level(module: str) -> str:
    """The top-level module or package of toolreplay that ``module`` belongs to."""
    return ".".join(module.split(".")[:2])


def wire_level(module: str) -> str:
    """As :func:`top_level`, with each package and module under ``wires/`` and ``testing/`` its own node."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] in ("wires", "testing"):
        return ".".join(parts[:3])
    return top_level(module)


def collapse(graph: Graph, node_of: Callable[[str], str]) -> Graph:
    """The graph between the nodes ``node_of`` makes of modules (one example import per edge)."""
    out: Graph = {}
    for module, edges in graph.items():
        source = out.setdefault(node_of(module), {})
        for target, where in edges.items():
            if node_of(target) != node_of(module):
                source.setdefault(node_of(target), where)
                out.setdefault(node_of(target), {})
    return out


def strongly_connected(graph: Graph) -> list[list[str]]:
    """The graph's strongly connected components of more than one node (each one or more cycles);
    Tarjan's algorithm, iterative so a deep graph cannot exhaust the stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def shortest_cycle(graph: Graph, component: list[str]) -> list[str]:
    """A shortest cycle inside ``component``, as the list of its nodes, the first one repeated last."""
    inside = set(component)
    best: list[str] = []
    for start in component:
        came: dict[str, str | None] = {start: None}
        queue = deque([start])
        while queue:
            v = queue.popleft()
            if start in graph[v]:
                path = [v]
                while (back := came[path[-1]]) is not None:
                    path.append(back)
                cycle = [*reversed(path), start]
                if not best or len(cycle) < len(best):
                    best = cycle
                break
            for w in sorted(graph[v]):
                if w in inside and w not in came:
                    came[w] = v
                    queue.append(w)
    return best


def chains(graph: Graph) -> list[str]:
    """One readable line per cycle of ``graph``: a shortest cycle of each strongly connected component,
    each import with the file and line that makes it, and the size of the whole component."""
    lines = []
    for component in strongly_connected(graph):
        cycle = shortest_cycle(graph, component)
        steps = [f"{a} -> {b} ({graph[a][b][0]}:{graph[a][b][1]})" for a, b in itertools.pairwise(cycle)]
        lines.append(f"{len(component)} in one cycle: " + ", ".join(steps))
    return lines


def _report(what: str, found: list[str]) -> str:
    text = f"{len(found)} {what} cycle(s), counting function-local and TYPE_CHECKING imports:\n  "
    text += "\n  ".join(found)
    print(text)
    return text


LEVELS: dict[str, Callable[[Graph], Graph]] = {
    "module": lambda g: g,
    "package": lambda g: collapse(g, top_level),
    "wire package": lambda g: collapse(g, wire_level),
}


@pytest.mark.parametrize("level", LEVELS)
def test_no_import_cycle(level: str) -> None:
    found = chains(LEVELS[level](source_graph()))
    assert not found, _report(level, found)


def test_wires_import_nothing_from_the_layers_above_them() -> None:
    graph = source_graph()
    above = tuple(f"toolreplay.{p}" for p in WIRES_NEVER)
    bad = [
        f"{src}:{line}: {module} imports {target}"
        for module, edges in graph.items()
        if module.startswith("toolreplay.wires")
        for target, (src, line) in edges.items()
        if target.startswith(above) and target.split(".")[1] in WIRES_NEVER
    ]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("outside", ["toolreplay._importers", "toolreplay.testing"])
def test_a_wire_is_reached_only_through_its_contract(outside: str) -> None:
    """Issue 23: the importers and the doubles (``testing/``) reach a wire through the registry and its
    ``Wire`` (``get_wire(name)``, its ``ImportForm``, its ``Double``) and the types the wires share
    (``wires/doubles.py``, ``wires/contract.py``), never inside the wire's own package
    (``wires.anthropic.request``, ``wires.openai_chat.errors``)."""
    graph = source_graph()
    packages = {p.name for p in (SRC / "toolreplay" / "wires").iterdir() if (p / "__init__.py").exists()}
    bad = [
        f"{src}:{line}: {module} imports {target}"
        for module, edges in graph.items()
        if (module == outside or module.startswith(outside + "."))
        and not module.startswith("toolreplay.wires")
        for target, (src, line) in edges.items()
        if target.startswith("toolreplay.wires.") and target.split(".")[2] in packages
    ]
    assert not bad, "\n".join(bad)


def test_api_is_a_leaf() -> None:
    graph = source_graph()
    importers = sorted(m for m, edges in graph.items() if "toolreplay._api" in edges)
    assert importers == ["toolreplay"], importers


def diagram_lines() -> list[set[str]]:
    """The names on each line of design 20's diagram, top line first (parenthesised notes left out)."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    start = text.index("```\n", text.index("### 20. Layers")) + 4
    block = text[start : text.index("```\n", start)]
    return [set(re.findall(r"[A-Za-z_]+", re.sub(r"\([^()]*\)", "", line))) for line in block.splitlines()]


def test_the_layer_diagram_tells_the_truth() -> None:
    graph = collapse(source_graph(), top_level)

    def short(node: str) -> str:
        return node.removeprefix("toolreplay.")

    lines = diagram_lines()
    line_of: dict[str, int] = {}
    for n, names in enumerate(lines):
        for name in names & {short(node) for node in graph}:
            assert name not in line_of, f"design 20 names {name} twice"
            line_of[name] = n
    missing = sorted({short(node) for node in graph} - set(line_of))
    assert not missing, f"design 20's diagram leaves out {missing}"
    upward = [
        f"{short(a)} (line {line_of[short(a)] + 1}) imports {short(b)} (line {line_of[short(b)] + 1}): "
        f"{src}:{line}"
        for a, edges in graph.items()
        for b, (src, line) in edges.items()
        if line_of[short(b)] <= line_of[short(a)]
    ]
    assert not upward, "design 20's diagram: an import that does not go down:\n" + "\n".join(upward)


def test_the_count_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The counting itself: a cycle closed only by a function-local import, one closed only under
    TYPE_CHECKING, one through a relative import and one through a lazy export table are all found,
    and printed as chains; parents imported on the way are not edges."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": '_MODULES = {"pkg.a": ("thing",)}\n',
        "a.py": "import pkg.b\n",
        "b.py": "def f():\n    from pkg import a\n",  # pkg.a, a module: closes a <-> b
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.d import X\n",
        "d.py": "from pkg.c import Y\n",
        "e.py": "from pkg import thing\n",  # not a module: an edge to the package
        "sub/__init__.py": "",
        "sub/x.py": "from . import y\n",
        "sub/y.py": "from .x import z\n",
        "lone.py": "import pkg.sub.x\n",  # imports pkg and pkg.sub on the way: not counted
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path, "pkg")
    cycles = {tuple(c) for c in strongly_connected(graph)}
    assert cycles == {
        ("pkg.a", "pkg.b"),
        ("pkg.c", "pkg.d"),
        ("pkg.sub.x", "pkg.sub.y"),
    }, cycles
    assert graph["pkg"] == {"pkg.a": ("pkg/__init__.py", 1)}
    assert graph["pkg.e"] == {"pkg": ("pkg/e.py", 1)}
    assert set(graph["pkg.lone"]) == {"pkg.sub.x"}
    printed = chains(graph)
    assert any("pkg.a -> pkg.b (pkg/a.py:1), pkg.b -> pkg.a (pkg/b.py:2)" in line for line in printed)
    # at package level the sub-package's own cycle is inside one node; a -> b stays a cycle
    top = collapse(graph, top_level)
    assert ["pkg.a", "pkg.b"] in strongly_connected(top)
    assert "pkg.sub" in top and not any("pkg.sub" in c for c in strongly_connected(top))

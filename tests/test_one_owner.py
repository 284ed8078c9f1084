"""One owner per setting (issue 23), read from the source so it stays so.

Each setting the issue names has one definition and one check in ``src/``; the values a render or a turn
builds are built by name, never by position: a positional build of a many-field value is unchecked (a
field added to the type shifts every later one, and ``tuple.__new__`` does not even count them).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "toolreplay"


def _trees() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8"))


def _at(rel: str, node: ast.AST) -> str:
    return f"{rel}:{getattr(node, 'lineno', '?')}"


def test_no_value_is_built_with_tuple_new() -> None:
    """``TurnMessage``, ``ReplayCall`` and ``ReplayStep`` are built by their constructors: the positional
    ``tuple.__new__`` build bought 1.01-1.10x on load + render + encode at 1,000 turns (bench/RESULTS.md,
    "What each cache buys end to end") and checks neither the fields' order nor their number."""
    found = [
        _at(rel, node)
        for rel, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "__new__"
        and isinstance(node.value, ast.Name)
        and node.value.id == "tuple"
    ]
    assert found == []


#: Calls of the CLI's turn path and how many leading positional arguments each may take (the store and the
#: registry, of types no other argument has): everything else by name.
_BY_NAME = {"turn_settings": 0, "TurnOptions": 0, "run_one": 2, "_Chat": 2, "run_turn": 0}


def test_turn_and_chat_pass_their_options_by_name() -> None:
    """``turn`` and ``chat`` hand ten options and three strings (conversation, text, vessel) down: by
    name only, so two flags or two strings cannot be swapped unnoticed."""
    seen: set[str] = set()
    positional: list[str] = []
    for rel, tree in _trees():
        if "/_cli/" not in rel:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in _BY_NAME:
                seen.add(name)
                if len(node.args) > _BY_NAME[name]:
                    positional.append(f"{_at(rel, node)}: {name} with {len(node.args)} positional")
    assert positional == []
    assert seen == set(_BY_NAME)  # each is called there: the check reads the calls it means

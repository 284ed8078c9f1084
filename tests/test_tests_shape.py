"""The shape the tests keep (issue 23), checked so it stays, as test_code_shape.py checks the code's:

* a test reaches a wire's facts through its contract (``get_wire(name)``: the list key, the paths, the
  framing, the error body...), never a table of them written again: no table keyed by wire names holds
  what every wire's contract already says;
* no test or test helper outside ``tests/wires/`` branches on a wire's name (``if wire == "gemini"``): a
  test of one wire lives in ``tests/wires/<package>/``, what differs per wire is read from the contract,
  and test data that differs per wire (a sample body, an SDK's model) sits in a table keyed by wire
  names, one place per wire. A comparison with a *vessel*'s name is not a wire's (the built-in vessels
  ``anthropic``, ``gemini``, ``ollama``, ``openai-responses`` are named after their wires).

``BRANCHING`` names the few files allowed to branch, each with its reason; the check fails on any other
offender, and on a listed file that no longer branches, so the list can only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from test_code_shape import WIRES, _wire_literal
from toolreplay.wires import all_wires
from wire_helpers import wire_path

TESTS = Path(__file__).resolve().parent
#: Files (relative to tests/) allowed to branch on a wire's name, and why.
BRANCHING: dict[str, str] = {
    "corpus_census.py": "the census reads each provider's JSON by hand, on purpose apart from toolreplay's "
    "parsers, so a parser that drops a piece is caught rather than agreed with",
}


def _files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts and "corpus" not in p.parts)


def _is_vessel(node: ast.AST) -> bool:
    """The compared value names a vessel (``vessel``, ``r.vessel``, ``v.name``...), not a wire."""
    text = ast.unparse(node)
    return "vessel" in text or text.endswith(".name") or text.endswith("['name']")


def _tests(node: ast.AST) -> Iterator[ast.AST]:
    """The conditions ``node`` branches on."""
    if isinstance(node, (ast.If, ast.IfExp, ast.While)):
        yield node.test
    elif isinstance(node, ast.comprehension):
        yield from node.ifs


def _branches(tree: ast.AST) -> Iterator[int]:
    """The lines that branch on a wire's name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.match_case) and _wire_literal(
            getattr(node.pattern, "value", ast.Constant(0))
        ):
            yield node.pattern.lineno
        for test in _tests(node):
            for c in ast.walk(test):
                if not isinstance(c, ast.Compare):
                    continue
                sides = [c.left, *c.comparators]
                if any(map(_wire_literal, sides)) and not any(_is_vessel(s) for s in sides):
                    yield c.lineno


def _facts() -> dict[str, dict[str, Any]]:
    """Wire name -> every scalar fact its contract states (what a test must not table again)."""
    out: dict[str, dict[str, Any]] = {}
    for w in all_wires():
        facts = {"list_key": w.list_key, "public_host": w.public_host, "max_breakpoints": w.max_breakpoints}
        if w.http is not None:
            facts |= {"framing": w.http.framing, "base_suffix": w.http.base_suffix}
            facts["path"] = wire_path(w.name, MODEL)
            facts["endpoint"] = w.http.endpoint("", MODEL, False)
        out[w.name] = facts
    return out


#: What a table's f-string (``f"/models/{model}:generateContent"``) is read with, and the facts computed with.
MODEL = "MODEL"


def _value(node: ast.AST) -> Any:
    """A table's value as a constant (an f-string with its fields as :data:`MODEL`), or its source."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(p.value) if isinstance(p, ast.Constant) else MODEL for p in node.values)
    return ast.unparse(node)


def _restated(node: ast.AST, facts: dict[str, dict[str, Any]]) -> str | None:
    """The contract fact a table keyed by wire names restates, value for value, or None."""
    if not isinstance(node, ast.Dict) or len(node.keys) < 2:
        return None
    pairs = []
    for k, v in zip(node.keys, node.values, strict=True):
        if not (isinstance(k, ast.Constant) and k.value in WIRES):
            return None
        pairs.append((k.value, _value(v)))
    for fact in next(iter(facts.values())):
        if all(facts[w].get(fact) == value for w, value in pairs):
            return fact
    return None


@cache  # one pass over the tests' files for both checks
def _offenders() -> tuple[list[str], list[str], set[str]]:
    facts = _facts()
    branching, tables, seen = [], [], set()
    for path in _files():
        rel = path.relative_to(TESTS).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            fact = _restated(node, facts)
            if fact:
                tables.append(f"tests/{rel}:{node.lineno}: a table of each wire's {fact} (get_wire has it)")
        if rel.startswith("wires/"):
            continue
        lines = sorted(set(_branches(tree)))
        if lines and rel in BRANCHING:
            seen.add(rel)
        elif lines:
            branching += [f"tests/{rel}:{n}: branches on a wire's name" for n in lines]
    return branching, tables, seen


def test_no_test_outside_tests_wires_branches_on_a_wire_name() -> None:
    branching, _, seen = _offenders()
    assert not branching, "\n".join(branching)
    fixed = sorted(set(BRANCHING) - seen)
    assert not fixed, "no longer branching, so take them out of BRANCHING: " + ", ".join(fixed)


def test_no_test_tables_a_fact_the_wire_contract_carries() -> None:
    _, tables, _ = _offenders()
    assert not tables, "\n".join(tables)


def test_the_checks_above_can_fail() -> None:
    code = (
        'if wire == "gemini":\n    pass\n'
        'x = 1 if vessel == "gemini" else 2\n'
        'y = [w for w in ws if w.wire in ("ollama", "anthropic")]\n'
        'KEYS = {"openai-chat": "messages", "gemini": "contents"}\n'
        'PATHS = {"anthropic": "/v1/messages", "ollama": "/api/chat"}\n'
        'DATA = {"gemini": {"thoughtSignature": "c2ln"}, "anthropic": {"signature": "s"}}\n'
    )
    tree = ast.parse(code)
    assert sorted(set(_branches(tree))) == [1, 4]  # the vessel's comparison on line 3 is not a wire's
    facts = _facts()
    found = [_restated(n, facts) for n in ast.walk(tree)]
    assert [f for f in found if f] == ["list_key", "path"]  # DATA is test data, not a fact
    old = ast.parse('{"openai-chat": "/chat/completions", "gemini": f"/models/{model}:generateContent"}')
    assert [f for n in ast.walk(old) if (f := _restated(n, facts))] == ["endpoint"]

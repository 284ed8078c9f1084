"""One owner per setting (issue 23), read from the source so it stays so.

Each setting the issue names has one definition and one check in ``src/``; the values a render or a turn
builds are built by name, never by position: a positional build of a many-field value is unchecked (a
field added to the type shifts every later one, and ``tuple.__new__`` does not even count them).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "toolreplay"


@functools.cache
def _sources() -> tuple[tuple[str, str], ...]:
    paths = sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)
    return tuple((str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in paths)


@functools.cache
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def _trees(*words: str, only: Callable[[str], bool] = bool) -> Iterator[tuple[str, ast.Module]]:
    """The modules of ``src/`` (those ``only`` keeps, by path) that hold one of ``words``, parsed once
    for the file's tests (parsing every module takes seconds on a busy machine)."""
    for rel, text in _sources():
        if only(rel) and (not words or any(w in text for w in words)):
            yield rel, _parse(text)


def _at(rel: str, node: ast.AST) -> str:
    return f"{rel}:{getattr(node, 'lineno', '?')}"


def test_no_value_is_built_with_tuple_new() -> None:
    """``TurnMessage``, ``ReplayCall`` and ``ReplayStep`` are built by their constructors: the positional
    ``tuple.__new__`` build bought 1.01-1.10x on load + render + encode at 1,000 turns (bench/RESULTS.md,
    "What each cache buys end to end") and checks neither the fields' order nor their number."""
    found = [
        _at(rel, node)
        for rel, tree in _trees("__new__")
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
    for rel, tree in _trees(*_BY_NAME, only=lambda rel: "/_cli/" in rel):
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


def _names_in(node: ast.AST) -> set[str]:
    return {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(node)
            if isinstance(n, ast.Attribute | ast.Name)}  # fmt: skip


_BOUNDS = ("max_calls", "max_chars", "PLAN_MAX_CALLS", "PLAN_MAX_CHARS")


def test_the_replay_bounds_have_one_definition_and_one_check() -> None:
    """The 12-call and 500-character bounds: their numbers written once (``_tokens``, which the stored
    planning sizes count with), ``ReplaySettings``' defaults those names, its range check the only one
    (the ``replay`` command's options hand their values to it, no ``IntRange`` of their own)."""
    defined, compared, ranged = [], [], []
    for rel, tree in _trees(*_BOUNDS, "--max-c"):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id in _BOUNDS and node.value is not None:
                        defined.append((rel, t.id, ast.unparse(node.value)))
            if isinstance(node, ast.Compare) and _names_in(node) & {"max_calls", "max_chars"}:
                compared.append(rel)
            is_option = isinstance(node, ast.Call) and ast.unparse(node.func) == "click.option"
            if is_option and {"'--max-calls'", "'--max-chars'"} & {ast.unparse(a) for a in node.args}:
                ranged += [_at(rel, node) for k in node.keywords if "Range" in ast.unparse(k.value)]
    assert sorted(defined) == [
        ("src/toolreplay/_replay.py", "max_calls", "PLAN_MAX_CALLS"),
        ("src/toolreplay/_replay.py", "max_chars", "PLAN_MAX_CHARS"),
        ("src/toolreplay/_tokens.py", "PLAN_MAX_CALLS", "12"),
        ("src/toolreplay/_tokens.py", "PLAN_MAX_CHARS", "500"),
    ]
    assert compared == ["src/toolreplay/_replay.py", "src/toolreplay/_replay.py"]
    assert ranged == []


def test_the_replay_command_meets_the_bounds_check() -> None:
    from click.testing import CliRunner

    from toolreplay._cli import cli

    demo = str(SRC / "data" / "demo.json")
    for flag, bad, said in (("--max-chars", "39", "max_chars must be at least 40, not 39"),
                            ("--max-calls", "0", "max_calls must be at least 1, not 0")):  # fmt: skip
        res = CliRunner().invoke(cli, ["replay", demo, flag, bad])
        assert res.exit_code == 1 and said in res.output, res.output
    assert CliRunner().invoke(cli, ["replay", demo, "--max-chars", "40"]).exit_code == 0


def test_a_lab_folds_its_model_into_each_cells_vessel() -> None:
    """``lab --model`` is folded into each cell's vessel once (``resolve_vessel``), which the render, the
    tools probe and the request read."""
    from toolreplay._history import load_history
    from toolreplay._lab.plan import LabConfig, plan_cells
    from toolreplay._vessels import get_vessel

    h = load_history(SRC / "data" / "demo.json")
    at = [m.id for m in h.messages if m.role == "user"][-1]
    vessels = (get_vessel("openai"), get_vessel("gemini"))
    cells = plan_cells(LabConfig(history=h, at=at, vessels=vessels, modes=("native",), model="m-x"))
    assert [(c.vessel.name, c.vessel.model) for c in cells] == [("openai", "m-x"), ("gemini", "m-x")]
    assert cells[0].body["model"] == "m-x"


#: The render path's modules, from ``toolreplay.render`` down to the wire's render.
_RENDER_PATH = ("_render.py", "_render_cache.py", "_render_options.py", "_render_entry.py", "_render_same.py")
#: The parameters there that may hold JSON of any shape: a history given in its file form, the rendered
#: body (and the callback that makes one), the values a sameness check compares.
_JSON_PARAMETERS = frozenset({"history", "body", "render_sent", "a", "b"})


def test_no_untyped_options_cross_the_render_path() -> None:
    """The render's options travel as one typed value (``RenderArgs``) with the resolved vessel: no
    ``**kwargs`` and no ``dict[str, Any]`` of options between ``render`` and the wire's render."""
    loose = []
    read = set()
    for rel, tree in _trees(only=lambda rel: Path(rel).name in _RENDER_PATH and "/wires/" not in rel):
        read.add(Path(rel).name)
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            a = fn.args
            loose += [f"{_at(rel, fn)}: {fn.name}(*{x.arg})" for x in (a.vararg, a.kwarg) if x is not None]
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                typed = ast.unparse(arg.annotation) if arg.annotation is not None else ""  # self
                if "Any" in typed and arg.arg not in _JSON_PARAMETERS:
                    loose.append(f"{_at(rel, fn)}: {fn.name}({arg.arg}: {typed})")
    assert read == set(_RENDER_PATH)  # a module renamed or moved must be named here again
    assert loose == []


def test_a_turns_overrides_are_read_once_where_its_vessel_is_resolved() -> None:
    """``TurnOptions.model``, ``base_url`` and ``cache_breakpoints`` are folded into the turn's vessel
    where it is resolved (``resolve_vessel`` in ``run_turn_async``); below it, the plan, the step log, the
    request and the drivers read the vessel, never the options again."""
    reads = []
    for rel, tree in _trees(only=lambda rel: "/_loop/" in rel or "/_transport/" in rel):
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("model", "base_url", "cache_breakpoints"):
                owner = ast.unparse(node.value)
                if owner == "opts" or owner.endswith("options"):
                    reads.append((Path(rel).name, node.attr))
    assert sorted(reads) == [("turn.py", "base_url"), ("turn.py", "cache_breakpoints"), ("turn.py", "model")]


def test_design_23_counts_the_store_protocol_as_it_is() -> None:
    """The design says how many methods a store implements, and names each of them."""
    import re

    from toolreplay._store import Store

    methods = sorted(n for n, v in vars(Store).items() if callable(v) and not n.startswith("_"))
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = text[text.index("### 23. ") : text.index("### 24. ")]
    said = re.search(r"The protocol \(`_store/base.py`\) is not small: (\d+) methods", section)
    assert said is not None and int(said.group(1)) == len(methods)
    assert [m for m in methods if f"`{m}`" not in section] == []

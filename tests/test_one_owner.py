"""One owner per setting (issue 23), read from the source so it stays so.

Each setting the issue names has one definition and one check in ``src/``; the values a render or a turn
builds are built by name, never by position: a positional build of a many-field value is unchecked (a
field added to the type shifts every later one, and ``tuple.__new__`` does not even count them).
"""

from __future__ import annotations

import ast
import functools
import re
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
    from toolreplay._store import Store

    methods = sorted(n for n, v in vars(Store).items() if callable(v) and not n.startswith("_"))
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = text[text.index("### 23. ") : text.index("### 24. ")]
    said = re.search(r"The protocol \(`_store/base.py`\) is not small: (\d+) methods", section)
    assert said is not None and int(said.group(1)) == len(methods)
    assert [m for m in methods if f"`{m}`" not in section] == []


# -- the limits of a turn, a lab run, a request and the proxy: written once, checked once (_limits) ------

#: Each limit's default as the help shows it, and the words a name that holds it has (a field, a
#: parameter, a constant, a keyword, an option's flag). Two limits may share a number (600 s), never a name.
_LIMITS = {
    "MAX_REQUESTS": (8, ("request", "turn")),
    "TIMEOUT": (600.0, ("timeout", "deadline")),
    "PROXY_READ_TIMEOUT": (600.0, ("timeout", "deadline")),
    "READ_TIMEOUT": (300.0, ("timeout",)),
    "CONNECT_TIMEOUT": (15.0, ("connect",)),
    "PROXY_CONNECT_TIMEOUT": (30.0, ("connect",)),
    "LAB_TRIALS": (20, ("trial",)),
    "LAB_CONCURRENCY": (4, ("concurrency",)),
    "LAB_MODES": ("plain,prose,native", ("mode",)),
    "LAB_MAX_REQUESTS": (2000, ("request",)),
    "PROXY_MAX_BODY": (32 * 1024 * 1024, ("body", "answer")),
}
#: The fields those limits are held in, and the options that set them.
_LIMITED = ("max_requests", "timeout", "deadline", "max_tokens", "max_context_tokens", "trials",
            "concurrency", "max_body")  # fmt: skip
_LIMIT_FLAGS = ("'--max-requests'", "'--timeout'", "'--max-context-tokens'", "'--trials'", "'--concurrency'",
                "'--max-body'")  # fmt: skip
_OPERATORS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Mult: lambda a, b: a * b, ast.LShift: lambda a, b: a << b, ast.Add: lambda a, b: a + b,
}  # fmt: skip


def _literal(node: ast.AST | None) -> object:
    """The value a literal (``600.0``, ``32 * 1024 * 1024``) writes; None for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        a, b = _literal(node.left), _literal(node.right)
        if isinstance(a, int) and isinstance(b, int):
            return _OPERATORS[type(node.op)](a, b)
    return None


def _written(node: ast.AST) -> Iterator[tuple[str, object]]:
    """The literal values ``node`` gives a name: ``NAME = v``, a field's or a parameter's default, a
    keyword (an option's ``default=`` under its first flag)."""
    if isinstance(node, ast.Assign | ast.AnnAssign):
        for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
            if isinstance(t, ast.Name):
                yield t.id, _literal(node.value)
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        a = node.args
        pos = [*a.posonlyargs, *a.args]
        given = zip(pos[len(pos) - len(a.defaults) :], a.defaults, strict=True)
        pairs = [*given, *zip(a.kwonlyargs, a.kw_defaults, strict=True)]
        yield from ((arg.arg, _literal(d)) for arg, d in pairs)
    elif isinstance(node, ast.Call):
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")]
        for k in node.keywords:
            if k.arg is not None:
                yield (flags[0] if flags and k.arg == "default" else k.arg), _literal(k.value)


def test_the_limits_are_written_once() -> None:
    """The 8-request turn, the 600 s time limit, the transport's and the proxy's timeouts, the proxy's
    32 MiB body, the lab's 20 trials, 4 in flight, its modes and its 2,000-request ceiling: each written
    once, in ``_limits`` (the CLI's options, ``TurnOptions``, ``LabConfig``, the transport and the proxy
    name it); no limit's option writes its default itself, not even in its help (``lab --max-requests``
    said "default 2000" there). The doubles (``testing/``) are servers of their own, with their limits."""
    found: dict[str, list[str]] = {name: [] for name in _LIMITS}
    own = []
    for rel, tree in _trees(only=lambda rel: "/wires/" not in rel and "/testing/" not in rel):
        for node in ast.walk(tree):
            for name, value in _written(node):
                if isinstance(value, bool) or not isinstance(value, int | float | str):
                    continue
                for limit, (default, words) in _LIMITS.items():
                    if value == default and any(w in name.lower() for w in words):
                        found[limit].append(f"{Path(rel).name}:{name}")
            is_option = isinstance(node, ast.Call) and ast.unparse(node.func) == "click.option"
            if is_option and set(_LIMIT_FLAGS) & {ast.unparse(a) for a in node.args}:
                for k in node.keywords:
                    said = _literal(k.value)
                    if (k.arg == "default" and said is not None) or (
                        k.arg == "help" and isinstance(said, str) and re.search(r"default:? \d", said)
                    ):
                        own.append(f"{_at(rel, node)}: {k.arg}={said!r}")
    assert found == {
        limit: [f"_limits.py:{n}" for n, (v, w) in _LIMITS.items() if v == default and w == words]
        for limit, (default, words) in _LIMITS.items()
    }
    assert own == []


def test_the_limits_are_checked_once() -> None:
    """Their range checks are ``_limits``' alone: no comparison of a limited field elsewhere, and no
    ``click.IntRange``/``FloatRange`` on their options (a flag and the API were refused with two
    different lines, and two exit codes)."""
    compared, ranged = [], []
    for rel, tree in _trees(*_LIMITED, only=lambda rel: "/wires/" not in rel and "/testing/" not in rel):
        for node in ast.walk(tree):
            # a bound (a limited name against a number), not a use of the limit (``requests < max_requests``)
            bound = isinstance(node, ast.Compare) and any(
                isinstance(side, ast.Constant) for side in (node.left, *node.comparators)
            )
            if (
                bound
                and all(isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in node.ops)
                and (_names_in(node) & set(_LIMITED))
            ):
                compared.append(_at(rel, node))
            is_option = isinstance(node, ast.Call) and ast.unparse(node.func) == "click.option"
            if is_option and set(_LIMIT_FLAGS) & {ast.unparse(a) for a in node.args}:
                ranged += [_at(rel, node) for k in node.keywords if "Range" in ast.unparse(k.value)]
    assert [rel for rel in compared if not rel.startswith("src/toolreplay/_limits.py:")] == []
    assert compared != []  # the check is there, and this test reads it
    assert ranged == []


def test_a_bad_limit_is_refused_alike_from_a_flag_and_from_code(tmp_path: Path) -> None:
    """``turn --max-requests 0`` and ``TurnOptions(max_requests=0)`` say the same line; the command exits
    1 with it, before anything is stored or sent (``check`` before it says a key is missing)."""
    import pytest
    from click.testing import CliRunner

    from toolreplay import ContextBudget, TurnOptions
    from toolreplay._cli import cli
    from toolreplay._errors import ConfigError
    from toolreplay._history import load_history
    from toolreplay._lab.plan import LabConfig
    from toolreplay._proxy.config import ProxyConfig
    from toolreplay._transport.client import Transport
    from toolreplay._vessels import get_vessel

    demo = str(SRC / "data" / "demo.json")
    db = str(tmp_path / "t.db")
    lab = ["lab", demo, "-v", "kimi", "--at", "m12", "--expect", "coop:close", "--db", db]
    h, kimi = load_history(demo), (get_vessel("kimi"),)
    said = {
        "max_requests must be at least 1, not 0": (
            ["turn", "hi", "-v", "kimi", "--db", db, "--max-requests", "0"],
            lambda: TurnOptions(max_requests=0),
        ),
        "timeout must be more than 0 seconds, not 0": (
            ["turn", "hi", "-v", "kimi", "--db", db, "--timeout", "0"],
            lambda: TurnOptions(timeout=0),
        ),
        "timeout must be more than 0 seconds, not -1": (
            [*lab, "--timeout", "-1"],
            lambda: LabConfig(history=h, at="m12", vessels=kimi, timeout=-1),
        ),
        "timeout must be more than 0 seconds, not -0.5": (
            ["check", "--vessel", "kimi", "--timeout", "-0.5"],
            lambda: Transport(deadline=-0.5),
        ),
        "max_context_tokens must be at least 1, not 0": (
            ["render", demo, "-v", "kimi", "--max-context-tokens", "0"],
            lambda: ContextBudget(max_tokens=0),
        ),
        "trials must be at least 1, not 0": (
            [*lab, "--trials", "0"],
            lambda: LabConfig(history=h, at="m12", vessels=kimi, trials=0),
        ),
        "max_body must be at least 1, not 0": (
            ["proxy", "--max-body", "0MB", "--db", db],
            lambda: ProxyConfig(max_body=0),
        ),
        "concurrency must be at least 1, not 0": (
            [*lab, "--concurrency", "0"],
            lambda: LabConfig(history=h, at="m12", vessels=kimi, concurrency=0),
        ),
    }
    for line, (args, build) in said.items():
        res = CliRunner().invoke(cli, args)
        assert (res.exit_code, res.output) == (1, f"Error: {line}\n"), args
        with pytest.raises(ConfigError) as raised:
            build()
        assert str(raised.value) == line
    assert not Path(db).exists()  # refused before the store was opened
    with pytest.raises(ConfigError, match=r"^timeout must be more than 0 seconds, not 0$"):
        ProxyConfig(timeout=0)  # no flag: the API's own line


def test_the_help_shows_the_limits_defaults() -> None:
    from click.testing import CliRunner

    from toolreplay import _limits
    from toolreplay._cli import cli

    def shown(*cmd: str) -> str:
        return " ".join(CliRunner().invoke(cli, [*cmd, "--help"], terminal_width=200).output.split())

    assert f"Requests per turn at most. [default: {_limits.MAX_REQUESTS}]" in shown("turn")
    assert f"tool run included. [default: {_limits.TIMEOUT}]" in shown("chat")
    lab = shown("lab")
    for said in (f"mode. [default: {_limits.LAB_TRIALS}]", f"at once. [default: {_limits.LAB_CONCURRENCY}]",
                 f"more requests. [default: {_limits.LAB_MAX_REQUESTS}]", f"[default: {_limits.LAB_MODES}]",
                 f"retries included. [default: {_limits.TIMEOUT}]"):  # fmt: skip
        assert said in lab, said
    assert f"decompressed. [default: {_limits.PROXY_MAX_BODY >> 20}MB]" in shown("proxy")

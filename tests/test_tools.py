"""The tool registry, the coop board, dry runs and refused calls."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from toolreplay._errors import ConfigError
from toolreplay._history import ToolSpec
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import Tool, ToolError, ToolRegistry, build_registry, load_tool_spec, tool
from toolreplay._tools.coop import COOP_SPEC, coop_tool, run_coop
from toolreplay._tools.dry import dry_answer, is_dry_answer


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "t.db")
    yield s
    s.close()


def call(reg: ToolRegistry, name: str, args: Any, **kw: Any) -> Any:
    return asyncio.run(reg.call(name, args, **kw))


def test_coop_board_round_trip(store: SQLiteStore) -> None:
    assert run_coop(board_of(store), {"action": "add", "text": "fix the flaky build"}) == "status: added #1"
    assert run_coop(board_of(store), {"action": "add", "text": "update the README"}) == "status: added #2"
    assert (
        run_coop(board_of(store), {"action": "list"})
        == "#1 open  fix the flaky build\n#2 open  update the README"
    )
    assert (
        run_coop(board_of(store), {"action": "close", "id": 1, "text": "build is green"}) == "status: closed"
    )
    assert run_coop(board_of(store), {"action": "list"}) == "#2 open  update the README"
    assert (
        run_coop(board_of(store), {"action": "list", "status": "closed"}) == "#1 closed  fix the flaky build"
    )
    assert (
        run_coop(board_of(store), {"action": "show", "id": 1})
        == "#1 closed  fix the flaky build\nnote: build is green"
    )
    assert (
        run_coop(board_of(store), {"action": "close", "id": "#1"}) == "status: closed (#1 was already closed)"
    )
    assert run_coop(board_of(store), {"action": "reopen", "id": 1}) == "status: open"
    assert (
        run_coop(board_of(store), {"action": "note", "id": 1, "text": "flaked again"})
        == "status: noted on #1"
    )
    assert (
        run_coop(board_of(store), {"action": "edit", "id": 2, "text": "update the docs"})
        == "status: edited #2"
    )
    assert run_coop(board_of(store), {"action": "show", "id": "1"}).endswith(
        "note: build is green\nflaked again"
    )
    assert run_coop(board_of(store), {"action": "list", "status": "all"}).count("\n") == 1
    assert board_of(store).get(2) is not None and board_of(store).get(2).text == "update the docs"  # type: ignore[union-attr]


def test_coop_empty_lists(store: SQLiteStore) -> None:
    assert run_coop(board_of(store), {"action": "list"}) == "no open todos"
    assert run_coop(board_of(store), {"action": "list", "status": "all"}) == "no todos"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"action": "close", "id": 99}, "error: there is no todo #99"),
        ({"action": "close"}, "error: close needs the todo number in the field id"),
        ({"action": "close", "id": "twelve"}, "error: id must be a todo number like 12, not 'twelve'"),
        ({"action": "close", "id": True}, "error: id must be a todo number like 12, not True"),
        ({"action": "frobnicate"}, "error: action is 'frobnicate'; use one of add, list, show, close"),
        ({}, "error: action is missing"),
        ({"action": "add"}, "error: add needs the text in the field text"),
        ({"action": "add", "text": 5}, "error: text must be a string, not int"),
        ({"action": "list", "status": "done"}, "error: status must be one of open, closed, all"),
    ],
)
def test_coop_bad_input_is_a_tool_error(store: SQLiteStore, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as err:
        run_coop(board_of(store), args)
    assert str(err.value).startswith(message)


def test_registry_runs_coop_and_answers_errors(store: SQLiteStore) -> None:
    reg = ToolRegistry([coop_tool(board_of(store))])
    assert reg.specs() == (COOP_SPEC,)
    ok = call(reg, "coop", {"action": "add", "text": "x"})
    assert (ok.answer, ok.is_error, ok.executed) == ("status: added #1", False, True)
    bad = call(reg, "coop", {"action": "close", "id": 7})
    assert (bad.answer, bad.is_error, bad.executed) == ("error: there is no todo #7", True, True)
    # the replay vocabulary: Claude Code's MCP name reaches the same tool
    assert "mcp__coop__coop" in reg
    mcp = call(reg, "mcp__coop__coop", {"action": "close", "id": 1})
    assert mcp.answer == "status: closed"


def test_a_name_the_wire_mapped_finds_its_tool() -> None:
    from toolreplay.wires.common import wire_tool_name

    reg = ToolRegistry([Tool(ToolSpec("my.tool"), lambda args: "ran")])
    mapped = wire_tool_name("my.tool")
    assert mapped != "my.tool" and mapped in reg
    assert call(reg, mapped, {}).answer == "ran"


def test_unknown_tool_broken_arguments_and_non_object_input(store: SQLiteStore) -> None:
    reg = ToolRegistry([coop_tool(board_of(store))])
    unknown = call(reg, "weather", {"city": "Paris"})
    assert unknown.is_error and not unknown.executed
    assert unknown.answer == "error: there is no tool named 'weather'; tools: coop"
    broken = call(reg, "coop", '{"action": "add", "text": "x', input_error="unterminated string")
    assert broken.is_error and not broken.executed
    assert "cannot be used (unterminated string)" in broken.answer
    assert board_of(store).todos(None) == []  # never executed
    listy = call(reg, "coop", ["add"])
    assert listy.is_error and not listy.executed and "not list" in listy.answer


def test_dry_run_executes_nothing(store: SQLiteStore) -> None:
    reg = ToolRegistry([coop_tool(board_of(store))])
    out = call(reg, "coop", {"action": "close", "id": 12}, dry=True)
    assert out.answer == "[dry run] coop close 12: not executed"
    assert out.dry and not out.executed and not out.is_error
    assert is_dry_answer(out.answer) and not is_dry_answer("status: closed") and not is_dry_answer(None)
    assert board_of(store).todos(None) == []


def test_dry_answer_shapes() -> None:
    assert dry_answer("coop", {"action": "list"}) == "[dry run] coop list: not executed"
    assert dry_answer("coop", {"action": "add", "text": "a\nb"}) == "[dry run] coop add a b: not executed"
    assert dry_answer("weather", {"city": "Paris"}) == '[dry run] weather {"city":"Paris"}: not executed'
    assert dry_answer("ping", {}) == "[dry run] ping {}: not executed"
    long = dry_answer("w", {"q": "x" * 500})
    assert len(long) < 170 and long.endswith("…: not executed")


def test_sync_and_async_callables() -> None:
    @tool("upper", "Upper-case a text", {"type": "object", "properties": {"text": {"type": "string"}}})
    def upper(args: Mapping[str, Any]) -> str:
        return str(args["text"]).upper()

    async def slow_echo(args: Mapping[str, Any]) -> str:
        await asyncio.sleep(0)
        return f"echo {args.get('text')}"

    async def failing(args: Mapping[str, Any]) -> str:
        raise ToolError("no such city")

    reg = ToolRegistry([upper, Tool(ToolSpec("echo"), slow_echo), Tool(ToolSpec("fail"), failing)])
    assert reg.names == ("upper", "echo", "fail")
    assert upper.spec.description == "Upper-case a text"
    assert call(reg, "upper", {"text": "hi"}).answer == "HI"
    assert call(reg, "echo", {"text": "hi"}).answer == "echo hi"
    failed = call(reg, "fail", {})
    assert (failed.answer, failed.is_error) == ("no such city", True)


def test_a_bug_in_a_tool_propagates() -> None:
    def broken(args: Mapping[str, Any]) -> str:
        raise KeyError("oops")

    def not_text(args: Mapping[str, Any]) -> str:
        return 42  # type: ignore[return-value]

    reg = ToolRegistry([Tool(ToolSpec("broken"), broken), Tool(ToolSpec("nottext"), not_text)])
    with pytest.raises(KeyError):
        call(reg, "broken", {})
    with pytest.raises(ConfigError, match="must return text"):
        call(reg, "nottext", {})


def test_duplicate_names_refused(store: SQLiteStore) -> None:
    with pytest.raises(ConfigError, match="two tools are named 'coop'"):
        ToolRegistry([coop_tool(board_of(store)), coop_tool(board_of(store))])


def test_tool_specs_load_coop_and_modules(
    store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mytools_mod.py").write_text(
        "from toolreplay._tools import tool\n"
        "@tool('ping', 'Answer pong')\n"
        "def ping(args):\n    return 'pong'\n"
        "def make():\n    return [ping]\n"
        "nothing = 3\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = build_registry(["coop,mytools_mod:ping"], store)
    assert reg.names == ("coop", "ping")
    assert [t.name for t in load_tool_spec("mytools_mod:make")] == ["ping"]
    with pytest.raises(ConfigError, match="needs a store"):
        load_tool_spec("coop")
    with pytest.raises(ConfigError, match="unknown tool 'bogus'"):
        load_tool_spec("bogus")
    with pytest.raises(ConfigError, match="cannot import"):
        load_tool_spec("no_such_module_xyz:thing")
    with pytest.raises(ConfigError, match="has no attribute 'missing'"):
        load_tool_spec("mytools_mod:missing")
    with pytest.raises(ConfigError, match="not a Tool"):
        load_tool_spec("mytools_mod:nothing")

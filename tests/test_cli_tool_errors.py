"""Tools and dumps that cannot work are refused clearly: the claude vessel's MCP server, module:attribute
tools, a crashing tool, a dump directory that cannot be made."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers_cli import conversations, one_line_error, run, write_file
from toolreplay._cli import cli
from toolreplay._errors import ConfigError
from toolreplay._store.sqlite import SQLiteStore
from toolreplay.testing import ProviderDouble, Text


@pytest.fixture(scope="module")
def _server() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.fixture
def double(_server: ProviderDouble) -> ProviderDouble:
    _server.clear()
    return _server


# -- the claude vessel: no tools means none; tools need the mcp SDK -------------------------------------


def test_claude_without_tools_gets_no_mcp_server() -> None:
    from toolreplay._loop.claude_cli import ClaudeRun, command

    argv = command(ClaudeRun(prompt="p", model="sonnet", tools=(), db="/data/t.db"), [])
    assert "--mcp-config" not in argv and "--allowedTools" not in argv
    assert "--strict-mcp-config" in argv and argv[argv.index("--tools") + 1] == ""  # nor the user's own
    argv = command(ClaudeRun(prompt="p", model="sonnet", tools=("coop",), db="/data/t.db"), ["coop"])
    assert "--mcp-config" in argv and argv[argv.index("--allowedTools") + 1] == "mcp__coop__coop"


def test_claude_with_tools_needs_the_mcp_sdk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    from toolreplay._loop import claude_cli

    monkeypatch.setattr(claude_cli, "require_cli", lambda exe=None: None)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=r"pip install 'toolreplay\[mcp\]'"):
        claude_cli.preflight(["coop"], str(tmp_path / "t.db"))
    claude_cli.preflight([], str(tmp_path / "t.db"))  # no tools: no server, no SDK needed


@pytest.mark.parametrize(
    "spec", ["os.path:join", "toolreplay._tools:Tool", "toolreplay._tools.coop:coop_tool"]
)
def test_tools_naming_a_function_with_arguments_is_one_line(tmp_path: Path, spec: str) -> None:
    db = tmp_path / "t.db"
    res = run("turn", "hi", "--vessel", "kimi", "--conversation", "c", "--tools", spec, "--db", str(db))
    assert one_line_error(res) == (
        f"Error: --tools {spec}: a function that needs arguments; name a Tool, a list of tools, a "
        "ToolRegistry or a function of no argument that returns one"
    )
    assert conversations(db) == []


CRASHING_TOOL = """
from toolreplay._tools import tool

@tool("coop", "crashes", {"type": "object", "properties": {}})
def boom(args):
    raise RuntimeError("disk on fire")
"""


def test_a_crashing_tool_does_not_end_the_chat(
    double: ProviderDouble, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreplay.testing import Call, Calls

    (tmp_path / "qa_crashing_tools.py").write_text(CRASHING_TOOL, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    double.script(Calls([Call("coop", {"action": "close", "id": 1})]), Text("Still here."))
    db = tmp_path / "t.db"
    res = CliRunner().invoke(
        cli,
        ["chat", "--vessel", "kimi", "--conversation", "c", "--db", str(db),
         "--tools", "qa_crashing_tools:boom", "--base-url", double.base_url_for("kimi")],
        input="Close #1.\nAnd now?\n",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert (
        "error: RuntimeError: disk on fire at qa_crashing_tools.py:6 (the reply a2 is stored as interrupted)"
        in res.output
    )
    assert "kimi> Still here." in res.output  # the session went on
    with SQLiteStore(db) as s:
        reply = s.load("c").messages[1]
    assert reply.status == "interrupted" and [(c.name, c.answer) for c in reply.tool_uses] == [("coop", None)]


def test_a_dump_directory_that_cannot_be_made_is_refused_before_storing(tmp_path: Path) -> None:
    blocker = write_file(tmp_path, "a-file", "x")
    db = tmp_path / "t.db"
    res = run(
        "turn", "hi", "--vessel", "kimi", "--conversation", "c", "--db", str(db),
        "--base-url", "http://127.0.0.1:9", "--dump-requests", str(blocker / "dumps"),
    )  # fmt: skip
    line = one_line_error(res)
    assert line.startswith(f"Error: {blocker / 'dumps'}: cannot create the dump directory")
    assert line.endswith("(nothing was stored)")
    assert conversations(db) == []

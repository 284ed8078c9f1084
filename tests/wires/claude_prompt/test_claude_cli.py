"""The claude vessel: recorded stream-json output played by a fake `claude` on PATH (no real CLI)."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers_common import TESTS
from toolreplay._errors import AuthenticationError, ConfigError, ConnectionFault
from toolreplay._loop import CallFinished, CallStarted, Flagged, TextDelta, TurnEvent, TurnOptions, run_turn
from toolreplay._loop.claude_cli import (
    ClaudeCallAnswered,
    ClaudeCallStarted,
    ClaudeRun,
    ClaudeText,
    StreamReader,
    command,
)
from toolreplay._steps import Step, Text
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import build_registry
from toolreplay.wires.claude_prompt.render import STEPS_NOTE

DATA = TESTS / "data"

# A stand-in for the Claude Code CLI: logs its argv and stdin, then plays a recorded stream-json file.
# With FAKE_CLAUDE_LIVE_MCP=1 it starts the MCP server named in --mcp-config (as the real CLI does) and
# answers each recorded tool_use by calling that server, so the answers come from the real coop board.
FAKE = r"""#!{python}
import asyncio, json, os, sys

def main():
    argv = sys.argv[1:]
    prompt = sys.stdin.read()
    with open(os.environ["FAKE_CLAUDE_LOG"], "a", encoding="utf-8") as f:
        system = None
        if "--append-system-prompt-file" in argv:
            system = open(argv[argv.index("--append-system-prompt-file") + 1], encoding="utf-8").read()
        f.write(json.dumps({{"argv": argv, "stdin": prompt, "system": system}}) + "\n")
    events = [json.loads(l) for l in open(os.environ["FAKE_CLAUDE_FIXTURE"], encoding="utf-8") if l.strip()]
    if os.environ.get("FAKE_CLAUDE_LIVE_MCP") == "1":
        events = asyncio.run(live(argv, events))
    for e in events:
        sys.stdout.write(json.dumps(e) + "\n")
        sys.stdout.flush()
    sys.exit(int(os.environ.get("FAKE_CLAUDE_EXIT", "0")))

async def live(argv, events):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    cfg = json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]["coop"]
    params = StdioServerParameters(command=cfg["command"], args=cfg["args"], env=dict(os.environ))
    calls = {{}}
    async with Client(params) as client:
        for e in events:
            content = e.get("message", {{}}).get("content")
            if not isinstance(content, list):
                continue
            for b in content:
                if e["type"] == "assistant" and b.get("type") == "tool_use":
                    calls[b["id"]] = b
                if e["type"] == "user" and b.get("type") == "tool_result":
                    use = calls[b["tool_use_id"]]
                    r = await client.call_tool(use["name"].split("__")[-1], use["input"])
                    b["content"] = [{{"type": "text", "text": "".join(c.text for c in r.content)}}]
                    if r.is_error:
                        b["is_error"] = True
                    else:
                        b.pop("is_error", None)
    return events

main()
"""


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "claude"
    exe.write_text(FAKE.format(python=sys.executable), encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "claude-log.jsonl"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(log))
    return log


def play(monkeypatch: pytest.MonkeyPatch, name: str, *, live: bool = False) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_FIXTURE", str(DATA / name))
    monkeypatch.setenv("FAKE_CLAUDE_LIVE_MCP", "1" if live else "0")


def runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "claude.db")
    board_of(s).add("fix the flaky build")
    board_of(s).add("update the README")
    yield s
    s.close()


def feed_all(name: str) -> tuple[StreamReader, list[Any]]:
    reader = StreamReader()
    out: list[Any] = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        out += reader.feed(json.loads(line))
    return reader, out


# -- the pure stream reader ---------------------------------------------------------------------------


def test_reader_streams_partial_text_once_and_pairs_calls() -> None:
    reader, events = feed_all("claude_close_todo.jsonl")
    texts = [e.text for e in events if isinstance(e, ClaudeText)]
    assert texts == ["I'll close", " #2 on the", " board.", "Closed #2", " and noted the merge."]
    started = [e for e in events if isinstance(e, ClaudeCallStarted)]
    assert [(s.name, s.input) for s in started] == [
        ("mcp__coop__coop", {"action": "close", "id": 2, "text": "README merged"})
    ]
    answered = [e.call for e in events if isinstance(e, ClaudeCallAnswered)]
    assert answered[0].answer == "status: closed" and answered[0].call_id == "toolu_01Xk9Qm2Lr7Ta4Wc8Ve5Nb3D"
    out = reader.outcome
    # the words before the call ride with it (one step); the reply's text is the final words (design 16)
    assert out is not None and out.text == "Closed #2 and noted the merge."
    assert out.steps == (Step((Text("I'll close #2 on the board."),), 1),)
    assert out.usage.input_tokens == 9 + 22454 + 532 and out.usage.cached_tokens == 22454
    assert out.usage.output_tokens == 103
    assert out.meta() == {
        "session_id": "9c1f6a2e-4d7b-4f0a-b3c5-2e8d7a61f4b9",
        "subtype": "success",
        "num_turns": 2,
        "cost_usd": 0.01398,
        "mcp_servers": {"coop": "connected"},
    }


def test_reader_without_partials_uses_assistant_text_and_skips_subagents() -> None:
    reader, events = feed_all("claude_max_turns.jsonl")
    assert [e.text for e in events if isinstance(e, ClaudeText)] == ["Checking the board."]
    calls = [e.call for e in events if isinstance(e, ClaudeCallAnswered)]
    assert [(c.input, c.is_error) for c in calls] == [
        ({"action": "list"}, False),
        ({"action": "close", "id": 99}, True),
    ]
    assert calls[0].answer == "#1 open  fix the flaky build\n#2 open  update the README"
    assert reader.outcome is not None and reader.outcome.subtype == "error_max_turns"
    assert reader.unanswered() == []


def test_reader_errors_and_unanswered_calls() -> None:
    with pytest.raises(AuthenticationError, match="Invalid API key"):
        feed_all("claude_not_logged_in.jsonl")
    reader = StreamReader()
    reader.feed(
        {
            "type": "assistant",
            "message": {"content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
        }
    )
    assert [c.call_id for c in reader.unanswered()] == ["t1"]
    assert (
        reader.feed(
            {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "nope"}]}}
        )
        == []
    )
    assert reader.feed({"type": "rate_limit_event"}) == []


def test_command_line() -> None:
    run = ClaudeRun(
        prompt="p", model="sonnet", system="Be brief.", db="/data/t.db", dry_tools=True, max_turns=5
    )
    argv = command(run, ["coop"], "/tmp/x/system.txt")
    assert argv[:5] == ["claude", "-p", "--output-format", "stream-json", "--verbose"]
    cfg = json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]["coop"]
    assert cfg["args"] == ["-m", "toolreplay", "mcp", "--db", "/data/t.db", "--tools", "coop", "--dry-tools"]
    assert argv[argv.index("--tools") + 1] == "" and "--strict-mcp-config" in argv
    assert argv[argv.index("--allowedTools") + 1] == "mcp__coop__coop"
    assert argv[argv.index("--max-turns") + 1] == "5" and argv[-2:] == [
        "--append-system-prompt-file",
        "/tmp/x/system.txt",
    ]
    with pytest.raises(ConfigError, match="not :memory:"):
        command(ClaudeRun(prompt="p", model="m", db=":memory:"), [])


# -- whole turns through the fake CLI -----------------------------------------------------------------


def test_claude_turn_records_the_calls_it_reports(
    store: SQLiteStore, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    play(monkeypatch, "claude_close_todo.jsonl", live=True)
    events: list[TurnEvent] = []
    res = run_turn(
        "cc",
        "The README change is merged.",
        "claude",
        build_registry(["coop"], store),
        store=store,
        on_event=events.append,
    )
    assert board_of(store).get(2).status == "closed"  # type: ignore[union-attr]  # really ran, through MCP
    stored = store.load("cc").messages[1]
    assert stored.status == "complete" and stored.vessel == "claude"
    assert [(c.name, c.input, c.answer, c.call_id) for c in stored.tool_uses] == [
        (
            "mcp__coop__coop",
            {"action": "close", "id": 2, "text": "README merged"},
            "status: closed",
            "toolu_01Xk9Qm2Lr7Ta4Wc8Ve5Nb3D",
        )
    ]
    assert stored.text == "Closed #2 and noted the merge."  # its earlier words ride with the call
    assert stored.steps == (Step((Text("I'll close #2 on the board."),), 1),)
    assert (
        stored.meta is not None
        and stored.meta["claude"]["num_turns"] == 2
        and "said_without_doing" not in stored.meta
    )
    assert res.usage.cached_tokens == 22454
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("CallStarted") < kinds.index("CallFinished")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith(
        "I'll close #2 on the board."
    )
    assert next(e for e in events if isinstance(e, CallStarted)).call_id == "replay_a2_0"
    assert next(e for e in events if isinstance(e, CallFinished)).executed
    (first,) = runs(fake_claude)
    assert first["stdin"] == "The README change is merged."  # no earlier turns: just the message
    assert first["argv"][first["argv"].index("--model") + 1] == "sonnet"

    # the next turn, on claude again: the earlier call travels in the prompt, renamed to coop
    play(monkeypatch, "claude_said_without_doing.jsonl")
    res2 = run_turn(
        "cc",
        "And close #1 too.",
        "claude",
        build_registry(["coop"], store),
        store=store,
        on_event=events.append,
    )
    prompt = runs(fake_claude)[1]["stdin"]
    assert "<transcript>" in prompt and prompt.endswith("And close #1 too.")
    assert (
        '"steps":[{"text":"I\'ll close #2 on the board.","calls":[{"tool":"coop","input":{"action":"close",'
        '"id":2,"text":"README merged"},"answer":"status: closed"}]}],"text":"Closed #2 and noted the merge."'
        in prompt
    )
    assert STEPS_NOTE in prompt  # the head says what steps are
    # "Closed #1." with no call: flagged as it happens
    assert res2.flag is not None and res2.flag["action"] == "close"
    assert isinstance(events[-1], Flagged)


def test_claude_turn_replays_on_another_vessel(
    store: SQLiteStore, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    play(monkeypatch, "claude_close_todo.jsonl")
    run_turn("cc", "Close #2.", "claude", build_registry(["coop"], store), store=store)
    from toolreplay._api import render

    body = render(store.load("cc"), "anthropic")
    words, tool_use = body["messages"][1]["content"]  # the words the model wrote before its call lead it
    assert words == {"type": "text", "text": "I'll close #2 on the board."}
    assert tool_use["name"] == "coop" and tool_use["id"] == "replay_a2_0"


@pytest.mark.slow  # a live MCP server process (2-5 s): --quick keeps one, the turn above
def test_claude_dry_tools(store: SQLiteStore, fake_claude: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    play(monkeypatch, "claude_close_todo.jsonl", live=True)
    res = run_turn(
        "cd",
        "Close #2.",
        "claude",
        build_registry(["coop"], store),
        store=store,
        options=TurnOptions(dry_tools=True),
    )
    assert board_of(store).get(2).status == "open"  # type: ignore[union-attr]
    assert res.reply.tool_uses[0].answer == "[dry run] coop close 2 README merged: not executed"
    argv = runs(fake_claude)[0]["argv"]
    assert "--dry-tools" in json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]["coop"]["args"]


def test_claude_max_turns_keeps_calls(
    store: SQLiteStore, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    play(monkeypatch, "claude_max_turns.jsonl")
    res = run_turn(
        "cm",
        "Tidy the board.",
        "claude",
        build_registry(["coop"], store),
        store=store,
        options=TurnOptions(max_requests=2),
    )
    assert res.stopped == "request_limit"
    stored = store.load("cm").messages[1]
    assert [c.is_error for c in stored.tool_uses] == [False, True]
    # stopped by the step limit with no final words: not finished, its words ride with its calls
    assert (stored.text, stored.status) == ("", "interrupted")
    assert stored.steps == (Step((Text("Checking the board."),), 2),)


def test_claude_failures(store: SQLiteStore, fake_claude: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reg = build_registry(["coop"], store)
    play(monkeypatch, "claude_not_logged_in.jsonl")
    with pytest.raises(AuthenticationError, match="Please run /login"):
        run_turn("cf", "hi", "claude", reg, store=store)
    assert store.load("cf").messages[1].status == "interrupted"
    # a CLI that dies before its result event
    empty = fake_claude.parent / "empty.jsonl"
    empty.write_text((DATA / "claude_close_todo.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n")
    monkeypatch.setenv("FAKE_CLAUDE_FIXTURE", str(empty))
    monkeypatch.setenv("FAKE_CLAUDE_EXIT", "3")
    with pytest.raises(ConnectionFault, match="without a result event"):
        run_turn("cf", "hi", "claude", reg, store=store)


def test_claude_dying_mid_call_keeps_the_call(
    store: SQLiteStore, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (DATA / "claude_max_turns.jsonl").read_text(encoding="utf-8").splitlines()
    cut = fake_claude.parent / "cut.jsonl"
    cut.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")  # init, then the calls: no answers
    monkeypatch.setenv("FAKE_CLAUDE_FIXTURE", str(cut))
    monkeypatch.setenv("FAKE_CLAUDE_EXIT", "1")
    with pytest.raises(ConnectionFault):
        run_turn("cd", "Tidy up.", "claude", build_registry(["coop"], store), store=store)
    stored = store.load("cd").messages[1]
    assert stored.status == "interrupted"
    assert [(c.input, c.answer, c.call_id) for c in stored.tool_uses] == [
        ({"action": "list"}, None, "toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8P"),
        ({"action": "close", "id": 99}, None, "toolu_01Qr9St8Uv7Wx6Yz5Ab4Cd3E"),
    ]


def test_claude_not_installed(store: SQLiteStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match="npm i -g @anthropic-ai/claude-code"):
        run_turn("cn", "hi", "claude", build_registry(["coop"], store), store=store)
    assert not store.exists("cn")  # refused before anything was stored


def test_claude_tools_built_in_code_cannot_be_served(store: SQLiteStore, fake_claude: Path) -> None:
    from toolreplay._tools import ToolRegistry
    from toolreplay._tools.coop import coop_tool

    with pytest.raises(ConfigError, match="cannot serve them"):
        run_turn("cx", "hi", "claude", ToolRegistry([coop_tool(board_of(store))]), store=store)
    assert not store.exists("cx")


@pytest.mark.slow  # a live MCP server process (2-5 s): --quick keeps one, the turn above
def test_a_200_kb_system_prompt_reaches_the_cli_in_a_file(
    store: SQLiteStore, fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Linux refuses any single argument over 128 KB ("Argument list too long"): issue 15, item 10.
    system = "Be careful with the board. " * 8000
    play(monkeypatch, "claude_close_todo.jsonl", live=True)
    res = run_turn("big", "Close #1.", "claude", build_registry(["coop"], store), store=store,
                   options=TurnOptions(system=system))  # fmt: skip
    assert res.reply.status == "complete"
    (logged,) = runs(fake_claude)
    assert logged["system"] == system
    assert sum(len(a) for a in logged["argv"]) < 10_000

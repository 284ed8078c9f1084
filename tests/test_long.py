"""Long conversations: a turn reads only the window the budget needs, ``history show`` pages newest first
without reading the rest, and ``toolreplay stats`` prints the cache hit rate per turn and in total."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolreplay._budget import ContextBudget
from toolreplay._cli import cli
from toolreplay._history import History, Message, ToolCall
from toolreplay._loop import TurnOptions, run_turn
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import build_registry
from toolreplay.testing import Call, Calls, ProviderDouble, Text


def long_history(turns: int) -> History:
    messages: list[Message] = [Message("s", "system", "You keep the todo board.")]
    for i in range(turns):
        messages.append(Message(f"q{i}", "user", f"Question {i}: " + "words " * 30))
        calls = (ToolCall("coop", {"action": "show", "id": i}, f"#{i} open " * 10),)
        messages.append(Message(f"r{i}", "assistant", f"Answer {i}.", calls))
    return History("long", tuple(messages))


class Counting(SQLiteStore):
    """A store that says how many messages it read, and refuses to read a whole conversation."""

    read = 0

    def load(self, conversation_id: str) -> History:
        raise AssertionError("a turn must not read the whole conversation")

    def load_range(self, conversation_id: str, start: int, stop: int | None = None) -> History:
        h = super().load_range(conversation_id, start, stop)
        self.read += len(h.messages)
        return h

    def load_window(self, conversation_id: str, head: int, offset: int, stop: int) -> History:
        h = super().load_window(conversation_id, head, offset, stop)
        self.read += len(h.messages)
        return h


def test_a_turn_reads_only_the_window(tmp_path: Path) -> None:
    store = Counting(tmp_path / "long.db")
    store.import_history(long_history(400))
    with ProviderDouble() as double:
        double.script(Calls([Call("coop", {"action": "list"})]), Text("All open."))
        result = run_turn(
            "long",
            "What is still open?",
            double.vessel("anthropic"),
            build_registry(["coop"], store),
            store=store,
            options=TurnOptions(dry_tools=True, context=ContextBudget(max_tokens=4000)),
        )
        body = double.requests[-1].body
    assert result.reply.text == "All open."
    assert 3 < store.read < 60  # of 803 messages: the system message and the newest turns
    assert body["system"][0]["text"] == "You keep the todo board."
    first = body["messages"][0]
    assert first["role"] == "user" and first["content"][0]["text"].startswith("Question")
    assert result.reply.meta is not None and result.reply.meta["context"]["dropped"] > 700
    store.close()


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "h.db")
    with SQLiteStore(path) as s:
        s.import_history(long_history(30))
    return path


def test_history_show_pages_newest_first(db: str) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["history", "show", "long", "-n", "3", "--offset", "2", "--db", db])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "long: 61 messages, 30 calls; 57-59 shown, newest first" in out
    assert out.index("[58] r28") < out.index("[57] q28") < out.index("[56] r27")
    assert "[59]" not in out and "[55]" not in out and "older messages: --offset 5" in out
    res = runner.invoke(cli, ["history", "show", "long", "--db", db])
    assert "42-61 shown" in res.output and "[60] r29" in res.output
    res = runner.invoke(cli, ["history", "show", "long", "-n", "2", "--json", "--db", db])
    assert [m["id"] for m in json.loads(res.output)["messages"]] == ["q29", "r29"]  # stored order
    full = runner.invoke(cli, ["history", "show", "long", "--json", "--db", db])
    assert len(json.loads(full.output)["messages"]) == 61
    far = runner.invoke(cli, ["history", "show", "long", "--offset", "100", "--db", db])
    assert far.exit_code == 0 and "long: 61 messages" in far.output


def test_history_show_prints_each_response_usage(db: str) -> None:
    from toolreplay.wires.reply import Usage

    with SQLiteStore(db) as s:
        s.record_usage("long", "r29", 1, Usage(1200, 8, 1020, 180))
        s.record_usage("long", "r29", 2, Usage(1300, 9, None))
    args = ["history", "show", "long", "-n", "1", "--db", db]
    out = CliRunner().invoke(cli, args, env={"COLUMNS": "200"}).output
    assert "usage: 1,200 in (1,020 cached, 85%) (180 written to the cache), 8 out; 1,300 in, 9 out" in out


def test_stats_per_turn_and_in_total(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    store = SQLiteStore(db)
    with ProviderDouble() as double:
        for n in range(1, 5):
            double.script(Calls([Call("coop", {"action": "close", "id": n})]), Text(f"Closed #{n}."))
            run_turn("c", f"Close #{n}. " * 30, double.vessel("openai"), build_registry(["coop"], store),
                     store=store, options=TurnOptions(dry_tools=True))  # fmt: skip
    store.close()
    runner = CliRunner()
    res = runner.invoke(cli, ["stats", "c", "--json", "--db", db])
    assert res.exit_code == 0, res.output
    data: dict[str, Any] = json.loads(res.output)
    assert [t["reply"] for t in data["turns"]] == ["a2", "a4", "a6", "a8"]
    assert all(t["requests"] == 2 for t in data["turns"])
    rates = [t["hit_rate"] for t in data["turns"]]
    assert rates[0] < rates[1] < rates[-1] and rates[-1] > 0.8
    total = data["total"]
    assert total["requests"] == 8 and total["cached_tokens"] == sum(t["cached_tokens"] for t in data["turns"])
    human = runner.invoke(cli, ["stats", "c", "--db", db], env={"COLUMNS": "200"}).output
    assert "hit rate" in human and "total" in human and f"{100 * rates[-1]:.1f}%" in human
    missing = runner.invoke(cli, ["stats", "nope", "--db", db])
    assert missing.exit_code == 1 and "no conversation 'nope'" in missing.output

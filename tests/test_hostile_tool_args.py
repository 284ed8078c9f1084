"""A model's tool arguments never crash a turn (issue 15, item 3): a huge id or a non-decimal digit is an
error result the model can read and correct, in the turn loop and over MCP; ``coop close`` by hand with a
huge number is one line."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolreplay._cli import cli
from toolreplay._loop import run_turn
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import ToolError, build_registry
from toolreplay._tools.coop import run_coop
from toolreplay.testing import Call, Calls, ProviderDouble, Text

HOSTILE_IDS: list[Any] = [
    10**5000,
    10**30,
    -(10**30),
    2**63,
    "²",
    "٣",
    "#１２",
    "1" * 5000,
    1.5,
    [],
    {"a": 1},
    True,
]


@pytest.mark.parametrize("bad", HOSTILE_IDS, ids=lambda v: type(v).__name__)
def test_hostile_ids_are_tool_errors(bad: Any, tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "t.db") as store:
        run_coop(board_of(store), {"action": "add", "text": "x"})
        for action in ("close", "show", "reopen"):
            with pytest.raises(ToolError) as err:
                run_coop(board_of(store), {"action": action, "id": bad})
            text = str(err.value)
            assert text.startswith("error: ") and "\n" not in text and len(text) < 200


def test_a_turn_with_a_huge_id_goes_on(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with ProviderDouble() as double, SQLiteStore(db) as store:
        double.script(Calls([Call("coop", {"action": "close", "id": 10**30})]), Text("Sorry, no such todo."))
        result = run_turn(
            "c", "close it", double.vessel("kimi"), build_registry(["coop"], store), store=store
        )
        assert result.reply.status == "complete"
        (call,) = result.reply.tool_uses
        assert call.is_error and call.answer is not None and call.answer.startswith("error:")


def test_coop_close_by_hand_with_a_huge_number_is_one_line(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["coop", "close", "9" * 23, "--db", str(tmp_path / "t.db")])
    assert r.exit_code == 1
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.output


def test_mcp_gives_an_error_result_not_a_protocol_error(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from test_mcp import _params, _text

    async def go() -> list[tuple[str, bool]]:
        async with Client(_params(tmp_path / "m.db")) as client:
            out = []
            for bad in (10**30, "²"):
                r = await client.call_tool("coop", {"action": "close", "id": bad})
                out.append((_text(r), bool(r.is_error)))
            return out

    for text, is_error in asyncio.run(go()):
        assert is_error and text.startswith("error: ")

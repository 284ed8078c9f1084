"""`toolreplay mcp` as a real subprocess, driven through the official SDK's stdio client."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools.mcp_server import SERVER_NAME, mcp_config


def _params(db: Path, *extra: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "XDG_DATA_HOME", "XDG_CONFIG_HOME")}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "toolreplay", "mcp", "--db", str(db), *extra], env=env
    )


def _text(result: Any) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def _session(db: Path, *extra: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with Client(_params(db, *extra)) as client:
        tools = await client.list_tools()
        out["tools"] = {t.name: t for t in tools.tools}
        added = await client.call_tool("coop", {"action": "add", "text": "rotate the staging keys"})
        closed = await client.call_tool("coop", {"action": "close", "id": 1})
        bad = await client.call_tool("coop", {"action": "close", "id": 99})
        out["answers"] = [(_text(r), r.is_error) for r in (added, closed, bad)]
    return out


@pytest.mark.slow
def test_mcp_serves_coop_over_stdio(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    out = asyncio.run(_session(db))
    assert list(out["tools"]) == ["coop"]
    schema = out["tools"]["coop"].input_schema
    assert schema["required"] == ["action"] and "close" in schema["properties"]["action"]["enum"]
    assert out["answers"] == [
        ("status: added #1", False),
        ("status: closed", False),
        ("error: there is no todo #99", True),
    ]
    with SQLiteStore(db) as store:  # the same database the board lives in
        todo = board_of(store).get(1)
        assert todo is not None and todo.status == "closed"


def test_mcp_dry_tools_execute_nothing(tmp_path: Path) -> None:
    db = tmp_path / "dry.db"
    out = asyncio.run(_session(db, "--dry-tools"))
    assert out["answers"][0] == ("[dry run] coop add rotate the staging keys: not executed", False)
    assert out["answers"][1] == ("[dry run] coop close 1: not executed", False)
    with SQLiteStore(db) as store:
        assert list(board_of(store).todos(None)) == []


def test_mcp_config_shape() -> None:
    cfg = mcp_config(["toolreplay", "mcp", "--db", "/x.db"], env={"A": "1"})
    assert cfg == {
        "mcpServers": {
            SERVER_NAME: {
                "type": "stdio",
                "command": "toolreplay",
                "args": ["mcp", "--db", "/x.db"],
                "env": {"A": "1"},
            }
        }
    }


@pytest.mark.slow
def test_every_pipelined_call_is_answered_before_the_server_exits(tmp_path: Path) -> None:
    """A client that sends its calls and closes its end: each call that ran gets its answer (issue 27,
    item 13: the SDK's loop cancelled the calls in flight at the end of input, 261 answers of 500)."""
    import json
    import subprocess

    n = 500
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for i in range(1, n + 1):
        call = {"name": "coop", "arguments": {"action": "add", "text": f"todo {i}"}}
        lines.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call})
    db = tmp_path / "pipe.db"
    p = _params(db)
    done = subprocess.run(
        [p.command, *p.args],
        input="".join(json.dumps(m) + "\n" for m in lines).encode(),
        capture_output=True,
        env=p.env,
        timeout=120,
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    by_id = {a["id"]: a for a in answers if "id" in a}
    assert sorted(by_id) == list(range(n + 1))
    assert by_id[n]["result"]["content"][0]["text"] == f"status: added #{n}"
    with SQLiteStore(db) as store:
        assert len(list(board_of(store).todos(None))) == n

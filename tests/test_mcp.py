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

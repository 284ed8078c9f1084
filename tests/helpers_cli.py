"""Shared by the CLI tests: running a command, the one-line error it must give, what it stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from toolreplay._cli import cli
from toolreplay._store.sqlite import SQLiteStore

GOOD = {
    "id": "c1",
    "messages": [
        {"id": "m1", "role": "user", "text": "Close #12."},
        {
            "id": "m2",
            "role": "assistant",
            "text": "Closed #12.",
            "tool_uses": [
                {"tool_name": "coop", "tool_input": {"action": "close", "id": 12}},
                {"tool_name": "result", "tool_input": "status: closed"},
            ],
        },
    ],
}


def run(*args: str) -> Result:
    """The command as a user types it (``toolreplay ...``)."""
    return CliRunner().invoke(cli, list(args), prog_name="toolreplay")


def invoke(*args: str, **kwargs: Any) -> Result:
    """The command with CliRunner's own options (``terminal_width=``, ``input=``...)."""
    return CliRunner().invoke(cli, list(args), **kwargs)


def one_line_error(res: Result) -> str:
    """The error of a failed command: exit 1, no traceback, one ``Error: ...`` line on stderr."""
    assert res.exit_code == 1, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    return lines[0]


def write_json(tmp_path: Path, name: str, value: Any) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(value), encoding="utf-8")
    return p


def write_file(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def good_with(**message: object) -> str:
    """:data:`GOOD` with its reply's fields replaced, as file text."""
    bad = json.loads(json.dumps(GOOD))
    bad["messages"][1] = {**bad["messages"][1], **message}
    return json.dumps(bad)


def conversations(db: Path) -> list[str]:
    """The conversations stored in ``db`` (none when the file was never made)."""
    if not db.exists():
        return []
    with SQLiteStore(db) as s:
        return [c.id for c in s.list_conversations()]


__all__ = [
    "GOOD",
    "conversations",
    "good_with",
    "invoke",
    "one_line_error",
    "run",
    "write_file",
    "write_json",
]

"""One reader for every SOURCE: what `import` reads, every command that takes a SOURCE reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from toolreplay._cli import cli

CHAT = [
    {"role": "user", "content": "Close #12."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "coop", "arguments": '{"action":"close","id":12}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "status: closed"},
    {"role": "assistant", "content": "Closed #12."},
    {"role": "user", "content": "And #13?"},
]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="toolreplay")


@pytest.fixture
def chat_file(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CHAT), encoding="utf-8")
    return path


def test_render_replay_and_audit_read_a_plain_chat_list(chat_file: Path, tmp_path: Path) -> None:
    res = run("render", str(chat_file), "-v", "anthropic")
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    assert [b["type"] for b in body["messages"][1]["content"]] == ["tool_use"]
    res = run("replay", str(chat_file))
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)[1]["calls"][0]["answer"] == "status: closed"
    native = tmp_path / "native.json"
    native.write_text(run("render", str(chat_file), "-v", "gemini").stdout, encoding="utf-8")
    res = run("audit", str(native), "--history", str(chat_file))
    assert res.exit_code == 0, res.output
    assert "1 calls: 1 as calls, 0 as text, 0 missing" in res.stdout


def test_lab_reads_the_same_formats(chat_file: Path) -> None:
    # Refused before anything is sent (the message id does not exist), but only after the file was read.
    res = run("lab", str(chat_file), "--at", "nope", "-v", "kimi", "--expect", "coop", "--no-chart")
    assert res.exit_code == 1
    assert "nope" in res.output and "in no known format" not in res.output


def test_an_import_warning_is_printed_by_render_too(tmp_path: Path) -> None:
    session = Path(__file__).resolve().parent / "data" / "import_claude_code_session.jsonl"
    res = run("render", str(session), "-v", "kimi")
    assert res.exit_code == 0, res.output
    assert f"warning: {session}: skipped 2 file-history-snapshot entries" in res.stderr


def test_an_empty_conversation_is_an_error_that_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    for command in (["render", str(empty), "-v", "kimi"], ["replay", str(empty)]):
        res = run(*command)
        assert res.exit_code == 1
        assert res.stderr.strip() == f"Error: {empty}: the conversation 'empty' is empty: it has no messages"


def test_a_file_in_no_format_is_one_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a history\n", encoding="utf-8")
    res = run("render", str(notes), "-v", "kimi")
    assert res.exit_code == 1
    assert res.stderr.strip() == (f"Error: {notes}: not JSON (Expecting value at line 1, column 1)")


def test_a_file_of_several_conversations_asks_for_one(tmp_path: Path) -> None:
    many = tmp_path / "many.jsonl"
    lines = [{"id": c, "messages": [{"id": "m1", "role": "user", "text": "hi"}]} for c in ("a", "b")]
    many.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    res = run("render", str(many), "-v", "kimi")
    assert res.exit_code == 1
    assert "holds 2 conversations (a, b); import it and name one by its id" in res.stderr

"""``toolreplay import`` through the real command group, against a temporary SQLite store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from toolreplay._cli import cli
from toolreplay._history import History
from toolreplay._store import open_store

DATA = Path(__file__).parent / "data"


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["import", *args])


def _stored(db: Path, cid: str) -> History | None:
    store = open_store(str(db))
    try:
        return store.load(cid) if store.exists(cid) else None
    finally:
        store.close()


def _demo(demo_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(demo_path.read_text(encoding="utf-8"))
    return data


def test_import_is_idempotent(tmp_path: Path, demo_path: Path) -> None:
    db = tmp_path / "t.db"
    first = _run(str(demo_path), "--db", str(db))
    assert first.exit_code == 0, first.output
    assert f"{demo_path}: toolreplay (detected), 1 conversation, 4 calls" in first.stdout
    assert "demo-chief: 12 messages, 4 calls: 12 added" in first.stdout
    again = _run(str(demo_path), "--db", str(db))
    assert again.exit_code == 0, again.output
    assert "demo-chief: 12 messages, 4 calls: already stored, unchanged" in again.stdout
    stored = _stored(db, "demo-chief")
    assert stored is not None and len(stored.messages) == 12


def test_conflicting_message_is_refused_and_nothing_written(tmp_path: Path, demo_path: Path) -> None:
    db = tmp_path / "t.db"
    assert _run(str(demo_path), "--db", str(db)).exit_code == 0
    before = _stored(db, "demo-chief")
    data = _demo(demo_path)
    data["messages"][4]["text"] = "Closed #12 and #13."  # m05 changed
    data["messages"].append({"id": "m13", "role": "assistant", "text": "Yes, #14 is closed."})  # and one new
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    out = _run(str(changed), "--db", str(db))
    assert out.exit_code == 1
    assert "demo-chief: 13 messages, 4 calls: refused, nothing of it written" in out.stdout
    assert "Error: " in out.stderr and "'m05'" in out.stderr and "text" in out.stderr
    assert _stored(db, "demo-chief") == before  # the new m13 was not written either


def test_conversation_option_and_dry_run(tmp_path: Path, demo_path: Path) -> None:
    db = tmp_path / "t.db"
    dry = _run(str(demo_path), "--conversation", "copy", "--dry-run", "--db", str(db))
    assert dry.exit_code == 0, dry.output
    assert "copy: 12 messages, 4 calls" in dry.stdout and "dry run: nothing stored" in dry.stdout
    assert _stored(db, "copy") is None
    assert _run(str(demo_path), "--conversation", "copy", "--db", str(db)).exit_code == 0
    assert _stored(db, "copy") is not None


def test_many_conversations_one_refused_the_others_stored(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    conv = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    path = tmp_path / "c.jsonl"
    path.write_text(
        json.dumps({"id": "a", "messages": conv}) + "\n" + json.dumps({"id": "b", "messages": conv}) + "\n"
    )
    assert _run(str(path), "--db", str(db)).exit_code == 0
    conv2 = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "HELLO"}]
    path.write_text(
        json.dumps({"id": "a", "messages": conv2}) + "\n" + json.dumps({"id": "c", "messages": conv}) + "\n"
    )
    out = _run(str(path), "--db", str(db))
    assert out.exit_code == 1
    assert "a: 2 messages, 0 calls: refused" in out.stdout and "c: 2 messages, 0 calls: 2 added" in out.stdout
    assert "1 of 2 conversations" in out.stdout


def test_bad_input_exits_with_one_clear_line(tmp_path: Path) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"rows": []}')
    out = _run(str(odd), "--db", str(tmp_path / "t.db"))
    assert out.exit_code == 1
    assert out.stderr.startswith(f"Error: {odd}: in no known format: closest is toolreplay (")
    assert len(out.stderr.strip().splitlines()) == 1
    bad = _run(str(odd), "--from", "csv")
    assert bad.exit_code == 2 and "Invalid value for '--from'" in bad.stderr


def test_truncated_jsonl_warns_and_stores_the_complete_lines(tmp_path: Path) -> None:
    src = (DATA / "import_claude_code_session.jsonl").read_text()
    cut = tmp_path / "session.jsonl"
    cut.write_text(src[:-40])
    db = tmp_path / "t.db"
    out = _run(str(cut), "--db", str(db))
    assert out.exit_code == 0, out.output
    assert "session.jsonl: claude-code (detected), 1 conversation, 5 calls" in out.stdout
    assert f"warning: {cut} line {len(src.splitlines())}: not complete JSON" in out.stderr
    stored = _stored(db, "5f2c9e1a-7d43-4b8e-9a61-2c0d3e8f4b17")
    assert stored is not None and len(stored.messages) == 7


def test_a_file_that_fails_part_way_stores_nothing(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    good = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    path = tmp_path / "c.jsonl"
    lines = [{"id": "a", "messages": good}, {"id": "b", "messages": [{"role": "robot", "content": "x"}]}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    out = _run(str(path), "--from", "openai-chat", "--db", str(db))
    assert out.exit_code == 1
    assert f"{path} line 2: openai-chat request: messages[0].role is 'robot'" in out.stderr
    assert _stored(db, "a") is None  # every conversation is read before any is stored

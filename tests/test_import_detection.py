"""import: the format detected (and why each other format refused), and the import's own messages."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import conversations, invoke, write_json
from toolreplay._errors import ConfigError

# -- a file is judged by the reader of the format it looks like; every refusal says why --------


def test_toolreplay_shaped_file_is_judged_by_its_own_reader(tmp_path: Path) -> None:
    """Read as openai-chat, the user's words would become "" and message 1 vanish, silently."""
    f = write_json(
        tmp_path,
        "n.json",
        {
            "id": "c1",
            "messages": [{"id": "m1", "role": "user", "text": "hi"}, {"role": "assistant", "text": "x"}],
        },
    )
    db = tmp_path / "t.db"
    r = invoke("import", str(f), "--db", str(db))
    assert r.exit_code == 1
    assert r.stderr.strip() == f"Error: {f}: message 1: id: missing or not a string"
    assert not db.exists() or conversations(db) == []


def test_toolreplay_shaped_file_with_a_bad_role_names_one_reason(tmp_path: Path) -> None:
    """One reason, the toolreplay reader's, not a line listing all ten formats."""
    f = write_json(
        tmp_path, "r.json", {"id": "c2", "messages": [{"id": "m1", "role": "robot", "text": "hi"}]}
    )
    r = invoke("import", str(f), "--db", str(tmp_path / "t.db"))
    assert r.exit_code == 1
    line = r.stderr.strip()
    assert (
        line == f"Error: {f}: message 0 (id m1): role: 'robot' is not a role; use user, assistant or system"
    )
    assert "openai-chat" not in line and "\n" not in line


def test_toolreplay_shaped_file_with_a_wire_key_says_so(tmp_path: Path) -> None:
    f = write_json(
        tmp_path, "w.json", {"messages": [{"id": "m1", "role": "user", "text": "hi", "content": "x"}]}
    )
    r = invoke("import", str(f), "--dry-run")
    assert r.exit_code == 1
    assert r.stderr.startswith(f"Error: {f}: looks like toolreplay but is not: messages[0] has 'content'")


def test_a_wire_never_detected_when_a_message_key_would_be_lost(tmp_path: Path) -> None:
    """Generally: a Chat list with a Gemini 'parts' message is no format; named, it warns."""
    f = write_json(
        tmp_path,
        "p.json",
        [{"role": "user", "content": "hi"}, {"role": "assistant", "parts": [{"text": "x"}]}],
    )
    auto = invoke("import", str(f), "--dry-run")
    assert auto.exit_code == 1
    assert (
        "closest is openai-chat (messages[1] has 'parts', which openai-chat does not read (it would be lost))"
        in auto.stderr
    )
    named = invoke("import", str(f), "--dry-run", "--from", "openai-chat")
    assert named.exit_code == 0, named.output
    assert f"warning: {f}: messages[1].parts: openai-chat does not read it; not kept" in named.stderr


def test_sqlite_not_llm_logs_names_llm_logs_only(tmp_path: Path) -> None:

    f = tmp_path / "x.db"
    with closing(sqlite3.connect(f)) as c:
        c.execute("CREATE TABLE a (b)")
        c.commit()
    r = invoke("import", str(f), "--dry-run")
    assert r.exit_code == 1
    assert r.stderr.strip() == (
        f"Error: {f}: looks like llm-logs but is not: an SQLite database without llm's conversations, "
        "responses table(s)"
    )


def test_plain_chat_lists_and_the_demo_still_detect(tmp_path: Path, demo_path: Path) -> None:
    f = write_json(
        tmp_path, "c.json", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    )
    r = invoke("import", str(f), "--dry-run")
    assert r.exit_code == 0 and "openai-chat (detected)" in r.stdout
    r = invoke("import", str(demo_path), "--dry-run")
    assert r.exit_code == 0 and "toolreplay (detected)" in r.stdout


@pytest.mark.parametrize("bad", ["robot", "tool"])
def test_jsonl_messages_shaped_as_toolreplay(tmp_path: Path, bad: str) -> None:
    f = tmp_path / "m.jsonl"
    f.write_text(
        json.dumps({"id": "m1", "role": "user", "text": "hi"})
        + "\n"
        + json.dumps({"id": "m2", "role": bad, "text": "x"})
        + "\n",
        encoding="utf-8",
    )
    r = invoke("import", str(f), "--dry-run")
    assert r.exit_code == 1
    assert r.stderr.startswith(f"Error: {f}: message 1 (id m2): role: ")


# -- import's own messages: counts, refusals, the fallback -----------------------------------


def test_import_empty_conversation_refused_before_reading(tmp_path: Path, demo_path: Path) -> None:
    db = tmp_path / "t.db"
    r = invoke("import", str(demo_path), "--conversation", "", "--db", str(db))
    assert r.exit_code == 2
    assert r.stdout == ""  # no summary printed first
    assert "Invalid value for '--conversation': must not be empty" in r.stderr
    assert not db.exists()


def test_import_counts_are_singular_for_one(tmp_path: Path) -> None:
    f = write_json(
        tmp_path,
        "one.json",
        [
            {"id": "u1", "role": "user", "text": "go"},
            {
                "id": "a1",
                "role": "assistant",
                "text": "",
                "tool_uses": [{"id": "c1", "name": "t", "input": {}, "result": "ok"}],
            },
        ],
    )
    r = invoke("import", str(f), "--db", str(tmp_path / "t.db"))
    assert r.exit_code == 0, r.output
    assert f"{f}: toolreplay (detected), 1 conversation, 1 call\n" in r.stdout
    assert "  one: 2 messages, 1 call: 2 added" in r.stdout


def test_refused_conversation_and_main_fallback_print_click_style(
    tmp_path: Path, demo_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    assert invoke("import", str(demo_path), "--db", str(db)).exit_code == 0
    changed = json.loads(demo_path.read_text(encoding="utf-8"))
    changed["messages"][0]["text"] = "something else"
    r = invoke("import", str(write_json(tmp_path, "changed.json", changed)), "--db", str(db))
    assert r.exit_code == 1
    assert r.stderr.startswith("Error: ") and "error:" not in r.stderr

    from toolreplay import _cli as cli_pkg

    def boom(**_: Any) -> None:
        raise ConfigError("raised outside click")

    monkeypatch.setattr(cli_pkg.cli, "main", boom)
    with pytest.raises(SystemExit) as exc:
        cli_pkg.main([])
    assert exc.value.code == 1
    assert capsys.readouterr().err == "Error: raised outside click\n"

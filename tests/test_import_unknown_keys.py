"""The toolreplay format never drops a message key silently: an unknown key is warned about, and one that
holds calls refuses the file (it imported as "0 calls" before: `"calls"`, the key `replay` prints, or a
misspelled `"tooluses"`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import conversations, one_line_error, run, write_file
from toolreplay._errors import HistoryError
from toolreplay._history import History, Message, ToolCall, history_to_dict, load_history
from toolreplay._importers import read_file
from toolreplay._steps import Part, Step, Text

USER = {"id": "m1", "role": "user", "text": "Close #12."}
CALL = {"id": "c1", "name": "coop", "input": {"action": "close", "id": 12}, "answer": "closed"}


def _file(tmp_path: Path, reply: dict[str, Any], *, jsonl: bool = False) -> Path:
    reply = {"id": "m2", "role": "assistant", "text": "Closed #12.", **reply}
    if jsonl:
        return write_file(tmp_path, "h.jsonl", f"{json.dumps(USER)}\n{json.dumps(reply)}\n")
    return write_file(tmp_path, "h.json", json.dumps({"id": "c", "messages": [USER, reply]}))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("calls", [CALL]),  # what `toolreplay replay` prints
        ("tooluses", [{"tool_name": "coop", "tool_input": {"id": 12}}]),  # tool_uses misspelled
        ("toolUses", [{"tool": "coop", "args": {"id": 12}}]),  # a shape no reader knows, under a call key
        ("function_call", {"name": "coop", "arguments": "{}"}),  # one call, not in a list
    ],
)
@pytest.mark.parametrize("jsonl", [False, True])
def test_an_unknown_key_holding_calls_refuses_the_file(
    tmp_path: Path, key: str, value: Any, jsonl: bool
) -> None:
    path = _file(tmp_path, {key: value}, jsonl=jsonl)
    db = tmp_path / "t.db"
    line = one_line_error(run("import", str(path), "--db", str(db)))
    assert line.startswith(f"Error: {path}: message 1 (id m2): {key}: an unknown key holding calls"), line
    assert "tool_uses" in line and "the file is refused, nothing of it stored" in line
    assert conversations(db) == []
    with pytest.raises(HistoryError, match=f"message 1 \\(id m2\\): {key}: an unknown key holding calls"):
        load_history(path)


def test_a_file_of_conversations_is_refused_whole(tmp_path: Path) -> None:
    good = {"id": "a", "messages": [USER]}
    bad = {"id": "b", "messages": [USER, {"id": "m2", "role": "assistant", "text": "x", "calls": [CALL]}]}
    path = write_file(tmp_path, "many.jsonl", f"{json.dumps(good)}\n{json.dumps(bad)}\n")
    db = tmp_path / "t.db"
    line = one_line_error(run("import", str(path), "--db", str(db)))
    assert line.startswith(f"Error: {path} line 2: message 1 (id m2): calls: an unknown key holding calls")
    assert conversations(db) == []  # the good conversation before it is not stored either


def test_every_other_unknown_key_is_warned_about_by_name(tmp_path: Path) -> None:
    reply = {"timestamp": "2026-01-01", "tags": ["a", "b"], "tool_uses": [CALL], "tools": [{"name": "coop"}]}
    path = _file(tmp_path, reply)
    db = tmp_path / "t.db"
    res = run("import", str(path), "--db", str(db))
    assert res.exit_code == 0, res.output
    assert "1 call" in res.output
    for key in ("timestamp", "tags", "tools"):
        assert f"warning: {path}: message 1 (id m2): unknown key {key!r} ignored" in res.stderr, res.stderr
    assert res.stderr.count("unknown key") == 3
    assert conversations(db) == ["c"]
    h = load_history(path)
    assert [w for w in h.warnings if "unknown key" in w] == [
        f"{path}: message 1 (id m2): unknown key {k!r} ignored" for k in ("timestamp", "tags", "tools")
    ]


def test_the_formats_own_keys_are_never_unknown(tmp_path: Path) -> None:
    """Every key the file format writes reads back without a warning (a field added to Message is known)."""
    reply = Message(
        "m2",
        "assistant",
        "done",
        (ToolCall("coop", {"id": 12}, "closed", call_id="c1"),),
        created_at="2026-01-01T00:00:00Z",
        vessel="kimi",
        provider_data={"gemini": {"x": 1}},
        status="interrupted",
        meta={"note": 1},
        steps=(Step((Text("first"),), 1),),
    )
    user = Message("m1", "user", "look", parts=(Part("image", media_type="image/png", data="iVBOR"),))
    data = history_to_dict(History("c", (Message("m0", "system", "Be brief."), user, reply)))
    assert {"created_at", "vessel", "provider_data", "status", "meta", "steps", "parts"} <= {
        k for m in data["messages"] for k in m
    }
    path = write_file(tmp_path, "own.json", json.dumps(data))
    batch = read_file(path)
    assert batch.warnings == () and load_history(path).warnings == ()

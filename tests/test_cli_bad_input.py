"""Bad input on the command line: one line naming the file, the message and the field, nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers_cli import GOOD, conversations, good_with, invoke, one_line_error, run, write_file
from toolreplay._errors import HistoryError, StoreError
from toolreplay._history import load_history, normalize_tool_uses
from toolreplay._store.sqlite import SQLiteStore

# -- bad history files: one line naming the file, the message and the field; nothing stored ------------


BAD_FILES = [
    ("empty.json", "", "empty.json: the file is empty"),
    ("blank.json", "  \n\n", "blank.json: the file is empty"),
    ("notjson.json", "not json {", "notjson.json: not JSON"),
    ("noid.json", json.dumps({"messages": [{"role": "user", "text": "a"}]}), "noid.json: message 0: id:"),
    ("dup.json", good_with(id="m1"), "dup.json: message 1 (id m1): id: duplicate id"),
    ("role.json", good_with(role="robot"), "role.json: message 1 (id m2): role: 'robot' is not a role"),
    ("tu.json", good_with(tool_uses=5), "tu.json: message 1 (id m2): tool_uses: must be a list, not int"),
    (
        "tuobj.json",
        good_with(tool_uses={"a": 1}),
        "tuobj.json: message 1 (id m2): tool_uses: must be a list, not an object (keys: a)",
    ),
    ("cid.json", json.dumps({**GOOD, "id": ""}), "cid.json: id: must be a non-empty string"),
]


@pytest.mark.parametrize(("name", "content", "expected"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
@pytest.mark.parametrize("command", ["replay", "render", "import"])
def test_a_bad_history_file_is_one_line_and_stores_nothing(
    tmp_path: Path, name: str, content: str, expected: str, command: str
) -> None:
    path = write_file(tmp_path, name, content)
    db = tmp_path / "t.db"
    args = [command, str(path), "--db", str(db)]
    if command == "render":
        args += ["--vessel", "openai"]
    if command == "import":
        args += ["--from", "toolreplay"]
    line = one_line_error(run(*args))
    if command == "import" and name in ("noid.json", "role.json"):
        # the importer's own wording (it checks the shape before the loader does); it names the place
        assert line.startswith(f"Error: {path}: not toolreplay: messages[")
    else:
        assert line.replace("not toolreplay: ", "").startswith(f"Error: {tmp_path}/{expected}")
    assert conversations(db) == []


def test_a_history_file_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    path = write_file(tmp_path, "bom.json", b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    assert load_history(path).messages[1].tool_uses[0].answer == "status: closed"
    jsonl = b"\xef\xbb\xbf" + b"\n".join(json.dumps(m).encode() for m in GOOD["messages"])  # type: ignore[attr-defined]
    assert len(load_history(write_file(tmp_path, "bom.jsonl", jsonl)).messages) == 2
    res = run("replay", str(path))
    assert res.exit_code == 0 and json.loads(res.stdout)[1]["calls"][0]["answer"] == "status: closed"


def test_a_directory_is_not_a_history_file(tmp_path: Path) -> None:
    line = one_line_error(run("replay", str(tmp_path)))
    assert line == f"Error: {tmp_path}: is a directory, not a history file"


def test_a_single_tool_use_without_its_list_still_reads() -> None:
    entries = normalize_tool_uses({"name": "coop", "input": {"action": "list"}, "answer": "none"})
    assert [e["tool_name"] for e in entries] == ["coop", "result"]
    with pytest.raises(HistoryError, match=r"^tool_uses: must be a list, not an object \(keys: a, b\)$"):
        normalize_tool_uses({"b": 1, "a": 2})


def test_an_empty_conversation_id_is_refused_everywhere(tmp_path: Path, demo_path: Path) -> None:
    with pytest.raises(HistoryError, match="must not be empty"):
        load_history(demo_path, conversation_id="")
    db = tmp_path / "t.db"
    res = run("import", str(demo_path), "--conversation", "", "--db", str(db))
    assert res.exit_code == 2 and "'--conversation': must not be empty" in res.stderr and res.stdout == ""
    with SQLiteStore(db) as s:
        h = load_history(demo_path)
        with pytest.raises(StoreError, match="a conversation id must be a non-empty string"):
            s.import_history(type(h)("", h.messages))
        with pytest.raises(StoreError, match="non-empty"):
            s.append_message("", h.messages[0])
    assert conversations(db) == []


def test_unknown_conversation_upto_and_vessel(tmp_path: Path, demo_path: Path) -> None:
    db = str(tmp_path / "t.db")
    assert "no conversation 'nope'" in one_line_error(run("history", "show", "nope", "--db", db))
    line = one_line_error(run("replay", "nope", "--db", db))
    assert line == f"Error: nope: neither a history file nor a stored conversation in {db}"
    line = one_line_error(run("replay", str(demo_path), "--upto", "m99"))
    assert "no message with id 'm99'" in line
    line = one_line_error(run("render", str(demo_path), "--vessel", "nosuch"))
    assert line.startswith("Error: unknown vessel 'nosuch'; known vessels: ") and "kimi" in line


# -- audit of a history file: render it first -----------------------------------------------------


def test_audit_of_a_history_file_says_render_it_first(demo_path: Path, tmp_path: Path) -> None:
    r = invoke("audit", str(demo_path))
    assert r.exit_code == 1
    assert r.stderr == (
        f"Error: {demo_path}: a toolreplay history (messages with 'text'/'tool_uses'), not a request body; "
        f"render it first: toolreplay render {demo_path} --vessel NAME > request.json, "
        "then audit request.json\n"
    )
    rendered = invoke("render", str(demo_path), "--vessel", "kimi")
    assert rendered.exit_code == 0
    req = tmp_path / "request.json"
    req.write_text(rendered.stdout, encoding="utf-8")
    ok = invoke("audit", str(req))
    assert ok.exit_code == 0 and "4 calls" in ok.stdout, ok.output

"""JSON Lines are read line by line: one bad line is skipped and named with its number, the rest imports.

Before, one line of invalid UTF-8 or one line nested deeper than 200 levels refused the whole file, and a
broken line of repeated ``{"type":"user"`` was reported as nested too deep (its braces never close)
instead of as the syntax error it is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers_cli import conversations, one_line_error, run, write_file
from toolreplay._errors import HistoryError
from toolreplay._history import load_history
from toolreplay._importers import read_file

DATA = Path(__file__).parent / "data"
SESSION = DATA / "import_claude_code_session.jsonl"
SESSION_ID = "5f2c9e1a-7d43-4b8e-9a61-2c0d3e8f4b17"
MESSAGES = [
    {"id": "m1", "role": "user", "text": "Close #12."},
    {
        "id": "m2",
        "role": "assistant",
        "text": "Closed.",
        "tool_uses": [{"name": "coop", "input": {}, "answer": "ok"}],
    },
    {"id": "m3", "role": "user", "text": "Thanks \u2028 and bye."},  # U+2028 may stand raw in a JSON string
    {"id": "m4", "role": "assistant", "text": "Bye."},
]

BAD_LINES: dict[str, tuple[bytes, str]] = {
    "not UTF-8": (b'{"id": "x", "role": "user", "text": "caf\xe9"}', "not UTF-8 text (byte 40)"),
    "too deep": (b"[" * 250 + b"]" * 250, "JSON nested more than 200 levels deep"),
    "braces never closed": (
        b'{"type":"user"' * 300,
        "not complete JSON (Expecting ',' delimiter at column 15)",
    ),
    "cut short": (b'{"id": "x", "role": "user"', "not complete JSON (the line ends before its value does"),
    "not an object": (b"42", "a JSON int, not an object or a list"),
}


def _with_bad_line(tmp_path: Path, lines: list[bytes], bad: bytes, at: int) -> Path:
    return write_file(tmp_path, "f.jsonl", b"\n".join([*lines[:at], bad, *lines[at:]]) + b"\n")


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_a_bad_line_of_toolreplay_messages_is_skipped_by_number(tmp_path: Path, case: str) -> None:
    bad, why = BAD_LINES[case]
    lines = [json.dumps(m, ensure_ascii=False).encode() for m in MESSAGES]
    path = _with_bad_line(tmp_path, lines, bad, 2)
    batch = read_file(path)
    assert batch.format == "toolreplay"
    assert [m.id for m in batch.conversations[0].messages] == ["m1", "m2", "m3", "m4"]
    assert batch.conversations[0].messages[2].text == "Thanks \u2028 and bye."
    assert len(batch.warnings) == 1 and batch.warnings[0].startswith(f"{path} line 3: {why}"), batch.warnings
    assert batch.warnings[0].endswith("; skipped")
    db = tmp_path / "t.db"
    res = run("import", str(path), "--db", str(db))
    assert res.exit_code == 0, res.output
    assert f"warning: {path} line 3: {why}" in res.stderr and "Traceback" not in res.stderr
    assert conversations(db) == ["f"]


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_a_bad_line_of_a_claude_code_session_is_skipped_by_number(tmp_path: Path, case: str) -> None:
    bad, why = BAD_LINES[case]
    lines = SESSION.read_bytes().splitlines()
    path = _with_bad_line(tmp_path, lines, bad, 5)
    batch = read_file(path)
    assert batch.format == "claude-code" and batch.conversations[0].id == SESSION_ID
    assert len(batch.conversations[0].messages) == len(read_file(SESSION).conversations[0].messages)
    assert batch.warnings[0].startswith(f"{path} line 6: {why}"), batch.warnings


def test_a_json_document_that_is_not_utf8_or_too_deep_is_still_refused_whole(tmp_path: Path) -> None:
    doc = json.dumps({"id": "c", "messages": MESSAGES}, indent=1).encode()
    not_utf8 = write_file(tmp_path, "a.json", doc.replace(b"Bye.", b"By\xe9."))
    line = one_line_error(run("import", str(not_utf8), "--db", str(tmp_path / "t.db")))
    assert line.startswith(f"Error: {not_utf8}: ") and "not UTF-8 text (byte" in line
    deep = write_file(tmp_path, "b.json", b'{"id": "c", "messages": ' + b"[" * 300 + b"]" * 300 + b"}")
    line = one_line_error(run("import", str(deep), "--db", str(tmp_path / "t.db")))
    assert "JSON nested more than 200 levels deep" in line
    assert conversations(tmp_path / "t.db") == []


def test_a_first_line_that_is_bad_still_says_why(tmp_path: Path) -> None:
    """A file whose first line is broken is not taken for JSON Lines: one error, naming the problem."""
    lines = [json.dumps(m).encode() for m in MESSAGES]
    for bad, why in ((b'{"type":"user"' * 300, "Expecting ',' delimiter"), (b'{"t": "\xff"}', "not UTF-8")):
        path = _with_bad_line(tmp_path, lines, bad, 0)
        line = one_line_error(run("import", str(path), "--db", str(tmp_path / "t.db")))
        assert why in line and "nested" not in line, line


def test_load_history_names_the_bad_line(tmp_path: Path) -> None:
    """``load_history`` is strict (the Python API): the first bad line is an error naming that line."""
    lines = [json.dumps(m, ensure_ascii=False).encode() for m in MESSAGES]
    good = write_file(tmp_path, "good.jsonl", b"\n".join(lines) + b"\n")
    assert [m.text for m in load_history(good).messages][2] == "Thanks \u2028 and bye."
    for case, why in (
        ("too deep", "line 3 is not JSON (JSON nested more than 200 levels deep)"),
        ("braces never closed", "line 3 is not JSON (Expecting ',' delimiter)"),
    ):
        path = _with_bad_line(tmp_path, lines, BAD_LINES[case][0], 2)
        with pytest.raises(HistoryError) as exc:
            load_history(path)
        assert str(exc.value) == f"{path}: {why}"

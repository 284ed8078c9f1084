"""Hostile input fuzzed through every command that reads a file or a provider's answer (issue 15): deep
nesting, lone surrogates, huge numbers, huge strings and wrong types end in at most one line of error,
never a traceback, and leave the store as it was (a turn leaves its reply complete or interrupted, never
in progress). The toolreplay format's unknown message keys are each named, or refuse the file when they
hold calls; JSON Lines are read line by line, each bad line skipped and named by its number (issue 27)."""

from __future__ import annotations

import json
import sqlite3
import string
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers_fuzz import json_values
from helpers_raw_server import chat_answer, raw_server
from toolreplay._cli import cli
from toolreplay._importers import read_file
from toolreplay._jsonenc import MAX_DEPTH

pytestmark = pytest.mark.slow  # fuzzing: see docs/design.md, design 26

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


@st.composite
def hostile_values(draw: st.DrawFn) -> str:
    """JSON text of one hostile value."""
    kind = draw(st.sampled_from(["deep", "surrogate", "digits", "long", "wrong"]))
    if kind == "deep":
        n = draw(st.integers(150, 3000))
        return draw(st.sampled_from(["[" * n + "]" * n, '{"a":' * n + "1" + "}" * n]))
    if kind == "surrogate":
        return '"' + draw(st.sampled_from(["\\ud800", "\\udfff", "a\\udc00b", "\\ud83d"])) + '"'
    if kind == "digits":
        return "9" * draw(st.integers(19, 5000))
    if kind == "long":
        return json.dumps("x" * draw(st.integers(10_000, 300_000)))
    return json.dumps(draw(st.sampled_from([None, True, 1.5, [], {}, [1, "a"], {"x": None}])))


@st.composite
def hostile_histories(draw: st.DrawFn) -> str:
    """A history file's text with one hostile value where a field (or the whole) should be."""
    value = draw(hostile_values())
    slot = draw(st.sampled_from(["whole", "messages", "text", "role", "id", "input", "answer", "tool_uses"]))
    if slot == "whole":
        return value
    msg = {
        "id": "m2",
        "role": "assistant",
        "text": "ok",
        "tool_uses": [{"name": "coop", "input": {}, "answer": "x"}],
    }
    holder = "@@HOSTILE@@"
    if slot in ("input", "answer"):
        msg["tool_uses"][0][slot] = holder  # type: ignore[index]
    elif slot != "messages":
        msg[slot] = holder
    doc: dict[str, Any] = {"id": "c1", "messages": holder if slot == "messages" else [
        {"id": "m1", "role": "user", "text": "hi"}, msg]}  # fmt: skip
    return json.dumps(doc).replace(json.dumps(holder), value)


def _one_line_at_most(r: Result) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    if r.exit_code != 0:
        # the context budget's notice (what a turn left out of its request) is not an error line
        errors = [line for line in r.stderr.splitlines() if not line.startswith("  (context budget:")]
        assert len(errors) <= 1, r.stderr


def _rows(db: Path) -> list[Any]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT conversation_id, id, status, text FROM messages ORDER BY 1, 2").fetchall()


@FUZZ
@given(text=hostile_histories())
def test_commands_reading_a_file(text: str, tmp_path_factory: Any, demo_path: Path) -> None:
    work = tmp_path_factory.mktemp("fuzz")
    path, db = work / "h.json", work / "t.db"
    path.write_text(text, encoding="utf-8")
    assert CliRunner().invoke(cli, ["import", str(demo_path), "--db", str(db)]).exit_code == 0
    before = _rows(db)
    with_db = ["--db", str(db)]
    commands = (
        ["import", str(path), "--dry-run", *with_db],
        ["render", str(path), "--vessel", "openai", *with_db],
        ["replay", str(path), *with_db],
        ["audit", str(path)],
        ["cache-diff", str(path), str(path)],
        ["lab", str(path), "--at", "m1", "--vessel", "kimi", "--expect", "coop", *with_db],
    )
    for args in commands:
        _one_line_at_most(CliRunner().invoke(cli, args))
        assert _rows(db) == before


@FUZZ
@given(value=hostile_values())
def test_turn_on_a_hostile_answer(value: str, tmp_path_factory: Any) -> None:
    db = tmp_path_factory.mktemp("fuzz") / "t.db"
    with raw_server([chat_answer(value), value.encode("utf-8", "surrogatepass")]) as (base, _):
        for _ in range(2):
            r = CliRunner().invoke(cli, ["turn", "hi", "--vessel", "openai-compatible", "--conversation", "c",
                                         "--base-url", base, "--db", str(db), "--timeout", "20"])  # fmt: skip
            _one_line_at_most(r)
    assert all(status in ("complete", "interrupted") for _, _, status, _ in _rows(db))


# -- the toolreplay format's unknown keys, and JSON Lines line by line (issue 27) --------------------------

_KNOWN = {"id", "role", "text", "tool_uses", "created_at", "vessel", "provider_data", "status", "meta",
          "steps", "parts"}  # fmt: skip
_CALL_KEYS = ["calls", "tooluses", "toolUses", "tool_call", "functionCalls", "Calls"]
_CALL_SHAPED = st.lists(
    st.sampled_from([
        {"name": "coop", "input": {"id": 1}, "answer": "ok"},
        {"tool_name": "coop", "tool_input": {"id": 1}},
        {"type": "tool_use", "id": "t1", "name": "coop", "input": {}},
        {"function": {"name": "coop", "arguments": "{}"}},
    ]),
    min_size=1,
    max_size=3,
)  # fmt: skip
_PLAIN_KEYS = st.text(string.ascii_letters + "_", min_size=1, max_size=10).filter(
    lambda k: k not in _KNOWN and "call" not in k.lower() and "tooluse" not in k.lower().replace("_", "")
)


@st.composite
def _extra_keys(draw: st.DrawFn) -> dict[str, tuple[Any, bool]]:
    """Unknown keys for one message: each with its value and whether it certainly holds calls."""
    out: dict[str, tuple[Any, bool]] = {}
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            out[draw(st.sampled_from(_CALL_KEYS))] = (draw(_CALL_SHAPED), True)
        else:
            out[draw(_PLAIN_KEYS)] = (draw(json_values), False)
    return out


@FUZZ
@given(
    extra=st.lists(_extra_keys(), min_size=3, max_size=3),
    where=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_unknown_message_keys_are_named_or_refuse_the_file(
    extra: list[dict[str, tuple[Any, bool]]], where: list[bool], tmp_path_factory: Any
) -> None:
    work = tmp_path_factory.mktemp("fuzz")
    path, db = work / "h.json", work / "t.db"
    messages: list[dict[str, Any]] = [
        {"id": "m1", "role": "user", "text": "Close #12."},
        {"id": "m2", "role": "assistant", "text": "Done.", "tool_uses": [{"name": "coop", "answer": "x"}]},
        {"id": "m3", "role": "user", "text": "Thanks."},
    ]  # fmt: skip
    added: dict[tuple[int, str], bool] = {}
    for i, (keys, chosen) in enumerate(zip(extra, where, strict=True)):
        for key, (value, calls) in keys.items() if chosen else ():
            messages[i][key] = value
            added[(i, key)] = calls
    path.write_text(json.dumps({"id": "c", "messages": messages}), encoding="utf-8")
    r = CliRunner().invoke(cli, ["import", str(path), "--db", str(db), "--all-warnings"])
    _one_line_at_most(r)
    if any(added.values()):  # calls would be lost: refused, nothing stored
        assert r.exit_code == 1 and "an unknown key holding calls" in r.stderr, r.output
    if r.exit_code != 0:
        assert "an unknown key holding calls" in r.stderr and str(path) in r.stderr, r.stderr
        assert any(f"message {i} (id m{i + 1}): {json.dumps(k)[1:-1]}: " in r.stderr for i, k in added), (
            r.stderr
        )
        assert not db.exists() or _rows(db) == []
        return
    warned = [line for line in r.stderr.splitlines() if "unknown key" in line]
    assert len(warned) == len(added), r.stderr
    for i, key in added:
        assert any(
            f"{path}: message {i} (id m{i + 1}): unknown key " in w and repr(key) in w for w in warned
        ), (
            key,
            warned,
        )
    assert "1 conversation, 1 call" in r.stdout and len(_rows(db)) == 3


def _good_lines() -> list[bytes]:
    msgs = [
        {"id": f"m{i}", "role": "user" if i % 2 else "assistant", "text": f"line {i} \u2028 caf\u00e9"}
        for i in range(1, 9)
    ]
    msgs[0]["role"] = "user"
    return [json.dumps(m, ensure_ascii=False).encode() for m in msgs]


@st.composite
def _bad_line(draw: st.DrawFn, good: bytes) -> bytes:
    """A line that is certainly not a record: never blank, never a complete JSON object or list."""
    kind = draw(st.sampled_from(["hostile", "not utf-8", "cut", "braces", "digits"]))
    if kind == "hostile":
        # an object or a list only when nested past the limit (the shallower ones are records)
        value = draw(hostile_values().filter(lambda v: v[0] not in "[{" or v.count(v[0]) > MAX_DEPTH))
        return value.encode("utf-8", "surrogatepass")
    if kind == "not utf-8":
        at = draw(st.integers(1, len(good) - 2))
        return good[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"])) + good[at:]
    if kind == "cut":
        return good[: draw(st.integers(1, len(good) - 1))].rstrip(b"\r")
    if kind == "braces":
        return b'{"type":"user"' * draw(st.integers(2, 400))
    return b'{"id": "d", "role": "user", "n": ' + b"9" * draw(st.integers(4301, 6000)) + b"}"


@FUZZ
@given(data=st.data())
def test_json_lines_are_read_line_by_line(data: st.DataObject, tmp_path_factory: Any) -> None:
    work = tmp_path_factory.mktemp("fuzz")
    good = _good_lines()
    bad_at = data.draw(st.sets(st.integers(2, len(good)), min_size=1, max_size=4))  # line numbers, from 1
    lines = [data.draw(_bad_line(line)) if n in bad_at else line for n, line in enumerate(good, 1)]
    path = work / "h.jsonl"
    path.write_bytes(b"\n".join(lines) + data.draw(st.sampled_from([b"\n", b"", b"\r\n"])))
    batch = read_file(path)
    assert [m.id for m in batch.conversations[0].messages] == [
        f"m{n}" for n in range(1, 9) if n not in bad_at
    ]
    assert all("\u2028" in m.text for m in batch.conversations[0].messages)
    named = sorted(int(w.split(" line ")[1].split(":")[0]) for w in batch.warnings)
    assert named == sorted(bad_at), batch.warnings
    for w in batch.warnings:
        assert w.startswith(f"{path} line ") and w.endswith("; skipped"), w
        if "Expecting" in w or "cut short" in w:
            assert "nested" not in w, w
    r = CliRunner().invoke(cli, ["import", str(path), "--db", str(work / "t.db")])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    assert r.stderr.count("warning: ") == len(bad_at), r.stderr

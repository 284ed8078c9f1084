"""Hostile input fuzzed through every command that reads a file or a provider's answer (issue 15): deep
nesting, lone surrogates, huge numbers, huge strings and wrong types end in at most one line of error,
never a traceback, and leave the store as it was (a turn leaves its reply complete or interrupted, never
in progress)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers_raw_server import chat_answer, raw_server
from toolreplay._cli import cli

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

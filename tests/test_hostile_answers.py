"""Hostile provider answers and files end in one line or a clean replacement, nothing half-stored, and
the lab goes on (issue 15, items 4, 7 and 12): a lone surrogate, JSON nested thousands deep, a
4,400-digit integer, a conversation id that is not text."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from helpers_raw_server import chat_answer, raw_server
from toolreplay import _jsonenc as jsonenc
from toolreplay._cli import cli

DEEP = "[" * 5000 + "]" * 5000
LONE = '"hi \\ud800 there"'


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _one_line_error(r: Result) -> None:
    assert r.exit_code != 0
    assert ("Traceback" not in r.output and r.exception is None) or isinstance(r.exception, SystemExit)
    assert r.stderr.count("\n") == 1, r.stderr


def _statuses(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT status FROM messages ORDER BY position")]


# -- the JSON reader -------------------------------------------------------------------------------------


def test_loads_replaces_lone_surrogates_and_keeps_pairs() -> None:
    assert jsonenc.loads(LONE) == "hi \ufffd there"
    assert jsonenc.loads('{"\\udc00k": ["\\ud83d\\ude00", "\\ud83d"]}') == {
        "\ufffdk": ["\U0001f600", "\ufffd"]
    }


@pytest.mark.parametrize("text", [DEEP, '{"a":' * 5000 + "1" + "}" * 5000, "[" * 300 + "]" * 300])
def test_loads_refuses_deep_nesting_in_one_line(text: str) -> None:
    with pytest.raises(ValueError, match=r"^JSON nested more than 200 levels deep$"):
        jsonenc.loads(text)
    assert jsonenc.loads("[" * 200 + "]" * 200) is not None


def test_loads_refuses_a_number_of_thousands_of_digits_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^a number with more than 4300 digits$"):
        jsonenc.loads("[" + "9" * 4400 + "]")


# -- a provider's answer ------------------------------------------------------------------------------------


def test_a_lone_surrogate_answer_prints_stores_and_finishes(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with raw_server([chat_answer(LONE)]) as (base, _):
        plain = _run("turn", "hi", "--vessel", "openai-compatible", "--conversation", "c", "--base-url", base,
                     "--db", str(db))  # fmt: skip
        assert plain.exit_code == 0, plain.output
        assert plain.stdout == "hi \ufffd there\n"
        as_json = _run("turn", "hi", "--vessel", "openai-compatible", "--conversation", "c", "--base-url",
                       base, "--db", str(db), "--json")  # fmt: skip
        assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout)["messages"][1]["text"] == "hi \ufffd there"
    assert _statuses(db) == ["complete"] * 4


def test_a_deeply_nested_answer_is_one_line_and_the_reply_interrupted(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with raw_server([chat_answer(DEEP)]) as (base, _):
        r = _run("turn", "hi", "--vessel", "openai-compatible", "--conversation", "c", "--base-url", base,
                 "--db", str(db))  # fmt: skip
    _one_line_error(r)
    assert "nested" in r.stderr and _statuses(db) == ["complete", "interrupted"]


def test_one_bad_answer_fails_one_lab_trial_not_the_run(tmp_path: Path, demo_path: Path) -> None:
    answers = [chat_answer(LONE), chat_answer(DEEP), chat_answer('"fine"')]
    out = tmp_path / "lab"
    with raw_server(answers) as (base, state):
        r = _run("lab", str(demo_path), "--at", "m10", "--vessel", "openai-compatible", "--modes", "native",
                 "--trials", "4", "--concurrency", "1", "--expect", "coop:close", "--out", str(out),
                 "--base-url", base, "--no-chart", "--db", str(tmp_path / "l.db"))  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    trials = (out / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(trials) == 3 and (out / "summary.json").is_file()
    assert state.count == 4


# -- files and ids ---------------------------------------------------------------------------------


def _history_with(value_json: str, tmp_path: Path) -> Path:
    path = tmp_path / "h.json"
    path.write_text(
        '{"id": "c1", "messages": [{"id": "m1", "role": "user", "text": "hi"}, {"id": "m2", "role": '
        '"assistant", "text": "ok", "tool_uses": [{"name": "coop", "input": {"id": ' + value_json + "}, "
        '"answer": "x"}]}]}',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("value", ["9" * 4400, DEEP], ids=["digits", "deep"])
def test_a_hostile_history_file_is_one_line_everywhere(value: str, tmp_path: Path) -> None:
    path = str(_history_with(value, tmp_path))
    db = str(tmp_path / "h.db")
    commands = (
        ["render", path, "--vessel", "openai"],
        ["replay", path],
        ["import", path, "--db", db],
        ["audit", path],
        ["lab", path, "--at", "m1", "--vessel", "kimi", "--expect", "coop"],
    )
    for args in commands:
        r = _run(*args)
        _one_line_error(r)
    assert not Path(db).exists() or _run("history", "list", "--db", db).stdout.strip() in (
        "",
        "no conversations",
    )


@pytest.mark.skipif(sys.platform == "win32", reason="argv surrogates are a POSIX thing")
def test_a_conversation_id_that_is_not_text_is_one_line(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    bad = "c\udcff"  # what Python makes of the byte 0xff in a command-line argument
    for args in (["history", "show", bad, "--db", db], ["render", bad, "--vessel", "openai", "--db", db],
                 ["turn", "hi", "--conversation", bad, "--vessel", "ollama", "--db", db],
                 ["turn", "hi \udcff", "--conversation", "c", "--vessel", "ollama", "--db", db]):  # fmt: skip
        r = _run(*args)
        _one_line_error(r)
        assert "UTF-8" in r.stderr


@pytest.mark.parametrize("number", ["1e999", "-1e999", "NaN", "Infinity"])
def test_a_non_finite_number_in_an_object_of_arguments_is_not_run(number: str) -> None:
    """Anthropic and Gemini carry arguments as an object in the body: read, 1e999 is inf, and stored
    or sent it would be null. Kept as text (NaN/Infinity spell it), with an error for the model."""
    from toolreplay.wires import get_wire
    from toolreplay.wires._parse import NOT_FINITE

    body = (
        '{"id":"m","type":"message","role":"assistant","model":"x","stop_reason":"tool_use","content":'
        '[{"type":"tool_use","id":"t1","name":"work","input":{"n":' + number + ',"k":"v"}}]}'
    )
    (call,) = get_wire("anthropic").parse_response(jsonenc.loads(body)).calls
    assert call.input_error == NOT_FINITE
    assert isinstance(call.input, str) and call.input.startswith('{"n":') and '"k":"v"' in call.input
    assert "null" not in call.input

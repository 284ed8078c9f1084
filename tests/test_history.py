"""The stored history: the file format, normalize_tool_uses, pairing (design 1), bad and weird input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers_common import SECTION_2
from toolreplay._errors import HistoryError
from toolreplay._history import (
    History,
    Message,
    ToolCall,
    history_from_dict,
    history_to_dict,
    load_history,
    normalize_tool_uses,
    pair_tool_uses,
)
from toolreplay._store.sqlite import SQLiteStore


def write(tmp_path: Path, content: str, name: str = "h.json") -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def pairs(raw: Any) -> list[tuple[str, Any, str | None]]:
    calls, _ = pair_tool_uses(normalize_tool_uses(raw))
    return [(c.name, c.input, c.answer) for c in calls]


# --------------------------------------------------------------------------------------------------
# the file format


def test_section_2_example(tmp_path: Path) -> None:
    h = load_history(write(tmp_path, json.dumps(SECTION_2)))
    assert h.id == "conv-1" and [m.id for m in h.messages] == ["m1", "m2", "m3", "m4"]
    assert h.messages[1].tool_uses == (ToolCall("coop", {"action": "close", "id": 12}, "status: closed"),)
    assert h.messages[3].tool_uses == ()
    assert h.warnings == ()
    assert load_history(SECTION_2) == h  # a dict in the file format reads the same


def test_json_lines(tmp_path: Path) -> None:
    lines = "\n".join(json.dumps(m) for m in SECTION_2["messages"]) + "\n\n"
    h = load_history(write(tmp_path, lines, "conv-9.jsonl"))
    assert h.id == "conv-9"  # named after the file
    assert h.messages == load_history(SECTION_2).messages
    one = load_history(write(tmp_path, json.dumps(SECTION_2["messages"][0]) + "\n", "single.jsonl"))
    assert [m.id for m in one.messages] == ["m1"]
    assert load_history(write(tmp_path, lines), conversation_id="named").id == "named"


def test_optional_fields_round_trip() -> None:
    raw = {
        "id": "c",
        "tools": [{"name": "coop", "description": "board", "parameters": {"type": "object"}}],
        "messages": [
            {"id": "s", "role": "system", "text": "sys"},
            {
                "id": "a",
                "role": "assistant",
                "text": "x",
                "created_at": "2026-01-01T00:00:00Z",
                "vessel": "gemini",
                "provider_data": {"gemini": {"thoughtSignature": "sig"}},
                "status": "interrupted",
                "meta": {"said_without_doing": True},
                "tool_uses": [
                    {"tool_name": "coop", "tool_input": {"a": 1}, "id": "c1", "provider_data": {"g": 1}},
                    {"tool_name": "result", "tool_input": "ok", "tool_use_id": "c1", "is_error": True},
                ],
            },
        ],
    }
    h = load_history(raw)
    assert history_to_dict(h) == raw
    assert h.messages[1].tool_uses[0] == ToolCall("coop", {"a": 1}, "ok", "c1", True, {"g": 1})


def test_no_answer_survives_the_file_round_trip() -> None:
    """A call with no answer before an answered one: written explicitly, so pairing cannot shift."""
    calls = (
        ToolCall("t", {"n": 1}, None),
        ToolCall("t", {"n": 2}, "two"),
        ToolCall("t", "raw", None, is_error=True),
    )
    h = History("c", (Message("a", "assistant", "x", calls, provider_data={}, meta={}),))
    d = history_to_dict(h)
    assert d["messages"][0]["tool_uses"][0] == {"tool_name": "t", "tool_input": {"n": 1}, "answer": None}
    assert load_history(d) == h


# --------------------------------------------------------------------------------------------------
# normalize_tool_uses: every accepted shape


@pytest.mark.parametrize("empty", [None, "", [], "[]", "null"])
def test_empty_shapes(empty: Any) -> None:
    assert normalize_tool_uses(empty) == []


def test_every_shape() -> None:
    plain = [{"tool_name": "coop", "tool_input": {"a": 1}}, {"tool_name": "result", "tool_input": "ok"}]
    assert normalize_tool_uses(plain) == plain
    assert normalize_tool_uses(json.dumps(plain)) == plain  # a JSON string holding the list
    assert normalize_tool_uses(plain[0]) == [plain[0]]  # a single entry
    assert normalize_tool_uses([{"name": "coop", "input": {"a": 1}}]) == [plain[0]]
    assert normalize_tool_uses([{"name": "coop", "input": {"a": 1}, "answer": "ok"}]) == plain
    assert normalize_tool_uses([{"tool_name": "coop", "tool_input": {"a": 1}, "answer": "ok"}]) == plain
    anthropic = [
        {"type": "tool_use", "id": "toolu_1", "name": "coop", "input": {"a": 1}},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "o"}, {"type": "text", "text": "k"}],
        },
    ]
    assert normalize_tool_uses(anthropic) == [
        {"tool_name": "coop", "tool_input": {"a": 1}, "id": "toolu_1"},
        {"tool_name": "result", "tool_input": "o\nk", "tool_use_id": "toolu_1"},
    ]
    openai = [{"id": "call_1", "type": "function", "function": {"name": "coop", "arguments": '{"a": 1}'}}]
    assert normalize_tool_uses(openai) == [{"tool_name": "coop", "tool_input": '{"a": 1}', "id": "call_1"}]
    assert normalize_tool_uses([{"name": "coop", "arguments": '{"a":1}'}])[0]["tool_input"] == '{"a":1}'


def test_answers_become_text() -> None:
    assert pairs(
        [{"type": "tool_use", "name": "t", "input": {}}, {"type": "tool_result", "content": None}]
    ) == [("t", {}, "")]
    assert pairs([{"name": "t", "input": {}, "answer": {"status": "closed"}}]) == [
        ("t", {}, '{"status":"closed"}')
    ]
    assert pairs([{"name": "t", "input": {}, "answer": [1, "x"]}]) == [("t", {}, '[1,"x"]')]
    assert pairs([{"name": "t", "input": {}, "answer": None}]) == [("t", {}, None)]


def test_error_flags_are_kept() -> None:
    calls, _ = pair_tool_uses(
        normalize_tool_uses([{"name": "t", "input": {}, "answer": "boom", "is_error": True}])
    )
    assert calls[0].is_error and calls[0].answer == "boom"
    calls, _ = pair_tool_uses(
        normalize_tool_uses([{"tool_name": "t", "tool_input": {}, "answer": "boom", "is_error": True}])
    )
    assert calls[0].is_error
    blocks = [
        {"type": "tool_use", "id": "x", "name": "t", "input": {}},
        {"type": "tool_result", "tool_use_id": "x", "content": "no", "is_error": True},
    ]
    assert pair_tool_uses(normalize_tool_uses(blocks))[0][0].is_error


@pytest.mark.parametrize(
    ("raw", "field", "problem"),
    [
        (5, "tool_uses", "must be a list, not int"),
        ("not json", "tool_uses", "a string that is not JSON"),
        ('"a string"', "tool_uses", "must be a list, not str"),
        ([1], "tool_uses[0]", "not an object (int)"),
        ([{"foo": 1}], "tool_uses[0]", "not a tool use or result in any known shape (keys: foo)"),
        ([{}], "tool_uses[0]", "keys: none"),
        ([{"name": 5, "input": {}}], "tool_uses[0]", "the tool name is missing or not a string"),
        ([{"tool_name": "", "tool_input": {}}], "tool_uses[0]", "the tool name is missing"),
        (
            [{"name": "t", "input": {}}, {"name": "t", "provider_data": [1]}],
            "tool_uses[1]",
            "provider_data must be an object",
        ),
        ("[" * 100_000, "tool_uses", "nested more than 200 levels deep"),
    ],
)
def test_refused_shapes_name_the_field(raw: Any, field: str, problem: str) -> None:
    with pytest.raises(HistoryError) as err:
        normalize_tool_uses(raw)
    assert err.value.field == field and problem in str(err.value)


# --------------------------------------------------------------------------------------------------
# pairing (design 1)


def test_parallel_calls_pair_in_order() -> None:
    raw = [
        {"tool_name": "a", "tool_input": {}},
        {"tool_name": "b", "tool_input": {}},
        {"tool_name": "result", "tool_input": "1"},
        {"tool_name": "result", "tool_input": "2"},
    ]
    assert pairs(raw) == [("a", {}, "1"), ("b", {}, "2")]


def test_alternating_calls_pair_as_written() -> None:
    raw = [
        {"tool_name": "a", "tool_input": {}},
        {"tool_name": "result", "tool_input": "1"},
        {"tool_name": "b", "tool_input": {}},
        {"tool_name": "result", "tool_input": "2"},
    ]
    assert pairs(raw) == [("a", {}, "1"), ("b", {}, "2")]


def test_ids_pair_by_id_whatever_the_order() -> None:
    raw = [
        {"type": "tool_use", "id": "A", "name": "a", "input": {}},
        {"type": "tool_use", "id": "B", "name": "b", "input": {}},
        {"type": "tool_result", "tool_use_id": "B", "content": "2"},
        {"type": "tool_result", "tool_use_id": "A", "content": "1"},
    ]
    assert pairs(raw) == [("a", {}, "1"), ("b", {}, "2")]


def test_unanswered_call_is_kept_without_answer() -> None:
    assert pairs([{"tool_name": "a", "tool_input": {}}]) == [("a", {}, None)]


def test_orphan_and_second_results_are_warnings(tmp_path: Path) -> None:
    raw = {
        "messages": [
            {"id": "u", "role": "user", "text": "x"},
            {
                "id": "m2",
                "role": "assistant",
                "text": "x",
                "tool_uses": [
                    {"tool_name": "result", "tool_input": "orphan"},
                    {"tool_name": "a", "tool_input": {}, "id": "A"},
                    {"tool_name": "result", "tool_input": "1", "tool_use_id": "A"},
                    {"tool_name": "result", "tool_input": "again", "tool_use_id": "A"},
                    {"tool_name": "result", "tool_input": "who?", "tool_use_id": "Z"},
                    {"tool_name": "result", "tool_input": "extra"},
                ],
            },
        ]
    }
    path = write(tmp_path, json.dumps(raw))
    h = load_history(path)
    assert h.messages[1].tool_uses == (ToolCall("a", {}, "1", "A"),)
    prefix = f"{path}: message 1 (id m2): "
    assert h.warnings == (
        f"{prefix}tool_uses[0]: result with no unanswered call before it, not replayed",
        f"{prefix}tool_uses[3]: second result for call 'A', not replayed",
        f"{prefix}tool_uses[4]: result for unknown call id 'Z', not replayed",
        f"{prefix}tool_uses[5]: result with no unanswered call before it, not replayed",
    )


def test_explicit_no_answer_is_not_paired_later() -> None:
    raw = [
        {"tool_name": "a", "tool_input": {}, "answer": None},
        {"tool_name": "b", "tool_input": {}},
        {"tool_name": "result", "tool_input": "for b"},
    ]
    assert pairs(raw) == [("a", {}, None), ("b", {}, "for b")]


# --------------------------------------------------------------------------------------------------
# bad files: one line naming the file, the message index and id, and the field; nothing stored


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "{this is not json",
            ": not JSON (Expecting property name enclosed in double quotes at line 1, column 2)",
        ),
        ("42", ": must hold a JSON object or list"),
        ('{"messages": 3}', ": messages: needs a list of messages"),
        ('{"messages": [{"role": "user", "text": "x"}]}', ": message 0: id: missing or not a string"),
        (
            '{"messages": [{"id": "a", "role": "user"}, {"id": "a", "role": "user"}]}',
            ": message 1 (id a): id: duplicate id",
        ),
        ('{"messages": [{"id": "a", "role": "tool"}]}', ": message 0 (id a): role: 'tool' is not a role"),
        (
            '{"messages": [{"id": "a", "role": "assistant", "tool_uses": 7}]}',
            ": message 0 (id a): tool_uses: must be a list, not int",
        ),
        (
            '{"messages": [{"id": "a", "role": "assistant", "tool_uses": [3]}]}',
            ": message 0 (id a): tool_uses[0]: not an object (int)",
        ),
        (
            '{"messages": [{"id": "a", "role": "user", "text": 5}]}',
            ": message 0 (id a): text: must be a string, not int",
        ),
        (
            '{"messages": [{"id": "a", "role": "user", "status": "done"}]}',
            ": message 0 (id a): status: 'done' is not one of",
        ),
        (
            '{"messages": [{"id": "a", "role": "user", "tool_uses": [{"name": "t", "input": {}}]}]}',
            ": message 0 (id a): tool_uses: only assistant messages carry tool uses",
        ),
        (
            '{"messages": [{"id": "a", "role": "user", "meta": [1]}]}',
            ": message 0 (id a): meta: must be an object, not list",
        ),
        ('{"tools": [{"description": "x"}], "messages": []}', ": tools[0]: needs a name"),
        ('{"id": "a", "role": "user"}\n{"id": "b", "role": \n', ": line 2 is not JSON"),
        ("[" * 100_000, ": not JSON (JSON nested more than 200 levels deep)"),
    ],
)
def test_bad_files_are_one_line_and_store_nothing(tmp_path: Path, content: str, expected: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(HistoryError) as err:
        load_history(path)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(str(path) + expected), msg
    with SQLiteStore(tmp_path / "s.db") as s:
        assert s.list_conversations() == []


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match=r"nope\.json: no such file"):
        load_history(tmp_path / "nope.json")
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"messages": [{"id": "a", "role": "user", "text": "\xe9"}]}')
    with pytest.raises(HistoryError, match="cannot be read"):
        load_history(bad)


# --------------------------------------------------------------------------------------------------
# weird but legal


def test_weird_but_legal(tmp_path: Path) -> None:
    long_answer = "ä" * 200_000
    raw = {
        "messages": [
            {"id": 7, "role": "user", "text": ""},
            {
                "id": "日本語-🙂",
                "role": "assistant",
                "text": "",
                "tool_uses": [{"name": "t", "input": {"ü": "✓"}, "answer": long_answer}],
            },
            {"id": "x", "role": "user", "text": None},
        ]
    }
    h = load_history(write(tmp_path, json.dumps(raw, ensure_ascii=False)))
    assert h.messages[0].id == "7" and h.messages[0].text == "" and h.messages[2].text == ""
    assert h.messages[1].tool_uses[0].answer == long_answer
    assert h.messages[1].tool_uses[0].input_text == '{"ü":"✓"}'


@pytest.mark.slow
def test_ten_thousand_calls_on_one_reply(tmp_path: Path) -> None:
    uses: list[dict[str, Any]] = []
    for i in range(10_000):
        uses.append({"tool_name": "coop", "tool_input": {"i": i}})
        uses.append({"tool_name": "result", "tool_input": f"ok {i}"})
    raw = {"messages": [{"id": "a", "role": "assistant", "text": "many", "tool_uses": uses}]}
    h = load_history(write(tmp_path, json.dumps(raw)))
    calls = h.messages[0].tool_uses
    assert len(calls) == 10_000 and calls[-1] == ToolCall("coop", {"i": 9999}, "ok 9999")
    assert history_from_dict(history_to_dict(h)) == h


# --------------------------------------------------------------------------------------------------
# property: the file format holds any history exactly

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_call = st.builds(
    ToolCall,
    name=st.text(min_size=1, max_size=8).filter(lambda n: n != "result"),
    input=_json,
    answer=st.none() | st.text(max_size=12),
    call_id=st.none() | st.sampled_from(["c1", "c2", "call_0"]),
    is_error=st.booleans(),
    provider_data=st.none() | st.dictionaries(st.text(max_size=3), _json, max_size=2),
)


@st.composite
def histories(draw: st.DrawFn) -> History:
    ids = draw(st.lists(st.text(min_size=1, max_size=8), max_size=5, unique=True))
    msgs = []
    for mid in ids:
        role = draw(st.sampled_from(["user", "assistant"]))
        calls = tuple(draw(st.lists(_call, max_size=4))) if role == "assistant" else ()
        msgs.append(
            Message(
                mid,
                role,
                draw(st.text(max_size=10)),
                calls,
                created_at=draw(st.none() | st.just("2026-01-01T00:00:00Z")),
                vessel=draw(st.none() | st.just("kimi")),
                provider_data=draw(st.none() | st.dictionaries(st.text(max_size=3), _json, max_size=2)),
                status=draw(st.sampled_from(["complete", "interrupted", "in_progress"])),
                meta=draw(st.none() | st.dictionaries(st.text(max_size=3), _json, max_size=2)),
            )
        )
    return History(draw(st.text(min_size=1, max_size=8)), tuple(msgs))


@given(histories())
def test_file_format_round_trip(h: History) -> None:
    d = history_to_dict(h)
    back = load_history(json.loads(json.dumps(d)))
    assert back == h
    assert not back.warnings


def test_odd_ids_stay_on_one_line(tmp_path: Path) -> None:
    raw = {"messages": [{"id": "a\nb", "role": "robot"}]}
    with pytest.raises(HistoryError) as err:
        load_history(write(tmp_path, json.dumps(raw)))
    assert "\n" not in str(err.value) and "(id a\\nb)" in str(err.value)


_message = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.text(max_size=4), st.integers(), st.none()),
        "role": st.sampled_from(["user", "assistant", "system", "tool", 3]),
        "text": st.one_of(st.text(max_size=5), st.integers(), st.none()),
        "tool_uses": _json,
        "status": st.sampled_from(["complete", "interrupted", "nope"]),
        "meta": _json,
        "provider_data": _json,
        "created_at": _json,
    },
)


@given(st.one_of(_json, st.fixed_dictionaries({"messages": st.lists(_message | _json, max_size=5)})))
def test_any_file_content_loads_or_fails_in_one_line(data: Any) -> None:
    try:
        h = load_history(data if isinstance(data, (dict, list)) else [data])
    except HistoryError as exc:
        assert "\n" not in str(exc)
        return
    assert all(isinstance(m.id, str) and m.id for m in h.messages)
    assert len({m.id for m in h.messages}) == len(h.messages)

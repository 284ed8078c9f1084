"""Bad input, fuzzed: normalize_tool_uses, the history file reader and every importer (hypothesis).

The only outcomes allowed: a correct result, or the project's documented error with a one-line message
(HistoryError for the history reader and normalize_tool_uses, ImportFormatError for the importers).
Inputs are arbitrary (JSON values biased towards the keys the readers look for, raw bytes) and mutated
(edits anywhere in a valid document's JSON tree, byte flips, insertions, deletions, truncations).

What "correct" means for what does read:

* normalize_tool_uses: every entry names its tool; pairing the entries never fails; the file form of any
  list of calls reads back as the same calls;
* load_history: the history survives its own file format and the store unchanged, and every rendered
  body (every vessel, native mode) passes toolreplay._audit.validate's rule checks;
* importers: every conversation read renders validly on every vessel and is stored as read.

Example counts: the conftest profile (100, or 200 with CI set) per test unless a test says otherwise.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers_fuzz import histories, json_values, mutated_bytes, mutated_json, only_documented
from toolreplay._api import render
from toolreplay._audit.validate import rule_problems
from toolreplay._errors import HistoryError, ImportFormatError, StoreError
from toolreplay._history import (
    History,
    ToolCall,
    history_from_dict,
    history_to_dict,
    load_history,
    normalize_tool_uses,
    pair_tool_uses,
    tool_uses_to_entries,
)
from toolreplay._importers import FORMATS, read_file
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._vessels import BUILTIN

pytestmark = pytest.mark.slow  # fuzzing: see docs/design.md, design 26

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "src" / "toolreplay" / "data" / "demo.json"
VESSELS = sorted(BUILTIN)


def examples(share: float = 1.0) -> settings:
    """The profile's example count (conftest: 100, 200 with CI), scaled for the costlier tests; these
    tests write a file per example in the test's tmp_path, which is why the fixture check is off."""
    n = max(10, int((settings.default.max_examples if settings.default else 100) * share))
    return settings(
        max_examples=n, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
    )


FILES = examples()


def has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value) or math.isinf(value)
    if isinstance(value, dict):
        return any(has_nan(v) for v in value.values())
    if isinstance(value, list):
        return any(has_nan(v) for v in value)
    return False


# --------------------------------------------------------------------------------------------------
# normalize_tool_uses


def check_entries(entries: list[dict[str, Any]]) -> None:
    assert all(isinstance(e["tool_name"], str) and e["tool_name"] for e in entries)
    calls, warnings = pair_tool_uses(entries, where="x")
    assert all(isinstance(c, ToolCall) for c in calls) and all(isinstance(w, str) for w in warnings)


@given(raw=json_values)
def test_normalize_tool_uses_takes_any_json_value(raw: Any) -> None:
    entries = only_documented(lambda: normalize_tool_uses(raw), HistoryError, "tool_uses")
    if entries is not None:
        check_entries(entries)


@given(raw=json_values | st.text(max_size=40))
def test_normalize_tool_uses_takes_any_text(raw: Any) -> None:
    text = raw if isinstance(raw, str) else json.dumps(raw)
    entries = only_documented(lambda: normalize_tool_uses(text), HistoryError, "tool_uses")
    if entries is not None:
        check_entries(entries)


_calls = st.lists(
    st.builds(
        ToolCall,
        name=st.text(min_size=1, max_size=10).filter(lambda n: n != "result"),
        input=st.dictionaries(st.text(max_size=5), json_values, max_size=3) | st.text(max_size=10),
        answer=st.none() | st.text(max_size=20),
        call_id=st.none() | st.text(min_size=1, max_size=8),
        is_error=st.booleans(),
        provider_data=st.none() | st.dictionaries(st.text(max_size=4), json_values, max_size=2),
    ),
    max_size=5,
)


@given(calls=_calls, as_text=st.booleans())
def test_the_file_form_of_calls_reads_back_the_same(calls: list[ToolCall], as_text: bool) -> None:
    entries = tool_uses_to_entries(calls)
    raw: Any = json.dumps(entries) if as_text else entries
    back, warnings = pair_tool_uses(normalize_tool_uses(raw))
    assert list(back) == calls and warnings == []


# --------------------------------------------------------------------------------------------------
# the history file reader


def check_history(h: History) -> None:
    """A history that loaded: its file form reads back the same, the store keeps it as it is, and every
    vessel's body passes the wire rules."""
    assert history_from_dict(history_to_dict(h)) == h
    with SQLiteStore(":memory:") as s:
        stored = only_documented(lambda: s.import_history(h), StoreError)
        if stored is not None:
            assert s.load(h.id) == h
    check_bodies(h)


def asks_something(h: History) -> bool:
    """A history a next turn can be sent for: some user message says something. (Without one there is
    no request to make: Anthropic and Gemini refuse an empty message list, and blank texts are left out.)"""
    return any(m.role == "user" and m.text.strip() for m in h.messages)


def check_bodies(h: History) -> None:
    """Every vessel's next-turn body for ``h`` passes toolreplay._audit.validate's wire rules."""
    if not asks_something(h):
        return
    for vessel in VESSELS:
        body = render(h, vessel)
        assert rule_problems(vessel, body) == [], (vessel, body)


def load_bytes(tmp_path: Path, data: bytes, name: str = "history.json") -> History | None:
    path = tmp_path / name
    path.write_bytes(data)
    return only_documented(lambda: load_history(path), HistoryError, str(path))


@FILES
@given(data=st.binary(max_size=300))
def test_load_history_takes_any_bytes(tmp_path: Path, data: bytes) -> None:
    h = load_bytes(tmp_path, data)
    if h is not None:
        check_history(h)


@FILES
@given(data=mutated_bytes(DEMO.read_bytes()))
def test_load_history_takes_a_damaged_file(tmp_path: Path, data: bytes) -> None:
    h = load_bytes(tmp_path, data)
    if h is not None:
        check_history(h)


_DEMO_DOC = json.loads(DEMO.read_text(encoding="utf-8"))


@FILES
@given(doc=mutated_json(_DEMO_DOC), jsonl=st.booleans())
def test_load_history_takes_an_edited_document(tmp_path: Path, doc: Any, jsonl: bool) -> None:
    if jsonl and isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        text = "\n".join(json.dumps(m) for m in doc["messages"]) + "\n"
    else:
        text = json.dumps(doc)
    h = load_bytes(tmp_path, text.encode(), "history.jsonl" if jsonl else "history.json")
    if h is not None:
        check_history(h)


# Half valid history files (from generated histories), a quarter the same with one edit, a quarter any
# JSON value: any JSON value alone almost never makes a history, so the checks would run on almost nothing.
_history_docs = histories().map(history_to_dict)
_documents = st.one_of(
    _history_docs, _history_docs, _history_docs.flatmap(lambda d: mutated_json(d, max_edits=1)), json_values
)


def test_load_history_takes_any_json_document(tmp_path: Path) -> None:
    seen = {"examples": 0, "checked": 0}

    @FILES
    @given(doc=_documents)
    def run(doc: Any) -> None:
        seen["examples"] += 1
        h = load_bytes(tmp_path, json.dumps(doc).encode())
        if h is not None:
            check_history(h)
            seen["checked"] += bool(h.messages)

    run()
    # at least a third of the examples reached the checks on what loaded
    assert seen["checked"] * 3 >= seen["examples"], seen


def test_not_a_number_is_refused(tmp_path: Path) -> None:
    """Found by the fuzzing: Python's json reads NaN and Infinity (not JSON), which then went out as null."""
    for token in ("NaN", "Infinity", "-Infinity"):
        path = tmp_path / "h.json"
        path.write_text(
            '{"id": "c", "messages": [{"id": "m1", "role": "assistant", "text": "x", "tool_uses": '
            f'[{{"name": "t", "input": {{"n": {token}}}, "answer": "ok"}}]}}]}}'
        )
        with pytest.raises(HistoryError, match=rf"h\.json: not JSON.*{token}"):
            load_history(path)


# --------------------------------------------------------------------------------------------------
# every importer


def _seed_bodies() -> dict[str, Any]:
    demo = load_history(DEMO)
    return {
        "toolreplay": _DEMO_DOC,
        "openai-chat": render(demo, "kimi"),
        "openai-responses": render(demo, "openai-responses"),
        "anthropic": render(demo, "anthropic"),
        "gemini": render(demo, "gemini"),
        "ollama": render(demo, "ollama"),
        "claude-code": [
            json.loads(line)
            for line in (HERE / "data" / "import_claude_code_session.jsonl").read_text().splitlines()
            if line.strip()
        ],
        "pydantic-ai": json.loads((HERE / "data" / "import_pydantic_ai_history.json").read_text()),
        "tau-bench": {
            "simulations": [
                {
                    "id": "sim-1",
                    "messages": [
                        {"role": "user", "content": "My phone has no signal.", "turn_idx": 0},
                        {"role": "assistant", "content": None, "turn_idx": 1, "tool_calls": [
                            {"id": "call_a", "name": "get_line", "arguments": {"n": 1},
                             "requestor": "assistant"}]},
                        {"role": "tool", "id": "call_a", "content": "line ok", "requestor": "assistant",
                         "error": False, "turn_idx": 2},
                        {"role": "assistant", "content": "Turn off airplane mode.", "turn_idx": 3},
                    ],
                }
            ]
        },
    }  # fmt: skip


SEEDS = _seed_bodies()
JSONL = {"claude-code"}  # seeds written as JSON Lines


def write_seed(fmt: str, doc: Any, path: Path) -> None:
    if fmt in JSONL and isinstance(doc, list):
        path.write_text("\n".join(json.dumps(r) for r in doc) + "\n", encoding="utf-8")
    else:
        path.write_text(json.dumps(doc), encoding="utf-8")


def check_batch(path: Path, fmt: str) -> None:
    for asked in ("auto", fmt):
        # ImportFormatError; a toolreplay file that is malformed says where with a HistoryError
        read = lambda a=asked: read_file(path, a)  # type: ignore[misc]  # noqa: E731
        batch = only_documented(read, (ImportFormatError, HistoryError), str(path))
        if batch is None:
            continue
        assert batch.conversations and all(isinstance(w, str) for w in batch.warnings)
        for h in batch.conversations:
            with SQLiteStore(":memory:") as s:
                if only_documented(lambda h=h: s.import_history(h), StoreError) is not None:  # type: ignore[misc]
                    assert s.load(h.id) == h
            check_bodies(h)


def test_every_importer_has_a_seed() -> None:
    assert set(SEEDS) | {"llm-logs"} == set(FORMATS)


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_each_seed_imports_as_its_format(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    write_seed(fmt, SEEDS[fmt], path)
    assert read_file(path).format == fmt
    check_batch(path, fmt)


@pytest.mark.parametrize("fmt", sorted(SEEDS))
@examples(0.6)
@given(data=st.data())
def test_importers_take_an_edited_document(fmt: str, tmp_path: Path, data: st.DataObject) -> None:
    doc = data.draw(mutated_json(SEEDS[fmt]), label="document")
    path = tmp_path / "input.json"
    write_seed(fmt, doc, path)
    check_batch(path, fmt)


@pytest.mark.parametrize("fmt", sorted(SEEDS))
@examples(0.3)
@given(data=st.data())
def test_importers_take_a_damaged_file(fmt: str, tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "seed.json"
    write_seed(fmt, SEEDS[fmt], path)
    damaged = data.draw(mutated_bytes(path.read_bytes()), label="bytes")
    path.write_bytes(damaged)
    check_batch(path, fmt)


@FILES
@given(data=st.binary(max_size=200) | st.binary(max_size=200).map(lambda b: b"SQLite format 3\x00" + b))
def test_importers_take_any_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "input.bin"
    path.write_bytes(data)
    check_batch(path, "toolreplay")


# llm's logs.db: edited rows and damaged pages

LLM_TABLES = ("conversations", "responses", "tools", "tool_calls", "tool_results", "tool_responses")


@functools.cache
def _llm_seed() -> bytes:
    """The bytes of a logs.db as llm writes it (tests/test_import.py builds it)."""
    from test_import import make_llm_logs

    with tempfile.TemporaryDirectory() as tmp:
        return make_llm_logs(Path(tmp) / "logs.db").read_bytes()


def _llm_logs(tmp_path: Path) -> Path:
    path = tmp_path / "logs.db"
    path.write_bytes(_llm_seed())
    return path


_cell = st.one_of(
    json_values.map(json.dumps),
    st.integers(-(2**63), 2**63 - 1),
    st.none(),
    st.binary(max_size=8),
    st.text(max_size=8),
)


@examples(0.6)
@given(
    edits=st.lists(
        st.tuples(st.sampled_from(LLM_TABLES), st.integers(0, 30), _cell, st.booleans()), max_size=4
    )
)
def test_llm_logs_with_edited_rows(tmp_path: Path, edits: list[tuple[str, int, Any, bool]]) -> None:
    path = _llm_logs(tmp_path)
    with closing(sqlite3.connect(path)) as db, db:
        for table, col, value, delete in edits:
            columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
            if delete:
                db.execute(f"DELETE FROM {table} WHERE rowid = (SELECT MIN(rowid) FROM {table})")
            else:
                with contextlib.suppress(sqlite3.IntegrityError):  # a key made equal on every row
                    db.execute(f'UPDATE {table} SET "{columns[col % len(columns)]}" = ?', (value,))
    check_batch(path, "llm-logs")


@examples(0.3)
@given(data=st.data())
def test_llm_logs_damaged(tmp_path: Path, data: st.DataObject) -> None:
    path = _llm_logs(tmp_path)
    raw = path.read_bytes()
    # damage past the 100-byte header too, where the pages are
    damaged = data.draw(mutated_bytes(raw[:100]), label="header") + data.draw(
        mutated_bytes(raw[100:]), label="pages"
    )
    path.write_bytes(damaged)
    check_batch(path, "llm-logs")


# --------------------------------------------------------------------------------------------------
# what the fuzzing found (each was a crash or a silent change; now a result or the documented error)


def test_found_a_role_or_status_that_is_not_a_string(tmp_path: Path) -> None:
    for field, value in (("role", ["assistant"]), ("status", {"a": 1})):
        msg = {"id": "m1", "role": "user", "text": "x", field: value}
        with pytest.raises(HistoryError, match=rf"message 0 \(id m1\): {field}: "):
            history_from_dict({"id": "c", "messages": [msg]})
        path = tmp_path / "h.json"
        path.write_text(json.dumps({"id": "c", "messages": [msg]}))
        with pytest.raises((HistoryError, ImportFormatError), match=r"h\.json"):
            read_file(path)


def test_found_an_empty_call_id_reads_back_as_none() -> None:
    raw = [{"type": "tool_use", "id": "", "name": "t", "input": {}}, {"tool_name": "t", "id": ""}]
    calls, _ = pair_tool_uses(normalize_tool_uses(raw))
    assert [c.call_id for c in calls] == [None, None]
    h = history_from_dict({"id": "c", "messages": [{"id": "m", "role": "assistant", "tool_uses": raw}]})
    assert history_from_dict(history_to_dict(h)) == h


def test_found_nan_in_an_imported_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": NaN}]')
    with pytest.raises(ImportFormatError, match=r"chat\.json.*NaN is not a JSON value"):
        read_file(path)
    lines = tmp_path / "chat.jsonl"
    lines.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": Infinity}\n')
    batch = read_file(lines)
    assert any("Infinity is not a JSON value" in w for w in batch.warnings)


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": ["user"], "content": "hi"}],  # a role that is not a string (Chat and native checks)
        [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": 5}],  # Ollama's check
        [{"role": "user", "content": [{"type": ["tool_use"]}]}],  # a block type that is not a string
    ],
)
def test_found_wire_lists_with_values_of_the_wrong_kind(tmp_path: Path, messages: list[Any]) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(messages))
    check_batch(path, "openai-chat")


def test_found_llm_logs_with_blobs_nulls_and_damage(tmp_path: Path) -> None:
    path = _llm_logs(tmp_path)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE responses SET prompt = ?, response = NULL", (b"\xffbytes",))
        db.execute("UPDATE tool_calls SET name = NULL WHERE tool_call_id = 'call_r'")
        db.execute("UPDATE tool_calls SET arguments = ?", (b"{}",))
    batch = read_file(path)
    h = batch.conversations[0]
    assert h.messages[1].text == "\ufffdbytes"
    assert any("a call without a tool name is not kept" in w for w in batch.warnings)
    raw = path.read_bytes()
    path.write_bytes(raw[:4096] + b"\xff" * 512 + raw[4608:])  # a damaged page past the first
    batch_or_error = only_documented(lambda: read_file(path), ImportFormatError, str(path))
    assert batch_or_error is None or batch_or_error.format == "llm-logs"


def test_found_tau2_tool_calls_that_are_not_a_list(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(SEEDS["tau-bench"]))
    doc["simulations"][0]["messages"][1]["tool_calls"] = True
    path = tmp_path / "sims.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ImportFormatError, match=r"sims\.json.*tool_calls is a bool, not a list"):
        read_file(path, "tau-bench")

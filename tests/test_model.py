"""The neutral model in one public place, and the places for everything a request carries (issue 22).

* ``toolreplay.model`` holds every value type and imports nothing of toolreplay's but ``errors`` and
  ``jsonenc``; ``dir(toolreplay)`` lists them and the history reader; the built-in wires import no
  private toolreplay module;
* what a body carried beyond the neutral fields (``sent``, a call's or a tool's ``kind``, the request
  settings) survives the file form and both stores, and a database of the schema before is upgraded;
* ``read_history`` reads what ``import`` would store, from a file or a value.
"""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

import toolreplay
from store_fixtures import store, store_factory, store_url  # noqa: F401
from toolreplay import ConfigError, ImportFormatError, Store, history_to_dict, load_history, read_history
from toolreplay._store import rows as R
from toolreplay._store import schema as S
from toolreplay._store.sqlite import SQLiteStore
from toolreplay.model import History, Message, Part, RequestSettings, ToolCall, ToolSpec

SRC = Path(toolreplay.__file__).resolve().parent

MODEL_TYPES = (
    "History",
    "Message",
    "ToolCall",
    "ToolSpec",
    "Step",
    "Reasoning",
    "Text",
    "ServerTool",
    "Piece",
    "Part",
    "Issuer",
    "Usage",
    "RequestSettings",
)


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports, at any depth (function-local and type-checking imports count)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
            out.extend(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
    return out


def test_every_model_type_and_the_history_reader_are_public() -> None:
    for name in (*MODEL_TYPES, "read_history", "ImportBatch"):
        assert name in dir(toolreplay), name
        assert name in toolreplay.__all__, name
    for name in MODEL_TYPES:
        assert getattr(toolreplay, name) is getattr(toolreplay.model, name)


def test_the_model_module_imports_nothing_of_toolreplay_but_errors_and_json() -> None:
    ours = [m for m in _imports(SRC / "model.py") if m.startswith("toolreplay")]
    assert set(ours) <= {
        "toolreplay",
        "toolreplay.jsonenc",
        "toolreplay.errors",
        "toolreplay.errors.HistoryError",
    }


def test_the_built_in_wires_import_no_private_toolreplay_module() -> None:
    found: list[str] = []
    for path in sorted((SRC / "wires").rglob("*.py")):
        for mod in _imports(path):
            head = mod.split(".")
            # a wire's own private helpers (wires/_sniff.py...) are the wires' business
            private = [p for p in head[1:] if p.startswith("_")]
            if head[0] == "toolreplay" and private and not mod.startswith("toolreplay.wires."):
                found.append(f"{path.relative_to(SRC)}: {mod}")
    assert not found, "\n".join(found)


def _layout_history() -> History:
    """A history with something in every new place."""
    apply_patch = ToolSpec(
        "apply_patch",
        "Edit files.",
        kind="custom",
        sent={"openai-responses": {"format": {"type": "grammar", "syntax": "lark"}}},
    )
    search = ToolSpec("web_search", kind="hosted", sent={"openai-responses": {"type": "web_search"}})
    calls = (
        ToolCall(
            "apply_patch",
            "*** Begin Patch\n*** End Patch",
            "Done!",
            "call_1",
            kind="custom",
            sent={"openai-responses": {"id": "ctc_1"}},
        ),
        ToolCall(
            "read", {"path": "a"}, "text", "call_2", sent={"anthropic": {"result": {"is_error": False}}}
        ),
    )
    messages = (
        Message("s1", "system", "Be brief.", sent={"anthropic": {"cache_control": {"type": "ephemeral"}}}),
        Message(
            "u1",
            "user",
            "a\n\nb",
            parts=(
                Part("text", text="a"),
                Part("text", text="b", sent={"anthropic": {"cache_control": {"type": "ephemeral"}}}),
            ),
        ),
        Message("a1", "assistant", "Patched.", tool_uses=calls, sent={"openai-chat": {"content": ""}}),
        Message("s2", "system", "Mid-conversation note.", sent={"openai-chat": {"role": "developer"}}),
    )
    requests = (RequestSettings("openai-chat", {"model": "gpt-5", "max_tokens": 64, "stream": False}, "s2"),)
    return History("c", messages, (apply_patch, search), requests=requests)


def test_the_file_form_keeps_every_new_place() -> None:
    h = _layout_history()
    d = history_to_dict(h)
    assert d["requests"] == [
        {
            "wire": "openai-chat",
            "fields": {"model": "gpt-5", "max_tokens": 64, "stream": False},
            "after": "s2",
        }
    ]
    assert d["tools"][0]["kind"] == "custom" and "kind" not in d["tools"][0]["sent"]["openai-responses"]
    assert d["messages"][2]["tool_uses"][0]["kind"] == "custom"
    back = load_history(d)
    assert back == h
    assert back.messages[2].tool_uses[0].input_text == "*** Begin Patch\n*** End Patch"  # the text, not JSON
    assert [t.kind for t in back.tools or ()] == ["custom", "hosted"]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"kind": "shell"}, "kind 'shell' is not one of custom, function"),
        ({"kind": "custom", "tool_input": {"a": 1}}, "a custom call's input is its text"),
        ({"sent": {"openai-chat": 3}}, "must be an object per wire"),
    ],
)
def test_a_bad_call_entry_is_named(change: dict[str, object], problem: str) -> None:
    entry = {"tool_name": "t", "tool_input": "x", **change}
    with pytest.raises(toolreplay.HistoryError, match=problem):
        load_history({"messages": [{"id": "a", "role": "assistant", "text": "ok", "tool_uses": [entry]}]})


def test_a_bad_request_entry_is_named() -> None:
    with pytest.raises(toolreplay.HistoryError, match=r"requests\[0\]\.wire: needs the wire's name"):
        load_history({"messages": [], "requests": [{"fields": {}}]})


def test_both_stores_keep_every_new_place(store: Store) -> None:  # noqa: F811
    h = _layout_history()
    assert store.import_history(h).added == 4
    assert store.load("c") == h
    # the same import again changes nothing, the request recorded once
    assert store.import_history(h).unchanged == 4
    assert store.load("c").requests == h.requests
    # a second request of the same conversation is recorded after the first
    later = RequestSettings("openai-chat", {"model": "gpt-5", "max_tokens": 128}, "s2")
    store.import_history(History("c", h.messages, h.tools, requests=(later,)))
    assert store.load("c").requests == (*h.requests, later)


def test_a_message_stored_with_another_layout_is_a_conflict(store: Store) -> None:  # noqa: F811
    h = _layout_history()
    store.import_history(h)
    changed = Message("s1", "system", "Be brief.")
    with pytest.raises(toolreplay.StoreError, match="different sent"):
        store.import_history(History("c", (changed,)))


def test_a_database_of_the_schema_before_reads_as_it_did_and_takes_the_new_places(tmp_path: Path) -> None:
    db = tmp_path / "v10.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(S.MIGRATIONS_TABLE["sqlite"])
    for m in S.MIGRATIONS[: S.MIGRATION_NAMES.index("0011_as_sent")]:
        for statement in m.sqlite:
            conn.execute(statement)
        conn.execute(S.RECORD_MIGRATION, (m.name, "2026-01-01T00:00:00Z"))
    plain = History(
        "old",
        (
            Message("u", "user", "hi"),
            Message("a", "assistant", "hello", tool_uses=(ToolCall("t", {"x": 1}, "ok", "c1"),)),
        ),
    )
    conn.execute("INSERT INTO conversations (id, tools) VALUES (?, ?)", ("old", None))
    for pos, m in enumerate(plain.messages):
        conn.execute(
            S.INSERT_MESSAGE.replace(", sent)", ")").replace(", ?)", ")", 1),
            R.message_row("old", pos, m)[:-1],
        )
        for row in R.tool_use_rows("old", m.id, m.tool_uses):
            conn.execute(
                S.INSERT_TOOL_USE.replace(",\n    kind, sent)", ")").replace(", ?, ?)", ")", 1), row[:-2]
            )
    conn.close()
    with SQLiteStore(db) as s:
        assert "0011_as_sent" in s.applied_migrations()
        assert s.load("old") == plain
        s.import_history(_layout_history())
        assert s.load("c") == _layout_history()


CHAT_BODY = {
    "model": "gpt-5",
    "max_tokens": 100,
    "tool_choice": "auto",
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
}


def test_read_history_reads_a_body_or_a_file_as_import_does(tmp_path: Path) -> None:
    batch = read_history(CHAT_BODY)
    assert batch.format == "openai-chat" and batch.detected
    (h,) = batch.conversations
    assert [m.role for m in h.messages] == ["system", "user"]
    assert h.requests == (
        RequestSettings(
            "openai-chat", {"model": "gpt-5", "max_tokens": 100, "tool_choice": "auto"}, h.messages[-1].id
        ),
    )
    path = tmp_path / "body.json"
    path.write_text(toolreplay.encode(CHAT_BODY).decode(), encoding="utf-8")
    from_file = read_history(path, "openai-chat")
    assert from_file.conversations[0].messages == h.messages and not from_file.detected
    with pytest.raises(ImportFormatError, match="unknown format 'nope'"):
        read_history(CHAT_BODY, "nope")


def test_as_sent_needs_a_recorded_request() -> None:
    with pytest.raises(ConfigError, match="no recorded request"):
        toolreplay.render(History("x", (Message("u", "user", "hi"),)), as_sent=True)


def test_each_wire_public_host_is_its_public_vessel_host() -> None:
    from toolreplay._vessels import public_issuer
    from toolreplay.wires import all_wires

    for w in all_wires():
        if w.public_host:
            assert public_issuer(w.name, "m").host == w.public_host, w.name


def _graph() -> dict[str, set[str]]:
    """Module -> the toolreplay modules it imports (function-local and type-checking imports count)."""
    mods = {}
    for path in SRC.rglob("*.py"):
        parts = ["toolreplay", *path.relative_to(SRC).with_suffix("").parts]
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in mods else node.module
                         for a in node.names]  # fmt: skip
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            graph[m].update(n for n in names if n in mods and n != m)
    return graph


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph[m])
    return seen


NEW_MODULES = ("toolreplay.model", "toolreplay.errors", "toolreplay.jsonenc", "toolreplay.ids",
               "toolreplay._issuers", "toolreplay._steps_codec", "toolreplay._as_sent",
               "toolreplay.wires.media", "toolreplay.wires.replayed", "toolreplay.wires.openai_chat.layout",
               "toolreplay.wires.openai_chat.as_sent", "toolreplay.wires.ollama.as_sent")  # fmt: skip


@pytest.mark.parametrize("module", NEW_MODULES)
def test_the_new_modules_are_in_no_import_cycle(module: str) -> None:
    graph = _graph()
    assert module not in _reaches(graph, module)
    # and the model reaches only the leaves it names
    assert _reaches(graph, "toolreplay.model") <= {"toolreplay.errors", "toolreplay.jsonenc"}


def test_each_request_is_recorded_after_the_others_on_both_stores(store: Store) -> None:  # noqa: F811
    # what the proxy does per request: the settings where they stood, the same ones again only once
    first = RequestSettings(
        "anthropic", {"model": "claude-x", "max_tokens": 32000, "thinking": {"type": "adaptive"}}
    )
    second = RequestSettings("anthropic", {"model": "claude-x", "max_tokens": 64000}, "m3")
    store.record_request("p", first)
    store.record_request("p", first)
    store.record_request("p", second)
    assert store.load("p").requests == (first, second)
    assert store.load("p").messages == ()

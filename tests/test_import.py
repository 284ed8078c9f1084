"""The importers: every format read into stored histories, auto-detection, and bad input."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from toolreplay._errors import HistoryError, ImportFormatError
from toolreplay._history import History
from toolreplay._importers import read_file
from toolreplay._steps import Issuer, Part, Reasoning, Text
from toolreplay.wires import get_wire

DATA = Path(__file__).parent / "data"

# The tables llm creates (llm/migrations.py: m010, m017, m018, m021), as sqlite-utils writes them.
LLM_SCHEMA = """
CREATE TABLE [_llm_migrations] ([name] TEXT PRIMARY KEY, [applied_at] TEXT);
CREATE TABLE [conversations] ([id] TEXT PRIMARY KEY, [name] TEXT, [model] TEXT);
CREATE TABLE [schemas] ([id] TEXT PRIMARY KEY, [content] TEXT);
CREATE TABLE "responses" ([id] TEXT PRIMARY KEY, [model] TEXT, [prompt] TEXT, [system] TEXT,
  [prompt_json] TEXT, [options_json] TEXT, [response] TEXT, [response_json] TEXT,
  [conversation_id] TEXT REFERENCES [conversations]([id]), [duration_ms] INTEGER, [datetime_utc] TEXT,
  [input_tokens] INTEGER, [output_tokens] INTEGER, [token_details] TEXT,
  [schema_id] TEXT REFERENCES [schemas]([id]), [resolved_model] TEXT);
CREATE TABLE [tools] ([id] INTEGER PRIMARY KEY, [hash] TEXT, [name] TEXT, [description] TEXT,
  [input_schema] TEXT, [plugin] TEXT);
CREATE TABLE [tool_responses] ([tool_id] INTEGER REFERENCES [tools]([id]),
  [response_id] TEXT REFERENCES [responses]([id]), PRIMARY KEY ([tool_id], [response_id]));
CREATE TABLE [tool_calls] ([id] INTEGER PRIMARY KEY, [response_id] TEXT REFERENCES [responses]([id]),
  [tool_id] INTEGER REFERENCES [tools]([id]), [name] TEXT, [arguments] TEXT, [tool_call_id] TEXT);
CREATE TABLE [tool_instances] ([id] INTEGER PRIMARY KEY, [plugin] TEXT, [name] TEXT, [arguments] TEXT);
CREATE TABLE [tool_results] ([id] INTEGER PRIMARY KEY, [response_id] TEXT REFERENCES [responses]([id]),
  [tool_id] INTEGER REFERENCES [tools]([id]), [name] TEXT, [output] TEXT, [tool_call_id] TEXT,
  [instance_id] INTEGER REFERENCES [tool_instances]([id]), [exception] TEXT);
CREATE TABLE [attachments] ([id] TEXT PRIMARY KEY, [type] TEXT, [path] TEXT, [url] TEXT, [content] BLOB);
CREATE TABLE [prompt_attachments] ([response_id] TEXT REFERENCES [responses]([id]),
  [attachment_id] TEXT REFERENCES [attachments]([id]), [order] INTEGER,
  PRIMARY KEY ([response_id], [attachment_id]));
"""


def make_llm_logs(path: Path) -> Path:
    """A logs.db as llm writes it: a tool chain (calls on one response, results on the next), a failed
    call, a plain chat, and a conversation with no responses."""
    weather = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(LLM_SCHEMA)
        db.executemany(
            "INSERT INTO conversations VALUES (?, ?, ?)",
            [
                ("01jw6a7kzb5vq0rr1q4m1y8y2d", "weather in two cities", "gpt-4.1-mini"),
                ("01jw6b0c3n2xk9t8d7e6f5g4h3", "hello", "gpt-4.1-mini"),
                ("01jw6c00000000000000000000", "empty", "gpt-4.1-mini"),
            ],
        )
        rows = [
            (
                "01jw6a7m0000000000000000r1",
                "Weather in Paris and Rome?",
                "Be brief.",
                "",
                "2025-05-26T22:19:04+00:00",
            ),
            (
                "01jw6a7n0000000000000000r2",
                "",
                "Be brief.",
                "Paris: 18C. Rome: no data.",
                "2025-05-26T22:19:06+00:00",
            ),
            (
                "01jw6a7p0000000000000000r3",
                "Thanks!",
                "Be brief.",
                "You're welcome.",
                "2025-05-26T22:20:00+00:00",
            ),
        ]
        db.executemany(
            "INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc) "
            "VALUES (?, 'gpt-4.1-mini', ?, ?, ?, '01jw6a7kzb5vq0rr1q4m1y8y2d', ?)",
            [(r[0], r[1], r[2], r[3], r[4]) for r in rows],
        )
        db.execute(
            "INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc) "
            "VALUES (?, 'gpt-4.1-mini', 'hi', NULL, 'Hello!', ?, '2025-05-27T08:00:00+00:00')",
            ("01jw6b0d0000000000000000r1", "01jw6b0c3n2xk9t8d7e6f5g4h3"),
        )
        db.execute(
            "INSERT INTO tools VALUES (1, 'h1', 'get_weather', 'Weather for a city.', ?, NULL)",
            (json.dumps(weather),),
        )
        db.executemany(
            "INSERT INTO tool_responses VALUES (1, ?)", [(rows[0][0],), (rows[1][0],), (rows[2][0],)]
        )
        db.executemany(
            "INSERT INTO tool_calls (response_id, tool_id, name, arguments, tool_call_id) "
            "VALUES (?, 1, ?, ?, ?)",
            [
                (rows[0][0], "get_weather", '{"city": "Paris"}', "call_p"),
                (rows[0][0], "get_weather", '{"city": "Rome"}', "call_r"),
            ],
        )
        db.executemany(
            "INSERT INTO tool_results (response_id, tool_id, name, output, tool_call_id, exception) "
            "VALUES (?, 1, 'get_weather', ?, ?, ?)",
            [
                (rows[1][0], "Error: no station", "call_r", "ValueError: no station"),
                (rows[1][0], '{"temp_c": 18}', "call_p", None),
            ],
        )
    return path


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def _calls(h: History) -> list[tuple[str, Any, str | None, bool]]:
    return [(c.name, c.input, c.answer, c.is_error) for m in h.messages for c in m.tool_uses]


# --------------------------------------------------------------------------------------------------
# each format


def test_native_file_and_jsonl(tmp_path: Path, demo_path: Path) -> None:
    batch = read_file(demo_path)
    assert (batch.format, batch.detected, batch.conversations[0].id) == ("toolreplay", True, "demo-chief")
    msgs = json.loads(demo_path.read_text())["messages"]
    lines = tmp_path / "h.jsonl"
    lines.write_text("\n".join(json.dumps(m) for m in msgs[:4]) + "\n")
    b = read_file(lines, conversation="mine")
    assert b.format == "toolreplay"
    assert [(h.id, len(h.messages)) for h in b.conversations] == [("mine", 4)]


def test_native_errors_name_file_message_and_field(tmp_path: Path) -> None:
    bad = _write(tmp_path / "bad.json", {"id": "c", "messages": [{"id": "m1", "role": "user", "text": 5}]})
    with pytest.raises(HistoryError, match=r"bad\.json: message 0 \(id m1\): text: must be a string"):
        read_file(bad, "toolreplay")


def test_openai_chat_jsonl_of_conversations(tmp_path: Path) -> None:
    conv = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]  # fmt: skip
    path = tmp_path / "convs.jsonl"
    path.write_text(json.dumps({"id": "alpha", "messages": conv}) + "\n" + json.dumps(conv) + "\n")
    b = read_file(path)
    assert b.format == "openai-chat"
    assert [h.id for h in b.conversations] == ["alpha", "convs-2"]
    assert [len(_calls(h)) for h in b.conversations] == [1, 1]
    assert [h.id for h in read_file(path, conversation="convs-2").conversations] == ["convs-2"]
    with pytest.raises(ImportFormatError, match="no conversation 'zeta'; it holds: alpha, convs-2"):
        read_file(path, conversation="zeta")


def test_plain_text_lists_read_as_chat_unless_asked(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "plain.json", [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    )
    assert read_file(path).format == "openai-chat"
    assert read_file(path, "anthropic").format == "anthropic"


def test_wire_bodies_are_detected(tmp_path: Path) -> None:
    bodies: dict[str, Any] = {
        "gemini": {
            "contents": [
                {"role": "user", "parts": [{"text": "w?"}]},
                {
                    "role": "model",
                    "parts": [{"function_call": {"name": "w", "args": {}}, "thought_signature": "S1"}],
                },
                {
                    "role": "user",
                    "parts": [{"function_response": {"name": "w", "response": {"output": "18"}}}],
                },
                {"role": "model", "parts": [{"text": "18"}]},
            ]
        },
        "openai-responses": {
            "model": "gpt-5",
            "input": [
                {"role": "user", "content": "w?"},
                {"type": "function_call", "call_id": "c", "name": "w", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c", "output": "18"},
            ],
        },
        "anthropic": {
            "model": "claude",
            "max_tokens": 100,
            "messages": [
                {"role": "user", "content": "w?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "w", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "18"}]},
            ],
        },
        "ollama": {
            "model": "qwen3",
            "messages": [
                {"role": "user", "content": "w?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"function": {"name": "w", "arguments": {}}}],
                },
                {"role": "tool", "tool_name": "w", "content": "18"},
            ],
        },
    }
    for wire, body in bodies.items():
        b = read_file(_write(tmp_path / f"{wire}.json", body))
        assert (b.format, b.detected) == (wire, True)
        assert [(c[0], c[2]) for c in _calls(b.conversations[0])] == [("w", "18")], wire
    gem = read_file(tmp_path / "gemini.json").conversations[0]
    assert gem.messages[1].tool_uses[0].provider_data == {"gemini": {"thoughtSignature": "S1"}}


def test_claude_code_session() -> None:
    b = read_file(DATA / "import_claude_code_session.jsonl")
    assert (b.format, b.detected) == ("claude-code", True)
    h = b.conversations[0]
    assert h.id == "5f2c9e1a-7d43-4b8e-9a61-2c0d3e8f4b17"
    assert [(m.role, m.status) for m in h.messages] == [
        ("user", "complete"),
        ("assistant", "complete"),
        ("user", "complete"),
        ("assistant", "interrupted"),  # the Bash call the user interrupted still replays as a call
        ("user", "complete"),
        ("user", "complete"),
        ("assistant", "complete"),
    ]
    first = h.messages[1]
    # streamed blocks of one message.id are one message: its thinking and words lead the step of its two
    # parallel calls; the third call is a step of its own; the text is the final words
    assert first.text.startswith("The build is green")
    thinking, words = first.steps[0].said
    assert words == Text("I'll list the board and check the build at the same time.")
    assert [s.calls for s in first.steps] == [2, 1]
    # the session's model on Anthropic's public host is who made them (design 17)
    public = get_wire("anthropic").public_host
    assert first.steps[0].issuer == Issuer("anthropic", public, "claude-sonnet-4-5-20250929")
    assert [(c.name, c.answer) for c in first.tool_uses] == [
        (
            "mcp__coop__coop",
            "#12 open  fix the flaky build\n#13 open  update the README",
        ),  # MCP name as stored
        ("Bash", '[{"conclusion":"success"}]'),
        ("mcp__coop__coop", ""),  # an empty result is an answer
    ]
    assert first.created_at == "2026-10-14T09:00:08.902Z"  # kept as given
    assert isinstance(thinking, Reasoning) and thinking.data is not None
    assert thinking.data["anthropic"]["signature"] == "EqQBCkYIBxgCKkBv3+JH7kq9Zq/demo=="
    assert h.messages[3].tool_uses[0].is_error
    skipped = [w for w in b.warnings if "skipped" in w]
    assert skipped and "2 sidechain entries" in skipped[0] and "1 meta entries" in skipped[0]
    assert "2 summary entries" in skipped[0] and "1 system entries" in skipped[0]
    assert "2 file-history-snapshot entries" in skipped[0]


def test_llm_logs(tmp_path: Path) -> None:
    db = make_llm_logs(tmp_path / "logs.db")
    b = read_file(db)
    assert (b.format, b.detected) == ("llm-logs", True)
    assert [h.id for h in b.conversations] == ["01jw6a7kzb5vq0rr1q4m1y8y2d", "01jw6b0c3n2xk9t8d7e6f5g4h3"]
    h = b.conversations[0]
    assert [(m.role, m.text) for m in h.messages] == [
        ("system", "Be brief."),
        ("user", "Weather in Paris and Rome?"),
        ("assistant", "Paris: 18C. Rome: no data."),  # the tool chain is one agent turn
        ("user", "Thanks!"),
        ("assistant", "You're welcome."),
    ]
    assert _calls(h) == [
        ("get_weather", {"city": "Paris"}, '{"temp_c": 18}', False),
        ("get_weather", {"city": "Rome"}, "Error: no station", True),  # results paired by id, not row order
    ]
    assert h.messages[2].created_at == "2025-05-26T22:19:04+00:00"
    assert h.tools is not None and [t.name for t in h.tools] == ["get_weather"]
    assert h.tools[0].parameters["required"] == ["city"]
    one = read_file(db, conversation="01jw6b0c3n2xk9t8d7e6f5g4h3")
    assert [len(h.messages) for h in one.conversations] == [2]
    with pytest.raises(ImportFormatError, match="no conversation 'nope' with responses"):
        read_file(db, conversation="nope")


def test_pydantic_ai_history() -> None:
    b = read_file(DATA / "import_pydantic_ai_history.json")
    assert (b.format, b.detected) == ("pydantic-ai", True)
    h = b.conversations[0]
    assert [m.role for m in h.messages] == ["system", "user", "assistant", "user", "assistant"]
    reply = h.messages[2]
    assert reply.text == "Closed #12. Still open: #13 update the README."
    assert reply.steps[0].said == (Text("Closing #12 first."),)  # the words ride with the first step
    calls = reply.tool_uses
    assert [(c.name, c.input, c.is_error) for c in calls] == [
        ("coop", {"action": "close", "id": "twelve"}, True),  # answered by the retry prompt
        ("coop", {"action": "close", "id": 12}, False),  # args as a JSON string
        ("coop", {}, False),  # args null
    ]
    assert calls[0].answer is not None and calls[0].answer.startswith("1 validation error: [")
    assert calls[0].answer.endswith("Fix the errors and try again.")
    assert calls[2].answer == '{"open":[{"id":13,"text":"update the README"}]}'
    assert calls[1].provider_data == {"pydantic-ai": {"thinking": [
        {"content": "The id must be a number.", "id": "rs_9", "signature": None, "provider_name": "openai",
         "part_kind": "thinking"}]}}  # fmt: skip
    assert h.messages[3].text == "And this screenshot?"
    assert h.messages[3].parts == (  # kept where the user put it (design 34)
        Part("text", text="And this screenshot?"),
        Part("image", media_type="image/png", url="https://example.com/board.png"),
    )
    assert not any("image-url" in w for w in b.warnings)
    assert h.messages[1].created_at == "2026-10-20T08:00:00.000000Z"


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"kind": "image-url", "url": "", "media_type": "image/png"}, "url"),  # found by the fuzz
        ({"kind": "document-url", "media_type": "application/pdf"}, "url"),
        ({"kind": "binary", "data": "", "media_type": "image/png"}, "data"),
    ],
)
def test_pydantic_ai_empty_image_is_named_not_kept(tmp_path: Path, item: dict[str, str], field: str) -> None:
    """An image or document with nothing in it is not stored as an empty part (every wire would send it
    as an empty image, which providers refuse): a warning names the message and the field."""
    msgs = [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": ["look", item]}]},
        {"kind": "response", "parts": [{"part_kind": "text", "content": "nothing to see"}]},
    ]
    b = read_file(_write(tmp_path / "p.json", msgs))
    user = b.conversations[0].messages[0]
    assert (user.text, user.parts) == ("look", ())
    assert [w for w in b.warnings if f"content[1].{field}: empty" in w], b.warnings


def test_pydantic_ai_changed_instructions_are_reported(tmp_path: Path) -> None:
    msgs = [
        {
            "kind": "request",
            "instructions": "Be terse.",
            "parts": [{"part_kind": "user-prompt", "content": "a"}],
        },
        {"kind": "response", "parts": [{"part_kind": "text", "content": "b"}]},
        {
            "kind": "request",
            "instructions": "Be chatty.",
            "parts": [{"part_kind": "user-prompt", "content": "c"}],
        },
    ]
    b = read_file(_write(tmp_path / "p.json", msgs))
    first = b.conversations[0].messages[0]
    assert (first.role, first.text) == ("system", "Be terse.")
    assert any("changed instructions are not kept" in w for w in b.warnings)


def test_tau2_user_simulator_calls_are_kept_aside(tmp_path: Path) -> None:
    msgs = [
        {"role": "assistant", "content": "Hi!", "tool_calls": None, "turn_idx": 0, "timestamp": "t0"},
        {"role": "user", "content": None, "turn_idx": 1, "timestamp": "t1", "tool_calls": [
            {"id": "call_u", "name": "check_status_bar", "arguments": {}, "requestor": "user"}]},
        {"role": "tool", "id": "call_u", "content": "Airplane Mode", "requestor": "user", "error": False,
         "turn_idx": 2, "timestamp": "t2"},
        {"role": "user", "content": "My phone has no signal.", "turn_idx": 3, "timestamp": "t3"},
        {"role": "assistant", "content": None, "turn_idx": 4, "timestamp": "t4", "tool_calls": [
            {"id": "call_a", "name": "get_line", "arguments": {"n": 1}, "requestor": "assistant"}]},
        {"role": "tool", "id": "call_a", "content": "line ok", "requestor": "assistant", "error": True,
         "turn_idx": 5, "timestamp": "t5"},
        {"role": "assistant", "content": "Turn off airplane mode.", "turn_idx": 6, "timestamp": "t6"},
    ]  # fmt: skip
    path = tmp_path / "sims.json"
    _write(path, {"simulations": [{"id": "sim-1", "messages": msgs}]})
    b = read_file(path)
    assert (b.format, b.left_out) == ("tau-bench", 1)
    h = b.conversations[0]
    assert h.id == "sim-1"
    user = h.messages[1]
    assert (user.role, user.text, user.created_at) == ("user", "My phone has no signal.", "t1")
    kept = {"name": "check_status_bar", "input": {}, "call_id": "call_u", "answer": "Airplane Mode"}
    assert user.meta == {"user_tool_calls": [kept]}
    assert _calls(h) == [("get_line", {"n": 1}, "line ok", True)]
    assert any("1 calls by the simulated user" in w for w in b.warnings)


def test_tau_bench_v1_results_file(tmp_path: Path) -> None:
    traj = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "hi"},
        {"content": "Hello", "role": "assistant", "tool_calls": None, "function_call": None},
    ]
    b = read_file(_write(tmp_path / "v1.json", [{"task_id": 3, "trial": 1, "reward": 1.0, "traj": traj}]))
    assert (b.format, [h.id for h in b.conversations]) == ("tau-bench", ["task3-trial1"])


# --------------------------------------------------------------------------------------------------
# bad input


def test_unknown_format_names_the_closest_format_once(tmp_path: Path) -> None:
    path = _write(tmp_path / "odd.json", {"rows": [1, 2, 3]})
    with pytest.raises(ImportFormatError) as err:
        read_file(path)
    text = str(err.value)
    assert text == f"{path}: in no known format: closest is toolreplay (the object has no 'messages' list)"
    _write(path, {"messages": None})  # there, but not a list
    with pytest.raises(ImportFormatError, match=r"closest is toolreplay \(messages is null, not a list"):
        read_file(path)
    text_file = tmp_path / "notes.txt"
    text_file.write_text("hello\n", encoding="utf-8")
    with pytest.raises(ImportFormatError) as err:
        read_file(text_file)
    assert str(err.value) == f"{text_file}: not JSON (Expecting value at line 1, column 1)"


def test_not_json_at_all(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\nworld\n")
    with pytest.raises(
        ImportFormatError, match=r"notes.txt: not JSON \(Expecting value at line 1, column 1\)$"
    ):
        read_file(path)
    with pytest.raises(ImportFormatError, match="not gemini: not JSON"):
        read_file(path, "gemini")
    with pytest.raises(ImportFormatError, match="no such file"):
        read_file(tmp_path / "missing.json")
    with pytest.raises(ImportFormatError, match="unknown format 'csv'"):
        read_file(path, "csv")


def test_named_format_that_does_not_fit_says_where(tmp_path: Path) -> None:
    path = _write(tmp_path / "chat.json", [{"role": "user", "content": "a"}, {"role": "tool"}])
    with pytest.raises(ImportFormatError, match=r"not anthropic: messages\[1\]\.role is 'tool'"):
        read_file(path, "anthropic")


def test_truncated_jsonl_imports_complete_lines(tmp_path: Path) -> None:
    src = (DATA / "import_claude_code_session.jsonl").read_text()
    cut = tmp_path / "cut.jsonl"
    cut.write_text(src[: len(src) - 40])  # the last entry cut mid-line
    b = read_file(cut)
    assert b.format == "claude-code"
    n = len(src.splitlines())
    assert f"{cut} line {n}: not complete JSON" in b.warnings[0]
    assert len(b.conversations[0].messages) == 7

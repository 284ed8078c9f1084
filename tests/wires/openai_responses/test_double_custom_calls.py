"""Free-form (custom) calls through the Responses double and the turn loop (issue 22, items 5 and 6).

A call of a tool the request declares ``"type": "custom"`` is answered as a ``custom_tool_call`` item,
whole and streamed in the openai SDK's own event types (``response.custom_tool_call_input.delta`` /
``.done``); the parsers read it as a custom call of its raw text, streamed exactly as whole; a turn on the
Codex vessel runs it (the tool gets the text) and its next request, reasoning followed by the custom call,
is taken by the strict double; the audit calls the text input the call's normal input.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolreplay._audit.body import RequestBody
from toolreplay._audit.report import audit_request
from toolreplay._history import ToolSpec
from toolreplay._loop import TurnOptions, run_turn
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import Tool, ToolRegistry
from toolreplay.testing import Call, Calls, ProviderDouble, Text
from toolreplay.testing.answers import Answer, AnswerCall, answer_body, answer_events, seeded
from toolreplay.wires import get_wire
from toolreplay.wires.reply import Usage

PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n"
CUSTOM = {"type": "custom", "name": "apply_patch", "description": "Edit files.",
          "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/s"}}  # fmt: skip
ASKED = {"model": "gpt-5", "tools": [CUSTOM], "include": ["reasoning.encrypted_content"], "store": False}


def _answer(stream: bool) -> Answer:
    call = AnswerCall("apply_patch", {"input": PATCH}, "call_7", None)
    return Answer(3, "gpt-5", "", (call,), "Patch it.", Usage(40, 20, 0), {**ASKED, "stream": stream})


def test_the_answer_holds_a_custom_call_and_the_sdk_takes_it_strictly() -> None:
    pytest.importorskip("openai")
    from openai.types.responses import Response

    body = answer_body("openai-responses", _answer(False))
    Response.model_validate(body, strict=True)
    item = body["output"][-1]
    assert (item["type"], item["input"], item["id"]) == ("custom_tool_call", PATCH, "ctc_double3_0")


def test_the_stream_uses_the_real_event_names_and_the_sdk_takes_each_strictly() -> None:
    pydantic = pytest.importorskip("pydantic")
    pytest.importorskip("openai")
    from openai.types.responses import ResponseStreamEvent

    events = [p for _, p in answer_events("openai-responses", _answer(True))]
    adapter = pydantic.TypeAdapter(ResponseStreamEvent)
    for payload in events:
        adapter.validate_python(payload, strict=True)
    kinds = [e["type"] for e in events]
    assert "response.custom_tool_call_input.delta" in kinds
    done = next(e for e in events if e["type"] == "response.custom_tool_call_input.done")
    assert done["input"] == PATCH
    added = next(e for e in events if e["type"] == "response.output_item.added" and e["output_index"] == 1)
    assert added["item"]["type"] == "custom_tool_call"


@pytest.mark.parametrize("seed", range(4))
def test_the_parsers_read_a_custom_call_streamed_exactly_as_whole(seed: int) -> None:
    wire = get_wire("openai-responses")
    whole = wire.parse_response(answer_body("openai-responses", _answer(False)))
    parser = wire.stream_parser()
    for _, p in answer_events("openai-responses", _answer(True), seeded(seed)):
        parser.feed(p)
    streamed = parser.finish()
    (call,) = whole.calls
    assert (call.kind, call.input, call.input_error, call.call_id) == ("custom", PATCH, None, "call_7")
    assert call.provider_data == {"openai-responses": {"item_id": "ctc_double3_0"}}
    assert streamed.calls == whole.calls


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def _patch_tool(got: list[Any]) -> Tool:
    def apply_patch(text: Any) -> str:
        got.append(text)
        return "Success. Updated the following files:\nA notes.txt\n"

    return Tool(ToolSpec("apply_patch", "Edit files.", kind="custom"), apply_patch)


def test_a_codex_turn_runs_a_free_form_call_against_the_strict_double(
    double: ProviderDouble, tmp_path: Any
) -> None:
    double.script(Calls([Call("apply_patch", {"input": PATCH})], reasoning="Patch it."), Text("Done."))
    got: list[Any] = []
    store = SQLiteStore(tmp_path / "s.db")
    try:
        result = run_turn("c1", "Make notes.txt", double.vessel("codex"), ToolRegistry([_patch_tool(got)]),
                          store=store, options=TurnOptions(model="gpt-5", stream=True))  # fmt: skip
        stored = store.load("c1")
    finally:
        store.close()
    assert got == [PATCH]  # the tool got the text itself
    assert result.reply.text == "Done." and result.steps == 2
    (call,) = stored.messages[-1].tool_uses
    assert (call.kind, call.input) == ("custom", PATCH)
    second = double.requests[1].body
    kinds = [i.get("type") for i in second["input"]]
    assert kinds[-3:] == ["reasoning", "custom_tool_call", "custom_tool_call_output"]
    assert second["tools"][0]["type"] == "custom"


def test_the_audit_calls_a_free_form_input_its_normal_input() -> None:
    body = {
        "model": "gpt-5", "tools": [CUSTOM], "store": False,
        "input": [
            {"role": "user", "content": "Make notes.txt"},
            {"type": "custom_tool_call", "call_id": "call_1", "name": "apply_patch", "input": PATCH},
            {"type": "custom_tool_call_output", "call_id": "call_1", "output": "Success."},
        ],
    }  # fmt: skip
    report = audit_request(RequestBody(body, "openai-responses", "test"))
    assert report.patches() == []
    (found,) = report.found
    assert found.kind == "custom" and found.input == PATCH


def test_a_script_file_gives_a_free_form_call_its_text(tmp_path: Any) -> None:
    from toolreplay.testing.playbook import load_script

    path = tmp_path / "double.toml"
    path.write_text("[[answers]]\ncalls = [{name = 'apply_patch', input = '*** Begin Patch'}]\n", "utf-8")
    (item,) = load_script(path)
    assert isinstance(item, Calls) and list(item.calls) == [Call("apply_patch", {"input": "*** Begin Patch"})]

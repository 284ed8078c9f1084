"""Gemini bodies kept whole (issue 22): Gemini CLI's own requests imported and rendered ``--as-sent``
are JSON-equal to what it sent, with its call ids, its system instruction's role and parts and its
generation config kept, and rendered valid for every other vessel with their calls as calls; a tool's
own parts (a PDF inline, a file by URL) are the answer's parts; hosted tools and code execution parts,
snake_case bodies and the audit of Gemini CLI's system prompt."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from agentlib import load_capture
from toolreplay import read_history, render, vessels
from toolreplay._audit.body import load_request
from toolreplay._audit.report import audit_request
from toolreplay._audit.validate import check_body
from toolreplay.model import History, ToolSpec
from toolreplay.wires.gemini.response import StreamParser, parse_response
from wire_helpers import is_http

PDF = "JVBERi0xLjQKMSAwIG9iago8PC9UeXBlL0NhdGFsb2c+PgplbmRvYmoKdHJhaWxlcgo8PC9Sb290IDEgMCBSPj4KJSVFT0YK"
BODIES = load_capture("gemini").bodies


def _read(body: Any) -> History:
    (h,) = read_history(copy.deepcopy(body), "gemini").conversations
    return h


@pytest.mark.parametrize("n", range(len(BODIES)))
def test_gemini_cli_bodies_render_back_as_sent(n: int) -> None:
    assert render(_read(BODIES[n]), as_sent=True) == BODIES[n]


def test_gemini_cli_ids_system_and_settings_are_kept() -> None:
    body = BODIES[-1]
    h = _read(body)
    sent_ids = [p["functionCall"]["id"] for c in body["contents"] for p in c["parts"] if "functionCall" in p]
    assert [c.call_id for m in h.messages for c in m.tool_uses] == sent_ids
    assert h.last_request is not None
    assert h.last_request.fields["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 8192,
    }
    assert h.messages[0].role == "system"
    assert body["systemInstruction"]["role"] == "user"  # kept, since it renders back


# every vessel whose provider takes calls as calls (the claude vessel sends a transcript to the CLI)
@pytest.mark.parametrize("vessel", [v.name for v in vessels() if is_http(v.wire)])
def test_gemini_cli_bodies_render_valid_for_every_vessel(vessel: str) -> None:
    for n, sent in enumerate(BODIES):
        h = _read(sent)
        body = render(h, vessel)
        assert check_body(vessel, body).problems == (), n
        calls = [c.name for m in h.messages for c in m.tool_uses]
        text = str(body)
        for name in calls:  # the calls travel as calls, by name (declared and called)
            assert text.count(repr(name)) >= 2, (n, name)


def _pdf_body() -> dict[str, Any]:
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "Read the report."}]},
            {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "fetch", "args": {"u": "r"}}}]},
            {"role": "user", "parts": [{"functionResponse": {
                "id": "c1", "name": "fetch", "response": {"output": "the report"},
                "parts": [
                    {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
                    {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/r.pdf"}},
                ],
            }}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "fetch", "parameters": {"type": "object"}}]}],
    }  # fmt: skip


def test_a_tools_own_parts_are_kept_and_go_back() -> None:
    body = _pdf_body()
    h = _read(body)
    (call,) = h.messages[1].tool_uses
    assert [(p.kind, bool(p.data), p.url) for p in call.parts] == [
        ("document", True, ""),
        ("document", False, "https://example.com/r.pdf"),
    ]
    assert call.answer == "the report"
    assert render(h, as_sent=True) == body
    anthropic = render(h, "anthropic")  # a wire that carries documents in an answer gets them
    assert PDF in str(anthropic) and "https://example.com/r.pdf" in str(anthropic)


def test_hosted_tools_and_code_execution_parts_go_back_as_sent() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Compute and search."}]},
            {"role": "model", "parts": [
                {"text": "thinking", "thought": True, "thoughtSignature": "c2ln"},
                {"executableCode": {"language": "PYTHON", "code": "print(2+2)"}},
                {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "4\n"}},
                {"toolCall": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"q": "x"}}},
                {"toolResponse": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "response": {"r": 1}}},
                {"text": "It is 4.", "thoughtSignature": "c2ln"},
                {"text": "Done."},
            ]},
            {"role": "user", "parts": [{"text": "Thanks"}, {"text": "again"}]},
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Be right."}]},
        "tools": [{"googleSearch": {}}, {"codeExecution": {}}, {"urlContext": {}},
                  {"functionDeclarations": [{"name": "f", "parametersJsonSchema": {"type": "object"}}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
        "cachedContent": "cachedContents/abc",
        "labels": {"team": "x"},
    }  # fmt: skip
    h = _read(body)
    assert [(t.name, t.kind) for t in h.tools or ()] == [
        ("googleSearch", "hosted"),
        ("codeExecution", "hosted"),
        ("urlContext", "hosted"),
        ("f", "function"),
    ]
    assert [m.role for m in h.messages] == ["system", "system", "user", "assistant", "user"]
    assert [p.text for p in h.messages[-1].parts] == ["Thanks", "again"]
    assert render(h, as_sent=True) == body


def test_a_snake_case_body_goes_back_in_snake_case() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"function_call": {"name": "f", "args": {}},
                                         "thoughtSignature": "c2ln"}]},
            {"role": "user", "parts": [{"function_response": {"name": "f", "response": {"result": 1}}}]},
        ],
        "system_instruction": {"parts": [{"text": "sys"}]},
        "tools": [{"function_declarations": [{"name": "f", "parameters_json_schema": {"type": "object"}}]}],
        "generation_config": {"max_output_tokens": 10},
    }  # fmt: skip
    assert render(_read(body), as_sent=True) == body


def test_gemini_cli_system_prompt_is_no_described_call() -> None:
    body = BODIES[-1]
    assert "using the `invoke_agent` tool" in str(body["systemInstruction"])
    report = audit_request(load_request(copy.deepcopy(body), wire="gemini"))
    assert [p for p in report.passages if p.role == "system"] == []


def test_a_normal_gemini_render_carries_the_settings_and_the_tools_url_parts() -> None:
    h = _read(_pdf_body() | {"generationConfig": {"thinkingConfig": {"thinkingBudget": 64}}})
    body = render(h, "gemini")
    assert body["generationConfig"] == {"thinkingConfig": {"thinkingBudget": 64}}
    (response,) = body["contents"][2]["parts"]
    assert response["functionResponse"]["parts"][1] == {
        "fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/r.pdf"}
    }


def test_answers_and_words_in_one_content_go_back_in_one() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Look."}]},
            {"role": "model", "parts": [{"functionCall": {"name": "look", "args": {}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "look", "response": {"output": "seen"}}},
                {"text": "Now say what you saw."},
            ]},
        ],
    }  # fmt: skip
    h = _read(body)
    assert [m.role for m in h.messages] == ["user", "assistant", "user"]
    assert render(h, as_sent=True) == body


def test_gemini_hosted_tools_go_on_gemini_and_are_named_elsewhere() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "Search."}]}],
        "tools": [{"googleSearch": {}},
                  {"functionDeclarations": [{"name": "f", "parameters": {"type": "object"}}]}],
    }  # fmt: skip
    h = _read(body)
    said: list[str] = []
    on_gemini = render(h, "gemini", warnings=said)
    assert {"googleSearch": {}} in on_gemini["tools"]
    assert check_body("gemini", on_gemini).problems == ()
    assert not any("googleSearch" in w for w in said)
    elsewhere: list[str] = []
    render(h, "anthropic", warnings=elsewhere)
    assert any(
        "tool 'googleSearch' runs at the provider (gemini): not declared on anthropic" in w for w in elsewhere
    )
    web = ToolSpec("web_search", kind="hosted", sent={"openai-responses": {"tool": {"type": "web_search"}}})
    other: list[str] = []
    on_gemini = render(replace(h, tools=(web,)), "gemini", warnings=other)
    assert "tools" not in on_gemini
    assert any(
        "tool 'web_search' runs at the provider (openai-responses): not declared on gemini" in w
        for w in other
    )


SERVER_PARTS = [
    {"text": "plan", "thought": True, "thoughtSignature": "c2ln"},
    {"executableCode": {"language": "PYTHON", "code": "print(2+2)"}},
    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "4\n"}},
    {"toolCall": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"q": "x"}}},
    {"toolResponse": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "response": {"r": 1}}},
    {"text": "It is 4."},
    {"functionCall": {"id": "c9", "name": "f", "args": {"a": 1}}, "thoughtSignature": "c2ln"},
]


def test_an_answer_keeps_its_server_tool_parts_streamed_as_whole() -> None:
    whole = parse_response({"candidates": [{"content": {"role": "model", "parts": SERVER_PARTS}}]})
    stream = StreamParser()
    for p in SERVER_PARTS:
        stream.feed({"candidates": [{"content": {"role": "model", "parts": [p]}}]})
    stream.feed({"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP"}]})
    stream.mark_done()
    assert stream.finish().said == whole.said
    assert [p.data["gemini"] for p in whole.said if p.data] == SERVER_PARTS[:5]
    assert [(c.name, c.call_id) for c in whole.calls] == [("f", "c9")]


def test_a_normal_render_writes_carried_settings_in_camel_case() -> None:
    schema = {"type": "object", "properties": {"dog_name": {"type": "string"}}}
    body = {
        "contents": [{"role": "user", "parts": [{"text": "Name a dog."}]}],
        "generation_config": {"response_mime_type": "application/json", "response_schema": schema,
                              "thinking_config": {"include_thoughts": True}},
    }  # fmt: skip
    h = _read(body)
    again = render(h, "gemini")
    assert again["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseSchema": schema,  # the caller's property names stay as they are
        "thinkingConfig": {"includeThoughts": True},
    }
    assert check_body("gemini", again).problems == ()
    assert render(h, as_sent=True) == body


def test_answers_given_by_id_out_of_order_pair_and_go_back_as_sent() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Both."}]},
            {"role": "model", "parts": [
                {"functionCall": {"id": "a", "name": "one", "args": {}}},
                {"functionCall": {"id": "b", "name": "two", "args": {}}},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "b", "name": "two", "response": {"output": "2"}}},
                {"functionResponse": {"id": "a", "name": "one", "response": {"output": "1"}}},
            ]},
        ],
    }  # fmt: skip
    h = _read(body)
    assert [(c.call_id, c.answer) for c in h.messages[1].tool_uses] == [("a", "1"), ("b", "2")]
    assert render(h, as_sent=True) == body

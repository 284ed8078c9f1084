"""The provider doubles: every wire's checks with the providers' real error text, the script, the records.

Requests go over real HTTP to 127.0.0.1 with httpx (no toolreplay transport), so these tests pin the
doubles' own behaviour: what users of ``toolreplay.testing`` rely on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from toolreplay._api import render
from toolreplay._audit.validate import rule_problems
from toolreplay._vessels import BUILTIN
from toolreplay.testing import (
    Call,
    Calls,
    Error,
    ProviderDouble,
    RecordedRequest,
    Text,
    serve,
)
from toolreplay.wires.anthropic.rules import MUST_DEFINE_TOOLS
from toolreplay.wires.contract import first_refusal
from toolreplay.wires.gemini.rules import GEMINI_COUNT, GEMINI_ORDER
from toolreplay.wires.openai_chat.rules import ORPHAN_TOOL
from toolreplay.wires.openai_responses.rules import NO_CALL_FOR_OUTPUT, NO_OUTPUT_FOR_CALL
from wire_helpers import error_message, is_http, wire_url

HTTP_VESSELS = sorted(n for n, v in BUILTIN.items() if is_http(v.wire))


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


_CLIENT: list[httpx.Client] = []


@pytest.fixture(scope="module", autouse=True)
def _client() -> Iterator[None]:
    # One client for the module: making one costs ~50 ms (its CA bundle).
    with httpx.Client(timeout=5) as client:
        _CLIENT.append(client)
        yield
        _CLIENT.clear()


def post(url: str, body: Any, **headers: str) -> httpx.Response:
    return _CLIENT[0].post(url, content=json.dumps(body).encode(), headers=headers)


def path_for(double: ProviderDouble, target: str, model: str = "gemini-3-pro") -> str:
    wire = BUILTIN[target].wire if target in BUILTIN else target
    return wire_url(double.base_url_for(target), wire, model)


def refused(double: ProviderDouble, target: str, body: Any) -> str:
    """The provider's message of the 400 the double answers (and checks it is in the wire's shape)."""
    resp = post(path_for(double, target), body)
    assert resp.status_code == 400, resp.text
    return error_message(BUILTIN[target].wire if target in BUILTIN else target, resp.json(), double=True)


# -- the real renderers' bodies are accepted on every vessel ----------------------------------------------


@pytest.mark.parametrize("vessel", HTTP_VESSELS)
@pytest.mark.parametrize("mode", ["native", "plain", "prose"])
def test_rendered_demo_history_is_accepted(
    double: ProviderDouble, demo_path: Any, vessel: str, mode: str
) -> None:
    body = render(demo_path, vessel, mode)  # type: ignore[arg-type]
    if BUILTIN[vessel].has("stream_only"):
        body["stream"] = True
    resp = post(path_for(double, vessel, BUILTIN[vessel].model), body)
    assert resp.status_code == 200, resp.text
    assert double.requests[-1].rejected is None


# -- OpenAI Chat ------------------------------------------------------------------------------------------

CALL = {"id": "call_1", "type": "function", "function": {"name": "coop", "arguments": '{"action":"list"}'}}


def chat(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}, *messages]}


def test_chat_orphan_answer(double: ProviderDouble) -> None:
    message = refused(double, "openai-chat", chat({"role": "tool", "tool_call_id": "x", "content": "r"}))
    assert message == "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'."


def test_chat_unanswered_call(double: ProviderDouble) -> None:
    body = chat(
        {"role": "assistant", "content": None, "tool_calls": [CALL]}, {"role": "user", "content": "and?"}
    )
    assert refused(double, "openai-chat", body) == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: call_1"
    )


def test_chat_ids_over_40_on_openai_but_not_on_kimi(double: ProviderDouble) -> None:
    long_id = "functions.coop_with_a_rather_long_name:1234"
    assert len(long_id) == 43
    body = chat(
        {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": long_id}]},
        {"role": "tool", "tool_call_id": long_id, "content": "ok"},
    )
    expected = (
        "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 40, "
        "but got a string with length 43 instead."
    )
    assert refused(double, "openai-chat", body) == expected
    assert refused(double, "openai", body) == expected
    assert post(path_for(double, "kimi"), body).status_code == 200  # design 7: Kimi takes any length
    assert post(path_for(double, "openai-compatible"), body).status_code == 200


def test_chat_arguments_must_be_a_string(double: ProviderDouble) -> None:
    bad = {**CALL, "function": {"name": "coop", "arguments": {"action": "list"}}}
    body = chat(
        {"role": "assistant", "tool_calls": [bad]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    )
    assert "expected a string" in refused(double, "openai-chat", body)


def test_chat_refusals_are_the_wire_rules_own(double: ProviderDouble) -> None:
    # the double answers the first Refusal the wire's rules find, with OpenAI's text; the validator reads
    # the same problem as a line naming the place
    body = chat({"role": "tool", "tool_call_id": "x", "content": "r"})
    problems = rule_problems("openai", body)
    assert first_refusal(problems) == ORPHAN_TOOL == refused(double, "openai-chat", body)
    assert problems[0].startswith("messages[1]: tool message with no assistant tool_calls")


def test_chat_takes_what_openai_takes_though_the_validator_is_stricter(double: ProviderDouble) -> None:
    # answers out of call order: OpenAI takes them (and so does the double), the replay never sends them
    second = {**CALL, "id": "call_2"}
    body = chat(
        {"role": "assistant", "content": None, "tool_calls": [CALL, second]},
        {"role": "tool", "tool_call_id": "call_2", "content": "two"},
        {"role": "tool", "tool_call_id": "call_1", "content": "one"},
    )
    assert post(path_for(double, "openai-chat"), body).status_code == 200
    problems = rule_problems("openai", body)
    assert any("out of call order" in p for p in problems)
    assert first_refusal(problems) is None


def test_chat_both_paths(double: ProviderDouble) -> None:
    assert post(double.url + "/chat/completions", chat()).status_code == 200
    assert post(double.url + "/v1/chat/completions", chat()).status_code == 200
    assert [r.wire for r in double.requests] == ["openai-chat", "openai-chat"]


# -- OpenAI Responses -------------------------------------------------------------------------------------


def responses(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-5", "input": [{"role": "user", "content": "hi"}, *items], **extra}


FC = {"type": "function_call", "call_id": "call_1", "name": "coop", "arguments": "{}"}
FCO = {"type": "function_call_output", "call_id": "call_1", "output": "ok"}


def test_responses_output_without_call_and_call_without_output(double: ProviderDouble) -> None:
    assert refused(double, "openai-responses", responses(FCO)) == NO_CALL_FOR_OUTPUT.format(id="call_1")
    assert refused(double, "openai-responses", responses(FC)) == NO_OUTPUT_FOR_CALL.format(id="call_1")
    assert post(path_for(double, "openai-responses"), responses(FC, FCO)).status_code == 200


def test_responses_takes_an_output_away_from_its_call_the_validator_does_not(double: ProviderDouble) -> None:
    # OpenAI pairs an output with any call before it; the replay puts outputs right after their calls
    body = responses(FC, {"role": "user", "content": "meanwhile"}, FCO)
    assert post(path_for(double, "openai-responses"), body).status_code == 200
    problems = rule_problems("openai-responses", body)
    assert any("not answered right after the calls" in p for p in problems)
    assert first_refusal(problems) is None
    assert first_refusal(rule_problems("openai-responses", responses(FCO))) == NO_CALL_FOR_OUTPUT.format(
        id="call_1"
    )


def test_responses_fc_id_needs_its_reasoning_item(double: ProviderDouble) -> None:
    with_id = {**FC, "id": "fc_123"}
    assert "without its required 'reasoning' item" in refused(
        double, "openai-responses", responses(with_id, FCO)
    )
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"}
    assert post(path_for(double, "openai-responses"), responses(reasoning, with_id, FCO)).status_code == 200


def test_responses_call_id_over_64(double: ProviderDouble) -> None:
    cid = "c" * 65
    body = responses({**FC, "call_id": cid}, {**FCO, "call_id": cid})
    assert "Expected a string with maximum length 64" in refused(double, "openai-responses", body)


def test_codex_demands_store_false_and_stream(double: ProviderDouble) -> None:
    assert refused(double, "codex", responses()) == "Store must be set to false"
    assert refused(double, "codex", responses(store=False)) == "Stream must be set to true"
    assert post(path_for(double, "codex"), responses(store=False, stream=True)).status_code == 200
    assert post(path_for(double, "openai-responses"), responses()).status_code == 200


# -- Anthropic --------------------------------------------------------------------------------------------

TOOLS = [{"name": "coop", "description": "todo board", "input_schema": {"type": "object"}}]
USE = {"type": "tool_use", "id": "toolu_1", "name": "coop", "input": {"action": "list"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


def anthropic(*messages: dict[str, Any], tools: Any = TOOLS) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "claude",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
    }
    body["messages"] += list(messages)
    if tools:
        body["tools"] = tools
    return body


def test_anthropic_tool_use_needs_tools(double: ProviderDouble) -> None:
    body = anthropic(
        {"role": "assistant", "content": [USE]}, {"role": "user", "content": [RESULT]}, tools=None
    )
    assert refused(double, "anthropic", body) == MUST_DEFINE_TOOLS


def test_anthropic_result_must_come_first_in_the_next_message(double: ProviderDouble) -> None:
    late = anthropic(
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [{"type": "text", "text": "here"}, RESULT]},
    )
    assert refused(double, "anthropic", late) == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )
    missing = anthropic({"role": "assistant", "content": [USE]}, {"role": "user", "content": "no result"})
    assert "were found without `tool_result` blocks immediately after: toolu_1" in refused(
        double, "anthropic", missing
    )
    last = anthropic({"role": "assistant", "content": [USE]})
    assert "immediately after" in refused(double, "anthropic", last)


def test_anthropic_orphan_result_and_bad_id(double: ProviderDouble) -> None:
    orphan = anthropic({"role": "assistant", "content": "sure"}, {"role": "user", "content": [RESULT]})
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_1" in refused(
        double, "anthropic", orphan
    )
    bad = {**USE, "id": "functions.coop:0"}
    body = anthropic(
        {"role": "assistant", "content": [bad]},
        {"role": "user", "content": [{**RESULT, "tool_use_id": "functions.coop:0"}]},
    )
    assert "String should match pattern '^[a-zA-Z0-9_-]+$'" in refused(double, "anthropic", body)


def test_anthropic_merges_consecutive_same_role_messages(double: ProviderDouble) -> None:
    body = anthropic(
        {"role": "assistant", "content": "Let me look."},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [RESULT]},
        {"role": "user", "content": "thanks"},
    )
    assert post(path_for(double, "anthropic"), body).status_code == 200


# -- Gemini -----------------------------------------------------------------------------------------------


def gemini(*contents: dict[str, Any]) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": "close 12"}]}, *contents]}


FCALL = {"functionCall": {"name": "coop", "args": {"action": "close", "id": 12}}}
FRESP = {"functionResponse": {"name": "coop", "response": {"output": "closed"}}}


def test_gemini_signature_required_in_the_current_turn(double: ProviderDouble) -> None:
    body = gemini({"role": "model", "parts": [FCALL]}, {"role": "user", "parts": [FRESP]})
    message = refused(double, "gemini", body)
    assert message.startswith("Function call is missing a thought_signature in functionCall parts.")
    assert "`default_api:coop`" in message
    dummy = {**FCALL, "thoughtSignature": "skip_thought_signature_validator"}
    signed = gemini({"role": "model", "parts": [dummy]}, {"role": "user", "parts": [FRESP]})
    assert post(path_for(double, "gemini"), signed).status_code == 200
    snake = gemini(
        {"role": "model", "parts": [{**FCALL, "thought_signature": "s"}]}, {"role": "user", "parts": [FRESP]}
    )
    assert post(path_for(double, "gemini"), snake).status_code == 200  # design 9


def test_gemini_only_the_first_call_of_a_step_needs_it(double: ProviderDouble) -> None:
    body = gemini(
        {"role": "model", "parts": [{**FCALL, "thoughtSignature": "s"}, FCALL]},
        {"role": "user", "parts": [FRESP, FRESP]},
    )
    assert post(path_for(double, "gemini"), body).status_code == 200


def test_gemini_earlier_turns_need_no_signature(double: ProviderDouble) -> None:
    body = gemini(
        {"role": "model", "parts": [FCALL]},
        {"role": "user", "parts": [FRESP]},
        {"role": "model", "parts": [{"text": "Closed."}]},
        {"role": "user", "parts": [{"text": "thanks"}]},
    )
    assert post(path_for(double, "gemini"), body).status_code == 200


def test_gemini_signatures_can_be_relaxed() -> None:
    with ProviderDouble(require_signatures=False) as d:
        body = gemini({"role": "model", "parts": [FCALL]}, {"role": "user", "parts": [FRESP]})
        assert post(path_for(d, "gemini"), body).status_code == 200


def test_gemini_response_count_and_order(double: ProviderDouble) -> None:
    signed = {**FCALL, "thoughtSignature": "s"}
    short = gemini({"role": "model", "parts": [signed, FCALL]}, {"role": "user", "parts": [FRESP]})
    assert refused(double, "gemini", short) == GEMINI_COUNT
    twice = gemini({"role": "model", "parts": [{"text": "hm"}]}, {"role": "model", "parts": [signed]})
    assert refused(double, "gemini", twice) == GEMINI_ORDER


# -- Ollama -----------------------------------------------------------------------------------------------


def test_ollama_arguments_must_be_objects(double: ProviderDouble) -> None:
    body = {
        "model": "qwen3",
        "stream": False,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "coop", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_name": "coop", "content": "ok"},
        ],
    }
    assert "cannot unmarshal string" in refused(double, "ollama", body)
    assert refused(double, "ollama", {"messages": []}) == "model is required"


def test_ollama_streams_unless_told_not_to(double: ProviderDouble) -> None:
    resp = post(
        path_for(double, "ollama"), {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]}
    )
    assert resp.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(x) for x in resp.text.splitlines()]
    assert lines[-1]["done"] is True
    assert double.requests[0].stream is True


# -- script, responder, records ---------------------------------------------------------------------------


def test_refused_requests_do_not_use_up_the_script(double: ProviderDouble) -> None:
    double.script(Text("kept"))
    refused(double, "openai-chat", chat({"role": "tool", "tool_call_id": "x", "content": "r"}))
    assert double.pending == [Text("kept")]
    resp = post(path_for(double, "openai-chat"), chat())
    assert resp.json()["choices"][0]["message"]["content"] == "kept"
    assert [r.status for r in double.requests] == [400, 200]
    assert double.requests[0].rejected == ORPHAN_TOOL


def test_wire_queues_go_first_and_default_answers_when_empty(double: ProviderDouble) -> None:
    double.script(Text("shared"))
    double.script(Text("for gemini"), wire="gemini")
    g = post(path_for(double, "gemini"), gemini()).json()
    assert g["candidates"][0]["content"]["parts"][0]["text"] == "for gemini"
    c = post(path_for(double, "ollama"), {"model": "q", "stream": False, "messages": []}).json()
    assert c["message"]["content"] == "shared"
    c = post(path_for(double, "ollama"), {"model": "q", "stream": False, "messages": []}).json()
    assert c["message"]["content"] == "ok"  # the default
    with pytest.raises(ValueError, match="unknown wire"):
        double.script(Text("x"), wire="smoke-signals")


def test_no_default_gives_a_500() -> None:
    with ProviderDouble(default=None) as d:
        resp = post(path_for(d, "anthropic"), anthropic())
        assert resp.status_code == 500
        assert "script is empty" in resp.json()["error"]["message"]


def test_responder_sees_the_request(double: ProviderDouble) -> None:
    def responder(req: RecordedRequest) -> Any:
        roles = [m["role"] for m in req.body["messages"]]
        if "tool" in roles:
            return Text("done")
        return Calls([Call("coop", {"action": "close", "id": 12}, call_id="call_9")])

    double.responder = responder
    first = post(path_for(double, "openai-chat"), chat()).json()
    call = first["choices"][0]["message"]["tool_calls"][0]
    assert call["id"] == "call_9" and json.loads(call["function"]["arguments"]) == {
        "action": "close",
        "id": 12,
    }
    body = chat({"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_9", "content": "status: closed"})  # fmt: skip
    second = post(path_for(double, "openai-chat"), body).json()
    assert second["choices"][0]["message"]["content"] == "done"


def test_error_items_in_each_wire_shape(double: ProviderDouble) -> None:
    double.script(Error(429, retry_after=3), Error(529), Error(503, "busy"), Error(404))
    r = post(path_for(double, "openai-chat"), chat())
    assert r.status_code == 429 and r.headers["retry-after"] == "3"
    assert r.json()["error"]["type"] == "rate_limit_exceeded"
    r = post(path_for(double, "anthropic"), anthropic())
    assert r.status_code == 529 and r.json()["error"]["type"] == "overloaded_error"
    r = post(path_for(double, "gemini"), gemini())
    assert r.json() == {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}
    r = post(path_for(double, "ollama"), {"model": "q", "messages": []})
    assert r.status_code == 404 and "error" in r.json()


def test_records_paths_vessels_and_redacted_headers(double: ProviderDouble) -> None:
    post(path_for(double, "anthropic"), anthropic(), **{"x-api-key": "sk-ant-realkey-123456"})
    (req,) = double.requests
    assert req.wire == "anthropic" and req.vessel == "anthropic"
    assert req.path.endswith("/vessel/anthropic/v1/messages")
    assert req.headers["x-api-key"] == "[redacted]" and req.has_key()
    assert req.body == anthropic() and json.loads(req.raw) == anthropic()
    double.clear()
    assert double.requests == []


def test_unknown_paths_and_non_json(double: ProviderDouble) -> None:
    assert post(double.url + "/v2/nothing", {}).status_code == 404
    resp = _CLIENT[0].post(path_for(double, "openai-chat"), content=b"{not json")
    assert resp.status_code == 400
    assert "could not parse the JSON body" in resp.json()["error"]["message"]


def test_base_urls_and_vessel_copies(double: ProviderDouble) -> None:
    assert double.base_url_for("openai-chat") == double.url + "/v1"
    assert double.base_url_for("gemini") == double.url + "/vessel/gemini/v1beta"  # a vessel name wins
    assert double.base_url_for("anthropic") == double.url + "/vessel/anthropic"
    v = double.vessel("kimi")
    assert v.base_url == double.url + "/vessel/kimi/v1"
    assert v.model == BUILTIN["kimi"].model and v.key_env == "MOONSHOT_API_KEY"
    with pytest.raises(ValueError, match="neither a vessel nor a wire"):
        double.base_url_for("nope")


def test_serve_helper_and_not_started() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        _ = ProviderDouble().url
    d = serve([Text("from serve")])
    try:
        resp = post(path_for(d, "ollama"), {"model": "q", "stream": False, "messages": []})
        assert resp.json()["message"]["content"] == "from serve"
    finally:
        d.close()

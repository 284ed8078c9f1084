"""Imported bodies keep their steps, words and reasoning (design 16-17), and say whose reasoning it is.

A body that called, read the answer and called again reads as two steps; the words before a call ride with
it; a body that ends inside a turn is a reply in progress and renders back ending with the tool results;
reasoning goes back byte for byte to its issuer only, and ``import --issuer-url`` names that issuer's host.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from toolreplay._api import render
from toolreplay._cli import cli
from toolreplay._importers import read_file
from toolreplay._steps import Audience, Issuer, Reasoning, Step, Text, same_model
from toolreplay._vessels import get_vessel
from toolreplay.wires import get_wire, parse_request

THINKING = {"type": "thinking", "thinking": "Look it up first.", "signature": "c2lnLWE="}


def _chat_mid_turn() -> dict[str, Any]:
    """A continuation request inside a turn: words and a call, its answer, a second call, its answer."""
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"id":7}'}}
    second = {"id": "c2", "type": "function", "function": {"name": "close", "arguments": '{"id":7}'}}
    return {
        "model": "gpt-4.1",
        "messages": [
            {"role": "user", "content": "Close order 7."},
            {"role": "assistant", "content": "Let me look the order up first.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "open"},
            {"role": "assistant", "content": None, "tool_calls": [second]},
            {"role": "tool", "tool_call_id": "c2", "content": "closed"},
        ],
    }


def test_a_mid_turn_body_is_two_steps_in_progress_and_renders_back_ending_with_the_results() -> None:
    h = parse_request("openai-chat", _chat_mid_turn())
    reply = h.messages[-1]
    assert (reply.status, reply.text) == ("in_progress", "")
    issuer = Issuer("openai-chat", "api.openai.com", "gpt-4.1")
    assert reply.steps == (Step((Text("Let me look the order up first."),), 1, issuer), Step((), 1, issuer))
    sent = render(h, "openai", model="gpt-4.1")["messages"]
    # the same messages in the same places (ids are the replay's own): the words ride with the first call,
    # and the request ends with the second call's answer
    assert [(m["role"], m.get("content")) for m in sent] == [
        (m["role"], m.get("content")) for m in _chat_mid_turn()["messages"]
    ]
    assert [len(m.get("tool_calls", ())) for m in sent] == [0, 1, 0, 1, 0]


def test_a_reply_without_words_before_one_batch_of_calls_is_stored_as_before_steps() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Done."},
    ]
    reply = parse_request("openai-chat", msgs).messages[1]
    assert (reply.steps, reply.text, reply.status) == ((), "Done.", "complete")


def _anthropic(model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    return {
        "model": model,
        "messages": [
            {"role": "user", "content": "Close order 7."},
            {
                "role": "assistant",
                "content": [
                    THINKING,
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"id": 7}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "open"}],
            },
        ],
    }


def test_thinking_goes_back_verbatim_to_its_issuer_only() -> None:
    h = parse_request("anthropic", _anthropic())
    (step,) = h.messages[-1].steps
    assert step.said == (Reasoning("Look it up first.", {"anthropic": THINKING}), Text("Looking."))
    same = render(h, "anthropic", model="claude-sonnet-4-5")
    assert same["messages"][1]["content"][0] == THINKING  # first in its message, byte for byte
    # the provider's dated snapshot of the model the body names is the same issuer
    assert render(h, "anthropic", model="claude-sonnet-4-5-20250929")["messages"] == same["messages"]
    for vessel, model in (("anthropic", "claude-opus-4-1"), ("glm", None), ("gemini", None)):
        warnings: list[str] = []
        other = json.dumps(render(h, vessel, model=model, warnings=warnings))
        assert "c2lnLWE=" not in other and "Look it up first." not in other, vessel
        assert any("1 piece of reasoning not replayed" in w for w in warnings), vessel
        assert "Looking." in other  # the words still ride with the call


def test_a_model_and_its_dated_snapshot_are_one_issuer_two_snapshots_are_not() -> None:
    assert same_model("gpt-5", "gpt-5-2025-08-07") and same_model(
        "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"
    )
    assert not same_model("gpt-5-2025-08-07", "gpt-5-2025-10-01")
    assert not same_model("gpt-5", "gpt-5-mini")
    a = Audience("openai-responses", "api.openai.com", "gpt-5-2025-08-07")
    assert a.accepts(Issuer("openai-responses", "api.openai.com", "gpt-5"))
    assert not a.accepts(Issuer("openai-responses", "chatgpt.com", "gpt-5"))


def test_responses_reasoning_items_lead_their_calls_for_their_issuer() -> None:
    first = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ZW5jcnlwdGVk"}
    second = {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "c2Vjb25k"}
    body = {
        "model": "gpt-5",
        "input": [
            {"role": "user", "content": "go"},
            first,
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            second,
            {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c2", "output": "ok"},
        ],
    }
    items = render(parse_request("openai-responses", body), "openai-responses", model="gpt-5")["input"]
    assert [i.get("type", i.get("role")) for i in items] == [
        t.get("type", t.get("role")) for t in body["input"]
    ]
    assert (items[1], items[4]) == (first, second)
    codex = json.dumps(render(parse_request("openai-responses", body), "codex"))
    assert "ZW5jcnlwdGVk" not in codex  # another host and model: none of it


def test_gemini_thought_parts_and_signatures_come_back_in_place() -> None:
    thought = {"text": "plan", "thought": True, "thoughtSignature": "dGhvdWdodA=="}
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {
                "role": "model",
                "parts": [
                    thought,
                    {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "Y2FsbA=="},
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "ok"}}}]},
        ]
    }
    assert render(parse_request("gemini", body), "gemini")["contents"] == body["contents"]


def test_ollama_thinking_rides_on_its_message() -> None:
    body = {
        "model": "qwen3",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "thinking": "call f",
             "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
            {"role": "tool", "tool_name": "f", "content": "ok"},
        ],
    }  # fmt: skip
    sent = render(parse_request("ollama", body), "ollama", model="qwen3")["messages"]
    assert (sent[1]["thinking"], sent[-1]["role"]) == ("call f", "tool")


def test_import_issuer_url_records_the_host_the_requests_went_to(tmp_path: Path) -> None:
    src = tmp_path / "body.json"
    src.write_text(json.dumps(_anthropic()))
    default = read_file(src)
    public = get_wire("anthropic").public_host
    assert default.issuers == (Issuer("anthropic", public, "claude-sonnet-4-5"),)
    proxied = read_file(src, issuer_url="https://llm-proxy.internal:8443/anthropic")
    assert proxied.issuers == (Issuer("anthropic", "llm-proxy.internal", "claude-sonnet-4-5"),)
    h = proxied.conversations[0]
    # the public endpoint did not make it: nothing goes back there; a vessel at the proxy gets it back
    assert "c2lnLWE=" not in json.dumps(render(h, "anthropic", model="claude-sonnet-4-5"))
    proxy = replace(get_vessel("anthropic"), base_url="https://llm-proxy.internal:8443/anthropic")
    assert render(h, proxy, model="claude-sonnet-4-5")["messages"][1]["content"][0] == THINKING

    runner = CliRunner()
    out = runner.invoke(cli, ["import", str(src), "--dry-run"])
    assert out.exit_code == 0, out.output
    assert f"made by anthropic at {public} claude-sonnet-4-5 (the wire's public host" in out.output
    out = runner.invoke(cli, ["import", str(src), "--dry-run", "--issuer-url", "https://llm-proxy.internal"])
    assert "made by anthropic at llm-proxy.internal claude-sonnet-4-5 (--issuer-url)" in out.output
    bad = runner.invoke(cli, ["import", str(src), "--dry-run", "--issuer-url", "not a url"])
    assert bad.exit_code != 0 and "--issuer-url 'not a url'" in bad.output


def test_claude_prompt_lines_carry_steps_only_when_a_reply_has_them() -> None:
    from toolreplay.wires.claude_prompt.render import REPLAY_HEAD, STEPS_NOTE, transcript_lines
    from toolreplay.wires.claude_prompt.rules import rules

    h = parse_request("openai-chat", _chat_mid_turn())
    body = render(h, "claude")
    line = transcript_lines(body)[1]
    assert line.startswith('{"role":"assistant","steps":[{"text":"Let me look the order up first.","calls":[')
    assert body["prompt"].startswith(f"{REPLAY_HEAD} {STEPS_NOTE}\n\n<transcript>\n")
    problems: list[str] = []
    rules(get_vessel("claude"), body, problems)
    assert problems == []
    back = parse_request("claude-prompt", body).messages[1]
    assert [s.words for s in back.steps] == ["Let me look the order up first.", ""]
    assert [c.name for c in back.tool_uses] == ["lookup", "close"]
    # one batch of calls with nothing before it: the line and the head are as before steps existed
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "next"},
    ]
    plain = render(parse_request("openai-chat", msgs), "claude")
    assert plain["prompt"].startswith(f"{REPLAY_HEAD}\n\n<transcript>\n")
    assert '{"role":"assistant","calls":[{"tool":"lookup"' in plain["prompt"]


SEARCH_USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
SEARCH_RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}


def test_server_tool_pieces_go_back_to_their_issuer_and_are_named_elsewhere() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "user", "content": "Find x, then save it."},
            {
                "role": "assistant",
                "content": [
                    SEARCH_USE,
                    SEARCH_RESULT,
                    {"type": "tool_use", "id": "toolu_1", "name": "save", "input": {"v": "x"}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
        ],
    }
    h = parse_request("anthropic", body)
    assert not h.warnings  # kept, not reported as lost
    (step,) = h.messages[-1].steps
    assert [p.kind for p in step.said] == ["server_tool", "server_tool"]
    same = render(h, "anthropic", model="claude-sonnet-4-5")["messages"][1]["content"]
    assert same[:2] == [SEARCH_USE, SEARCH_RESULT] and same[2]["type"] == "tool_use"
    warnings: list[str] = []
    other = json.dumps(render(h, "openai-responses", warnings=warnings))
    assert "srvtoolu_1" not in other
    assert any("2 server-tool pieces (a tool the provider ran itself) not replayed" in w for w in warnings)


def test_gemini_code_execution_parts_are_kept_in_place() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Compute, then save."}]},
            {"role": "model", "parts": [code, result, {"functionCall": {"name": "save", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "save", "response": {"output": "ok"}}}]},
        ]
    }
    h = parse_request("gemini", body)
    assert not h.warnings
    assert render(h, "gemini")["contents"][1]["parts"][:2] == [code, result]
    assert "print(1)" not in json.dumps(render(h, "anthropic"))

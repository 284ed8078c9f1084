"""``--repair`` of what the provider refuses, against the doubles (which refuse with the provider's own
text): an orphaned call on Anthropic, Chat and Responses; a thinking block another model wrote, or a
router's placeholder signature, sent to Anthropic; thinking blocks the agent dropped in a thinking tool
loop; a bare ``rs_`` item on ``store: false``. Without ``--repair`` each request fails as the provider fails
it and reaches the double as it was sent; with it, the request differs from what was sent by one edit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette")

from helpers_common import HTTP
from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.serve import start
from toolreplay.testing import Call, Calls, ProviderDouble, Text
from wire_helpers import http_of

TOOLS_A = [{"name": "coop", "description": "the board", "input_schema": {"type": "object"}}]
TOOL_OPENAI = {"type": "function", "function": {"name": "coop", "parameters": {"type": "object"}}}
TOOL_RESP = {"type": "function", "name": "coop", "parameters": {"type": "object"}}
Follow = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


def _run(
    repair: bool,
    tmp: Path,
    wire: str,
    path: str,
    first: dict[str, Any],
    follow: Follow,
    reasoning: str | None = None,
) -> tuple[httpx.Response, bytes, bytes, list[str]]:
    """The first request (the double answers a call), then ``follow(first, answer)``: what the proxy
    answered, what was sent, what reached the double, the console lines."""
    lines: list[str] = []
    suffix = http_of(wire).base_suffix  # the upstream's base URL: the double's root and the wire's suffix
    with ProviderDouble() as double:
        double.script(Calls([Call("coop", {"action": "list"})], reasoning=reasoning), Text("Listed."))
        db = tmp / ("on" if repair else "off") / "r.db"
        db.parent.mkdir(parents=True, exist_ok=True)
        cfg = ProxyConfig(upstreams={wire: double.url + suffix}, db=str(db), repair=repair)
        with start(cfg, say=lines.append) as proxy:
            answer = HTTP.post(proxy.url + path, content=jsonenc.encode(first), timeout=30)
            assert answer.status_code == 200, answer.text
            sent = jsonenc.encode(follow(first, answer.json()))
            got = HTTP.post(proxy.url + path, content=sent, timeout=30)
            assert proxy.drain()
        return got, sent, double.requests[-1].raw, lines


def _one_edit(sent: bytes, reached: bytes) -> Any:
    """``reached`` is ``sent`` with one run of bytes put in or taken out, every other byte as it was; the
    body that reached the double."""
    short, long = sorted((sent, reached), key=len)
    head = next((k for k in range(len(short)) if short[k] != long[k]), len(short))
    cut = len(long) - len(short)
    assert cut and long[:head] + long[head + cut :] == short, "not one edit"
    return jsonenc.loads(reached)


def _both(tmp: Path, refusal: str, cause: str, repaired: str, *args: Any, **kw: Any) -> bytes:
    got, sent, reached, lines = _run(False, tmp, *args, **kw)
    assert got.status_code == 400 and refusal in got.text, got.text
    assert reached == sent
    assert any(cause in line for line in lines), lines
    got, sent, reached, lines = _run(True, tmp, *args, **kw)
    assert got.status_code == 200, got.text
    assert any("[repair]" in line and repaired in line for line in lines), lines
    return _one_edit(sent, reached)


def _a_first(**more: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 900,
        "tools": TOOLS_A,
        "messages": [{"role": "user", "content": "list"}],
        **more,
    }


def _a_interrupted(first: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    said = {"role": "assistant", "content": answer["content"]}
    return first | {"messages": [*first["messages"], said, {"role": "user", "content": "stop; what now?"}]}


def test_an_orphaned_anthropic_call_is_answered_as_a_user_message_before_the_next(tmp_path: Path) -> None:
    edit = _both(
        tmp_path,
        "`tool_use` ids were found without `tool_result` blocks immediately after",
        "unanswered",
        "answered: no answer was recorded",
        "anthropic",
        "/v1/messages",
        _a_first(),
        _a_interrupted,
    )
    added = edit["messages"][2]
    assert added["role"] == "user" and added["content"][0]["content"] == "no answer was recorded"


def test_an_orphaned_anthropic_call_is_answered_inside_a_next_message_of_blocks(tmp_path: Path) -> None:
    def follow(first: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        body = _a_interrupted(first, answer)
        body["messages"][-1]["content"] = [{"type": "text", "text": "stop; what now?"}]
        return body

    edit = _both(
        tmp_path,
        "without `tool_result` blocks immediately after",
        "unanswered",
        "no answer was recorded",
        "anthropic",
        "/v1/messages",
        _a_first(),
        follow,
    )
    assert [b["type"] for b in edit["messages"][2]["content"]] == ["tool_result", "text"]


def _chat_first(first: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"model": "gpt-4.1", "tools": [TOOL_OPENAI], "messages": [{"role": "user", "content": "list"}]}


def test_an_orphaned_chat_call_is_answered_by_a_tool_message_after_it(tmp_path: Path) -> None:
    def follow(first: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        m = answer["choices"][0]["message"]
        said = {"role": "assistant", "content": m["content"], "tool_calls": m["tool_calls"]}
        return first | {"messages": [*first["messages"], said, {"role": "user", "content": "stop"}]}

    edit = _both(
        tmp_path,
        "must be followed by tool messages responding to each 'tool_call_id'",
        "unanswered",
        "no answer was recorded",
        "openai-chat",
        "/v1/chat/completions",
        _chat_first(),
        follow,
    )
    assert edit["messages"][2] | {"tool_call_id": ""} == {
        "role": "tool",
        "tool_call_id": "",
        "content": "no answer was recorded",
    }


def test_an_orphaned_responses_call_is_answered_after_its_calls(tmp_path: Path) -> None:
    first = {"model": "gpt-4.1", "tools": [TOOL_RESP], "input": [{"role": "user", "content": "list"}]}

    def follow(first: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        calls = [{k: v for k, v in i.items() if k != "id"} for i in answer["output"]]  # as Codex sends them
        return first | {"input": [*first["input"], *calls, {"role": "user", "content": "stop"}]}

    edit = _both(
        tmp_path,
        "No tool output found for function call",
        "unanswered",
        "no answer was recorded",
        "openai-responses",
        "/v1/responses",
        first,
        follow,
    )
    assert [i.get("type") for i in edit["input"][-2:]] == ["function_call_output", None]


def _a_answered(first: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    call = next(b for b in answer["content"] if b["type"] == "tool_use")
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "12"}],
    }
    said = {"role": "assistant", "content": answer["content"]}
    return first | {"messages": [*first["messages"], said, result]}


def test_a_thinking_block_another_model_wrote_is_taken_out_the_call_kept(tmp_path: Path) -> None:
    def follow(first: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        assert answer["content"][0]["type"] == "thinking"
        return _a_answered(first, answer) | {"model": "claude-opus-4-1"}  # the agent switched models

    edit = _both(
        tmp_path,
        "messages.1.content.0: Invalid `signature` in `thinking` block",
        "never issued are sent",
        "thinking block claude-sonnet-4-5",
        "anthropic",
        "/v1/messages",
        _a_first(),
        follow,
        reasoning="Plan.",
    )
    assert [b["type"] for b in edit["messages"][1]["content"]] == ["tool_use"]


def test_a_placeholder_signature_is_taken_out(tmp_path: Path) -> None:
    def follow(first: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        body = _a_answered(first, answer)
        body["messages"][1]["content"][0]["signature"] = "1764655200000"  # a router's Date.now()
        return body

    edit = _both(
        tmp_path,
        "Invalid `signature` in `thinking` block",
        "never issued are sent",
        "(a placeholder)",
        "anthropic",
        "/v1/messages",
        _a_first(),
        follow,
        reasoning="Plan.",
    )
    assert [b["type"] for b in edit["messages"][1]["content"]] == ["tool_use"]


def test_thinking_blocks_the_agent_dropped_go_back_in_a_thinking_tool_loop(tmp_path: Path) -> None:
    def follow(first: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        answer = answer | {"content": [b for b in answer["content"] if b["type"] != "thinking"]}
        return _a_answered(first, answer)

    first = _a_first(thinking={"type": "enabled", "budget_tokens": 1024})
    edit = _both(
        tmp_path,
        "a final `assistant` message must start with a thinking block",
        "were dropped",
        "1 thinking block(s) put back",
        "anthropic",
        "/v1/messages",
        first,
        follow,
        reasoning="Plan.",
    )
    block = edit["messages"][1]["content"][0]
    assert block["type"] == "thinking" and block["thinking"] == "Plan." and block["signature"]


def _r_first(**more: Any) -> dict[str, Any]:
    return {
        "model": "gpt-5",
        "store": False,
        "tools": [TOOL_RESP],
        "input": [{"role": "user", "content": "list"}],
        **more,
    }


def _r_bare(first: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """The answer's items sent back with the reasoning item's encrypted_content (if any) dropped and the
    call's item id left out, the call answered."""
    items = [
        {
            k: v
            for k, v in i.items()
            if k not in ("encrypted_content", "id") or (i["type"] == "reasoning" and k == "id")
        }
        for i in answer["output"]
    ]
    assert [i["type"] for i in items] == ["reasoning", "function_call"]
    out = {"type": "function_call_output", "call_id": items[1]["call_id"], "output": "12"}
    return first | {"input": [*first["input"], *items, out]}


def test_a_bare_rs_item_on_store_false_gets_its_encrypted_content_back(tmp_path: Path) -> None:
    first = _r_first(include=["reasoning.encrypted_content"])
    edit = _both(
        tmp_path,
        "Items are not persisted when `store` is set to false",
        "were dropped",
        "encrypted_content put back on rs_",
        "openai-responses",
        "/v1/responses",
        first,
        _r_bare,
        reasoning="Plan.",
    )
    assert edit["input"][1]["encrypted_content"]


def test_a_bare_rs_item_the_store_has_nothing_for_is_taken_out(tmp_path: Path) -> None:
    edit = _both(
        tmp_path,
        "Items are not persisted when `store` is set to false",
        "without encrypted_content on store: false",
        "taken out (store: false",
        "openai-responses",
        "/v1/responses",
        _r_first(),
        _r_bare,
        reasoning="Plan.",
    )
    assert [i.get("type") for i in edit["input"]] == [None, "function_call", "function_call_output"]


def test_splice_takes_out_any_elements_and_puts_new_ones_anywhere_keeping_a_list() -> None:
    from itertools import combinations

    from toolreplay._proxy.repair import body_elements, splice
    from toolreplay.wires.contract import Insertion

    for n in range(5):
        items = [{"k": k, "s": "],{"} for k in range(n)]
        raw = (
            b'{"a": {"messages": [1]}, "messages": [ '
            + b" ,\n".join(jsonenc.encode(i) for i in items)
            + b" ]}"
        )
        top = body_elements(raw, "messages")
        assert top is not None and len(top.spans) == n
        for r in range(n + 1):
            for gone in combinations(range(n), r):
                out = splice(raw, top, [Insertion(k, b"", "", how="remove") for k in gone])
                assert jsonenc.loads(out)["messages"] == [i for k, i in enumerate(items) if k not in gone]
        for at in range(n + 1):
            ins = [Insertion(at, b'"new"', "", how="before"), Insertion(at, b"7", "", how="before")]
            out = splice(raw, top, ins)
            assert jsonenc.loads(out)["messages"] == [*items[:at], "new", 7, *items[at:]]
    raw = b'{"messages": [{"content": []}, {"content": [{"type": "a"}]}]}'
    top = body_elements(raw, "messages")
    assert top is not None
    ins = [Insertion(0, b'"x"', "", within="content", at=0, how="before")]
    ins.append(Insertion(1, b"", "", within="content", at=0, how="remove"))
    assert jsonenc.loads(splice(raw, top, ins))["messages"] == [{"content": ["x"]}, {"content": []}]

"""Codex on the Responses wire (issue 22): what Codex CLI sends is kept and given back.

tests/data/codex_responses_bodies.json holds the three requests a real Codex CLI 0.171 run sent to the
Responses double (developer messages with ``msg_`` ids, reasoning with encrypted content,
``function_call`` items with ``status``, outputs with ``fco_`` ids, ``custom``, ``tool_search`` and
``web_search`` tools, ``include``, ``reasoning``, ``text``, ``prompt_cache_key``, ``client_metadata``);
tests/data/codex_apply_patch_bodies.json those of a run that wrote its file with ``apply_patch``: Codex's
own ``custom_tool_call`` with its ``ctc_`` id and its output with a ``ctco_`` id. The free-form body adds
what may follow (the openai SDK's item shapes): a developer message in the middle, a hosted
``web_search_call``, an assistant message of two parts with its ``msg_`` id.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from helpers_common import TESTS
from toolreplay import read_history, render
from toolreplay._audit.validate import validate_body
from toolreplay.testing.checks import Rules, check_request
from toolreplay.wires import get_wire

DATA = TESTS / "data"
BODIES: list[dict[str, Any]] = json.loads((DATA / "codex_responses_bodies.json").read_text("utf-8"))["bodies"]
#: The same run with the note written by apply_patch: Codex's own custom_tool_call and its output.
PATCHED: list[dict[str, Any]] = json.loads((DATA / "codex_apply_patch_bodies.json").read_text("utf-8"))[
    "bodies"
]
PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n"
WIRE = "openai-responses"


def _free_form_body() -> dict[str, Any]:
    """Codex's second request, its call made with apply_patch, and more items after it."""
    body = copy.deepcopy(BODIES[1])
    body["input"][-2:] = [
        {"type": "custom_tool_call", "id": "ctc_0a1b", "status": "completed", "call_id": "call_p1",
         "name": "apply_patch", "input": PATCH},
        {"type": "custom_tool_call_output", "call_id": "call_p1",
         "output": "Success. Updated the following files:\nA notes.txt\n"},
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "enc:b"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "lark grammar"}},
        {"type": "message", "id": "msg_9", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Done: ", "annotations": []},
                     {"type": "output_text", "text": "notes.txt holds hello.", "annotations": []}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
    ]  # fmt: skip
    return body


def _one(body: Any) -> Any:
    (h,) = read_history(body, WIRE).conversations
    return h


@pytest.mark.parametrize("n", range(len(BODIES + PATCHED)))
def test_codex_bodies_render_back_as_sent(n: int) -> None:
    body = (BODIES + PATCHED)[n]
    assert render(_one(body), as_sent=True) == body


def test_codex_own_free_form_call_reads_as_a_custom_call_and_the_strict_double_takes_the_request() -> None:
    h = _one(PATCHED[2])
    assert h.warnings == ()
    calls = [c for m in h.messages for c in m.tool_uses]
    assert [(c.name, c.kind) for c in calls] == [("apply_patch", "custom"), ("exec_command", "function")]
    assert calls[0].input == PATCH and calls[0].provider_data == {WIRE: {"item_id": "ctc_double1_0"}}
    for body in PATCHED:
        assert check_request(WIRE, body, Rules(codex=True)) is None
        again = render(_one(body), "codex", model="gpt-5.5")
        assert check_request(WIRE, again, Rules(codex=True)) is None


def test_a_free_form_call_and_everything_around_it_render_back_as_sent() -> None:
    body = _free_form_body()
    assert render(_one(body), as_sent=True) == body


def test_a_free_form_call_is_a_custom_call_of_its_raw_text() -> None:
    h = _one(_free_form_body())
    assert h.warnings == ()
    (call,) = [c for m in h.messages for c in m.tool_uses if c.name == "apply_patch"]
    assert (call.kind, call.input, call.call_id) == ("custom", PATCH, "call_p1")
    assert call.provider_data == {WIRE: {"item_id": "ctc_0a1b"}}
    kinds = {t.name: t.kind for t in h.tools or ()}
    assert kinds["apply_patch"] == "custom" and kinds["web_search"] == kinds["tool_search"] == "hosted"
    assert [m.role for m in h.messages[:2]] == ["system", "system"]  # Codex's developer messages
    fields = h.last_request.fields
    assert fields["include"] == ["reasoning.encrypted_content"] and fields["text"] == {"verbosity": "low"}


def test_the_normal_render_keeps_custom_calls_tools_and_settings_on_responses() -> None:
    h = _one(_free_form_body())
    warnings: list[str] = []
    body = render(h, "openai-responses", model="gpt-5.5", warnings=warnings)
    items = body["input"]
    assert [i.get("role") for i in items[:2]] == ["developer", "developer"]  # not merged into instructions
    assert "instructions" not in body
    (call,) = [i for i in items if i.get("type") == "custom_tool_call"]
    assert call["input"] == PATCH and "arguments" not in call
    assert any(i.get("type") == "custom_tool_call_output" for i in items)
    assert not any("input_excerpt" in json.dumps(i) for i in items)
    declared = {t.get("name", t["type"]): t for t in body["tools"]}
    assert declared["apply_patch"] == next(t for t in BODIES[1]["tools"] if t.get("name") == "apply_patch")
    assert {"web_search", "tool_search"} <= {t["type"] for t in body["tools"]}
    assert body["reasoning"] == {"effort": "medium"} and body["prompt_cache_key"]
    assert not [p for p in _rules(body) if "Refused" in p]
    assert "client_metadata" not in body  # the ChatGPT backend's, not the public API's: named
    assert [w for w in warnings if "not carried" in w] == [
        "request settings of the imported openai-responses request not carried on openai-responses: "
        "client_metadata"
    ]


def _rules(body: dict[str, Any]) -> list[str]:
    from toolreplay._vessels import get_vessel

    out: list[str] = []
    get_wire(WIRE).rules(get_vessel("openai-responses"), body, out)
    return [f"Refused {p.provider}" if hasattr(p, "provider") else str(p) for p in out]


@pytest.mark.parametrize("vessel", ["anthropic", "gemini", "openai-compatible", "ollama"])
def test_other_vessels_get_the_free_form_call_as_a_function_call(vessel: str) -> None:
    h = _one(_free_form_body())
    warnings: list[str] = []
    body = render(h, vessel, model="m", warnings=warnings)
    assert {"input": PATCH} in list(_objects(body))  # a function call of the whole text
    assert "input_excerpt" not in json.dumps(body)
    assert any("free-form tool 'apply_patch'" in w for w in warnings)
    assert any("'web_search' runs at the provider" in w for w in warnings)
    assert validate_body(vessel, body) == []


def _objects(value: Any) -> Any:
    """Every object in ``value``, JSON text inside strings (Chat's ``arguments``) decoded too."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            yield from _objects(json.loads(value))
        except ValueError:
            return
    elif isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from _objects(v)


def test_the_strict_double_takes_a_reasoning_item_followed_by_a_custom_call() -> None:
    body = _free_form_body()
    body["input"] = body["input"][:7]  # Codex's second request: reasoning, custom call, its output
    assert check_request(WIRE, body, Rules(codex=True)) is None


def test_the_strict_double_still_refuses_a_lone_reasoning_item() -> None:
    body = _free_form_body()
    body["input"] = body["input"][:5]
    problem = check_request(WIRE, body, Rules(codex=True))
    assert problem is not None and "without its required following item" in problem


def _calls(h: Any) -> list[tuple[str, Any]]:
    return [(c.name, c.answer) for m in h.messages for c in m.tool_uses]


@pytest.mark.parametrize("vessel", ["anthropic", "gemini", "openai-compatible", "ollama"])
@pytest.mark.parametrize("n", range(len(BODIES) + 1 + len(PATCHED)))
def test_codex_bodies_are_valid_for_every_other_vessel_with_their_calls_as_calls(n: int, vessel: str) -> None:
    from toolreplay._vessels import get_vessel

    h = _one([*BODIES, _free_form_body(), *PATCHED][n])
    body = render(h, vessel, model="m")
    assert validate_body(vessel, body) == []
    (again,) = read_history(body, get_vessel(vessel).wire).conversations
    assert _calls(again) == _calls(h)


def test_the_strict_double_refuses_a_ctc_id_without_its_reasoning() -> None:
    body = _free_form_body()
    body["input"] = body["input"][:4] + body["input"][5:7]  # the custom call without the reasoning before it
    problem = check_request(WIRE, body, Rules(codex=True))
    assert (
        problem
        == "Item 'ctc_0a1b' of type 'custom_tool_call' was provided without its required 'reasoning' item."
    )


@pytest.mark.parametrize("n", range(len(BODIES) + 1))
def test_codex_bodies_stored_and_read_again_render_back_as_sent(n: int, tmp_path: Path) -> None:
    from toolreplay import history_to_dict, load_history
    from toolreplay._store.sqlite import SQLiteStore

    body = BODIES[n] if n < len(BODIES) else _free_form_body()
    h = _one(body)
    assert render(load_history(json.loads(json.dumps(history_to_dict(h)))), as_sent=True) == body
    store = SQLiteStore(tmp_path / "s.db")
    try:
        store.import_history(h)
        assert render(store.load(h.id), as_sent=True) == body
    finally:
        store.close()


HOSTED_TOOLS = [
    {"type": "code_interpreter", "container": {"type": "auto"}},
    {
        "type": "mcp",
        "server_label": "docs",
        "server_url": "https://mcp.example/sse",
        "require_approval": "never",
    },
    {"type": "file_search", "vector_store_ids": ["vs_1"]},
    {"type": "image_generation"},
    {"type": "local_shell"},
]
HOSTED_CALLS = [
    {"type": "code_interpreter_call", "id": "ci_1", "status": "completed", "code": "print(1)",
     "container_id": "cntr_1", "outputs": [{"type": "logs", "logs": "1\n"}]},
    {"type": "mcp_call", "id": "mcp_1", "server_label": "docs", "name": "search", "arguments": "{}",
     "output": "found"},
    {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_s", "status": "completed",
     "action": {"type": "exec", "command": ["ls"], "env": {}}},
    {"type": "local_shell_call_output", "id": "lsho_1", "output": "notes.txt\n"},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Done.", "annotations": []}]},
]  # fmt: skip


def test_hosted_tools_and_their_items_are_kept_whole_and_given_back() -> None:
    items = [{"role": "user", "content": "Run it."}, *HOSTED_CALLS, {"role": "user", "content": "ok"}]
    body = {"model": "gpt-5", "tools": HOSTED_TOOLS, "store": False, "input": items}
    h = _one(body)
    assert h.warnings == ()
    assert [t.kind for t in h.tools or ()] == ["hosted"] * len(HOSTED_TOOLS)
    assert render(h, as_sent=True) == body
    again = render(h, "openai-responses", model="gpt-5")  # the same issuer: every item goes back
    assert again["tools"] == HOSTED_TOOLS and all(i in again["input"] for i in HOSTED_CALLS[:4])


def _captured() -> list[dict[str, Any]]:
    """The bodies of the agents harness's kept Codex run (tests/data/agents/codex.json)."""
    data = json.loads((DATA / "agents" / "codex.json").read_text("utf-8"))
    return [json.loads(r["body_text"]) for r in data["requests"] if r.get("body_text")]


@pytest.mark.parametrize("n", range(len(_captured())))
def test_the_kept_codex_run_renders_back_as_sent_and_its_free_form_call_is_one(n: int) -> None:
    body = _captured()[n]
    h = _one(body)
    assert render(h, as_sent=True) == body
    assert all(c.kind == "custom" for m in h.messages for c in m.tool_uses if c.name == "apply_patch")

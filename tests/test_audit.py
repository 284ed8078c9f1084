"""The request audit: every wire, every mode, other tools' requests, patches, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import NO_SHARED, SHARED
from toolreplay._api import render
from toolreplay._audit.body import detect_wire, find_body, load_request
from toolreplay._audit.report import audit_request, format_audit
from toolreplay._cli import cli
from toolreplay._errors import WireError
from toolreplay._history import load_history
from toolreplay._vessels import get_vessel

#: one vessel per wire, and a second Chat one
VESSELS = ["openai", "codex", "anthropic", "gemini", "ollama", "claude", "kimi"]
EXPECTED = {"native": (4, 0, 0), "prose": (0, 4, 0), "plain": (0, 0, 4)}


@pytest.mark.parametrize("mode", ["native", "prose", "plain"])
@pytest.mark.parametrize("vessel", VESSELS)
def test_every_wire_and_mode(vessel: str, mode: str, demo_path: Path) -> None:
    history = load_history(demo_path)
    request = load_request(render(history, vessel, mode=mode))
    assert request.wire == get_vessel(vessel).wire and request.wire_from == "shape"
    report = audit_request(request, history)
    n, as_call, as_text, missing = report.counts()
    assert n == 4 and (as_call, as_text, missing) == EXPECTED[mode], format_audit(report)
    assert report.summary() == f"4 calls: {as_call} as calls, {as_text} as text, {missing} missing"
    assert len(report.found) == (4 if mode == "native" else 0)
    if mode == "native":
        assert all(f.answer for f in report.found)
        # the stored mcp__coop__coop call travels renamed, and the long input as an excerpt
        patches = report.patches()
        assert "m07 call 0 (mcp__coop__coop): tool renamed 'mcp__coop__coop' -> 'coop'" in patches
        assert any("input cut to an excerpt (input_excerpt)" in p for p in patches)


def test_gemini_dummy_signature_is_reported(demo_path: Path) -> None:
    report = audit_request(load_request(render(demo_path, "gemini")))
    dummies = [f for f in report.found if any("dummy thought signature" in p for p in f.patches)]
    assert dummies, format_audit(report)
    anthropic = audit_request(load_request(render(demo_path, "anthropic")))
    assert not any("dummy" in p for p in anthropic.patches())


def test_cut_and_stand_in_answers() -> None:
    history = load_history(
        {"messages": [
            {"id": "u1", "role": "user", "text": "Show #1 and #2."},
            {"id": "a1", "role": "assistant", "text": "Shown.", "tool_uses": [
                {"tool_name": "coop", "tool_input": {"action": "show", "id": 1}},
                {"tool_name": "result", "tool_input": "x" * 2000},
                {"tool_name": "coop", "tool_input": {"action": "show", "id": 2}}]},
            {"id": "u2", "role": "user", "text": "Thanks."}]}
    )  # fmt: skip
    report = audit_request(load_request(render(history, "anthropic")), history)
    assert report.counts() == (2, 2, 0, 0)
    patches = report.patches()
    assert any("answer cut to 500 characters (2000 in all)" in p for p in patches), patches
    assert any("no answer was recorded" in p for p in patches), patches


def test_without_history_lists_calls_and_described_calls(demo_path: Path) -> None:
    report = audit_request(load_request(render(demo_path, "openai", mode="prose")))
    kinds = {p.kind for p in report.passages}
    assert "call syntax" in kinds and "claims coop close" in kinds
    assert report.summary().startswith("0 calls as calls;")
    text = format_audit(report)
    assert "text that reads like described calls:" in text and 'coop({"action":"close","id":12' in text
    native = audit_request(load_request(render(demo_path, "openai")))
    # native: the replies' claims are backed by their own calls, so none is listed
    assert not [p for p in native.passages if p.kind.startswith("claims")]
    assert native.summary() == "4 calls as calls; 0 text passages read like calls"


# ---------------------------------------------------------------- requests other tools wrote

#: A LiteLLM-style Anthropic body: system as cached blocks, tool_result content as a block list, and one
#: earlier call that only survives as a sentence of the assistant's text.
LITELLM_ANTHROPIC: dict[str, Any] = {
    "model": "claude-sonnet-4-5-20250929",
    "max_tokens": 4096,
    "system": [{"type": "text", "text": "You keep the board.", "cache_control": {"type": "ephemeral"}}],
    "tools": [{"name": "coop", "description": "Todo board",
               "input_schema": {"type": "object", "properties": {"action": {"type": "string"}}}}],
    "metadata": {"user_id": "litellm-user"},
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Close #12."}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Closing it."},
            {"type": "tool_use", "id": "toolu_01XYZ", "name": "coop",
             "input": {"action": "close", "id": 12}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01XYZ",
             "content": [{"type": "text", "text": "status: closed"}]}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Closed #12."}]},
        {"role": "user", "content": "And #13?"},
        {"role": "assistant", "content": "I called the coop tool with action reopen and id 13 earlier."},
        {"role": "user", "content": "Now close #14."},
    ],
}  # fmt: skip
STORED = {
    "id": "board",
    "messages": [
        {"id": "m1", "role": "user", "text": "Close #12."},
        {"id": "m2", "role": "assistant", "text": "Closed #12.", "tool_uses": [
            {"tool_name": "coop", "tool_input": {"action": "close", "id": 12}},
            {"tool_name": "result", "tool_input": "status: closed"}]},
        {"id": "m3", "role": "user", "text": "And #13?"},
        {"id": "m4", "role": "assistant", "text": "Reopened #13.", "tool_uses": [
            {"tool_name": "coop", "tool_input": {"action": "reopen", "id": 13}},
            {"tool_name": "result", "tool_input": "status: open"}]},
        {"id": "m5", "role": "user", "text": "And #14?"},
        {"id": "m6", "role": "assistant", "text": "Noted #14.", "tool_uses": [
            {"tool_name": "coop", "tool_input": {"action": "note", "id": 14, "text": "keys rotated"}},
            {"tool_name": "result", "tool_input": "noted"}]},
        {"id": "m7", "role": "user", "text": "Now close #14."},
    ],
}  # fmt: skip


def test_litellm_style_anthropic_body(tmp_path: Path) -> None:
    path = tmp_path / "litellm.json"
    path.write_text(json.dumps(LITELLM_ANTHROPIC), encoding="utf-8")
    request = load_request(path)
    assert request.wire == "anthropic"
    report = audit_request(request, load_history(STORED))
    assert report.summary() == "3 calls: 1 as calls, 1 as text, 1 missing", format_audit(report)
    fates = {r.message_id: r.fate for r in report.stored or ()}
    assert fates == {"m2": "as call", "m4": "as text", "m6": "missing"}
    alone = audit_request(request)
    assert [p.kind for p in alone.passages] == ["says it called"]


def test_agent_framework_debug_dump(tmp_path: Path) -> None:
    chat = render(STORED, "openai", upto="m5")
    dump = {
        "event": "llm.request",
        "ts": "2026-11-02T09:00:00Z",
        "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                    "headers": {"authorization": "[redacted]"}, "json": chat},
    }  # fmt: skip
    path = tmp_path / "debug.json"
    path.write_text(json.dumps(dump, indent=2), encoding="utf-8")
    request = load_request(path)
    assert (request.wire, request.wire_from, request.raw) == ("openai-chat", "dump", None)
    report = audit_request(request, load_history(STORED))
    assert report.counts() == (3, 2, 0, 1)
    # LiteLLM's own debug log keeps the body as JSON text under additional_args
    litellm_log = {"additional_args": {"complete_input_dict": json.dumps(LITELLM_ANTHROPIC)}, "api_base": "x"}
    assert load_request(litellm_log).wire == "anthropic"


def test_transport_dump_file_with_meta(tmp_path: Path) -> None:
    body = render(STORED, "ollama", mode="plain")
    (tmp_path / "0003-local-request.json").write_bytes(json.dumps(body).encode())
    (tmp_path / "0003-local-meta.json").write_text(json.dumps({"n": 3, "vessel": "local", "wire": "ollama"}))
    request = load_request(tmp_path / "0003-local-request.json")
    assert (request.wire, request.wire_from, request.vessel) == ("ollama", "dump", "local")
    assert request.raw is not None


def test_detect_wire_signs() -> None:
    assert detect_wire({"contents": []}) == "gemini"
    assert detect_wire({"model": "m", "input": "hi"}) == "openai-responses"
    assert detect_wire({"prompt": "hi"}) == "claude-prompt"
    assert detect_wire({"messages": [], "system": "s"}) == "anthropic"
    assert detect_wire({"messages": [], "options": {}}) == "ollama"
    assert detect_wire({"messages": [{"role": "tool", "tool_name": "x", "content": ""}]}) == "ollama"
    assert detect_wire({"messages": [{"role": "user", "content": "hi"}]}) == "openai-chat"
    assert detect_wire({"messages": [], "stream": False}) == "ollama"
    assert detect_wire({"messages": [], "stream": False, "temperature": 0}) == "openai-chat"
    with pytest.raises(WireError):
        detect_wire({"model": "m"})
    assert find_body({"nothing": {"here": 1}}) is None
    with pytest.raises(WireError, match="no request body found"):
        load_request({"nothing": 1})


def test_unanswered_call_is_missing() -> None:
    body = {"model": "m", "messages": [
        {"role": "user", "content": "Close #12."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "coop", "arguments": '{"action":"close","id":12}'}}]},
        {"role": "user", "content": "Well?"}]}  # fmt: skip
    report = audit_request(load_request(body), load_history(STORED))
    row = next(r for r in report.stored or () if r.message_id == "m2")
    assert (row.fate, row.where) == ("missing", "present as a call but unanswered")


# ---------------------------------------------------------------- the command


def test_cli(tmp_path: Path, demo_path: Path) -> None:
    native = tmp_path / "native.json"
    native.write_text(json.dumps(render(demo_path, "gemini")), encoding="utf-8")
    runner = CliRunner()
    out = runner.invoke(cli, ["audit", str(native), "--history", str(demo_path)])
    assert out.exit_code == 0, out.output
    assert "4 calls: 4 as calls, 0 as text, 0 missing" in out.output
    out = runner.invoke(cli, ["audit", str(native), "--json"])
    data = json.loads(out.output)
    assert data["wire"] == "gemini" and len(data["found"]) == 4
    out = runner.invoke(cli, ["audit", str(tmp_path / "absent.json")])
    assert out.exit_code == 1 and "no such file" in out.output
    out = runner.invoke(cli, ["audit", str(native), "--prompt-template", str(demo_path)])
    assert out.exit_code == 1 and "chat templates render Chat bodies" in out.output


def test_cli_prompt_template(tmp_path: Path, demo_path: Path) -> None:
    if SHARED is None:
        pytest.skip(NO_SHARED)
    body = tmp_path / "chat.json"
    body.write_text(json.dumps(render(demo_path, "openai-compatible")), encoding="utf-8")
    template = SHARED / "specs" / "templates" / "mistralai-Mistral-Nemo-Instruct-2407.jinja"
    out = CliRunner().invoke(cli, ["audit", str(body), "--prompt-template", str(template)])
    assert out.exit_code == 0, out.output
    assert "0 of 4 calls survive as calls" in out.output and "length 9" in out.output

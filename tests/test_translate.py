"""Request translation (design 48): real agents' bodies (the kept captures of Claude Code, Codex, opencode
and Gemini CLI, and the imported bodies in tests/data) translated for a vessel of every served wire pass
that wire's provider rules and its double's own checks, byte-stable across runs and processes; the
settings both wires have are translated, the others named."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolreplay import jsonenc
from toolreplay._issuers import host_of
from toolreplay._proxy.translate import Translated, read_inbound, translate_request
from toolreplay._vessels import Vessel, get_vessel
from toolreplay.model import History, Issuer
from toolreplay.testing.checks import Rules, check_request
from toolreplay.wires import get_wire
from toolreplay.wires.bridge import is_token
from toolreplay.wires.contract import Refused
from wire_helpers import http_of

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "tests" / "data" / "agents"
#: A vessel of every served wire (Kimi and OpenAI for Chat: their id rules differ; Codex: stateless).
VESSELS = ("anthropic", "openai", "openai-gpt5", "kimi", "openai-responses", "codex", "gemini", "ollama")


def _captured() -> list[tuple[str, str, dict[str, Any], str | None]]:
    """(label, wire, body, model in the path) of every request of every kept agent run."""
    out = []
    for path in sorted(AGENTS.glob("*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        for r in run["requests"]:
            model = r["path"].split("/models/")[1].split(":")[0] if "/models/" in r["path"] else None
            out.append((f"{path.stem}-{r['index']}", r["wire"], json.loads(r["body_text"]), model))
    return out


def _kept_bodies() -> list[tuple[str, str, dict[str, Any], str | None]]:
    """The other real bodies kept in tests/data: Codex's (a free-form apply_patch among them), a Gemini
    body LiteLLM sent (snake_case), an imported Codex body."""
    data = ROOT / "tests" / "data"
    out = []
    for name in ("codex_responses_bodies", "codex_apply_patch_bodies"):
        bodies = json.loads((data / f"{name}.json").read_text(encoding="utf-8"))["bodies"]
        out += [(f"{name}-{k}", "openai-responses", b, None) for k, b in enumerate(bodies)]
    gemini = json.loads((data / "import_gemini_litellm.json").read_text(encoding="utf-8"))
    out.append(("import_gemini_litellm", "gemini", gemini, "gemini-2.5-flash"))
    codex = json.loads((data / "import_responses_codex.json").read_text(encoding="utf-8"))
    out.append(("import_responses_codex", "openai-responses", codex, None))
    return out


CAPTURED = _captured() + _kept_bodies()


def forwards_token(value: Any) -> bool:
    """Whether a body holds a token of ours anywhere, as sealed or in its base64 form."""
    if isinstance(value, dict):
        return any(forwards_token(v) for v in value.values())
    if isinstance(value, list):
        return any(forwards_token(v) for v in value)
    return is_token(value)


def _issuer(v: Vessel) -> Issuer:
    return Issuer(v.wire, host_of(v.base_url), v.model)


def vessel_of(name: str) -> Vessel:
    """A built-in vessel; ``openai-gpt5``: OpenAI's Chat with a reasoning model."""
    if name == "openai-gpt5":
        return replace(get_vessel("openai"), name=name, model="gpt-5")
    return get_vessel(name)


def translated(
    wire: str, body: dict[str, Any], vessel: str, stored: History | None = None, **kw: Any
) -> Translated:
    inbound = get_wire(wire)
    h = read_inbound(inbound, body, path_model=kw.pop("path_model", None))
    v = vessel_of(vessel)
    return translate_request(inbound, h, stored, v, issuer=_issuer(v), **kw)


def refused(vessel: str, body: dict[str, Any]) -> list[str]:
    """The wire's Refused lines and the double's own refusal for ``body`` on ``vessel``."""
    v = vessel_of(vessel)
    problems: list[str] = []
    get_wire(v.wire).rules(v, body, problems)
    out = [p for p in problems if isinstance(p, Refused)]
    rules = Rules(vessel=v, model=v.model, codex=vessel == "codex", max_id_len=v.max_id_len)
    double = check_request(v.wire, body, rules)
    return out + ([double] if double else [])


@pytest.mark.parametrize("vessel", VESSELS)
@pytest.mark.parametrize(("label", "wire", "body", "model"), CAPTURED, ids=[c[0] for c in CAPTURED])
def test_every_captured_request_translates_for_every_wire(
    label: str, wire: str, body: dict[str, Any], model: str | None, vessel: str
) -> None:
    t = translated(wire, body, vessel, path_model=model)
    assert refused(vessel, t.body) == []
    assert get_wire(vessel_of(vessel).wire).sniff(t.body) is not None or vessel_of(vessel).wire == "gemini"
    assert not forwards_token(t.body)


@pytest.mark.slow
def test_every_corpus_request_translates_for_every_wire() -> None:
    # 466 request bodies the providers took (tests/corpus), each translated for every wire
    from corpus_loader import exchanges

    bad = []
    for ex in exchanges(with_request=True):
        assert ex.request is not None
        model = None if http_of(ex.wire).model_in_body else ex.model  # Gemini's is in the URL
        for vessel in VESSELS:
            t = translated(ex.wire, ex.request, vessel, path_model=model)
            if refused(vessel, t.body) or forwards_token(t.body):
                bad.append(f"{ex.id} -> {vessel}: {refused(vessel, t.body)}")
    assert bad == []


def test_a_free_form_tool_goes_as_a_function_where_the_upstream_has_none() -> None:
    body = next(c[2] for c in CAPTURED if c[0] == "codex_apply_patch_bodies-2")
    t = translated("openai-responses", body, "anthropic")
    assert t.free_form == {"apply_patch"}
    declared = {d["name"]: d for d in t.body["tools"]}
    assert declared["apply_patch"]["input_schema"]["required"] == ["input"]
    uses = [b for m in t.body["messages"] if m["role"] == "assistant" for b in m["content"]
            if b["type"] == "tool_use" and b["name"] == "apply_patch"]  # fmt: skip
    assert uses and set(uses[0]["input"]) == {"input"} and "*** Begin Patch" in uses[0]["input"]["input"]
    assert any("free-form tool 'apply_patch'" in n for n in t.notes)
    assert translated("openai-responses", body, "codex").free_form == frozenset()


def _calls(wire: str, body: dict[str, Any]) -> int:
    h = read_inbound(get_wire(wire), body)
    return sum(len(m.tool_uses) for m in h.messages)


@pytest.mark.parametrize("vessel", VESSELS)
def test_every_call_and_answer_goes_on_whole_as_a_call(vessel: str) -> None:
    # the last request of each agent's run: all its calls, each as a call in the upstream's shape with
    # its whole answer (no 12-call window, no 500-character cut: the proxy never shortens the context)
    for label, wire, body, _ in CAPTURED:
        if not label.endswith("-2"):
            continue
        t = translated(wire, body, vessel)
        v = vessel_of(vessel)
        back = read_inbound(get_wire(v.wire), t.body)
        sent = [c for m in back.messages for c in m.tool_uses]
        mine = [c for m in read_inbound(get_wire(wire), body).messages for c in m.tool_uses]
        assert len(sent) == len(mine) == _calls(wire, body) > 0, label
        for a, b in zip(mine, sent, strict=True):
            assert b.name == a.name and b.answer == a.answer, label
            if isinstance(a.input, dict):
                assert b.input == a.input, label


def test_long_answers_and_many_calls_are_not_bounded() -> None:
    calls = [
        {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"file_path": f"/f{i}"}}
        for i in range(20)
    ]
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x" * 3000} for i in range(20)]
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1000,
        "messages": [
            {"role": "user", "content": "read them all"},
            {"role": "assistant", "content": calls},
            {"role": "user", "content": results},
        ],
        "tools": [{"name": "Read", "input_schema": {"type": "object", "properties": {}}}],
    }
    t = translated("anthropic", body, "openai")
    tools = [m for m in t.body["messages"] if m["role"] == "tool"]
    assert len(tools) == 20 and all(m["content"] == "x" * 3000 for m in tools)


def _run(wire: str, body: dict[str, Any], vessel: str) -> str:
    return jsonenc.dumps(translated(wire, body, vessel).body)


@pytest.mark.slow
def test_the_same_request_translates_to_the_same_bytes_in_another_process() -> None:
    _, wire, body, _ = next(c for c in CAPTURED if c[0] == "claude-2")
    here = {v: _run(wire, body, v) for v in VESSELS}
    script = (
        "import json,sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_translate import CAPTURED, VESSELS, _run\n"
        "label, wire, body, _ = next(c for c in CAPTURED if c[0] == 'claude-2')\n"
        "print(json.dumps({v: _run(wire, body, v) for v in VESSELS}))\n"
    )
    env = {"PYTHONPATH": str(ROOT / "src"), "PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert json.loads(out.stdout) == here
    assert {v: _run(wire, body, v) for v in VESSELS} == here


def test_the_stream_flag_follows_the_agent() -> None:
    _, wire, body, _ = next(c for c in CAPTURED if c[0] == "claude-2")
    assert body["stream"] is True
    t = translated(wire, body, "openai")
    assert t.stream and t.upstream_stream and t.body["stream"] is True
    whole = {k: v for k, v in body.items() if k != "stream"}
    t = translated(wire, whole, "openai")
    assert not t.stream and "stream" not in t.body
    codex = translated(wire, whole, "codex")  # a vessel that only streams is asked for a stream anyway
    assert not codex.stream and codex.upstream_stream and codex.body["stream"] is True
    gemini = next(c for c in CAPTURED if c[0] == "gemini-2")
    assert translated(gemini[1], gemini[2], "openai", path_stream=True).stream
    ollama = {"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]}
    assert translated("ollama", ollama, "anthropic").stream  # Ollama streams unless told not to


def _anthropic(**settings: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 8000, "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "Read", "input_schema": {"type": "object", "properties": {}}}],
            **settings}  # fmt: skip


def test_settings_translate_from_anthropic_to_every_wire() -> None:
    body = _anthropic(temperature=0.5, stop_sequences=["END"], tool_choice={"type": "tool", "name": "Read"})
    chat = translated("anthropic", body, "openai").body
    assert chat["max_completion_tokens"] == 8000 and chat["temperature"] == 0.5
    assert chat["stop"] == ["END"]
    assert chat["tool_choice"] == {"type": "function", "function": {"name": "Read"}}
    resp = translated("anthropic", body, "openai-responses")
    assert resp.body["max_output_tokens"] == 8000
    assert resp.body["tool_choice"] == {"type": "function", "name": "Read"}
    assert any("stop sequences not carried" in n for n in resp.notes)
    gem = translated("anthropic", body, "gemini").body
    assert gem["generationConfig"] == {"temperature": 0.5, "maxOutputTokens": 8000, "stopSequences": ["END"]}
    assert gem["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["Read"]}}
    oll = translated("anthropic", body, "ollama")
    assert oll.body["options"] == {"temperature": 0.5, "num_predict": 8000, "stop": ["END"]}
    assert any("tool_choice tool not carried" in n for n in oll.notes)


def test_thinking_budget_becomes_effort_and_back() -> None:
    body = _anthropic(thinking={"type": "enabled", "budget_tokens": 2000})
    t = translated("anthropic", body, "openai-responses")
    assert t.thinking and t.body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert translated("anthropic", body, "openai-gpt5").body["reasoning_effort"] == "low"
    old = translated("anthropic", body, "openai")  # gpt-4.1 takes no reasoning effort
    assert "reasoning_effort" not in old.body
    assert "thinking not carried: gpt-4.1 takes no reasoning_effort" in old.notes
    assert translated("anthropic", body, "kimi").body["thinking"] == {"type": "enabled"}
    gem = translated("anthropic", body, "gemini").body["generationConfig"]["thinkingConfig"]
    assert gem == {"thinkingBudget": 2000, "includeThoughts": True}
    assert translated("anthropic", body, "ollama").body["think"] is True
    codex = {"model": "gpt-5", "input": "hi", "reasoning": {"effort": "high"}, "max_output_tokens": 30000}
    back = translated("openai-responses", codex, "anthropic")
    assert back.body["thinking"] == {"type": "enabled", "budget_tokens": 24576}
    assert back.body["max_tokens"] == 30000 and back.thinking
    # a budget the output limit cannot hold is cut below it (Anthropic: max_tokens > budget_tokens)
    small = {**codex, "max_output_tokens": 5000}
    assert translated("openai-responses", small, "anthropic").body["thinking"]["budget_tokens"] == 4999


def test_not_asking_for_thinking_shows_none() -> None:
    t = translated("anthropic", _anthropic(), "openai-responses")
    assert not t.thinking and "reasoning" not in t.body
    gem = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
           "generationConfig": {"thinkingConfig": {"thinkingBudget": 1024}}}  # fmt: skip
    t = translated("gemini", gem, "anthropic")
    assert not t.thinking  # Gemini shows thoughts only with includeThoughts
    assert t.body["thinking"] == {"type": "enabled", "budget_tokens": 1024}


def test_thinking_asked_with_its_words_omitted_thinks_upstream_but_shows_none() -> None:
    # Claude Code: thinking on, display omitted; the upstream still thinks, the agent sees no words
    body = _anthropic(thinking={"type": "enabled", "budget_tokens": 2000, "display": "omitted"})
    t = translated("anthropic", body, "kimi")
    assert t.body["thinking"] == {"type": "enabled"} and not t.thinking


def chat_body(tool: str = "Read", **settings: Any) -> dict[str, Any]:
    read = {"type": "function", "function": {"name": tool, "parameters": {"type": "object"}}}
    return {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}], "tools": [read], **settings}


def test_anthropic_takes_temperature_or_top_p_and_no_forced_tool_with_thinking() -> None:
    chat = chat_body(temperature=0.2, top_p=0.5, tool_choice="required", reasoning_effort="medium")
    t = translated("openai-chat", chat, "anthropic")
    assert "top_p" not in t.body and "temperature" not in t.body
    assert t.body["tool_choice"] == {"type": "auto"}
    assert any("top_p 0.5 not carried" in n for n in t.notes)
    assert any("temperature 0.2 not carried" in n for n in t.notes)
    assert any("tool_choice required not carried" in n for n in t.notes)
    assert refused("anthropic", t.body) == []


def test_parallel_calls_translate_where_both_wires_have_them() -> None:
    chat = chat_body(parallel_tool_calls=False)
    assert translated("openai-chat", chat, "anthropic").body["tool_choice"] == {
        "type": "auto",
        "disable_parallel_tool_use": True,
    }
    assert translated("openai-chat", chat, "openai-responses").body["parallel_tool_calls"] is False
    assert any(
        "parallel_tool_calls not carried" in n for n in translated("openai-chat", chat, "gemini").notes
    )


def test_settings_of_another_wire_are_named_and_of_the_same_wire_carried() -> None:
    body = _anthropic(metadata={"user_id": "u1"})
    t = translated("anthropic", body, "openai")
    assert "metadata" not in t.body
    assert any("not carried on openai-chat: metadata" in n for n in t.notes)
    assert translated("anthropic", body, "anthropic").body["metadata"] == {"user_id": "u1"}


def test_an_image_travels_where_the_upstream_carries_it_else_as_its_name() -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    body = _anthropic(
        messages=[{"role": "user", "content": [image, {"type": "text", "text": "what is it?"}]}]
    )
    chat = translated("anthropic", body, "openai").body
    assert chat["messages"][0]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    pdf = {"type": "document", "source": {"type": "url", "url": "https://x.test/a.pdf"}}
    body = _anthropic(messages=[{"role": "user", "content": [pdf, {"type": "text", "text": "read it"}]}])
    t = translated("anthropic", body, "openai")
    assert "[document (unknown type, https://x.test/a.pdf)]" in jsonenc.dumps(t.body)
    assert any("cannot travel on openai-chat" in n for n in t.notes)


def test_tool_names_an_upstream_cannot_take_are_mapped_and_mapped_back() -> None:
    body = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "fs.read", "parameters": {"type": "object"}}},
                      {"type": "function", "function": {"name": "mcp__ide__getDiagnostics",
                                                        "parameters": {"type": "object"}}}]}  # fmt: skip
    t = translated("openai-chat", body, "gemini")
    declared = [d["name"] for d in t.body["tools"][0]["functionDeclarations"]]
    assert declared[1] == "mcp__ide__getDiagnostics"  # the agent's own name, not renamed
    assert t.tool_names == {declared[0]: "fs.read"}
    assert refused("gemini", t.body) == []


def test_ollama_is_asked_to_think_only_with_a_model_that_thinks() -> None:
    body = _anthropic(thinking={"type": "enabled", "budget_tokens": 2000})
    inbound = get_wire("anthropic")
    h = read_inbound(inbound, body)

    def to(model: str) -> Translated:
        v = replace(get_vessel("ollama"), model=model)
        return translate_request(inbound, h, None, v, issuer=_issuer(v))

    assert to("qwen3:8b").body["think"] is True
    assert to("gpt-oss:20b").body["think"] == "low"  # gpt-oss thinks by level
    plain = to("llama3.2")
    assert "think" not in plain.body
    assert "thinking not carried: llama3.2 is not a model Ollama thinks with" in plain.notes


_CHOICES = st.one_of(
    st.none(),
    st.sampled_from([{"type": "auto"}, {"type": "any"}, {"type": "none"}, {"type": "tool", "name": "Read"}]),
)


@settings(max_examples=30, deadline=None)
@given(
    max_tokens=st.integers(1, 64000),
    temperature=st.one_of(st.none(), st.floats(0, 1)),
    top_p=st.one_of(st.none(), st.floats(0, 1)),
    stop=st.lists(st.text(min_size=1, max_size=5), max_size=6),
    choice=_CHOICES,
    budget=st.one_of(st.none(), st.integers(0, 40000)),
    parallel=st.booleans(),
)
def test_any_anthropic_settings_translate_within_every_providers_limits(
    max_tokens: int,
    temperature: float | None,
    top_p: float | None,
    stop: list[str],
    choice: dict[str, Any] | None,
    budget: int | None,
    parallel: bool,
) -> None:
    fields: dict[str, Any] = {"max_tokens": max_tokens, "stop_sequences": stop}
    fields.update({k: v for k, v in (("temperature", temperature), ("top_p", top_p)) if v is not None})
    if choice is not None:
        fields["tool_choice"] = {**choice, **({"disable_parallel_tool_use": True} if not parallel else {})}
    if budget is not None:
        fields["thinking"] = {"type": "enabled", "budget_tokens": budget}
    body = _anthropic(**fields)
    for vessel in ("anthropic", "openai", "openai-gpt5", "kimi", "openai-responses", "gemini", "ollama"):
        t = translated("anthropic", body, vessel)
        assert refused(vessel, t.body) == [], vessel
        assert translated("anthropic", body, vessel).body == t.body
        b = t.body
        if vessel == "anthropic" and "thinking" in b:
            assert 1024 <= b["thinking"]["budget_tokens"] < b["max_tokens"]
            assert b.get("temperature", 1) == 1 and b.get("tool_choice", {}).get("type") in (
                None,
                "auto",
                "none",
            )
        if vessel == "anthropic":
            assert not ("temperature" in b and "top_p" in b)
        if vessel in ("openai", "kimi"):
            assert len(b.get("stop", [])) <= 4
        if vessel == "gemini":
            assert len(b.get("generationConfig", {}).get("stopSequences", [])) <= 5
        if vessel == "openai-gpt5":
            assert "temperature" not in b and "top_p" not in b


def test_hosted_tools_the_upstream_cannot_declare_are_named() -> None:
    body = next(c[2] for c in CAPTURED if c[0] == "codex_responses_bodies-0")
    t = translated("openai-responses", body, "anthropic")
    assert any("runs at the provider (openai-responses): not declared on anthropic" in n for n in t.notes)
    declared = {d["name"] for d in t.body["tools"]}
    assert "web_search" not in declared and "exec_command" in declared
    same = translated("openai-responses", body, "openai-responses")
    assert any(d.get("type") == "web_search" for d in same.body["tools"])  # its own wire declares it


def test_the_path_model_is_the_issuer_of_a_gemini_bodys_replies() -> None:
    _, wire, body, model = next(c for c in CAPTURED if c[0] == "gemini-2")
    assert model == "gemini-2.5-flash"
    h = read_inbound(get_wire(wire), body, path_model=model)
    issuers = {s.issuer for m in h.messages for s in m.steps if s.issuer is not None}
    assert issuers and all(i.model == model for i in issuers)
    # so its signatures go back to that model only, not to another Gemini model on the same host
    other = replace(get_vessel("gemini"), model="gemini-3-pro-preview")
    t = translate_request(get_wire(wire), h, None, other, issuer=_issuer(other))
    assert any("not replayed: made by gemini" in n for n in t.notes)
    same = translate_request(
        get_wire(wire), h, None, get_vessel("gemini"), issuer=_issuer(get_vessel("gemini"))
    )
    assert not any("not replayed: made by gemini" in n for n in same.notes)


def test_a_chat_agent_is_shown_reasoning_unless_it_turns_thinking_off() -> None:
    assert translated("openai-chat", chat_body(), "anthropic").thinking
    assert translated("openai-chat", chat_body(reasoning_effort="high"), "anthropic").thinking
    assert not translated("openai-chat", chat_body(reasoning_effort="none"), "anthropic").thinking
    assert not translated("openai-chat", chat_body(thinking={"type": "disabled"}), "kimi").thinking


def _refused_by_any_rule(target: Any, vessel: Vessel, body: dict[str, Any]) -> str | None:
    """The first refusal of all of a wire's rules: what the translation asked before a wire said which
    rule its thinking setting decides."""
    problems: list[str] = []
    target.rules(vessel, body, problems)
    return next((p.provider for p in problems if isinstance(p, Refused)), None)


@pytest.mark.slow
def test_the_thinking_rule_decides_as_every_rule_did(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether thinking is turned off (and what is said) comes out the same from each wire's one thinking
    rule as from all its rules, for every kept and corpus body on every vessel that thinks."""
    import toolreplay._proxy.translate as translate
    from corpus_loader import exchanges

    bodies = [(w, b, m) for _, w, b, m in CAPTURED]
    bodies += [(ex.wire, ex.request, None if http_of(ex.wire).model_in_body else ex.model)
               for ex in exchanges(with_request=True) if ex.request is not None]  # fmt: skip
    vessels = [*VESSELS, "glm"]
    fast = [translated(w, b, v, path_model=m) for w, b, m in bodies for v in vessels]
    monkeypatch.setattr(translate, "_refusal", _refused_by_any_rule)
    whole = [translated(w, b, v, path_model=m) for w, b, m in bodies for v in vessels]
    assert [(jsonenc.encode(t.body), t.notes) for t in fast] == [
        (jsonenc.encode(t.body), t.notes) for t in whole
    ]
    assert any("thinking turned off" in n for t in fast for n in t.notes)  # the rule was asked, and said no

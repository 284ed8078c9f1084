"""Chat templates render the way transformers does, per server; the template audit finds lost calls.

The known behaviours are the ones measured on the real templates (Qwen3, Qwen3.5, Kimi K2, GLM 4.5/4.6,
Llama 3.3, DeepSeek V3.1, Mistral Nemo, gpt-oss), read from ``specs/templates/`` in the shared material
(``$TOOLREPLAY_SHARED``; tests that need them skip without it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import NO_SHARED, SHARED, load_transcripts
from toolreplay._api import render
from toolreplay._audit.template_audit import format_template_audit, template_audit
from toolreplay._audit.templates import (
    SERVERS,
    PromptTemplateError,
    load_template,
    normalise,
    render_prompt,
    template_caps,
)
from toolreplay._errors import ConfigError
from toolreplay._history import load_history

NOW = datetime(2026, 11, 2, 9, 30)
QWEN3 = "Qwen-Qwen3-0.6B.hf-7e4ae267.jinja"
QWEN3_OLD = "Qwen-Qwen3-0.6B.jinja"
QWEN35 = "Qwen3.5-4B.jinja"
KIMI = ("moonshotai-Kimi-K2-Instruct.jinja", "moonshotai-Kimi-K2-Thinking.jinja")
GLM = ("zai-org-GLM-4.5.jinja", "GLM-4.6.jinja")
LLAMA = "meta-llama-Llama-3.3-70B-Instruct.jinja"
DEEPSEEK = "deepseek-ai-DeepSeek-V3.1.jinja"
MISTRAL = "mistralai-Mistral-Nemo-Instruct-2407.jinja"
GPT_OSS = "openai-gpt-oss-120b.jinja"
GEMMA = "google-gemma-4-31B-it.jinja"
ALL = (QWEN3, QWEN3_OLD, QWEN35, *KIMI, *GLM, LLAMA, DEEPSEEK, MISTRAL, GPT_OSS, GEMMA)


def tpl(name: str) -> Path:
    if SHARED is None:
        pytest.skip(NO_SHARED)
    return SHARED / "specs" / "templates" / name


def turn_body(
    args: str = "object", calls: int = 2, ids: tuple[str, ...] = ("call_a1", "call_b2")
) -> dict[str, Any]:
    """One assistant turn with ``calls`` calls plus text beside them (the WIRES.md experiment)."""
    tool_calls = []
    for i in range(calls):
        value = {"action": "close", "id": 12 + i}
        arguments: Any = json.dumps(value) if args == "string" else value
        tool_calls.append(
            {"id": ids[i], "type": "function", "function": {"name": "coop", "arguments": arguments}}
        )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You keep the board."},
        {"role": "user", "content": "Close #12 and #13."},
        {"role": "assistant", "content": "Closing both.", "tool_calls": tool_calls},
    ]
    messages += [
        {"role": "tool", "tool_call_id": ids[i], "content": f"status: closed #{12 + i}"} for i in range(calls)
    ]
    messages += [
        {"role": "assistant", "content": "Both closed."},
        {"role": "user", "content": "Anything else?"},
    ]
    schema = {"type": "object", "properties": {"action": {"type": "string"}, "id": {"type": "integer"}}}
    tools = [
        {"type": "function", "function": {"name": "coop", "description": "The board.", "parameters": schema}}
    ]
    return {"model": "m", "messages": messages, "tools": tools}


def audit(body: dict[str, Any], name: str, server: str = "transformers") -> Any:
    return template_audit(body, tpl(name), server, now=NOW)


# ------------------------------------------------------------ the environment, without the shared material

MINI = (
    "{% for m in messages %}{% if loop.index > 3 %}{% break %}{% endif %}"
    "<{{ m.role }}>{{ m.content }}{% if m.tool_calls %}{{ m.tool_calls | tojson }}{% endif %}\n{% endfor %}"
    "{% generation %}date={{ strftime_now('%Y-%m-%d') }}{% endgeneration %}"
    "{% if messages | length > 9 %}{{ raise_exception('too long: ' ~ messages | length) }}{% endif %}"
    "{{ bos_token }}|{% if add_generation_prompt %}<assistant>{% endif %}"
)


def test_environment_like_transformers(tmp_path: Path) -> None:
    path = tmp_path / "mini.jinja"
    path.write_text(MINI, encoding="utf-8")
    body = {
        "messages": [
            {"role": "user", "content": "Schließe <#12> & co"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"function": {"name": "coop", "arguments": "{}"}}],
            },
            {"role": "tool", "content": "ok"},
            {"role": "user", "content": "never shown: the loop breaks"},
        ]
    }
    out = render_prompt(body, path, "transformers", now=NOW)
    # trim_blocks (the newline after each {% endif %} is dropped), loopcontrols, tojson without HTML
    # escaping and with non-ASCII kept, generation tag, strftime_now on the given clock, generation prompt
    assert out == (
        "<user>Schließe <#12> & co"
        '<assistant>[{"function": {"name": "coop", "arguments": "{}"}}]'
        "<tool>ok"
        "date=2026-11-02|<assistant>"
    )
    long = {"messages": [{"role": "user", "content": str(i)} for i in range(10)]}
    with pytest.raises(PromptTemplateError, match="too long: 10"):
        render_prompt(long, path, now=NOW)


def test_server_normalisation() -> None:
    body = {
        "messages": [
            {"role": "assistant", "content": None, "extra": 1, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "coop", "arguments": '{"id": 1}'}},
                {"id": "c2", "type": "function", "function": {"name": "coop", "arguments": "not json"}},
            ]},
            {"role": "tool", "tool_call_id": "c1", "name": "coop",
             "content": [{"type": "text", "text": "ok"}]},
        ]
    }  # fmt: skip
    tf, _ = normalise(body, "transformers")
    assert "content" not in tf[0] and tf[0]["extra"] == 1
    assert tf[0]["tool_calls"][0]["function"]["arguments"] == '{"id": 1}'
    vl, _ = normalise(body, "vllm")
    assert vl[0]["content"] == "" and "extra" not in vl[0]
    assert [c["function"]["arguments"] for c in vl[0]["tool_calls"]] == [{"id": 1}, {}]
    assert vl[1] == {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "coop"}
    with pytest.raises(PromptTemplateError, match="cannot parse"):
        normalise(body, "llama.cpp")
    del body["messages"][0]["tool_calls"][1]
    lc, _ = normalise(body, "llama.cpp")
    assert lc[0]["content"] == "" and lc[0]["extra"] == 1
    assert lc[0]["tool_calls"][0]["function"]["arguments"] == {"id": 1}
    with pytest.raises(ConfigError, match="unknown server"):
        normalise(body, "tgi")


def test_tokenizer_config(tmp_path: Path) -> None:
    cfg = tmp_path / "tokenizer_config.json"
    cfg.write_text(
        json.dumps({"chat_template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
                    "bos_token": {"content": "<B>"}, "eos_token": "<E>"}),
        encoding="utf-8",
    )  # fmt: skip
    assert render_prompt({"messages": [{"role": "user", "content": "hi"}]}, cfg) == "<B>hi<E>"
    with pytest.raises(ConfigError, match="no such template"):
        load_template(tmp_path / "absent.jinja")


# ---------------------------------------------------------------- the measured behaviours


def test_qwen3_keeps_everything() -> None:
    for args in ("object", "string"):
        a = audit(turn_body(args), QWEN3)
        assert a.failures() == [] and a.count("as call") == 2


def test_string_arguments_break_qwen35_and_glm_unless_the_server_parses_them() -> None:
    for name in (QWEN35, *GLM):
        assert audit(turn_body("object"), name).failures() == []
        broken = audit(turn_body("string"), name)
        assert broken.error is not None and broken.count("error") == 2, name
        for server in ("vllm", "llama.cpp"):
            assert audit(turn_body("string"), name, server).count("as call") == 2, (name, server)


def test_kimi_writes_ids_into_the_prompt() -> None:
    for name in KIMI:
        foreign = audit(turn_body(), name)
        # Kimi renders a call as its id and arguments: with foreign ids the tool's name is lost
        assert [c.fate for c in foreign.calls] == ["name missing", "name missing"]
        assert all(c.id_in_prompt for c in foreign.calls) and foreign.notes()
        own = audit(turn_body(ids=("functions.coop:0", "functions.coop:1")), name)
        assert own.failures() == [] and own.count("as call") == 2
        assert "functions.coop:1" in (own.prompt or "")


def test_llama_raises_on_two_calls_and_drops_text_beside_calls() -> None:
    two = audit(turn_body(calls=2), LLAMA)
    assert two.error == "This model only supports single tool-calls at once!"
    one = audit(turn_body(calls=1), LLAMA)
    assert one.count("as call") == 1
    assert any("assistant text beside calls" in d for d in one.dropped_text)
    assert audit(turn_body("string", calls=1), LLAMA).calls[0].double_encoded


def test_deepseek_needs_string_arguments() -> None:
    assert "can only concatenate str" in (audit(turn_body("object"), DEEPSEEK).error or "")
    assert [f for f in audit(turn_body("string"), DEEPSEEK).failures() if "tools dropped" not in f] == []
    # vLLM parses the strings into objects before the template runs: the same body then fails
    assert audit(turn_body("string"), DEEPSEEK, "vllm").error is not None
    # llama.cpp probes the template, finds it cannot render objects and hands it strings: either body renders
    for args in ("string", "object"):
        rendered = audit(turn_body(args), DEEPSEEK, "llama.cpp")
        assert rendered.error is None and rendered.count("as call") == 2, args
        # the template never reads tools: the audit says so (the prompt is the same without them)
        assert rendered.tools_dropped == ("coop",) and rendered.as_json()["tools"] == "dropped"


def test_mistral_needs_nine_character_ids_and_drops_text_beside_calls() -> None:
    assert "length 9" in (audit(turn_body(), MISTRAL).error or "")
    ok = audit(turn_body(ids=("a1b2c3d4e", "f5g6h7i8j")), MISTRAL)
    assert ok.count("as call") == 2
    assert [d for d in ok.dropped_text if "beside calls" in d]
    assert audit(turn_body("string", ids=("a1b2c3d4e", "f5g6h7i8j")), MISTRAL).calls[0].double_encoded


def test_gpt_oss_renders_only_the_first_call() -> None:
    a = audit(turn_body(), GPT_OSS)
    assert [c.fate for c in a.calls] == ["as call", "dropped"]
    assert audit(turn_body("string"), GPT_OSS).calls[0].double_encoded
    assert "call 1 (coop, messages[2]): dropped" in format_template_audit(a)


def test_gemma_keeps_the_calls() -> None:
    assert audit(turn_body(), GEMMA).count("as call") == 2


# ---------------------------------------------------------------- the bundled demo through every template

#: demo rendered for openai-compatible (derived ids, string arguments) and kimi (Kimi ids)
DEMO_EXPECTED: dict[tuple[str, str], str] = {
    (QWEN3, "transformers"): "ok", (QWEN3, "vllm"): "ok", (QWEN3, "llama.cpp"): "ok",
    (QWEN3_OLD, "transformers"): "error", (QWEN3_OLD, "vllm"): "ok", (QWEN3_OLD, "llama.cpp"): "ok",
    (QWEN35, "transformers"): "error", (QWEN35, "vllm"): "ok", (QWEN35, "llama.cpp"): "ok",
    (GLM[0], "transformers"): "error", (GLM[0], "vllm"): "ok", (GLM[0], "llama.cpp"): "ok",
    (GLM[1], "transformers"): "error", (GLM[1], "vllm"): "ok", (GLM[1], "llama.cpp"): "ok",
    (LLAMA, "transformers"): "double", (LLAMA, "vllm"): "ok", (LLAMA, "llama.cpp"): "ok",
    (DEEPSEEK, "transformers"): "error", (DEEPSEEK, "vllm"): "error", (DEEPSEEK, "llama.cpp"): "no tools",
    (MISTRAL, "transformers"): "error", (MISTRAL, "vllm"): "error", (MISTRAL, "llama.cpp"): "error",
    (GPT_OSS, "transformers"): "double", (GPT_OSS, "vllm"): "ok", (GPT_OSS, "llama.cpp"): "ok",
    (GEMMA, "transformers"): "ok", (GEMMA, "vllm"): "ok", (GEMMA, "llama.cpp"): "ok",
}  # fmt: skip


def _verdict(a: Any) -> str:
    if a.error:
        return "error"
    if any(c.double_encoded for c in a.calls):
        return "double"
    assert a.count("as call") == len(a.calls), format_template_audit(a)
    if a.tools_dropped:
        return "no tools"
    return "ok" if not a.failures() else "fail"


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("name", [n for n in ALL if n not in KIMI])
def test_demo_through_every_template(name: str, server: str, demo_path: Path) -> None:
    body = render(demo_path, "openai-compatible")
    a = audit(body, name, server)
    assert len(a.calls) == 4
    assert _verdict(a) == DEMO_EXPECTED[(name, server)], format_template_audit(a)


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("name", KIMI)
def test_demo_through_kimi(name: str, server: str, demo_path: Path) -> None:
    foreign = audit(render(demo_path, "openai-compatible"), name, server)
    assert {c.fate for c in foreign.calls} == {"name missing"}
    own = audit(render(demo_path, "kimi"), name, server)
    assert own.count("as call") == 4 and own.failures() == []


# ---------------------------------------------------------------- real transcripts


def transcript_history(conv: dict[str, Any]) -> dict[str, Any]:
    """A tau-bench / tau2-bench transcript in the stored-history file format (agent calls only)."""
    out: list[dict[str, Any]] = []
    reply: dict[str, Any] | None = None
    for i, m in enumerate(conv["messages"]):
        role, text = m["role"], m.get("content") or ""
        if role in ("system", "user"):
            reply = None
            out.append({"id": f"t{i}", "role": role, "text": text})
            continue
        if role == "tool":
            if m.get("requestor", "assistant") == "assistant" and reply is not None:
                ref = m.get("tool_call_id") or m.get("id")
                reply["tool_uses"].append({"tool_name": "result", "tool_input": text, "tool_use_id": ref})
            continue
        if reply is None:
            reply = {"id": f"t{i}", "role": "assistant", "text": "", "tool_uses": []}
            out.append(reply)
        reply["text"] = f"{reply['text']}\n\n{text}".strip() if text else reply["text"]
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or c
            reply["tool_uses"].append({"tool_name": fn["name"], "tool_input": fn["arguments"], "id": c["id"]})
    return {"id": "transcript", "messages": out}


def transcript_bodies() -> Iterator[tuple[str, dict[str, Any]]]:
    for conv in load_transcripts():
        history = load_history(transcript_history(conv))
        yield conv["source"], render(history, "openai-compatible")


@pytest.mark.slow
def test_real_transcripts_through_every_template() -> None:
    bodies = list(transcript_bodies())
    if not bodies:
        pytest.skip(NO_SHARED)
    for source, body in bodies:
        multi = any(len(m.get("tool_calls") or []) > 1 for m in body["messages"])
        firsts = sum(1 for m in body["messages"] if m.get("tool_calls"))
        n = sum(len(m.get("tool_calls") or []) for m in body["messages"])
        assert n > 0, source
        assert audit(body, QWEN3, "vllm").count("as call") == n, source
        assert audit(body, GEMMA, "vllm").count("as call") == n, source
        assert audit(body, QWEN35, "vllm").count("as call") == n, source
        assert audit(body, QWEN35, "transformers").count("error") == n, source
        llama = audit(body, LLAMA, "vllm")
        assert (llama.error is not None) == multi, source
        gpt = audit(body, GPT_OSS, "vllm")
        assert gpt.count("as call") == firsts and gpt.count("dropped") == n - firsts, source
        assert audit(body, MISTRAL, "vllm").error is not None, source
        assert audit(body, DEEPSEEK, "vllm").error is not None, source
        # transformers 5 drops the null content of a call-only message, and DeepSeek adds to it
        assert "content" in (audit(body, DEEPSEEK, "transformers").error or ""), source
        assert {c.fate for c in audit(body, KIMI[0], "vllm").calls} == {"name missing"}, source


def test_render_cli_prints_the_prompt(demo_path: Path) -> None:
    from click.testing import CliRunner

    from toolreplay._cli import cli

    template = tpl(QWEN3)
    args = ["render", str(demo_path), "--vessel", "openai-compatible", "--prompt-template", str(template)]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("<|im_start|>system\n")  # the demo's Gemini signature: a warning on stderr
    assert '{"name": "coop", "arguments": {"action": "close", "id": 12' in out.stdout
    # exactly the prompt, as the server renders it: no newline added (the template ends with one)
    assert out.stdout.endswith("<|im_start|>assistant\n") and not out.stdout.endswith("\n\n")
    wrong = CliRunner().invoke(
        cli, ["render", str(demo_path), "--vessel", "gemini", "--prompt-template", str(template)]
    )
    assert wrong.exit_code == 1 and "renders Chat bodies" in wrong.output
    raised = CliRunner().invoke(
        cli,
        ["render", str(demo_path), "--vessel", "openai-compatible", "--prompt-template", str(tpl(MISTRAL))],
    )
    assert raised.exit_code == 1 and "length 9" in raised.output


def test_llama_cpp_variables_and_the_body_kwargs(tmp_path: Path) -> None:
    """llama.cpp passes today's date_string and enable_thinking=True; vLLM and llama.cpp pass the body's
    chat_template_kwargs over them; transformers passes neither."""
    path = tmp_path / "vars.jinja"
    path.write_text(
        "{{ date_string | default('none') }}|{{ enable_thinking | default('none') }}|{{ messages | length }}",
        encoding="utf-8",
    )
    body: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}]}
    assert render_prompt(body, path, "llama.cpp", now=NOW) == "02 Nov 2026|True|1"
    assert render_prompt(body, path, "transformers", now=NOW) == "none|none|1"
    kwargs = {**body, "chat_template_kwargs": {"date_string": "01 Jan 2000", "enable_thinking": False}}
    assert render_prompt(kwargs, path, "llama.cpp", now=NOW) == "01 Jan 2000|False|1"
    assert render_prompt(kwargs, path, "vllm", now=NOW) == "01 Jan 2000|False|1"
    assert render_prompt(kwargs, path, "transformers", now=NOW) == "none|none|1"


def test_llama_cpp_hands_strings_to_a_template_that_cannot_render_objects(tmp_path: Path) -> None:
    path = tmp_path / "concat.jinja"
    path.write_text(
        "{% for m in messages %}{% for c in m.tool_calls or [] %}"
        "{{ c.function.name + ':' + c.function.arguments }};{% endfor %}{% endfor %}",
        encoding="utf-8",
    )
    calls = [
        {"function": {"name": "a", "arguments": '{"x": 1}'}},  # a string stays as sent
        {"function": {"name": "b", "arguments": {"y": "é"}}},  # an object becomes compact JSON
    ]
    body = {"messages": [{"role": "assistant", "content": None, "tool_calls": calls}]}
    assert render_prompt(body, path, "llama.cpp") == 'a:{"x": 1};b:{"y":"é"};'
    caps = template_caps(path)
    assert caps.supports_tool_calls and not caps.supports_object_arguments and not caps.supports_tools

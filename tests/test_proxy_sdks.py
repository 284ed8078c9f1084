"""The official SDKs as the proxy's clients, whole and streamed (what users' own agents use), and each
exchange recorded; then the live audit, line by line, of requests that drop what the store keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("starlette")

from proxy_helpers import CASES, post, proxied
from toolreplay._store import open_store
from toolreplay.testing import Call, Calls, ProviderDouble, Text

BY_WIRE = {c.wire: c for c in CASES}
LIST = Calls([Call("coop", {"action": "list"})], reasoning="Let me look.")


def _conversations(db: Path) -> list[int]:
    store = open_store(str(db))
    try:
        return sorted(c.messages for c in store.list_conversations())
    finally:
        store.close()


@pytest.mark.slow
def test_openai_sdk_chat_and_responses_through_the_proxy(tmp_path: Path) -> None:
    openai = pytest.importorskip("openai")
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, _, db):
        double.script(LIST, Text("streamed answer"), LIST, Text("streamed response"))
        with openai.OpenAI(
            base_url=proxy.url + "/v1", api_key="sk-test-openai-1234", max_retries=0
        ) as client:
            r = client.chat.completions.create(
                model="gpt-4.1", messages=[{"role": "user", "content": "list"}]
            )
            assert r.choices[0].message.tool_calls[0].function.name == "coop"
            chunks = client.chat.completions.create(
                model="gpt-4.1", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "streamed answer"
            resp = client.responses.create(model="gpt-5", input="list")
            assert [i.type for i in resp.output] == ["reasoning", "function_call"]
            with client.responses.stream(model="gpt-5", input="hi") as stream:
                for _ in stream:
                    pass
                assert stream.get_final_response().output_text == "streamed response"
        assert proxy.drain()
    assert _conversations(db) == [2, 2, 2, 2]


@pytest.mark.slow
def test_anthropic_sdk_through_the_proxy(tmp_path: Path) -> None:
    anthropic = pytest.importorskip("anthropic")
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, _, db):
        double.script(LIST, Text("streamed"))
        with anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-test-1234", max_retries=0) as client:
            msg = client.messages.create(
                model="claude", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
            )
            assert [b.type for b in msg.content] == ["thinking", "tool_use"]
            with client.messages.stream(
                model="claude", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                assert stream.get_final_text() == "streamed"
        assert proxy.drain()
    assert _conversations(db) == [2, 2]


@pytest.mark.slow
def test_google_genai_and_ollama_sdks_through_the_proxy(tmp_path: Path) -> None:
    pytest.importorskip("google.genai")
    ollama = pytest.importorskip("ollama")
    from google import genai
    from google.genai import types

    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, _, db):
        double.script(
            LIST, Text("streamed from gemini"), Text("whole from ollama"), Text("streamed from ollama")
        )
        client = genai.Client(
            api_key="test-key-genai-1234", http_options=types.HttpOptions(base_url=proxy.url)
        )
        try:
            r = client.models.generate_content(model="gemini-2.5-flash", contents="list the todos")
            assert [(c.name, c.args) for c in r.function_calls or []] == [("coop", {"action": "list"})]
            pieces = client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi")
            assert "".join(c.text or "" for c in pieces) == "streamed from gemini"
        finally:
            client.close()
        o = ollama.Client(host=proxy.url)
        try:  # the proxy keeps connections alive: the client's pool is closed here, not by the server
            hi = [{"role": "user", "content": "hi"}]
            assert o.chat(model="qwen3", messages=hi).message.content == "whole from ollama"
            parts = o.chat(model="qwen3", messages=hi, stream=True)
            assert "".join(p.message.content or "" for p in parts) == "streamed from ollama"
        finally:
            o._client.close()
        assert proxy.drain()
    assert _conversations(db) == [2, 2, 2, 2]


# -- the live audit -------------------------------------------------------------------------------


def test_the_audit_names_a_call_sent_as_text_and_dropped_reasoning(tmp_path: Path) -> None:
    case = BY_WIRE["anthropic"]
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, lines, _):
        double.script(
            Calls([Call("coop", {"action": "close", "id": 12})], reasoning="Close it."), Text("Done.")
        )
        answer = post(proxy.url, case, case.first(False), False).json()
        follow = case.follow(answer, False)
        # the agent drops the thinking block (and its signature) it was given
        follow["messages"][1]["content"] = [b for b in answer["content"] if b["type"] != "thinking"]
        assert post(proxy.url, case, follow, False).status_code == 200
        assert proxy.drain()
        dropped = [line for line in lines if "[audit]" in line and "were dropped" in line]
        assert len(dropped) == 1 and "127.0.0.1 issued" in dropped[0], lines
        # a third request that flattens the call into text: the audit says so
        flat = case.first(False)
        flat["messages"] += [
            {
                "role": "assistant",
                "content": 'I called coop({"action": "close", "id": 12}) -> status: closed',
            },
            {"role": "user", "content": "thanks"},
        ]
        double.script(Text("You are welcome."))
        post(proxy.url, case, flat, False)
        assert proxy.drain()
    said = [line for line in lines if "as text" in line]
    assert len(said) == 1 and "coop" in said[0], lines


def test_the_audit_names_changed_call_ids(tmp_path: Path) -> None:
    case = BY_WIRE["openai-chat"]
    with ProviderDouble() as double, proxied(double, tmp_path) as (proxy, lines, tmp):
        double.script(Calls([Call("coop", {"action": "list"})]), Text("Listed."))
        answer = post(proxy.url, case, case.first(False), False).json()
        follow = case.follow(answer, False)
        follow["messages"][1]["tool_calls"][0]["id"] = "call_minted_again"
        follow["messages"][2]["tool_call_id"] = "call_minted_again"
        assert post(proxy.url, case, follow, False).status_code == 200
        assert proxy.drain()
    changed = [line for line in lines if "id changed" in line]
    assert len(changed) == 1 and "call_double1_0 -> call_minted_again" in changed[0]
    import json

    logged = [json.loads(line) for line in (tmp.parent / "proxy.log").read_text().splitlines()]
    assert logged[1]["audit"]["ids_changed"] == 1 and logged[1]["audit"]["as_call"] == 1

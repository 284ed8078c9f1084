"""Responses' ``previous_response_id`` on a routed model (design 55): the official openai SDK through a
real proxy on 127.0.0.1, routed to the Anthropic double with thinking on. The SDK sends only the new items
and the id of the answer before; the proxy rebuilds the earlier turns from its store and sends the whole
conversation (the call, its answer, the upstream's own signed thinking) as the upstream needs it. An id
the proxy never gave out, or one it cannot look up (not recording), is refused as OpenAI refuses it."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("openai")

import openai

from proxy_helpers import proxied
from store_fixtures import store, store_factory, store_url  # noqa: F401
from toolreplay._history import History, Message
from toolreplay._proxy.model_routes import parse_route
from toolreplay._store import Store, open_store
from toolreplay.testing import Call, Calls, ProviderDouble, Text

AGENT_KEY = "sk-agent-own-key-0123456789abcdef"
CLOSE = Calls([Call("coop", {"action": "close", "id": 12})], reasoning="Closing todo 12 as asked.")
TOOLS: list[Any] = [{"type": "function", "name": "coop", "parameters": {"type": "object"}}]
ASK: dict[str, Any] = dict(
    model="gpt-5", tools=TOOLS, instructions="You run the board.", reasoning={"effort": "low"}
)


def _on_anthropic(tmp: Path, monkeypatch: pytest.MonkeyPatch, double: ProviderDouble) -> tuple[Any, ...]:
    f = tmp / "vessels.toml"
    f.write_text(f'[vessels.anthropic]\nbase_url = "{double.base_url_for("anthropic")}"\n', encoding="utf-8")
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(f))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-vessel-key-0123456789")
    return (parse_route("openai-responses:*=anthropic:claude-sonnet-4-5"),)


def _client(url: str) -> Any:
    return openai.OpenAI(base_url=url + "/v1", api_key=AGENT_KEY, max_retries=0)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_previous_response_id_continues_the_stored_conversation_on_another_wire(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    with ProviderDouble() as double:
        routes = _on_anthropic(tmp_path, monkeypatch, double)
        double.script(CLOSE, Text("Closed todo 12."), Text("Todo 13 is open."))
        with proxied(double, tmp_path, routes=routes) as (proxy, lines, db), _client(proxy.url) as client:

            def once(**kw: Any) -> Any:
                if not streamed:
                    return client.responses.create(**ASK, **kw)
                with client.responses.stream(**ASK, **kw) as s:
                    for _ in s:
                        pass
                    return s.get_final_response()

            first = once(input="close todo 12")
            call = next(i for i in first.output if i.type == "function_call")
            out = {"type": "function_call_output", "call_id": call.call_id, "output": "closed"}
            second = once(previous_response_id=first.id, input=[out])
            third = once(previous_response_id=second.id, input="and todo 13?")
            assert proxy.drain()
        sent = double.requests
    assert (call.name, json.loads(call.arguments)) == ("coop", {"action": "close", "id": 12})
    assert (second.output_text, third.output_text) == ("Closed todo 12.", "Todo 13 is open.")
    assert len({first.id, second.id, third.id}) == 3
    # every upstream request passed the Anthropic double's rules (thinking on: the tool loop opens with
    # the model's own signed thinking block, which only the store kept)
    assert [r.status for r in sent] == [200, 200, 200], [r.rejected for r in sent]
    last = json.loads(sent[2].raw)
    assert last["system"] and "You run the board." in json.dumps(last["system"])
    roles = [(m["role"], [b["type"] for b in m["content"]]) for m in last["messages"]]
    assert roles == [
        ("user", ["text"]),
        ("assistant", ["thinking", "tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
        ("user", ["text"]),
    ], roles
    assert last["messages"][1]["content"][1]["id"] == last["messages"][2]["content"][0]["tool_use_id"]
    assert b"Closing todo 12 as asked." in sent[1].raw and b"toolreplay.r1." not in sent[2].raw
    assert not [line for line in lines if "[not recorded]" in line]
    kept = open_store(str(db))  # one conversation: each request continued the one before
    try:
        # the instructions, two user messages, the reply that called and then answered, the last reply
        assert [c.messages for c in kept.list_conversations()] == [5]
    finally:
        kept.close()


def test_an_answer_a_later_step_superseded_is_continued_as_the_conversation_stood_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent goes back to the answer that called (its reply has since taken another step, which
    answered) and gives that call another output: the conversation is rebuilt as it stood at that
    answer, the call open, not as the reply is now."""
    with ProviderDouble() as double:
        routes = _on_anthropic(tmp_path, monkeypatch, double)
        double.script(CLOSE, Text("Closed todo 12."), Text("It is locked; try later."))
        with proxied(double, tmp_path, routes=routes) as (proxy, lines, db), _client(proxy.url) as client:
            first = client.responses.create(**ASK, input="close todo 12")
            call = next(i for i in first.output if i.type == "function_call")

            def output(text: str) -> list[dict[str, Any]]:
                return [{"type": "function_call_output", "call_id": call.call_id, "output": text}]

            second = client.responses.create(**ASK, previous_response_id=first.id, input=output("closed"))
            assert proxy.drain()
            again = client.responses.create(**ASK, previous_response_id=first.id, input=output("locked"))
            assert proxy.drain()
        sent = double.requests
    assert (second.output_text, again.output_text) == ("Closed todo 12.", "It is locked; try later.")
    assert [r.status for r in sent] == [200, 200, 200], [r.rejected for r in sent]
    third = json.loads(sent[2].raw)
    roles = [(m["role"], [b["type"] for b in m["content"]]) for m in third["messages"]]
    assert roles == [("user", ["text"]), ("assistant", ["thinking", "tool_use"]), ("user", ["tool_result"])]
    assert json.dumps(third["messages"][2]).count("locked") == 1 and b"Closed todo 12." not in sent[2].raw
    assert json.loads(sent[1].raw)["messages"][:2] == third["messages"][:2]  # the same turn, byte for byte
    assert not [line for line in lines if "[not recorded]" in line]
    kept = open_store(str(db))
    try:  # the branch is a conversation of its own; the first keeps its reply as it ended
        replies = [kept.load(c.id).messages[-1] for c in kept.list_conversations()]
    finally:
        kept.close()
    got = sorted((r.text, r.tool_uses[0].answer) for r in replies)
    assert got == [("Closed todo 12.", "closed"), ("It is locked; try later.", "locked")]


def test_an_unknown_previous_response_id_is_refused_as_openai_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ProviderDouble() as double:
        routes = _on_anthropic(tmp_path, monkeypatch, double)
        with (
            proxied(double, tmp_path, routes=routes) as (proxy, _lines, _db),
            _client(proxy.url) as client,
            pytest.raises(openai.BadRequestError) as got,
        ):
            client.responses.create(**ASK, previous_response_id="resp_never_given", input="hello")
        assert not double.requests  # nothing went upstream
    assert got.value.status_code == 400
    assert got.value.body == {
        "message": "Previous response with id 'resp_never_given' not found.",
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "previous_response_not_found",
    }


@pytest.mark.parametrize(
    "busy", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["idle", "another-answer-in-hand"]
)
def test_an_unknown_previous_response_id_is_refused_without_waiting_on_answers_in_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, busy: bool
) -> None:
    """The refusal waits only for the exchanges handed to the recorder and not yet written, not for the
    answers still being made (another agent's, a subagent's): here one takes 2 s upstream."""
    with ProviderDouble(delay=2.0 if busy else 0.0) as double:
        routes = _on_anthropic(tmp_path, monkeypatch, double)
        double.script(Text("Slowly."))
        with proxied(double, tmp_path, routes=routes) as (proxy, _l, _d), _client(proxy.url) as client:
            other = threading.Thread(target=lambda: client.responses.create(**ASK, input="hello"))
            if busy:
                other.start()
                end = time.monotonic() + 10
                while not double.requests and time.monotonic() < end:
                    time.sleep(0.01)
                assert double.requests  # the other answer is in hand upstream
            t0 = time.perf_counter()
            with pytest.raises(openai.BadRequestError) as got:
                client.responses.create(**ASK, previous_response_id="resp_never_given", input="hi")
            took = time.perf_counter() - t0
            if busy:
                other.join()
    assert got.value.code == "previous_response_not_found"
    assert took < 0.5, f"the refusal took {took:.2f} s"


def test_previous_response_id_without_a_store_is_refused_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ProviderDouble() as double:
        routes = _on_anthropic(tmp_path, monkeypatch, double)
        double.script(Text("Hello."))
        with (
            proxied(double, tmp_path, routes=routes, record=False, log=False) as (proxy, _l, _d),
            _client(proxy.url) as client,
        ):
            first = client.responses.create(**ASK, input="hello")
            with pytest.raises(openai.BadRequestError) as got:
                client.responses.create(**ASK, previous_response_id=first.id, input="again")
        assert len(double.requests) == 1
    assert got.value.code == "previous_response_not_found"
    assert got.value.body["message"].startswith(f"Previous response with id '{first.id}' not found.")
    assert "not recording" in got.value.body["message"]


def test_the_earlier_instructions_are_not_carried_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI's rule: with ``previous_response_id`` the earlier request's ``instructions`` do not go on."""
    with ProviderDouble() as double:
        routes = _on_anthropic(tmp_path, monkeypatch, double)
        double.script(Text("Hello."), Text("Again."))
        with proxied(double, tmp_path, routes=routes) as (proxy, _l, _d), _client(proxy.url) as client:
            first = client.responses.create(**ASK, input="hello")
            plain = {k: v for k, v in ASK.items() if k != "instructions"}
            second = client.responses.create(**plain, previous_response_id=first.id, input="again")
            assert proxy.drain()
        sent = [json.loads(r.raw) for r in double.requests]
    assert second.output_text == "Again."
    assert "You run the board." in json.dumps(sent[0].get("system"))
    assert "You run the board." not in json.dumps(sent[1])
    assert [m["role"] for m in sent[1]["messages"]] == ["user", "assistant", "user"]


def test_a_request_no_route_takes_goes_on_with_its_previous_response_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx

    from toolreplay import _jsonenc as jsonenc

    body = jsonenc.encode({"model": "gpt-5", "previous_response_id": "resp_upstream_own", "input": "hi"})
    with ProviderDouble() as double:
        double.script(Text("Hi."))
        routes = (parse_route("anthropic:claude-*=kimi"),)  # takes no Responses request
        monkeypatch.setenv("MOONSHOT_API_KEY", "sk-moonshot-0123456789")
        with proxied(double, tmp_path, routes=routes) as (proxy, _l, _d):
            headers = {"authorization": f"Bearer {AGENT_KEY}", "content-type": "application/json"}
            httpx.post(proxy.url + "/v1/responses", content=body, headers=headers, timeout=30)
        assert [r.raw for r in double.requests] == [body]  # the agent's bytes, untouched


def test_an_answer_id_names_its_reply_on_every_backend(store: Store) -> None:  # noqa: F811
    h = History("c1", (Message("u1", "user", "hi"), Message("a2", "assistant", "hello")))
    store.import_history(h)
    assert store.find_answer("resp_0123") is None
    store.set_answer_id("c1", "a2", "resp_0123")
    assert store.find_answer("resp_0123") == ("c1", "a2", None)  # its latest answer: the reply as it is
    store.set_answer_id("c1", "a2", "resp_4567", 2)  # a later step's answer
    assert store.find_answer("resp_4567") == ("c1", "a2", None)
    assert store.find_answer("resp_0123") == ("c1", "a2", None)  # given before its steps were kept
    store.set_answer_id("c1", "a2", "resp_0123", 1)
    store.set_answer_id("c1", "a2", "resp_89ab", 2)  # the latest again
    assert store.find_answer("resp_0123") == ("c1", "a2", 1)  # superseded: the reply at its first step
    assert store.find_answer("resp_89ab") == ("c1", "a2", None)
    store.delete_conversation("c1")  # the id goes with its reply
    assert store.find_answer("resp_0123") is None

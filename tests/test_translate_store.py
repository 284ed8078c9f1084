"""The store as the memory of what the agent's wire cannot carry (design 48), the call ids across two
wires (design 49) and the opaque reasoning tokens (design 50): Kimi's ``reasoning_content`` comes back
byte-identical from the store when the agent is Claude Code; a token of ours resolves to its stored
piece and is never forwarded; reasoning of anyone else is left out and named; ids are stable and valid
on both wires."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from test_translate import forwards_token, refused, translated
from toolreplay import jsonenc
from toolreplay._issuers import host_of
from toolreplay._proxy.translate import read_inbound, translate_request
from toolreplay._proxy.translate_ids import rule_of
from toolreplay._vessels import get_vessel
from toolreplay.model import History, Issuer, Message, Reasoning, Step, ToolCall
from toolreplay.wires import get_wire
from toolreplay.wires.bridge import base64_token, seal
from toolreplay.wires.common import ID_SAFE

KIMI = replace(get_vessel("kimi"), model="kimi-k2-thinking")  # thinks unless told not to
KIMI_ISSUER = Issuer("openai-chat", host_of(KIMI.base_url), KIMI.model)
THOUGHT = "The user wants notes.txt;\n I write it first.  "  # spaces and a line break kept as they are
TOOLS = [{"name": "Write", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]


def _claude(thinking: dict[str, Any] | None = None, agent_id: str = "toolu_a1") -> dict[str, Any]:
    """Claude Code's continuation request after one call (the reply in progress), optionally with the
    thinking block it was shown."""
    said: list[dict[str, Any]] = [thinking] if thinking else []
    said.append({"type": "tool_use", "id": agent_id, "name": "Write", "input": {"path": "notes.txt"}})
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8000,
        "messages": [
            {"role": "user", "content": "write notes.txt"},
            {"role": "assistant", "content": said},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": agent_id, "content": "ok"}]},
        ],
        "tools": TOOLS,
    }


def _kimi_piece() -> Reasoning:
    return Reasoning(THOUGHT, {"openai-chat": {"reasoning_content": THOUGHT}})


def _stored(agent_id: str = "toolu_a1", upstream_id: str = "functions.Write:0") -> History:
    """What the proxy recorded of the exchange Kimi answered: the call under the id the agent saw, Kimi's
    own id in its provider data, the step with Kimi's reasoning and its issuer."""
    call = ToolCall("Write", {"path": "notes.txt"}, None, agent_id,
                    provider_data={"openai-chat": {"id": upstream_id}})  # fmt: skip
    step = Step((_kimi_piece(),), 1, KIMI_ISSUER)
    reply = Message("a2", "assistant", "", (call,), steps=(step,), status="in_progress")
    return History("c1", (Message("u1", "user", "write notes.txt"), reply))


def _to_kimi(body: dict[str, Any], stored: History | None) -> Any:
    inbound = get_wire("anthropic")
    return translate_request(inbound, read_inbound(inbound, body), stored, KIMI, issuer=KIMI_ISSUER)


def _assistant(body: dict[str, Any]) -> dict[str, Any]:
    return next(m for m in body["messages"] if m["role"] == "assistant")


def test_kimi_reasoning_comes_back_from_the_store_when_the_agent_dropped_it() -> None:
    t = _to_kimi(_claude(), _stored())
    msg = _assistant(t.body)
    assert msg["reasoning_content"] == THOUGHT  # byte for byte
    assert msg["tool_calls"][0]["id"] == "functions.Write:0"  # Kimi's own id form
    assert t.body["messages"][-1]["tool_call_id"] == "functions.Write:0"
    assert refused("kimi", t.body) == [] and not any("thinking turned off" in n for n in t.notes)
    # without the store the request would go without it: Moonshot refuses that with thinking on, so
    # thinking is turned off for it, and said
    bare = _to_kimi(_claude(), None)
    assert "reasoning_content" not in _assistant(bare.body)
    assert bare.body["thinking"] == {"type": "disabled"}
    assert any("thinking turned off" in n for n in bare.notes)


def test_our_token_resolves_to_the_stored_piece_and_is_never_forwarded() -> None:
    token = seal(KIMI_ISSUER, _kimi_piece())
    shown = {"type": "thinking", "thinking": THOUGHT, "signature": token}
    t = _to_kimi(_claude(shown), _stored())
    assert _assistant(t.body)["reasoning_content"] == THOUGHT
    assert not forwards_token(t.body)
    # a reply the store does not hold as it stands (the agent rewrote its history): the token still
    # names its stored piece, which goes back to its issuer
    other = replace(_stored(), messages=(Message("u1", "user", "another start"), _stored().messages[1]))
    t = _to_kimi(_claude(shown), other)
    assert _assistant(t.body)["reasoning_content"] == THOUGHT
    assert not forwards_token(t.body)


def test_a_token_that_names_no_stored_piece_is_dropped_with_a_note() -> None:
    forged = {"type": "thinking", "thinking": "made up", "signature": "toolreplay.r1.nothing-stored-here"}
    for vessel in ("anthropic", "kimi", "openai-responses", "gemini"):
        t = translated("anthropic", _claude(forged), vessel)
        text = jsonenc.dumps(t.body)
        assert not forwards_token(t.body) and "made up" not in text
        assert any("names no stored piece" in n for n in t.notes)


def test_reasoning_of_another_model_is_left_out_and_named() -> None:
    theirs = {"type": "thinking", "thinking": "Claude's own thought", "signature": "c2lnbmVkIGJ5IGNsYXVkZQ=="}
    t = _to_kimi(_claude(theirs), _stored())
    assert "Claude's own thought" not in jsonenc.dumps(t.body)  # the store's piece wins for its reply
    assert _assistant(t.body)["reasoning_content"] == THOUGHT
    t = translated("anthropic", _claude(theirs), "openai-responses")
    assert "Claude's own thought" not in jsonenc.dumps(t.body)
    assert any("1 piece of reasoning not replayed: made by anthropic" in n for n in t.notes)
    # to its own issuer it goes back, signature and all
    back = translated("anthropic", _claude(theirs), "anthropic")
    assert _assistant(back.body)["content"][0] == theirs


def _step(cid: str, path: str) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": cid, "name": "Write", "input": {"path": path}}
    return [
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": "ok"}]},
    ]


def test_each_upstream_gets_only_its_own_reasoning_across_a_route_switch() -> None:
    # Kimi made the first step, Anthropic the second; the agent (Claude Code) saw both as tool calls
    anthropic = get_vessel("anthropic")
    a_issuer = Issuer("anthropic", host_of(anthropic.base_url), anthropic.model)
    claude_block = {"type": "thinking", "thinking": "Claude thinks", "signature": "c2lnbmVkIGJ5IGNsYXVkZQ=="}
    c_piece = Reasoning("Claude thinks", {"anthropic": claude_block})
    calls = (
        ToolCall(
            "Write",
            {"path": "a"},
            "ok",
            "toolu_a1",
            provider_data={"openai-chat": {"id": "functions.Write:0"}},
        ),
        ToolCall("Write", {"path": "b"}, "ok", "toolu_b2"),
    )
    steps = (Step((_kimi_piece(),), 1, KIMI_ISSUER), Step((c_piece,), 1, a_issuer))
    reply = Message("a2", "assistant", "", calls, steps=steps, status="in_progress")
    stored = History("c1", (Message("u1", "user", "write"), reply))
    body = {
        "model": "claude-sonnet-4-5", "max_tokens": 8000, "tools": TOOLS,
        "thinking": {"type": "enabled", "budget_tokens": 2000},
        "messages": [{"role": "user", "content": "write"}, *_step("toolu_a1", "a"), *_step("toolu_b2", "b")],
    }  # fmt: skip
    inbound = get_wire("anthropic")
    h = read_inbound(inbound, body)
    to_kimi = translate_request(inbound, h, stored, KIMI, issuer=KIMI_ISSUER)
    to_claude = translate_request(inbound, h, stored, anthropic, issuer=a_issuer)
    kimi_text, claude_text = jsonenc.dumps(to_kimi.body), jsonenc.dumps(to_claude.body)
    assert THOUGHT[:20] in kimi_text and "Claude thinks" not in kimi_text
    assert "Claude thinks" in claude_text and THOUGHT[:20] not in claude_text
    assert refused("kimi", to_kimi.body) == [] and refused("anthropic", to_claude.body) == []
    ids = [b["id"] for m in to_claude.body["messages"] if m["role"] == "assistant" for b in m["content"]
           if b["type"] == "tool_use"]  # fmt: skip
    assert ids == ["toolu_a1", "toolu_b2"]  # Kimi's own id is Kimi's only: the agent's goes to Claude


def test_answer_ids_come_back_valid_for_the_agent_and_stable() -> None:
    t1 = _to_kimi(_claude(), _stored())
    t2 = _to_kimi(_claude(), _stored())
    assert t1.answer_id == t2.answer_id and t1.answer_id.startswith("msg_")
    kimi_id = t1.call_id(0, "functions.Write:1", "Write")
    assert kimi_id == t2.call_id(0, "functions.Write:1", "Write")
    assert ID_SAFE.match(kimi_id) and kimi_id.startswith("toolu_")  # Kimi's form is no Anthropic id
    assert t1.call_id(0, "toolu_fine_1", "Write") == "toolu_fine_1"  # kept where it fits
    # another continuation of the same turn: other ids
    later = _to_kimi(_claude(agent_id="toolu_other"), _stored(agent_id="toolu_other"))
    assert later.answer_id != t1.answer_id
    assert later.call_id(0, None, "Write") != t1.call_id(0, None, "Write")


def test_gemini_calls_without_ids_get_ids_from_the_conversation() -> None:
    gem = {"contents": [{"role": "user", "parts": [{"text": "write notes"}]}]}
    inbound = get_wire("gemini")
    v = get_vessel("anthropic")
    t = translate_request(get_wire("openai-chat"), read_inbound(get_wire("openai-chat"),
                          {"model": "m", "messages": [{"role": "user", "content": "write notes"}]}),
                          None, v, issuer=Issuer("anthropic", "api.anthropic.com", v.model))  # fmt: skip
    ids = [t.call_id(i, None, "Write") for i in range(3)]
    assert len(set(ids)) == 3 and all(rule_of("openai-chat").fits(i) for i in ids)
    g = translate_request(
        inbound, read_inbound(inbound, gem), None, v, issuer=Issuer("anthropic", "api.anthropic.com", v.model)
    )
    assert g.call_id(0, None, "Write") == g.call_id(0, None, "Write")
    assert g.answer_id != t.answer_id


def test_ids_that_do_not_fit_the_upstream_are_mapped_by_a_pure_function() -> None:
    long_id = "call_" + "x" * 50  # over OpenAI's 40, within Responses' 64
    body = _claude(agent_id="toolu_a1")
    body["messages"][1]["content"][0]["id"] = long_id
    body["messages"][2]["content"][0]["tool_use_id"] = long_id
    t = translated("anthropic", body, "openai")
    msg = _assistant(t.body)
    sent = msg["tool_calls"][0]["id"]
    assert len(sent) <= 40 and t.body["messages"][-1]["tool_call_id"] == sent
    assert translated("anthropic", body, "openai").body == t.body
    # Responses takes it as it is (64)
    resp = translated("anthropic", body, "openai-responses").body
    assert any(i.get("call_id") == long_id for i in resp["input"])


def test_an_id_used_twice_in_one_request_goes_upstream_once_each() -> None:
    turn = [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_0", "name": "Write", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_0", "content": "ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    messages = [{"role": "user", "content": "one"}, *turn, {"role": "user", "content": "two"}, *turn[:2]]
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": TOOLS, "messages": messages}
    t = translated("anthropic", body, "anthropic")
    ids = [b["id"] for m in t.body["messages"] if m["role"] == "assistant" for b in m["content"]
           if b["type"] == "tool_use"]  # fmt: skip
    assert ids == ["call_0", "call_0_2"] and refused("anthropic", t.body) == []


_ID = st.text(alphabet=st.sampled_from("abcXYZ019_-.:/ "), min_size=1, max_size=80)


@settings(max_examples=60, deadline=None)
@given(agent_id=_ID, upstream=st.one_of(st.none(), _ID), index=st.integers(0, 50))
def test_any_id_is_valid_on_both_wires_and_deterministic(
    agent_id: str, upstream: str | None, index: int
) -> None:
    body = _claude(agent_id=agent_id)
    for vessel in ("anthropic", "openai", "openai-responses", "kimi"):
        t = translated("anthropic", body, vessel)
        assert refused(vessel, t.body) == [], (agent_id, vessel)
        assert translated("anthropic", body, vessel).body == t.body
        shown = t.call_id(index, upstream, "Write")
        assert rule_of("anthropic").fits(shown) and re.match(r"^[A-Za-z0-9_-]+$", shown)
        assert shown == t.call_id(index, upstream, "Write")


def _recorded(request: History, reply: Any, issuer: Issuer) -> History:
    """What the proxy records of a translated exchange: the request's messages and the answer as the agent
    saw it (its calls under the agent's ids, the upstream's own in their provider data)."""
    calls = tuple(
        ToolCall(c.name, c.input, None, c.call_id, provider_data=c.provider_data) for c in reply.calls
    )
    step = Step(tuple(reply.said), len(calls), issuer)
    answer = Message("a9", "assistant", "", calls, steps=(step,), status="in_progress")
    return History("c1", (*request.messages, answer))


def test_an_upstream_id_goes_back_to_its_upstream_though_the_agent_never_saw_it() -> None:
    from toolreplay.wires.reply import ParsedCall, Reply

    openai = get_vessel("openai")
    issuer = Issuer("openai-chat", host_of(openai.base_url), openai.model)
    gem = get_wire("gemini")
    first = {"contents": [{"role": "user", "parts": [{"text": "write notes"}]}]}
    h1 = read_inbound(gem, first)
    t1 = translate_request(gem, h1, None, openai, issuer=issuer)
    upstream = "call_" + "U" * 30
    answer = t1.agent_reply(Reply(calls=(ParsedCall("Write", {"path": "n"}, upstream),), model=openai.model))
    seen = answer.calls[0]
    assert seen.call_id == upstream  # it fits a Gemini agent as it is
    assert t1.agent_call(0, ParsedCall("Write", {}, None)).call_id.startswith("call_")
    stored = _recorded(h1, answer, issuer)
    # Gemini CLI sends the call back without an id: the store's own id goes to the upstream
    call = {"functionCall": {"name": "Write", "args": {"path": "n"}}}
    result = {"functionResponse": {"name": "Write", "response": {"ok": 1}}}
    turn = [{"role": "model", "parts": [call]}, {"role": "user", "parts": [result]}]
    second = {"contents": [*first["contents"], *turn]}
    t2 = translate_request(gem, read_inbound(gem, second), stored, openai, issuer=issuer)
    assert _assistant(t2.body)["tool_calls"][0]["id"] == upstream
    assert t2.body["messages"][-1]["tool_call_id"] == upstream


def test_an_upstream_id_the_agent_cannot_take_is_mapped_and_kept_for_its_upstream() -> None:
    from toolreplay.wires.reply import ParsedCall, Reply

    t1 = _to_kimi(_claude(), None)
    answer = t1.agent_reply(Reply(calls=(ParsedCall("Write", {"path": "m"}, "functions.Write:1"),)))
    seen = answer.calls[0]
    assert ID_SAFE.match(seen.call_id or "") and seen.call_id != "functions.Write:1"
    assert seen.provider_data == {"openai-chat": {"id": "functions.Write:1"}}
    assert t1.agent_reply(Reply(calls=(ParsedCall("Write", {"path": "m"}, "functions.Write:1"),))) == answer


def test_free_form_and_renamed_calls_go_back_under_the_agents_own_shape() -> None:
    from test_translate import CAPTURED, chat_body
    from toolreplay.wires.reply import ParsedCall, Reply

    body = next(c[2] for c in CAPTURED if c[0] == "codex_apply_patch_bodies-2")
    t = translated("openai-responses", body, "anthropic")
    patch = ParsedCall("apply_patch", {"input": "*** Begin Patch\n*** End Patch"}, "toolu_9")
    back = t.agent_reply(Reply(calls=(patch,))).calls[0]
    assert back.kind == "custom" and back.input == "*** Begin Patch\n*** End Patch"
    g = translated("openai-chat", chat_body(tool="fs.read"), "gemini")
    (sent,) = g.tool_names
    assert g.agent_call(0, ParsedCall(sent, {}, None)).name == "fs.read"


def test_a_gemini_agents_base64_token_resolves_to_the_stored_piece() -> None:
    # Gemini CLI holds a thoughtSignature as bytes: it sends our token back in its base64 form
    token = base64_token(seal(KIMI_ISSUER, _kimi_piece()))
    call = {"functionCall": {"name": "Write", "args": {"path": "notes.txt"}}, "thoughtSignature": token}
    result = {"functionResponse": {"name": "Write", "response": {"output": "ok"}}}
    turn = [{"role": "model", "parts": [call]}, {"role": "user", "parts": [result]}]
    body = {"contents": [{"role": "user", "parts": [{"text": "another start"}]}, *turn]}
    gem = get_wire("gemini")
    t = translate_request(gem, read_inbound(gem, body), _stored(), KIMI, issuer=KIMI_ISSUER)
    assert _assistant(t.body)["reasoning_content"] == THOUGHT
    assert not forwards_token(t.body)
    forged = base64_token("toolreplay.r1.nothing-stored-here")
    call["thoughtSignature"] = forged
    google = Issuer("gemini", "generativelanguage.googleapis.com", "gemini-2.5-flash")
    t = translate_request(gem, read_inbound(gem, body), _stored(), get_vessel("gemini"), issuer=google)
    assert not forwards_token(t.body) and forged not in jsonenc.dumps(t.body)
    assert any("names no stored piece" in n for n in t.notes)


def test_the_request_aligns_with_the_stored_conversation_as_the_proxys_matching_does() -> None:
    from toolreplay._proxy.translate_merge import aligned

    stored = _stored()
    same = [Message("m1", "user", "write  notes.txt\n"), Message("m2", "assistant", "other words")]
    assert aligned(same, stored) == list(stored.messages)  # words folded, a reply by its role alone
    other = [Message("m1", "user", "write something else"), Message("m2", "assistant", "")]
    assert aligned(other, stored) == []
    assert aligned(same, None) == []


def test_a_reply_with_no_token_of_ours_is_kept_as_it_is_not_copied() -> None:
    # most replies of a long request hold no token: the merge keeps each one as it came (no copies of
    # its steps and calls, which were a third of a 199-message request's translation), and resolves
    # only a reply that holds one
    from toolreplay._proxy.translate_merge import resolved_reply, stored_tokens
    from toolreplay.model import Text

    call = ToolCall("Write", {"path": "notes.txt"}, None, "toolu_a1", provider_data={"anthropic": {"x": 1}})
    plain = Message("a1", "assistant", "", (call,), steps=(Step((Text("Writing it."),), 1),))
    notes: list[str] = []
    tokens = stored_tokens(None, KIMI_ISSUER)
    assert resolved_reply(plain, tokens, notes) is plain and notes == []
    token = seal(KIMI_ISSUER, _kimi_piece())
    signed = replace(plain, steps=(Step((Reasoning("hm", {"anthropic": {"signature": token}}),), 1),))
    got = resolved_reply(signed, tokens, notes)
    assert got is not signed and not any(forwards_token(p.data) for p in got.steps[0].said)
    assert notes  # the token names no stored piece: dropped and named


def test_a_reply_merged_again_with_the_same_stored_reply_is_the_same_merged_reply() -> None:
    # the routed path's memory gives the stored reply again as the same object, the read memo the
    # agent's: the merge gives its merged reply again (the render cache then knows it by identity, not by
    # comparing it whole), and merges afresh with another stored reply
    from toolreplay._proxy.translate_merge import stored_reply, stored_tokens

    sent = Message("a1", "assistant", "", (ToolCall("Write", {"path": "notes.txt"}, None, "toolu_a1"),))
    stored = replace(
        sent,
        steps=(Step((_kimi_piece(),), 1, KIMI_ISSUER),),
        tool_uses=(replace(sent.tool_uses[0], provider_data={"openai-chat": {"index": 0}}),),
    )
    notes: list[str] = []
    tokens = stored_tokens(History("c1", (stored,)), KIMI_ISSUER)
    first = stored_reply(sent, stored, tokens, notes)
    assert first.steps == stored.steps and first.tool_uses[0].provider_data == {"openai-chat": {"index": 0}}
    assert stored_reply(sent, stored, tokens, notes) is first and notes == []
    other = replace(
        stored, steps=(Step((Reasoning("another thought", {"openai-chat": {}}),), 1, KIMI_ISSUER),)
    )
    again = stored_reply(sent, other, tokens, notes)
    assert again is not first and again.steps == other.steps


def test_a_stored_reply_that_is_the_agents_own_renamed_merges_to_the_agents_reply_itself() -> None:
    # a new conversation's remembered state holds the request's own messages under the store's ids (the
    # same calls and steps): the merge is the agent's reply, not a copy of each of its calls; a stored
    # reply with its own call data still merges into copies
    from toolreplay._proxy.translate_merge import stored_reply, stored_tokens

    calls = (
        ToolCall("Write", {"path": "a"}, "ok", "toolu_1"),
        ToolCall("Read", {"path": "b"}, "x", "toolu_2"),
    )
    sent = Message("m3", "assistant", "two calls", calls, steps=(Step((_kimi_piece(),), 2, KIMI_ISSUER),))
    renamed = replace(sent, id="a2")
    notes: list[str] = []
    merged = stored_reply(sent, renamed, stored_tokens(History("c1", (renamed,)), KIMI_ISSUER), notes)
    assert merged is sent and notes == []
    # the same merge as the whole walk gives (an equal stored reply that is not the agent's own objects)
    equal = replace(renamed, tool_uses=tuple(replace(c) for c in calls))
    walked = stored_reply(sent, equal, stored_tokens(History("c1", (equal,)), KIMI_ISSUER), notes)
    assert walked is not sent and walked == merged
    data = replace(
        renamed, tool_uses=(calls[0], replace(calls[1], provider_data={"openai-chat": {"index": 1}}))
    )
    copied = stored_reply(sent, data, stored_tokens(History("c1", (data,)), KIMI_ISSUER), notes)
    assert copied is not sent and copied.tool_uses[0] is calls[0]
    assert copied.tool_uses[1] == replace(calls[1], provider_data={"openai-chat": {"index": 1}})


def test_a_merge_taken_up_from_the_last_one_is_the_merge_made_afresh() -> None:
    # request after request of one conversation, each holding the one before's messages (the same
    # objects), over the same stored replies: the merge taken up from the last one gives what a merge made
    # afresh gives, its notes too: a reply the agent changed that sends back a token of ours naming no
    # stored piece is merged again (and named again) every time, not taken from the last merge
    from toolreplay._proxy import translate_merge as tm

    first = _stored()
    reply = first.messages[1]
    later = replace(reply, id="a4", tool_uses=(replace(reply.tool_uses[0], input={"path": "b.txt"}),))
    stored = History("c1", (*first.messages, Message("u3", "user", "and then"), later))
    agent_reply = replace(reply, steps=(), tool_uses=(replace(reply.tool_uses[0], provider_data=None),))
    bogus = Step((Reasoning("", {"anthropic": {"signature": "toolreplay.r1.namesnothing"}}),), 1)
    edited = replace(later, steps=(bogus,), tool_uses=(ToolCall("Read", {"path": "c.txt"}, "x", "toolu_c"),))
    opening = (stored.messages[0], agent_reply, stored.messages[2], edited)
    grown = [opening, (*opening, Message("u5", "user", "and 5")), (*opening, Message("u5", "user", "and 5"))]
    for messages in grown:
        notes: list[str] = []
        got = tm.merge(History("c1", messages), stored, KIMI_ISSUER, notes)
        tm._MERGES.clear()
        fresh: list[str] = []
        assert got == tm.merge(History("c1", messages), stored, KIMI_ISSUER, fresh)
        assert notes == fresh and any("names no stored piece" in n for n in notes)
    assert got.messages[1].steps == reply.steps  # the stored reply's own steps, from the last merge


def test_a_new_conversations_merge_is_taken_up_past_its_stored_replies(monkeypatch: Any) -> None:
    # a conversation the store does not hold (no stored replies, or fewer than the request's messages):
    # where the stored replies end for both merges, the last merge still takes the shared messages up; a
    # stored reply the last merge did not have bounds it there (merged afresh, with its steps)
    from toolreplay._proxy import translate_merge as tm

    first = _stored()
    merged: list[str] = []
    real = tm.resolved_reply

    def counted(m: Message, tokens: Any, notes: list[str]) -> Message:
        merged.append(m.id)
        return real(m, tokens, notes)

    monkeypatch.setattr(tm, "resolved_reply", counted)
    reply = first.messages[1]
    agent_reply = replace(reply, steps=(), tool_uses=(replace(reply.tool_uses[0], provider_data=None),))
    opening = (first.messages[0], agent_reply, Message("u3", "user", "and then"))
    later = replace(agent_reply, id="a4")
    requests = [opening, (*opening, later), (*opening, later, Message("u5", "user", "and 5"))]
    for stored in (None, History("c1", first.messages[:1])):
        tm._MERGES.clear()
        for messages in requests:
            merged.clear()
            got = tm.merge(History("c1", messages), stored, KIMI_ISSUER, [])
            taken = list(merged)
            tm._MERGES.clear()
            assert got == tm.merge(History("c1", messages), stored, KIMI_ISSUER, [])
        assert taken == []  # the last request's replies were all merged before: none merged again
    tm.merge(History("c1", opening), None, KIMI_ISSUER, [])
    got = tm.merge(History("c1", opening), History("c1", first.messages[:2]), KIMI_ISSUER, [])
    assert got.messages[1].steps == reply.steps  # the stored reply known now: merged with it, not taken up

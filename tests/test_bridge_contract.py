"""The bridge's neutral deltas: a whole reply read into deltas and collected back is the same reply, and
the reasoning token is a pure function of its issuer and piece."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolreplay.model import Issuer, Reasoning, Text, Usage
from toolreplay.wires.bridge import (
    CallBegin,
    CallDelta,
    CallEnd,
    Finish,
    collect,
    is_token,
    reply_deltas,
    seal,
)
from toolreplay.wires.reply import ParsedCall, Reply

_words = st.text(min_size=1, max_size=30)
_args = st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=3)


@given(
    reasoning=st.lists(_words, max_size=2),
    text=st.text(max_size=40),
    calls=st.lists(st.tuples(_words, _args, st.none() | _words), max_size=3),
)
def test_a_reply_read_into_deltas_collects_back_whole(
    reasoning: list[str], text: str, calls: list[tuple[str, dict[str, object], str | None]]
) -> None:
    said: list[Reasoning | Text] = [Reasoning(r, {"anthropic": {"signature": "s" + r}}) for r in reasoning]
    if text:
        said.append(Text(text))
    parsed = tuple(ParsedCall(n, a, cid, {"gemini": {"thoughtSignature": "x"}}) for n, a, cid in calls)
    reply = Reply(text, parsed, None, Usage(10, 5, 2), None, "m-1", tuple(said))
    deltas = reply_deltas(reply)
    back = collect(deltas)
    assert back.said == reply.said
    assert back.text == reply.text
    assert back.calls == reply.calls
    assert back.usage == reply.usage and back.model == "m-1"
    assert back.finish_reason == ("tool_calls" if calls else "stop")
    assert isinstance(deltas[-1], Finish)


def test_arguments_that_are_not_an_object_stay_text_with_the_reason() -> None:
    reply = collect([CallBegin(0, "f", "c1"), CallDelta(0, '{"a": '), CallEnd(0), Finish("tool_calls")])
    assert reply.calls[0].input == '{"a": '
    assert reply.calls[0].input_error is not None and "not JSON" in reply.calls[0].input_error


def test_the_token_is_ours_stable_and_names_its_issuer_and_piece() -> None:
    kimi = Issuer("openai-chat", "api.moonshot.ai", "kimi-k2-thinking")
    piece = Reasoning("I should list the files.", {"openai-chat": {"reasoning_content": "I should..."}})
    token = seal(kimi, piece)
    assert is_token(token) and token == seal(kimi, piece)
    assert token != seal(Issuer("anthropic", "api.anthropic.com", "claude"), piece)
    assert token != seal(kimi, Reasoning("other", piece.data))
    assert not is_token("EqoBCkgIARABGAIiQ...") and not is_token(None)


def test_each_wire_reads_its_own_output_limit_as_length() -> None:
    from toolreplay.wires import get_wire
    from toolreplay.wires.bridge import neutral_reply

    raw = {"anthropic": "max_tokens", "gemini": "MAX_TOKENS", "openai-chat": "length", "ollama": "length"}
    for name, word in raw.items():
        load = get_wire(name).bridge
        assert load is not None, name
        reply = neutral_reply(Reply("cut", (), word), load())
        assert reply.finish_reason == "length", name
        made = neutral_reply(Reply("", (ParsedCall("f", {}),), None), load())
        assert made.finish_reason == "tool_calls", name

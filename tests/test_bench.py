"""The bench's histories and comparison logic (small sizes, no timing assertions): the suite must not
silently compare different work."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from conftest import NO_SHARED, ROOT, SHARED

if str(ROOT) not in sys.path:  # the bench package lives beside src/, not inside it
    sys.path.insert(0, str(ROOT))

from bench import histories, timing
from bench.cases import Row
from bench.peers import BenchMismatch, CallSummary, Peer, check_like, peer_input, summary

import toolreplay
from toolreplay._vessels import BUILTIN
from toolreplay.wires import get_wire, wire_names

#: the wires whose body holds a list of messages (claude-prompt holds a prompt string)
LISTED = sorted(n for n in wire_names() if get_wire(n).assemble is None)

# --------------------------------------------------------------------------------------------------
# the synthetic generator


def test_generator_is_seeded_and_deterministic() -> None:
    a = histories.synthetic_history(20)
    b = histories.synthetic_history(20)
    assert toolreplay.encode(toolreplay.history_to_dict(a)) == toolreplay.encode(
        toolreplay.history_to_dict(b)
    )
    other = histories.synthetic_history(20, seed=1)
    assert other.messages != a.messages


@pytest.mark.parametrize("calls", [1, 3, 5])
def test_generator_gives_the_promised_shape(calls: int) -> None:
    h = histories.synthetic_history(30, calls=calls)
    assert len(h.messages) == 60
    for i, m in enumerate(h.messages):
        if i % 2 == 0:
            assert m.role == "user" and m.text and not m.tool_uses
            continue
        assert m.role == "assistant" and m.text and len(m.tool_uses) == calls
        for c in m.tool_uses:
            assert isinstance(c.input, dict)
            text = json.dumps(c.input, ensure_ascii=False, separators=(",", ":"))
            assert histories.INPUT_CHARS[0] <= len(text) <= histories.INPUT_CHARS[1]
            assert c.answer is not None
            assert histories.ANSWER_CHARS[0] <= len(c.answer) <= histories.ANSWER_CHARS[1]
    assert {t.name for t in h.tools or ()} >= {c.name for m in h.messages for c in m.tool_uses}


def test_one_more_turn_is_exactly_an_appended_turn() -> None:
    h = histories.synthetic_history(7)
    grown = histories.appended(h, histories.next_turn(h))
    assert grown.messages == histories.synthetic_history(8).messages
    assert grown.messages[:14] == h.messages


def test_transcripts_load_through_the_importer() -> None:
    if SHARED is None:
        pytest.skip(NO_SHARED)
    converted = histories.load_transcripts()
    assert len(converted) == 40
    # the counts SOURCES.md states for dev.jsonl: 325 calls made by the agents
    assert sum(len(m.tool_uses) for t in converted for m in t.history.messages) == 325
    for t in converted:
        assert all(c.answer is not None for m in t.history.messages for c in m.tool_uses)


# --------------------------------------------------------------------------------------------------
# like with like


@pytest.mark.parametrize("wire", LISTED)
def test_summary_reads_the_calls_of_every_wire(wire: str) -> None:
    h = histories.synthetic_history(4, calls=2)
    vessel = wire if wire in BUILTIN else next(n for n, v in BUILTIN.items() if v.wire == wire)
    body = toolreplay.render(h, vessel)
    got = summary(body[get_wire(wire).list_key])
    want = tuple(c.name for m in h.messages for c in m.tool_uses)
    assert got == CallSummary(want, len(want))


def test_summary_reads_litellm_shapes() -> None:
    gemini_snake = [
        {"role": "model", "parts": [{"function_call": {"name": "a", "args": {"type": "tool_use"}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "a", "response": {"x": 1}}}]},
    ]
    assert summary(gemini_snake) == CallSummary(("a",), 1)
    output = [{"type": "input_text", "text": "ok"}]
    responses = ([{"type": "function_call", "call_id": "c", "name": "b", "arguments": "{}"},
                  {"type": "function_call_output", "call_id": "c", "output": output}], None)  # fmt: skip
    assert summary(responses) == CallSummary(("b",), 1)
    chat = {"model": "m", "messages": [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "function": {"name": "c"}}]},
        {"role": "tool", "tool_call_id": "1", "content": "r"}]}  # fmt: skip
    assert summary(chat) == CallSummary(("c",), 1)


def test_like_with_like_catches_a_mismatch() -> None:
    ours = CallSummary(("a", "b"), 2)
    check_like("anthropic", "h", ours, CallSummary(("a", "b"), 2))
    with pytest.raises(BenchMismatch, match=r"2 calls .* vs 1"):
        check_like("anthropic", "h", ours, CallSummary(("a",), 1))
    with pytest.raises(BenchMismatch, match="call 1 is 'b'"):
        check_like("anthropic", "h", ours, CallSummary(("a", "x"), 2))
    with pytest.raises(BenchMismatch, match=r"2 answers .* vs 1"):
        check_like("anthropic", "h", ours, CallSummary(("a", "b"), 1))


def test_like_with_like_catches_a_peer_that_drops_a_call() -> None:
    """The whole check, with a stand-in peer that loses the last call."""
    from bench.cases import like_with_like

    def lossy(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = [dict(m) for m in messages]
        last = max(i for i, m in enumerate(out) if m.get("tool_calls"))
        out[last]["tool_calls"] = out[last]["tool_calls"][:-1]
        return out

    faithful = Peer("openai-chat", "test.same", lambda m: m, keeps_system=True)
    dropping = Peer("openai-chat", "test.lossy", lossy, keeps_system=True)
    named = [("synthetic", histories.synthetic_history(3))]
    rows = like_with_like([faithful, dropping], named)
    assert [r.ok for r in rows] == [True, False]
    assert "9 calls (toolreplay) vs 8 (LiteLLM)" in rows[1].value


def test_peer_input_drops_leading_system_messages_only_where_asked() -> None:
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert peer_input(msgs, Peer("x", "f", lambda m: m, keeps_system=True)) == msgs
    assert peer_input(msgs, Peer("x", "f", lambda m: m, keeps_system=False)) == msgs[1:]


# --------------------------------------------------------------------------------------------------
# median, ratio, alternation


def test_median_and_ratio() -> None:
    assert timing.median([3.0, 1.0, 2.0]) == 2.0
    assert timing.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    with pytest.raises(ValueError):
        timing.median([])
    assert timing.ratio(10.0, 2.0) == 5.0
    assert timing.ratio(1.0, 0.0) == float("inf")


def test_order_rotates_so_every_contender_takes_every_place() -> None:
    names = ["a", "b", "c"]
    rounds = [timing.order(names, r) for r in range(3)]
    assert rounds == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    for place in range(3):
        assert {r[place] for r in rounds} == set(names)


def test_steps_up_to() -> None:
    assert [timing.steps_up_to(x) for x in (0.3, 1, 1.5, 3, 7, 11, 400)] == [1, 1, 2, 5, 10, 20, 500]


@pytest.mark.slow
def test_alternate_interleaves_and_keeps_each_contender_apart() -> None:
    log: list[str] = []
    made: list[int] = []

    def setup() -> int:
        made.append(len(made))
        return made[-1]

    contenders = [
        timing.Contender("a", lambda _: log.append("a")),
        timing.Contender("b", lambda arg: log.append(f"b{arg}"), setup=setup),
    ]
    s = timing.alternate(contenders, repeats=4, min_seconds=0.0, warmup=1)
    assert set(s.by_name) == {"a", "b"} and all(len(v) == 4 for v in s.by_name.values())
    # after warm-up and calibration, rounds alternate: a b, b a, a b, b a (one call each)
    timed = [x[0] for x in log[-8:]]
    assert timed == ["a", "b", "b", "a", "a", "b", "b", "a"]
    # every call of b got its own fresh argument from setup
    b_args = [int(x[1:]) for x in log if x.startswith("b")]
    assert b_args == sorted(set(b_args))
    assert s.ratio("a", "b") == s.median("a") / s.median("b")


def test_alternate_refuses_two_contenders_with_one_name() -> None:
    c = timing.Contender("a", lambda _: None)
    with pytest.raises(ValueError):
        timing.alternate([c, c], repeats=1)


def test_results_markdown_keeps_the_notes(tmp_path: Any) -> None:
    from bench.__main__ import NOTES_MARK, markdown, write_results

    info = {
        "cpus": "2",
        "cpu": "X",
        "python": "CPython 3.11",
        "platform": "p",
        "toolreplay": "0",
        "litellm": "1",
    }
    rows = [Row("render", "a | b", "≥ 5x", "6x", True), Row("memory", "m", "", "1 MB", None)]
    text = markdown(rows, info, "python -m bench", [])
    assert "| render | a \\| b | ≥ 5x | 6x | pass |" in text
    assert "| memory | m | — | 1 MB | — |" in text
    path = tmp_path / "RESULTS.md"
    write_results(path, text)
    path.write_text(path.read_text() + "\nmy notes\n")
    write_results(path, text.replace("6x", "7x"))
    again = path.read_text()
    assert "7x" in again and "my notes" in again and again.count(NOTES_MARK) == 1


def test_cold_section_history_is_chat_and_loads_afresh(tmp_path: Any) -> None:
    """The cold section's own Chat history: the importer reads each turn as a user message and one reply
    with its calls answered; every load gives new objects that render the same bytes."""
    from bench.render_cold import chat_input, chat_messages, imported

    msgs = chat_messages(turns=4, calls=3, seed=7)
    assert [m["role"] for m in msgs[:6]] == ["user", "assistant", "tool", "tool", "tool", "assistant"]
    assert all(isinstance(c["function"]["arguments"], str) for c in msgs[1]["tool_calls"])
    assert msgs == chat_messages(turns=4, calls=3, seed=7) != chat_messages(turns=4, calls=3, seed=8)
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(msgs), encoding="utf-8")
    assert chat_input(path, 99)[0] == msgs
    db = imported(msgs)
    a, b = db.fresh(), db.fresh()
    assert a is not b and a.messages[1] is not b.messages[1]
    assert [len(m.tool_uses) for m in a.messages] == [0, 3] * 4
    assert all(c.answer for m in a.messages for c in m.tool_uses)
    for vessel in ("codex", "gemini", "anthropic", "openai", "ollama"):
        want = toolreplay.encode(toolreplay.render(a, vessel))
        assert toolreplay.encode(toolreplay.render(b, vessel)) == want


def test_bytecodes_counts_work_and_repeats_exactly() -> None:
    from bench.render_cold import bytecodes

    def work(n: int) -> int:
        return sum(i * i for i in range(n))

    before = sys.gettrace()
    small, big = bytecodes(lambda: work(10)), bytecodes(lambda: work(100))
    assert 0 < small < big
    assert bytecodes(lambda: work(100)) == big
    assert sys.gettrace() is before

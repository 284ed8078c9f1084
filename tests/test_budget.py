"""The context budget: whole turns only, the body fits by the estimate, and the window moves in steps.

Generated conversations (turns of a user message and a reply with calls and answers, of random sizes)
under random budgets, on every vessel: the body parsed back holds every call with its answer and starts
with a user message; the encoded body fits the budget by the byte estimate (unless the current turn alone
does not, which is said); and while the conversation grows, the message list of every turn between two
steps of the window starts with the previous turn's whole list, element by element.
"""

from __future__ import annotations

import itertools
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from toolreplay._api import render
from toolreplay._budget import ContextBudget, PlanRow, first_mark, plan, rows_of
from toolreplay._errors import ConfigError
from toolreplay._history import History, Message, ToolCall, ToolSpec
from toolreplay._jsonenc import encode
from toolreplay._tokens import byte_count, bytes_to_tokens, replay_size
from toolreplay._vessels import BUILTIN, load_vessels
from toolreplay.wires import get_wire, parse_request

#: Every built-in vessel: every wire, the Claude Code prompt included.
EVERY_WIRE = list(BUILTIN.values())
#: The vessels whose body holds the history as a list (the prefix a provider's cache reuses).
VESSELS = [v for v in EVERY_WIRE if get_wire(v.wire).assemble is None]
TOOLS = (ToolSpec("coop", "the todo board"), ToolSpec("search", "find things"))

_words = st.text(string.ascii_letters + ' .,\n"é中', min_size=1, max_size=300).filter(str.strip)
_call = st.builds(
    lambda name, q, answer: ToolCall(name, {"q": q}, answer),
    st.sampled_from(["coop", "search"]),
    st.text(string.ascii_letters + " ", max_size=200),
    st.text(string.ascii_letters + " \n", min_size=1, max_size=700),
)
_turn = st.tuples(_words, _words, st.lists(_call, max_size=4))


def conversation(turns: list[tuple[str, str, list[ToolCall]]], system: bool = True) -> History:
    messages: list[Message] = [Message("s0", "system", "Be brief.")] if system else []
    for i, (question, answer, calls) in enumerate(turns):
        messages.append(Message(f"u{i}", "user", f"{i}: {question}"))  # numbered: the kept head is known
        messages.append(Message(f"a{i}", "assistant", f"{i}: {answer}", tuple(calls)))
    return History("c", tuple(messages), TOOLS)


def budgeted(h: History, vessel: str, budget: int) -> tuple[dict[str, Any], list[str]]:
    warnings: list[str] = []
    body = render(h, vessel, context=ContextBudget(max_tokens=budget), warnings=warnings)
    return body, warnings


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(EVERY_WIRE), st.lists(_turn, min_size=1, max_size=12), st.integers(300, 6000))
def test_whole_turns_only_and_the_body_fits(vessel: Any, turns: Any, budget: int) -> None:
    h = conversation(turns)
    body, warnings = budgeted(h, vessel.name, budget)
    back = parse_request(vessel.wire, body)
    sent = [m for m in back.messages if m.role != "system"]
    assert sent and sent[0].role == "user"
    for m in sent:
        assert all(c.answer is not None for c in m.tool_uses), m
    # the calls of each kept reply are all there (whole messages, never a part)
    stored = {m.text: m for m in h.messages if m.role == "assistant"}
    for m in sent:
        if m.role == "assistant" and m.text in stored:
            assert len(m.tool_uses) == len(stored[m.text].tool_uses)
    alone = any("current turn alone" in w for w in warnings)
    if not alone:
        assert bytes_to_tokens(len(encode(body))) <= budget
    dropped = any("left out the oldest" in w for w in warnings)
    assert dropped == (len(sent) < len(h.messages) - 1)


@settings(max_examples=examples(25), deadline=None)
@given(
    st.sampled_from(VESSELS),
    st.lists(_turn, min_size=8, max_size=30),
    st.integers(1500, 6000),
    st.sampled_from([0.25, 0.5, 1.0]),
)
def test_turns_between_two_steps_share_their_prefix(
    vessel: Any, turns: Any, budget: int, step: float
) -> None:
    elements = get_wire(vessel.wire).body_elements  # Anthropic's without its moving cache markers
    before: list[Any] | None = None
    first: str | None = None
    for n in range(1, len(turns) + 1):
        h = conversation(turns[:n])
        body = render(h, vessel.name, context=ContextBudget(max_tokens=budget, jump=step))
        items = elements(body)
        kept_first = parse_request(vessel.wire, body).messages
        head = next((m.text for m in kept_first if m.role == "user"), None)
        if before is not None and head == first:
            assert items[: len(before)] == before  # element-wise: the earlier list is a prefix
        before, first = items, head


def _rows(n: int) -> tuple[list[PlanRow], int]:
    """A system message of 100 bytes, then ``n`` messages of 3,000 (user, assistant, ...)."""
    rows = [PlanRow(0, "system", 0, 100)]
    rows += [PlanRow(i + 1, "user" if i % 2 == 0 else "assistant", 3000 * i, 3000) for i in range(n)]
    return rows, 3000 * n


def test_the_start_moves_in_steps_of_the_budget() -> None:
    starts = []
    for n in range(1, 41, 2):
        rows, total = _rows(n)
        mark = first_mark(total, 10_000, 0.5, 0)
        starts.append(plan(rows, 1, n, mark, 10_000, 0.5, 0).starts[0])
    moves = [b for a, b in itertools.pairwise(starts) if a != b]
    # a step of half the budget (15,000 bytes) is five messages: the start jumps to whole turns
    assert all(s % 2 == 1 for s in starts)  # after the system message, always a user message
    assert len(moves) < len(starts) / 2
    assert starts == sorted(starts)


def test_the_current_turn_and_the_system_prompt_are_always_kept() -> None:
    h = conversation([("hello " * 400, "fine", []), ("again " * 2000, "ok", [])])
    body, warnings = budgeted(h, "anthropic", 500)
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert any("current turn alone" in w for w in warnings)


def test_no_budget_sends_everything_and_a_large_one_changes_nothing() -> None:
    h = conversation([("q", "a", [ToolCall("coop", {"q": "x"}, "done")])] * 3)
    h = History(h.id, tuple(Message(f"m{i}", m.role, m.text, m.tool_uses) for i, m in enumerate(h.messages)))
    for v in VESSELS:
        assert encode(render(h, v.name)) == encode(render(h, v.name, context=ContextBudget(10**6)))


def test_the_summary_hook_stands_for_what_was_left_out() -> None:
    seen: list[list[str]] = []

    def summary(dropped: Any) -> str:
        seen.append([m.id for m in dropped])
        return f"{len(dropped)} earlier messages about todos."

    h = conversation([("word " * 300, "done " * 100, [])] * 1 + [("next " * 300, "ok", [])] * 6)
    h = History(h.id, tuple(Message(f"m{i}", m.role, m.text) for i, m in enumerate(h.messages)), TOOLS)
    body = render(h, "anthropic", context=ContextBudget(max_tokens=2000, summary=summary))
    assert seen and seen[-1][0] == "m1"
    assert body["system"][0]["text"].endswith("earlier messages about todos.")


def test_the_vessel_window_is_the_default_and_a_file_may_set_it(tmp_path: Any) -> None:
    assert BUILTIN["anthropic"].context_tokens == 200_000
    assert ContextBudget().tokens(200_000) == 200_000 - 16_384
    assert ContextBudget().tokens(200_000, max_output=1000) == 199_000
    assert ContextBudget().tokens(None) is None
    assert ContextBudget(max_tokens=5).tokens(None) == 5
    f = tmp_path / "v.toml"
    f.write_text(
        "[vessels.small]\nwire = 'ollama'\nbase_url = 'http://x'\nmodel = 'm'\ncontext_tokens = 4096\n"
    )
    assert load_vessels(f)["small"].context_tokens == 4096
    f.write_text("[vessels.ollama]\ncontext_tokens = 0\n")
    with pytest.raises(ConfigError, match="context_tokens must be a positive integer"):
        load_vessels(f)
    with pytest.raises(ConfigError, match="at least 1"):
        ContextBudget(max_tokens=0)


def test_the_estimate_counts_json_text_bytes() -> None:
    assert byte_count("abc") == 1 and byte_count("abcd") == 2
    assert byte_count("中") == 1 and byte_count("中中") == 2  # three bytes each
    m = Message("a1", "assistant", "ok", (ToolCall("coop", {"q": "x" * 2000}, "y" * 2000),))
    # the planning size counts an input and an answer only up to the replay bounds
    assert replay_size(m) < 64 + 256 + 2 * 560 + 40
    assert rows_of([m]) == ([PlanRow(0, "assistant", 0, replay_size(m))], replay_size(m))


def test_a_turn_sends_only_what_fits_and_says_so(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolreplay._loop import ContextTrimmed, TurnOptions, run_turn
    from toolreplay._store.sqlite import SQLiteStore
    from toolreplay.wires.reply import Reply

    class Scripted:
        def __init__(self) -> None:
            self.bodies: list[dict[str, Any]] = []

        async def send(self, vessel: Any, body: dict[str, Any], **kw: Any) -> Reply:
            self.bodies.append(body)
            return Reply(text="fine")

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-sent")
    store = SQLiteStore(tmp_path / "t.db")
    store.import_history(conversation([("tell me " * 200, "told " * 200, [])] * 20, system=False))
    events: list[Any] = []
    transport = Scripted()
    options = TurnOptions(context=ContextBudget(max_tokens=3000))
    result = run_turn("c", "and now?", "anthropic", store=store, options=options, on_event=events.append,
                      transport=transport)  # type: ignore[arg-type]  # fmt: skip
    body = transport.bodies[0]
    assert bytes_to_tokens(len(encode(body))) <= 3000
    assert body["messages"][0]["role"] == "user" and body["messages"][-1]["content"][0]["text"] == "and now?"
    trimmed = [e for e in events if isinstance(e, ContextTrimmed)]
    assert len(trimmed) == 1 and trimmed[0].dropped > 0 and trimmed[0].budget == 3000
    assert result.reply.meta is not None and result.reply.meta["context"]["dropped"] == trimmed[0].dropped
    store.close()

"""A turn pairs each answer with its call through indexes (by id, and the first call still open), so a
turn of many calls pairs in time proportional to them. This checks the indexed pairing against the
plain reading of the rule, on made-up turns: calls with and without ids, ids repeated, answers by id, by
position, for unknown ids and second answers, in any order."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from toolreplay.wires.turns import AgentSaid, Answers, Call, Result, TurnDraft


@dataclass
class _Open:
    call_id: str | None
    answer: str | None = None


def _reference(events: list[tuple[str, list[str | None]]]) -> tuple[list[str | None], list[str]]:
    """The rule read plainly: an answer with an id (when any call has one) goes to the last open call of
    that id; otherwise to the first open call; else a warning."""
    opened: list[_Open] = []
    warnings: list[str] = []
    for kind, ids in events:
        if kind == "said":
            opened += [_Open(i) for i in ids]
            continue
        any_ids = any(o.call_id is not None for o in opened)
        for k, rid in enumerate(ids):
            where = f"answers[{k}]"
            target = None
            if rid is not None and any_ids:
                same = [o for o in opened if o.call_id == rid]
                target = next((o for o in reversed(same) if o.answer is None), None)
                if target is None:
                    problem = "a second answer for call" if same else "an answer for unknown call id"
                    warnings.append(f"{where}: {problem} {rid!r}; not replayed")
                    continue
            else:
                target = next((o for o in opened if o.answer is None), None)
                if target is None:
                    warnings.append(f"{where}: an answer with no unanswered call before it; not replayed")
                    continue
            target.answer = f"answer {where} {rid}"
    return [o.answer for o in opened], warnings


_IDS = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"]))
_EVENTS = st.lists(
    st.tuples(st.sampled_from(["said", "answers"]), st.lists(_IDS, min_size=1, max_size=4)), max_size=12
)


@settings(max_examples=examples(300), deadline=None)
@given(_EVENTS)
def test_the_indexed_pairing_is_the_plain_rule(events: list[tuple[str, list[str | None]]]) -> None:
    warnings: list[str] = []
    turn = TurnDraft(warnings)
    calls: list[Call] = []
    for kind, ids in events:
        if kind == "said":
            made = [Call("tool", {}, call_id=i) for i in ids]
            calls += made
            turn.said(AgentSaid(list(made)))
        else:
            results = [
                Result(f"answer answers[{k}] {i}", call_id=i, where=f"answers[{k}]")
                for k, i in enumerate(ids)
            ]
            turn.answers(Answers(results))
    answers, expected = _reference(events)
    assert [oc.answer for oc in turn.open] == answers
    assert warnings == expected


def test_a_turn_of_many_calls_answered_by_position_pairs_each_once() -> None:
    warnings: list[str] = []
    turn = TurnDraft(warnings)
    for k in range(2000):
        turn.said(AgentSaid([Call("tool", {"k": k})]))
        turn.answers(Answers([Result(f"done {k}")]))
    assert [oc.answer for oc in turn.open] == [f"done {k}" for k in range(2000)] and not warnings


def test_a_step_issued_by_another_is_the_step_replaced() -> None:
    """``Step.issued_by`` builds the step by hand: every field but the issuer is kept (a field added to
    Step and not to it fails here)."""
    from dataclasses import fields, replace

    from toolreplay.model import Issuer, Reasoning, Step, Text

    step = Step((Text("look"), Reasoning("why", data={"signature": "s"})), 2, Issuer("anthropic", "h", "m"))
    other = Issuer("openai-chat", "x", "y")
    assert step.issued_by(other) == replace(step, issuer=other)
    assert {f.name for f in fields(Step)} == {"said", "calls", "issuer", "kind"}


def test_assembling_a_turn_changes_none_of_its_events() -> None:
    """What a turn adds to a call (its answer, its message's data, its answer's layout) is kept beside the
    call: the events stay as read, so the read memo can give them to the next request's assembly."""
    import copy

    calls = [Call("Read", {"p": 1}, "a", provider_data={"anthropic": {"x": 1}}), Call("Read", {"p": 2}, "b")]
    said = AgentSaid(list(calls), provider_data={"anthropic": {"other_blocks": [{"type": "x"}]}})
    answers = Answers([Result("one", call_id="a", sent={"anthropic": {"k": 1}}), Result("two", call_id="b")])
    before = copy.deepcopy((said, answers))
    turn = TurnDraft([])
    turn.said(said)
    turn.answers(answers)
    (draft,) = turn.finish(at_end=True)
    assert (said, answers) == before
    assert draft.calls[0].provider_data == {"anthropic": {"x": 1, "other_blocks": [{"type": "x"}]}}
    assert draft.calls[0].sent == {"anthropic": {"k": 1}} and [c.answer for c in draft.calls] == [
        "one",
        "two",
    ]


def _events_of(events: list[tuple[str, list[str | None]]]) -> list[AgentSaid | Answers]:
    out: list[AgentSaid | Answers] = []
    for n, (kind, ids) in enumerate(events):
        if kind == "said":
            words: list[str | Call] = [] if n % 3 else [f"said {n}"]  # some messages also close a reply
            out.append(AgentSaid([*words, *(Call("tool", {"n": n}, call_id=i) for i in ids)]))
        else:
            results = [Result(f"{n}:{k}", call_id=i, where=f"m{n}[{k}]") for k, i in enumerate(ids)]
            out.append(Answers(results))
    return out


def _read(turn: TurnDraft, at_end: bool) -> tuple[object, ...]:
    return (tuple(turn.finish(at_end)), tuple(turn.warnings))


@settings(max_examples=examples(300), deadline=None)
@given(_EVENTS, st.integers(0, 12), st.booleans(), st.data())
def test_a_turn_read_on_or_taken_back_reads_as_one_read_whole(
    events: list[tuple[str, list[str | None]]], cut: int, at_end: bool, data: st.DataObject
) -> None:
    """The read memo reads request N+1's last turn on from request N's reading (design 53): fed in two
    parts, its drafts are asked for between (nothing changes), and its last event taken back and fed
    changed (the next request's copy of a message whose cache marker moved): the same drafts and
    warnings as reading it whole, and the calls answered before stay the same objects."""
    evs = _events_of(events)
    cut = min(cut, len(evs))
    whole = TurnDraft([])
    whole.feed(evs)
    on = TurnDraft([])
    on.feed(evs[:cut])
    before = _read(on, at_end)
    took = bool(cut) and isinstance(evs[cut - 1], Answers) and data.draw(st.booleans())
    if took:
        assert on.take_back()
        assert not on.take_back()  # only the last event is kept to be taken back
        last = evs[cut - 1]
        assert isinstance(last, Answers)
        changed = Answers([Result(r.answer, call_id=r.call_id, where=r.where, sent={"x": {}})
                           for r in last.results])  # fmt: skip
        on.feed([changed, *evs[cut:]])
        evs = [*evs[: cut - 1], changed, *evs[cut:]]
        whole = TurnDraft([])
        whole.feed(evs)
    else:
        on.feed(evs[cut:])
    after = _read(on, at_end)
    assert after == _read(whole, at_end)
    if not took:  # a call answered before is the same object after (a later render may key on it)
        answered = [c for d in before[0] for c in d.calls if c.answer is not None]
        now = {id(c) for d in after[0] for c in d.calls}
        assert all(id(c) in now for c in answered)


def test_a_said_event_cannot_be_taken_back() -> None:
    turn = TurnDraft([])
    turn.feed([AgentSaid([Call("tool", {})])])
    assert not turn.take_back()
    turn.feed([Answers([Result("done")])])
    assert turn.take_back() and [oc.answer for oc in turn.open] == [None]

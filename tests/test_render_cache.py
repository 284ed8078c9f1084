"""The incremental render cache: always the bytes of the wire's own render of the whole history, whatever
changed earlier; and ``render()`` is that cache with nothing cached (one render path, design 29)."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import NO_SHARED, ROOT
from toolreplay import RenderArgs, encode, render
from toolreplay._api import render_options
from toolreplay._errors import ToolreplayError
from toolreplay._history import History, Message, ToolCall, ToolSpec, message_to_dict
from toolreplay._render_cache import RenderCache
from toolreplay._replay import DEFAULT_SETTINGS, MODES, Mode, ReplaySettings, prepare_turn_messages
from toolreplay._vessels import BUILTIN
from toolreplay.wires import get_wire, register_wire, render_wire, unregister_wire
from toolreplay.wires.common import declared_tools
from toolreplay.wires.render_warnings import render_warnings

if str(ROOT) not in sys.path:  # the bench package lives beside src/, not inside it
    sys.path.insert(0, str(ROOT))
from bench.histories import load_transcripts

VESSELS = sorted(BUILTIN)

names = st.sampled_from(["coop", "read_file", "mcp__coop__coop", "my.tool", "search"])
values = st.one_of(st.integers(-5, 500), st.text(max_size=12), st.booleans(), st.none())
inputs = st.one_of(
    st.dictionaries(st.sampled_from(["id", "action", "path", "q"]), values, max_size=3),
    st.sampled_from(['{"id": 3}', "plain text input", '{"cut": "sho', "", "[1, 2]"]),
    st.none(),
    st.just({"long": "x" * 600}),
)
answers = st.one_of(st.none(), st.text(max_size=30), st.just("y" * 700))
signatures = st.sampled_from([None, {"gemini": {"thoughtSignature": "c2lnbmF0dXJl"}}])
calls = st.builds(
    ToolCall,
    name=names,
    input=inputs,
    answer=answers,
    is_error=st.booleans(),
    provider_data=signatures,
)
texts = st.one_of(st.sampled_from(["", " ", "Closed #12.", "done", "héllo 東京"]), st.text(max_size=20))
statuses = st.sampled_from(["complete", "complete", "complete", "in_progress", "interrupted"])


@st.composite
def message_specs(draw: Any) -> tuple[str, str, tuple[ToolCall, ...], str]:
    """(role, text, calls, status) of one stored message (ids are given when the history is built)."""
    if draw(st.booleans()):
        return ("user", draw(texts), (), "complete")
    return ("assistant", draw(texts), tuple(draw(st.lists(calls, max_size=3))), draw(statuses))


def build(
    specs: list[tuple[str, str, tuple[ToolCall, ...], str]], system: str | None, long_ids: bool
) -> History:
    messages = []
    if system is not None:
        messages.append(Message("sys", "system", system))
    for i, (role, text, uses, status) in enumerate(specs):
        mid = f"conversation-message-{i:04d}" if long_ids else f"m{i}"
        messages.append(Message(mid, role, text, uses, status=status))  # type: ignore[arg-type]
    return History("c1", tuple(messages))


ops = st.one_of(
    st.tuples(st.just("append"), st.lists(message_specs(), min_size=1, max_size=3)),
    st.tuples(st.just("edit_text"), st.integers(0, 50), texts),
    st.tuples(st.just("add_call"), st.integers(0, 50), calls),
    st.tuples(st.just("remove_call"), st.integers(0, 50)),
    st.tuples(st.just("answer"), st.integers(0, 50), st.text(max_size=20)),
    st.tuples(st.just("reorder"), st.integers(0, 50)),
    st.tuples(st.just("system"), st.one_of(st.none(), texts)),
    st.tuples(st.just("truncate"), st.integers(0, 50)),
    st.tuples(st.just("reload")),
    st.tuples(
        st.just("options"),
        st.sampled_from(VESSELS),
        st.sampled_from(MODES),
        st.sampled_from([None, "Be brief."]),
        st.sampled_from([None, "other-model"]),
        st.booleans(),
        st.sampled_from([ReplaySettings(), ReplaySettings(max_calls=2, max_chars=60)]),
    ),
)


def apply(specs: list[Any], system: str | None, op: tuple[Any, ...]) -> tuple[list[Any], str | None]:
    specs = list(specs)
    kind = op[0]
    if kind == "append":
        specs.extend(op[1])
    elif kind == "system":
        system = op[1]
    elif kind == "truncate":
        specs = specs[: op[1] % (len(specs) + 1)]
    elif specs and kind in ("edit_text", "add_call", "remove_call", "answer", "reorder"):
        i = op[1] % len(specs)
        role, text, uses, status = specs[i]
        if kind == "edit_text":
            text = op[2]
        elif role == "assistant" and kind == "add_call":
            uses = (*uses, op[2])
        elif uses and kind == "remove_call":
            uses = uses[1:]
        elif uses and kind == "answer":
            uses = (dataclasses.replace(uses[-1], answer=op[2]), *uses[:-1])
        elif uses and kind == "reorder" and isinstance(uses[-1].input, dict):
            flipped = dict(reversed(list(uses[-1].input.items())))  # equal, other bytes
            uses = (*uses[:-1], dataclasses.replace(uses[-1], input=flipped, input_text=""))
        specs[i] = (role, text, uses, status)
    return specs, system


def alike(a: Message | None, b: Message) -> bool:
    """The same stored message, byte for byte (key order and number types included)."""
    return a is not None and encode(message_to_dict(a)) == encode(message_to_dict(b))


def reloaded(h: History) -> History:
    """Equal messages that are not the same objects (a history loaded again from the store)."""
    return History(h.id, tuple(dataclasses.replace(m) for m in h.messages), h.tools)


def whole(
    h: History,
    vessel: str = "gemini",
    mode: Mode = "native",
    system: str | None = None,
    tools: list[ToolSpec] | None = None,
    model: str | None = None,
    upto: str | None = None,
    *,
    settings: ReplaySettings = DEFAULT_SETTINGS,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """The reference: the wire's own ``render`` of every prepared turn (design 8: every mode declares
    the tools the native replay would), with the warnings of that render."""
    v = BUILTIN[vessel]
    turns = prepare_turn_messages(h, mode, upto=upto, settings=settings)
    given = tuple(tools) if tools is not None else (h.tools or ())
    if mode != "native":
        given = declared_tools(prepare_turn_messages(h, "native", upto=upto, settings=settings), given)
    opts = render_options(v, system=system, tools=given, model=model)
    body = render_wire(v.wire, turns, opts)
    if warnings is not None:
        warnings.extend(h.warnings)
        warnings.extend(render_warnings(turns, opts.tools, v.wire))
    return body


def cached(cache: RenderCache, h: History, vessel: str = "gemini", mode: Mode = "native", **kw: Any) -> Any:
    """``cache.render`` with the arguments of ``render``: its options as one :class:`RenderArgs`."""
    return cache.render(h, vessel, mode, RenderArgs(**kw))


def same_bytes(cache: RenderCache, h: History, kw: dict[str, Any]) -> None:
    try:
        want = encode(whole(h, **kw))
    except ToolreplayError as exc:
        with pytest.raises(type(exc)):
            cached(cache, h, **kw)
        with pytest.raises(type(exc)):
            render(h, **kw)
        return
    assert encode(cached(cache, h, **kw)) == want
    assert encode(render(h, **kw)) == want  # the cold render: the same path with nothing cached


@given(
    st.lists(message_specs(), max_size=6),
    st.one_of(st.none(), texts),
    st.booleans(),
    st.lists(ops, min_size=1, max_size=6),
    st.sampled_from(VESSELS),
)
def test_incremental_render_equals_full_render(
    specs: list[Any], system: str | None, long_ids: bool, steps: list[Any], vessel: str
) -> None:
    cache = RenderCache()
    kw: dict[str, Any] = {"vessel": vessel}
    h = build(specs, system, long_ids)
    same_bytes(cache, h, kw)
    for op in steps:
        if op[0] == "options":
            _, vessel, mode, sys_text, model, with_tools, settings = op
            tools = [ToolSpec("coop", "The todo board.")] if with_tools else None
            kw = {"vessel": vessel, "mode": mode, "system": sys_text, "model": model, "tools": tools}
            kw["settings"] = settings
        elif op[0] == "reload":
            h = reloaded(h)
        else:
            specs, system = apply(specs, system, op)
            # the same message objects where nothing changed, as a growing conversation has them
            fresh = build(specs, system, long_ids)
            old = {m.id: m for m in h.messages}
            h = History(h.id, tuple(old[m.id] if alike(old.get(m.id), m) else m for m in fresh.messages))
        same_bytes(cache, h, kw)
    assert cache.stats.fallbacks == 0  # every wire rendered the way the cache expects


@given(
    st.lists(message_specs(), max_size=6),
    st.lists(ops, min_size=1, max_size=6),
    st.sampled_from(VESSELS),
    st.sampled_from(MODES),
    st.sampled_from([None, "none"]),
)
def test_render_body_equals_render_wire(
    specs: list[Any], steps: list[Any], vessel: str, mode: Any, tool_choice: str | None
) -> None:
    """The loop's way: its own options (tool_choice, tools), the messages as a list, one wire."""
    v = BUILTIN[vessel]
    opts = dataclasses.replace(
        render_options(v, tools=[ToolSpec("coop", "The todo board.")]), tool_choice=tool_choice
    )
    cache = RenderCache()
    system: str | None = None
    h = build(specs, system, False)
    for op in [("reload",), *steps]:
        if op[0] not in ("options", "reload"):
            specs, system = apply(specs, system, op)
            fresh = build(specs, system, False)
            old = {m.id: m for m in h.messages}
            h = History(h.id, tuple(old[m.id] if alike(old.get(m.id), m) else m for m in fresh.messages))
        want = encode(render_wire(v.wire, prepare_turn_messages(h, mode), opts))
        assert encode(cache.render_body(list(h.messages), v.wire, opts, mode)) == want
    assert cache.stats.fallbacks == 0


def _turns(n: int) -> list[Message]:
    out = []
    for i in range(n):
        out.append(Message(f"u{i}", "user", f"question {i}"))
        uses = (
            ToolCall("coop", {"action": "close", "id": i}, "closed"),
            ToolCall("read_file", {"p": i}, "ok"),
        )
        out.append(Message(f"a{i}", "assistant", f"answer {i}", uses))
    return out


@pytest.mark.parametrize("vessel", VESSELS)
def test_an_appended_turn_renders_only_the_new_messages(vessel: str) -> None:
    msgs = _turns(21)
    cache = RenderCache()
    h = History("c", tuple(msgs[:40]))
    cache.render(h, vessel)
    before = cache.stats
    h2 = History("c", h.messages + tuple(msgs[40:]))
    assert encode(cache.render(h2, vessel)) == encode(whole(h2, vessel))
    after = cache.stats
    assert after.rendered_messages - before.rendered_messages == 2
    assert after.reused_messages - before.reused_messages == 40
    assert after.fallbacks == 0


@pytest.mark.parametrize("mode", ["native", "prose"])
def test_a_tool_loop_grown_prepares_its_new_replies_alone_in_the_native_mode(
    mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an agent's tool loop: one user message, then reply after reply; each request adds one. A native
    # turn is its own message's alone, so only the new reply is prepared again; the prose mode's records
    # of the loop's replies land in the next user message, so it prepares the loop from its start
    import toolreplay._render_entry as entry

    loop = [Message("u1", "user", "fix it")] + [
        Message(f"a{i}", "assistant", "", (ToolCall("coop", {"id": i}, "ok", f"call_{i}"),))
        for i in range(30)
    ]
    prepared: list[int] = []
    real = entry.prepare_turn_messages

    def spied(history: Any, md: Mode = "native", **kw: Any) -> Any:
        prepared.append(len(history))
        return real(history, md, **kw)

    monkeypatch.setattr(entry, "prepare_turn_messages", spied)
    cache = RenderCache()
    cache.render(History("c", tuple(loop[:20])), "anthropic", mode=mode)
    prepared.clear()
    h = History("c", tuple(loop[:21]))
    assert encode(cache.render(h, "anthropic", mode=mode)) == encode(whole(h, "anthropic", mode=mode))
    assert prepared == ([1] if mode == "native" else [20, 20])


def test_an_earlier_edit_resumes_at_the_edited_message() -> None:
    msgs = _turns(10)
    cache = RenderCache()
    h = History("c", tuple(msgs))
    cache.render(h, "anthropic")
    edited = list(msgs)
    edited[7] = dataclasses.replace(edited[7], text="changed")
    h2 = History("c", tuple(edited))
    before = cache.stats
    assert encode(cache.render(h2, "anthropic")) == encode(whole(h2, "anthropic"))
    assert cache.stats.rendered_messages - before.rendered_messages == 13
    assert cache.stats.reused_messages - before.reused_messages == 7


def test_a_reply_in_progress_that_gains_a_call_rerenders_only_itself() -> None:
    msgs = _turns(5)
    reply = Message("r", "assistant", "", (ToolCall("coop", {"id": 1}, "ok"),), status="in_progress")
    cache = RenderCache()
    h = History("c", (*msgs, Message("u9", "user", "go on"), reply))
    cache.render(h, "gemini")
    grown = dataclasses.replace(reply, tool_uses=(*reply.tool_uses, ToolCall("coop", {"id": 2}, None)))
    h2 = History("c", (*h.messages[:-1], grown))
    before = cache.stats
    assert encode(cache.render(h2, "gemini")) == encode(whole(h2, "gemini"))
    assert cache.stats.rendered_messages - before.rendered_messages == 1


@pytest.mark.parametrize(
    ("before", "after"),
    [({"a": 1, "b": 2}, {"b": 2, "a": 1}), ({"a": 1}, {"a": 1.0}), ({"a": 1}, {"a": True})],
)
@pytest.mark.parametrize("vessel", ["anthropic", "gemini", "openai", "ollama"])
def test_an_equal_input_that_renders_differently_is_rendered_again(
    before: dict[str, Any], after: dict[str, Any], vessel: str
) -> None:
    """Equal as values, different as bytes (key order, 1 vs 1.0 vs true): never taken for unchanged."""
    msgs = _turns(3)
    first = dataclasses.replace(msgs[1], tool_uses=(ToolCall("coop", before, "ok"),))
    second = dataclasses.replace(msgs[1], tool_uses=(ToolCall("coop", after, "ok"),))
    assert first == second  # dataclass equality cannot tell them apart
    cache = RenderCache()
    h1 = History("c", (msgs[0], first, *msgs[2:]))
    h2 = History("c", (msgs[0], second, *msgs[2:]))
    assert encode(cache.render(h1, vessel)) == encode(whole(h1, vessel))
    assert encode(cache.render(h2, vessel)) == encode(whole(h2, vessel))
    assert encode(whole(h1, vessel)) != encode(whole(h2, vessel))


def test_upto_and_warnings_match_the_full_render() -> None:
    msgs = _turns(4)
    msgs[1] = dataclasses.replace(msgs[1], tool_uses=(ToolCall("my.tool", {"a": 1}, "x"),))
    h = History("c", tuple(msgs))
    cache = RenderCache()
    got: list[str] = []
    want: list[str] = []
    assert encode(cache.render(h, "openai", args=RenderArgs(upto="u2"), warnings=got)) == encode(
        whole(h, "openai", upto="u2", warnings=want)
    )
    assert got == want and got
    cold: list[str] = []
    render(h, "openai", upto="u2", warnings=cold)
    assert cold == want
    with pytest.raises(ToolreplayError):
        cache.render(h, "openai", args=RenderArgs(upto="nope"))


def test_real_transcripts_grown_message_by_message() -> None:
    transcripts = load_transcripts()
    if not transcripts:
        pytest.skip(NO_SHARED)
    for n in (0, 17, 30):
        h = transcripts[n].history
        for vessel in ("anthropic", "gemini", "openai-responses", "kimi"):
            cache = RenderCache()
            for k in range(1, len(h.messages) + 1):
                part = History(h.id, h.messages[:k])
                assert encode(cache.render(part, vessel)) == encode(whole(part, vessel)), (n, vessel, k)


def test_render_is_the_cache_with_nothing_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """One render path: ``render()`` renders each turn with the wire's per-turn renderer and asks the
    wire's whole ``render`` only for the skeleton around the list (never for every turn again)."""
    msgs = _turns(30)
    h = History("c", (Message("s", "system", "Be brief."), *msgs))
    base = get_wire("openai-responses")
    seen: list[int] = []
    pieces = [0]

    def counting_render(turns: Any, opts: Any) -> dict[str, Any]:
        seen.append(len(turns))
        return base.render(turns, opts)

    def counting_turn(opts: Any, ids: Any) -> Any:
        piece = base.render_turn(opts, ids)

        def run(t: Any, items: list[Any]) -> list[Any]:
            pieces[0] += 1
            return piece(t, items)

        return run

    register_wire(dataclasses.replace(base, render=counting_render, render_turn=counting_turn))
    try:
        body = render(h, "openai-responses")
    finally:
        unregister_wire("openai-responses")
    assert encode(body) == encode(whole(h, "openai-responses"))
    assert pieces[0] == len(msgs)  # every stored turn once, by the per-turn renderer
    assert seen == [2]  # the skeleton: the system turn and the first turn that renders anything


def test_equal_tools_in_another_key_order_are_not_shared() -> None:
    """Two conversations that open alike and declare equal tools whose schemas list their keys in another
    order: each body keeps its own order (an equal entry of the other's is not resumed)."""
    a = ToolSpec("coop", "The todo board.", {"type": "object", "properties": {"id": {"type": "integer"}}})
    b = ToolSpec("coop", "The todo board.", {"properties": {"id": {"type": "integer"}}, "type": "object"})
    assert a == b
    cache = RenderCache()
    h = History("h", tuple(_turns(2)))
    for tools in ([a], [b], [a]):
        kw: dict[str, Any] = {"vessel": "openai", "tools": tools}
        assert encode(cached(cache, h, **kw)) == encode(whole(h, **kw))

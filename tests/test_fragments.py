# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""Stored render fragments (design 35): a render from stored fragments gives the bytes of a render without
them, on every wire, mode, bound, step and reasoning layout, after appends, answers, finished replies and
removals; fragments of other settings are never used; the store keeps a bounded number of them."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT, examples
from store_fixtures import store, store_factory, store_url  # noqa: F401
from test_render_cache import VESSELS, calls, texts
from toolreplay import encode, render
from toolreplay._fragments import MAX_SETS, RENDER_VERSION, bind, fragment_key, from_rows, usable
from toolreplay._history import History, Message, ToolCall, ToolSpec
from toolreplay._render_cache import RenderCache
from toolreplay._render_options import for_vessel, render_options
from toolreplay._replay import DEFAULT_SETTINGS, MODES, Mode, ReplaySettings
from toolreplay._steps import Reasoning, Step, Text
from toolreplay._store import Store
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._vessels import BUILTIN, get_vessel

#: How many messages each render of the property test took from stored fragments (checked to be used).
SEEDED: list[int] = []
BOUNDS = [DEFAULT_SETTINGS, ReplaySettings(max_calls=2, max_chars=60)]
#: The golden file the render version answers for: regenerating it (a change of rendered bytes) must
#: bump RENDER_VERSION, so fragments stored by the older renderer are never read.
GOLDEN_DIGEST = {
    1: "5635a711eef04a209a5ebf5c669efaec83c39308ced36f38a6b2a678c6d35730",
    2: "ad95b58ac70ea4e22a226900c08d5e952949928038402fa9d9250693d51d1616",
}


def key_for(h: History, vessel: str, mode: Mode, bounds: ReplaySettings) -> str:
    """The key :func:`toolreplay.render` uses for these arguments (what a caller loads by)."""
    v = get_vessel(vessel)
    opts = render_options(v, tools=h.tools or ())
    return fragment_key(v.wire, opts, mode, for_vessel(bounds, v), mode != "native")


def reasoning_steps(vessel: str, n_calls: int) -> tuple[Step, ...]:
    """Two steps (thinking, words, calls) from ``vessel``'s own model, for a reply of ``n_calls`` calls."""
    v = get_vessel(vessel)
    issuer = v.audience().issuer()
    data = {v.wire: {"type": "thinking", "thinking": "Plan.", "signature": "c2ln"}}
    first = n_calls // 2
    return (
        Step((Reasoning("Plan.", data), Text("Looking.")), first, issuer),
        Step((Reasoning("Act.", data),), n_calls - first, issuer),
    )


@st.composite
def turns(draw: Any, vessel: str, start: int, n: int) -> list[Message]:
    """``n`` turns (a user message, a finished reply with calls and maybe reasoning steps)."""
    out: list[Message] = []
    for i in range(start, start + n):
        out.append(Message(f"u{i}", "user", draw(texts)))
        uses = tuple(draw(st.lists(calls, max_size=4)))
        steps = reasoning_steps(vessel, len(uses)) if len(uses) >= 2 and draw(st.booleans()) else ()
        status = draw(st.sampled_from(["complete", "complete", "interrupted"]))
        text = draw(texts) or "done"
        out.append(Message(f"a{i}", "assistant", text, uses, status=status, steps=steps))
    return out


def bodies(s: Store, cid: str, vessel: str, mode: Mode, bounds: ReplaySettings) -> tuple[bytes, bytes]:
    """(rendered from the stored fragments, rendered without any), then the fragments of this render
    stored, as the turn loop does."""
    key = key_for(s.load(cid), vessel, mode, bounds)
    loaded = s.load(cid, fragments=key)
    cache = RenderCache()
    got = encode(cache.render(loaded, vessel, mode, settings=bounds))
    SEEDED.append(cache.stats.reused_messages)
    made = cache.fragments()
    assert made is not None and made.key == key
    s.save_fragments(cid, *made)
    return got, encode(render(s.load(cid), vessel, mode, settings=bounds))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(VESSELS), st.sampled_from(MODES), st.sampled_from(BOUNDS))
def test_a_render_from_stored_fragments_has_the_bytes_of_one_without(
    data: Any, vessel: str, mode: Mode, bounds: ReplaySettings
) -> None:
    s = SQLiteStore(":memory:")
    try:
        system = [Message("sys", "system", "Be brief.")] if data.draw(st.booleans()) else []
        h = History("c", (*system, *data.draw(turns(vessel, 1, 3))), (ToolSpec("coop", "The board."),))
        s.import_history(h)
        n = 4
        for _ in range(data.draw(st.integers(1, 4))):
            got, want = bodies(s, "c", vessel, mode, bounds)
            assert got == want
            op = data.draw(st.sampled_from(["append", "live", "remove", "other"]))
            if op == "append":
                for m in data.draw(turns(vessel, n, 2)):
                    s.append_message("c", m)
                n += 2
            elif op == "live":  # a turn of the loop: a user message, a reply that gains calls, finished
                s.append_message("c", Message(f"u{n}", "user", "go"))
                s.begin_reply("c", f"a{n}", vessel=vessel, created_at=None)
                for call in data.draw(st.lists(calls, max_size=2)):
                    s.record_call("c", f"a{n}", call)
                    got, want = bodies(s, "c", vessel, mode, bounds)
                    assert got == want
                s.finish_reply("c", f"a{n}", text="ok")
                n += 1
            elif op == "remove":
                ids = [m.id for m in s.load("c").messages]
                s.delete_message("c", ids[data.draw(st.integers(0, len(ids) - 1))])
            else:  # another vessel, mode or bound: its own set, this one's never read
                vessel = data.draw(st.sampled_from(VESSELS))
                mode = data.draw(st.sampled_from(MODES))
                bounds = data.draw(st.sampled_from(BOUNDS))
        got, want = bodies(s, "c", vessel, mode, bounds)
        assert got == want
    finally:
        s.close()


def _history(n: int, calls_per_reply: int = 3) -> History:
    out: list[Message] = []
    for i in range(n):
        uses = tuple(
            ToolCall("search", {"q": f"q{i}-{k}"}, f"answer {i}-{k}") for k in range(calls_per_reply)
        )
        out += [Message(f"u{i}", "user", f"question {i}"), Message(f"a{i}", "assistant", f"reply {i}", uses)]
    return History("conv", tuple(out))


def _stored(s: Store, h: History, vessel: str = "anthropic") -> str:
    s.import_history(h)
    cache = RenderCache()
    cache.render(s.load(h.id), vessel)
    made = cache.fragments()
    assert made is not None
    assert s.save_fragments(h.id, *made) == len(h.messages)
    return made.key


def test_the_first_render_stores_every_message_and_the_next_renders_none(store: Store) -> None:
    h = _history(20)
    key = _stored(store, h)
    loaded = store.load(h.id, fragments=key)
    assert loaded.fragments is not None and len(loaded.fragments.messages) == 40
    cache = RenderCache()
    assert encode(cache.render(loaded, "anthropic")) == encode(render(h, "anthropic"))
    assert cache.stats.rendered_messages == 0 and cache.stats.reused_messages == 40


def test_a_removed_message_takes_its_fragments_and_a_new_one_with_its_id_gets_none(store: Store) -> None:
    """A turn that sent nothing removes its user message; the next turn takes the same id (design 28)."""
    h = _history(5)
    key = _stored(store, h)
    store.delete_messages(h.id, ["a4", "u4"])
    store.append_message(h.id, Message("u4", "user", "another question entirely"))
    loaded = store.load(h.id, fragments=key)
    assert loaded.fragments is not None and len(loaded.fragments.messages) == 8
    assert encode(render(loaded, "anthropic")) == encode(render(store.load(h.id), "anthropic"))


def test_rows_are_written_only_for_messages_stored_as_rendered(store: Store) -> None:
    h = _history(3)
    store.import_history(h)
    changed = History(h.id, (*h.messages[:3], dataclasses.replace(h.messages[3], text="not what is stored")))
    cache = RenderCache()
    cache.render(changed, "gemini")
    made = cache.fragments()
    assert made is not None and len(made.rows) == 4
    assert store.save_fragments(h.id, *made) == 3  # the changed reply ends what is written
    assert store.save_fragments("no-such-conversation", *made) == 0
    assert not store.exists("no-such-conversation")


def test_a_reply_in_progress_gets_no_fragment(store: Store) -> None:
    h = _history(2)
    store.import_history(h)
    store.begin_reply(h.id, "a9", vessel="gemini", created_at=None)
    store.record_call(h.id, "a9", ToolCall("search", {"q": "x"}, None))
    cache = RenderCache()
    cache.render(store.load(h.id), "gemini")
    made = cache.fragments()
    assert made is not None and [r.message_id for r in made.rows] == [m.id for m in h.messages]


def test_each_conversation_keeps_the_newest_sets(store: Store) -> None:
    h = _history(3)
    keys = [_stored(store, h, v) for v in ("anthropic", "gemini", "openai", "codex")]
    kept = [k for k in keys if store.load_fragments(h.id, k) is not None]
    assert kept == keys[-MAX_SETS:]
    store.delete_conversation(h.id)
    assert all(store.load_fragments(h.id, k) is None for k in keys)


def test_the_key_names_every_setting_that_shapes_a_message_and_none_that_does_not() -> None:
    h = _history(1)
    base = key_for(h, "anthropic", "native", DEFAULT_SETTINGS)
    assert base == key_for(h, "anthropic", "native", DEFAULT_SETTINGS)
    others = {
        key_for(h, "glm", "native", DEFAULT_SETTINGS),  # same wire, another host: reasoning differs
        key_for(h, "anthropic", "plain", DEFAULT_SETTINGS),
        key_for(h, "anthropic", "native", ReplaySettings(max_calls=2)),
        key_for(h, "anthropic", "native", ReplaySettings(max_chars=100)),
        key_for(h, "anthropic", "native", ReplaySettings(aliases={"search": "find"})),
        key_for(h, "kimi", "native", DEFAULT_SETTINGS),
        key_for(History("c", h.messages, (ToolSpec("search"),)), "anthropic", "native", DEFAULT_SETTINGS),
    }
    assert base not in others and len(others) == 7
    v = get_vessel("anthropic")
    opts = render_options(v)
    skeleton = dataclasses.replace(opts, system="Be brief.", temperature=0.5, max_tokens=9, stream=True)
    s = for_vessel(DEFAULT_SETTINGS, v)
    assert fragment_key(v.wire, opts, "native", s, False) == fragment_key(
        v.wire, skeleton, "native", s, False
    )


def test_fragments_of_another_key_or_other_objects_are_not_used() -> None:
    h = _history(4)
    cache = RenderCache()
    cache.render(h, "openai")
    made = cache.fragments()
    assert made is not None
    f = bind(from_rows(made.key, [dataclasses.astuple(r) for r in made.rows]), h.messages)
    assert usable(f, made.key, h.messages) == 8
    assert usable(f, "another key", h.messages) == 0
    edited = (dataclasses.replace(h.messages[0]), *h.messages[1:])  # equal, but not the object bound
    assert usable(f, made.key, edited) == 0
    with_f = History(h.id, h.messages, None, (), f)
    assert encode(render(with_f, "openai", settings=ReplaySettings(max_calls=1))) == encode(
        render(h, "openai", settings=ReplaySettings(max_calls=1))
    )


def test_an_integer_beyond_64_bits_survives_the_stored_text(store: Store) -> None:
    h = History(
        "big",
        (Message("u", "user", "go"), Message("a", "assistant", "ok", (ToolCall("t", {"n": 2**70}, "1"),))),
    )
    key = _stored(store, h, "gemini")
    loaded = store.load(h.id, fragments=key)
    assert loaded.fragments is not None and len(loaded.fragments.messages) == 2
    assert encode(render(loaded, "gemini")) == encode(render(h, "gemini"))


def test_warnings_and_the_claude_prompt_read_the_seeded_turns(store: Store) -> None:
    h = History(
        "w",
        (Message("first", "assistant", "hi", (ToolCall("my.tool", {"x": 1}, "y"),)), *_history(2).messages),
    )
    store.import_history(h)
    for vessel in ("claude", "gemini"):
        key = _stored_again(store, h, vessel)
        got: list[str] = []
        want: list[str] = []
        assert encode(render(store.load(h.id, fragments=key), vessel, warnings=got)) == encode(
            render(h, vessel, warnings=want)
        )
        assert got == want and got


def _stored_again(s: Store, h: History, vessel: str) -> str:
    cache = RenderCache()
    cache.render(s.load(h.id), vessel)
    made = cache.fragments()
    assert made is not None
    s.save_fragments(h.id, *made)
    return made.key


def test_the_render_version_answers_for_the_golden_bytes() -> None:
    """Regenerating tests/data/render_golden.json (a change of rendered bytes) needs RENDER_VERSION bumped
    and its digest recorded here: fragments stored by the older renderer then belong to another key."""
    digest = hashlib.sha256((ROOT / "tests" / "data" / "render_golden.json").read_bytes()).hexdigest()
    assert GOLDEN_DIGEST.get(RENDER_VERSION) == digest, f"bump RENDER_VERSION; then record {digest}"


def test_the_property_test_rendered_from_fragments() -> None:
    """The property test above is not vacuous: its renders took messages from stored fragments."""
    test_a_render_from_stored_fragments_has_the_bytes_of_one_without()
    assert sum(SEEDED) > 100


@pytest.mark.parametrize("vessel", sorted(BUILTIN))
def test_every_vessel_renders_a_long_history_from_its_fragments(store: Store, vessel: str) -> None:
    h = _history(30)
    key = _stored(store, h, vessel)
    store.append_message(h.id, Message("u99", "user", "one more"))
    cache = RenderCache()
    got = encode(cache.render(store.load(h.id, fragments=key), vessel))
    assert got == encode(render(store.load(h.id), vessel))
    assert cache.stats.rendered_messages == 1


def test_a_turn_never_pairs_its_window_with_rows_written_after_it_was_read(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer removes the conversation and stores it again with a reply's content changed (same
    ids) right after the turn read its window, then stores that content's fragments: the turn's messages
    and fragments are one snapshot, so it sends the bytes of a render of what it read, not the new rows."""
    import toolreplay._loop.recorder as recorder_mod
    from test_loop import Scripted, text
    from toolreplay._loop import run_turn
    from toolreplay._tools import ToolRegistry

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-sent")
    t = Scripted(text("Blue."), text("Green."), text("Done."))
    for words in ("Sky?", "Grass?"):
        run_turn("c1", words, "anthropic", ToolRegistry([]), store=store, transport=t)
    real = recorder_mod.read_window
    sets = "SELECT key FROM render_fragment_sets"
    key = store._read(lambda c: c.execute(sets).fetchone()[0])  # type: ignore[attr-defined]

    def then_rewrite(*a: Any, **kw: Any) -> Any:
        w = real(*a, **kw)
        old = store.load("c1")
        new = History("c1", tuple(replace_text(m, "Red.") if m.id == "a2" else m for m in old.messages))
        store.delete_conversation("c1")
        store.import_history(new)
        cache = RenderCache()
        cache.render(new, "anthropic")
        made = cache.fragments()
        assert made is not None
        assert store.save_fragments("c1", key, 0, made.rows, made.messages) == 5
        return w

    monkeypatch.setattr(recorder_mod, "read_window", then_rewrite)
    run_turn("c1", "Trees?", "anthropic", ToolRegistry([]), store=store, transport=t)
    sent = t.bodies[-1]["messages"]
    assert sent[1]["role"] == "assistant" and sent[1]["content"] in (
        "Blue.",
        [{"type": "text", "text": "Blue."}],
    )
    assert b"Red." not in encode(t.bodies[-1])


def replace_text(m: Message, words: str) -> Message:
    return dataclasses.replace(m, text=words)


def test_the_cli_and_the_api_render_a_stored_conversation_from_its_fragments_and_write_none(
    store: Store, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``toolreplay render CONVERSATION`` and ``render(store.load(cid, fragments=True))`` take the stored
    set of their settings (another set is also stored) and print the bytes of a render without it; the
    render writes no row."""
    from click.testing import CliRunner

    import toolreplay._fragments as fragments_mod
    from toolreplay._cli import cli

    h = _history(6)
    _stored(store, h, "anthropic")
    _stored(store, h, "gemini")
    seeded: list[int] = []
    real = fragments_mod.seed

    def spy(e: Any, f: Any, messages: Any, n: int) -> None:
        seeded.append(n)
        real(e, f, messages, n)

    monkeypatch.setattr(fragments_mod, "seed", spy)
    table = "SELECT key, seq, message_id, items FROM render_fragments ORDER BY key, seq"
    before = store._read(lambda c: c.execute(table).fetchall())  # type: ignore[attr-defined]
    used = "SELECT key, used FROM render_fragment_sets ORDER BY key"
    used_before = store._read(lambda c: c.execute(used).fetchall())  # type: ignore[attr-defined]
    want = encode(render(store.load(h.id), "anthropic"))
    assert seeded == []
    got = encode(render(store.load(h.id, fragments=True), "anthropic"))
    assert got == want and seeded == [len(h.messages)]
    res = CliRunner().invoke(cli, ["render", h.id, "-v", "anthropic", "--db", store_url])
    assert res.exit_code == 0, res.output
    assert res.stdout_bytes == want and seeded == [len(h.messages)] * 2
    assert store._read(lambda c: c.execute(table).fetchall()) == before  # type: ignore[attr-defined]
    assert store._read(lambda c: c.execute(used).fetchall()) == used_before  # type: ignore[attr-defined]

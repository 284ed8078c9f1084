"""The render cache under system messages that say how they stood in their body (design 29, 53): an
Anthropic system prompt of blocks, Codex's developer items, Gemini's ``systemInstruction`` parts. Standing
before every other message, they render through the skeleton (the wire's own render places them), so the
cache resumes; a system message later in the conversation still sends the cache to the wire's whole
render. Either way the bytes are those of the wire's own render of every prepared turn."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from test_render_cache import message_specs
from test_translate import CAPTURED, VESSELS, _issuer, vessel_of
from toolreplay import encode, jsonenc
from toolreplay._api import render_options
from toolreplay._history import History, Message
from toolreplay._proxy.translate import Translated, read_inbound, translate_request
from toolreplay._proxy.translate_renders import Renders
from toolreplay._render_cache import RenderCache, mid_system
from toolreplay._replay import MODES, Mode, ReplaySettings, prepare_turn_messages
from toolreplay._vessels import BUILTIN
from toolreplay.wires import get_wire, render_wire


def _laid_out() -> list[Message]:
    """The system messages of the kept agents' bodies, each with its wire's layout in ``sent``: Claude
    Code's blocks, Codex's instructions and developer items, Gemini CLI's instruction parts, opencode's."""
    out: dict[tuple[str, str], Message] = {}
    for _label, wire, body, model in CAPTURED:
        for m in read_inbound(get_wire(wire), body, path_model=model).messages:
            if m.role == "system" and m.sent:
                out.setdefault((wire, repr(m.sent)), m)
    return list(out.values())


LAID_OUT = _laid_out()


def test_the_kept_bodies_give_system_messages_of_every_layout() -> None:
    wires = {w for m in LAID_OUT for w in m.sent or {}}
    assert {"anthropic", "openai-responses", "gemini"} <= wires
    roles = {(m.sent or {}).get("openai-responses", {}).get("role") for m in LAID_OUT}
    assert "developer" in roles  # Codex's, an item of the input list


def _history(lead: list[Message], specs: list[Any], mid: Message | None) -> History:
    """``lead`` first (ids of their own), then the messages of ``specs``, ``mid`` after the first of them."""
    msgs = [dataclasses.replace(m, id=f"s{i}") for i, m in enumerate(lead)]
    for i, (role, text, uses, status) in enumerate(specs):
        msgs.append(Message(f"m{i}", role, text, uses, status=status))
        if i == 0 and mid is not None:
            msgs.append(dataclasses.replace(mid, id="mid"))
    return History("c", tuple(msgs))


def _reference(h: History, vessel: str, mode: Mode, settings: ReplaySettings) -> tuple[bytes, list[Any]]:
    v = BUILTIN[vessel]
    turns = prepare_turn_messages(h, mode, settings=settings)
    return encode(render_wire(v.wire, turns, render_options(v, tools=()))), turns


@settings(max_examples=examples(80), deadline=None)
@given(
    st.lists(st.sampled_from(range(len(LAID_OUT))), max_size=4, unique=True),
    st.lists(message_specs(), min_size=1, max_size=8),
    st.one_of(st.none(), st.sampled_from(range(len(LAID_OUT)))),
    st.sampled_from(sorted(BUILTIN)),
    st.sampled_from(MODES),
)
def test_laid_out_system_messages_render_alike_and_resume_unless_one_stands_mid_conversation(
    lead: list[int], specs: list[Any], mid: int | None, vessel: str, mode: Mode
) -> None:
    v = BUILTIN[vessel]
    opts = render_options(v, tools=())
    settings = ReplaySettings(whole_calls=True, skip_textless=False)
    cache, body_cache = RenderCache(), RenderCache()
    for k in range(1, len(specs) + 1):
        h = _history([LAID_OUT[i] for i in lead], specs[:k], LAID_OUT[mid] if mid is not None else None)
        assert mid_system(h.messages) == (mid is not None)
        want, turns = _reference(h, vessel, "native", settings)
        body, got = cache.render_turns(h.messages, v.wire, opts, settings=settings)
        assert encode(body) == want and got == turns
        loop = encode(render_wire(v.wire, prepare_turn_messages(h, mode), opts))
        assert encode(body_cache.render_body(h.messages, v.wire, opts, mode)) == loop
    for c in (cache, body_cache):
        assert c.stats.fallbacks == 0  # the skeleton placed every leading layout as the whole render does
        if mid is None:  # every render after the first resumed where the conversation grew
            assert (c.stats.full, c.stats.resumed) == (1, len(specs) - 1)


def _same(a: Translated, b: Translated) -> None:
    assert jsonenc.encode(b.body) == jsonenc.encode(a.body)
    assert (b.history, b.notes, b.answer_id) == (a.history, a.notes, a.answer_id)


def _prefixes(wire: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The body as its agent's earlier requests held it: its list cut to each length, up to the whole."""
    key = get_wire(wire).list_key
    items = body.get(key)
    if not isinstance(items, list):
        return [body]
    return [{**body, key: items[:k]} for k in range(1, len(items) + 1)]


@pytest.mark.parametrize("vessel", [*VESSELS, "glm"])
def test_every_kept_body_translates_alike_as_it_grows_and_resumes(vessel: str) -> None:
    # Claude Code's and opencode's system blocks, Codex's developer items, Gemini CLI's systemInstruction:
    # each body's earlier requests, then itself, translated through one Renders against none
    v = vessel_of(vessel)
    for label, wire, body, model in CAPTURED:
        inbound, renders = get_wire(wire), Renders()
        for b in _prefixes(wire, body):
            h = read_inbound(inbound, b, path_model=model)
            want = translate_request(inbound, h, None, v, issuer=_issuer(v))
            _same(want, translate_request(inbound, h, None, v, issuer=_issuer(v), renders=renders))
        cache = renders.cache_of(h.messages)
        assert cache is not None and not mid_system(h.messages), label
        assert (cache.stats.full, cache.stats.fallbacks) == (1, 0), (label, cache.stats)

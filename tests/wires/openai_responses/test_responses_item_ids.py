"""Responses item ids go back to their issuer only (design 17, 30).

A Responses answer's ``function_call`` items carry their own item id (``fc_...``) besides ``call_id``, and
its reasoning items an ``id`` (``rs_...``). Rendered for the same issuer on a vessel that keeps state, a
call carries its item id beside its step's reasoning item (the server pairs the two); on a stateless
``store: false`` vessel (Codex) the reasoning items travel whole with their ``encrypted_content`` and the
calls without item ids, as real stateless bodies the API took do; for any other vessel no provider item
id travels at all. Derived call ids stay the same whoever the body is for. Checked on the corpus's real
answers (whole and streamed), through the turn loop.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from corpus_loader import Exchange, exchanges
from scripted import Scripted
from toolreplay import _jsonenc as jsonenc
from toolreplay._api import render
from toolreplay._audit.validate import rule_problems
from toolreplay._errors import ToolreplayError
from toolreplay._loop import TurnOptions, run_turn
from toolreplay._steps import Reasoning
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import ToolRegistry
from toolreplay.wires import get_wire
from toolreplay.wires.reply import Reply

RESPONSES = get_wire("openai-responses")


def _reply(x: Exchange) -> Reply | None:
    if x.response is not None:
        return RESPONSES.parse_response(x.response)
    if not x.streamed:
        return None
    parser = RESPONSES.stream_parser()
    for ev in x.events():
        if isinstance(ev, Mapping):
            parser.feed(ev)
    return parser.finish()


def _reasoned_calls() -> list[tuple[Exchange, Reply]]:
    out = []
    for x in exchanges("openai-responses"):
        if x.request is None and x.response is None and not x.streamed:
            continue
        try:
            r = _reply(x)
        except ToolreplayError:  # a stream its source cut on purpose (an error case) is not this test's
            continue
        if r is not None and r.calls and any(isinstance(p, Reasoning) for p in r.said):
            out.append((x, r))
    return out


CASES = _reasoned_calls()


def test_the_corpus_holds_reasoned_calls_with_item_ids() -> None:
    assert len(CASES) >= 5
    assert all(c.provider_data for _, r in CASES for c in r.calls)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "ids.db")
    yield s
    s.close()


def _run(store: SQLiteStore, vessel: str, reply: Reply) -> Scripted:
    model = reply.model or "gpt-5"
    t = Scripted(reply, Reply(text="Done.", model=model))
    run_turn(
        "c1", "Go.", vessel, ToolRegistry([]), store=store, transport=t, options=TurnOptions(model=model)
    )
    return t


def _of(items: list[Any], kind: str) -> list[Mapping[str, Any]]:
    return [i for i in items if isinstance(i, Mapping) and i.get("type") == kind]


def _item_ids(reply: Reply) -> list[str]:
    return [c.provider_data["openai-responses"]["item_id"] for c in reply.calls]  # type: ignore[index]


def _sealed(reply: Reply) -> bool:
    """Every reasoning item of the answer carries its encrypted content."""
    items = [p.data["openai-responses"] for p in reply.said if isinstance(p, Reasoning) and p.data]
    return all(i.get("encrypted_content") for i in items)


@pytest.mark.parametrize("vessel", ["grok", "openai-responses", "codex"])
@pytest.mark.parametrize(("x", "reply"), CASES, ids=[x.id for x, _ in CASES])
def test_the_issuer_gets_the_call_item_ids_beside_their_reasoning(
    store: SQLiteStore, x: Exchange, reply: Reply, vessel: str
) -> None:
    """Stateful (grok): always beside the reasoning; ``store: false`` (openai-responses, codex): only when
    the reasoning items carry their encrypted content, and without it not the reasoning either (a bare
    ``rs_`` id is answered 404 "Item ... not found. Items are not persisted when `store` is set to
    false"), named in a warning."""
    t = _run(store, vessel, reply)
    stored = store.load("c1")
    stateless = vessel != "grok"
    kept = _sealed(reply) or not stateless
    expected = _item_ids(reply) if kept else [None] * len(reply.calls)
    own = [
        jsonenc.dumps(p.data["openai-responses"]) for p in reply.said if isinstance(p, Reasoning) and p.data
    ]
    warnings: list[str] = []
    for body in (t.bodies[1], render(stored, vessel, model=reply.model, warnings=warnings)):
        assert [c.get("id") for c in _of(body["input"], "function_call")] == expected
        # byte-identical where it goes
        assert [jsonenc.dumps(i) for i in _of(body["input"], "reasoning")] == (own if kept else [])
        assert not [p for p in rule_problems(vessel, body) if "Refused" in p]
        if stateless:
            assert body["store"] is False
    assert kept or any("keeps nothing between requests" in w and "encrypted_content" in w for w in warnings)
    if stateless:  # the loop asks for the encrypted reasoning it must hand back
        assert t.bodies[1]["include"] == ["reasoning.encrypted_content"]


@pytest.mark.parametrize(("x", "reply"), CASES, ids=[x.id for x, _ in CASES])
def test_no_provider_item_id_goes_to_another_vessel_and_call_ids_stay(
    store: SQLiteStore, x: Exchange, reply: Reply
) -> None:
    _run(store, "grok", reply)
    stored = store.load("c1")
    same = render(stored, "grok", model=reply.model)
    for vessel, other in (("grok", "grok-3"), ("openai-responses", reply.model), ("codex", None)):
        warnings: list[str] = []
        body = render(stored, vessel, model=other, warnings=warnings)
        text = jsonenc.dumps(body)
        assert all(i not in text for i in _item_ids(reply)) and '"rs_' not in text
        assert [c["call_id"] for c in _of(body["input"], "function_call")] == [
            c["call_id"] for c in _of(same["input"], "function_call")
        ]
        assert any("not replayed" in w for w in warnings)


def test_a_store_false_body_with_bare_reasoning_is_refused_as_openai_does() -> None:
    """The rule the double answers with: a reasoning item without ``encrypted_content`` on a ``store:
    false`` request names an item the server never kept."""
    import httpx

    from toolreplay.testing import ProviderDouble
    from toolreplay.wires.openai_responses.rules import NOT_PERSISTED

    body: dict[str, Any] = {
        "model": "gpt-5",
        "store": False,
        "input": [
            {"role": "user", "content": "Go."},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "Again."},
        ],
    }
    said = NOT_PERSISTED.format(id="rs_1")
    problems = rule_problems("codex", body)
    assert [p.provider for p in problems if hasattr(p, "provider")] == [said]
    with ProviderDouble() as d, httpx.Client(timeout=5) as client:
        resp = client.post(d.base_url_for("openai-responses") + "/responses", content=jsonenc.encode(body))
    assert resp.status_code == 400 and resp.json()["error"]["message"] == said
    body["input"][1]["encrypted_content"] = "gAAAA"
    assert not [p for p in rule_problems("codex", body) if hasattr(p, "provider")]
    body["input"][1].pop("encrypted_content")
    body["store"] = True  # the server kept it: the id alone is read
    assert not [p for p in rule_problems("openai-responses", body) if hasattr(p, "provider")]

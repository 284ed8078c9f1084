# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""Removing a conversation or one message, on every backend (see store_fixtures): the calls go with their
message, the later messages move up so positions stay gapless, unknown ids are refused whole."""

from __future__ import annotations

import pytest

from store_fixtures import store, store_factory, store_url  # noqa: F401
from toolreplay._errors import StoreError
from toolreplay._history import History, Message, ToolCall
from toolreplay._store import Store


def _reply(mid: str, n_calls: int) -> Message:
    calls = tuple(ToolCall("coop", {"id": k}, f"closed {k}", call_id=f"{mid}_{k}") for k in range(n_calls))
    return Message(mid, "assistant", f"reply {mid}", calls)


def _conversation(cid: str) -> History:
    return History(
        cid,
        (
            Message("u1", "user", "one"),
            _reply("a2", 2),
            Message("u3", "user", "three"),
            _reply("a4", 1),
            Message("u5", "user", "five"),
        ),
    )


def test_delete_message_takes_its_calls_and_keeps_the_order(store: Store) -> None:
    store.import_history(_conversation("c"))
    store.import_history(_conversation("other"))
    store.delete_message("c", "a2")
    h = store.load("c")
    assert [m.id for m in h.messages] == ["u1", "u3", "a4", "u5"]
    assert [len(m.tool_uses) for m in h.messages] == [0, 0, 1, 0]
    info = {r.id: (r.messages, r.calls) for r in store.list_conversations()}
    assert info == {"c": (4, 1), "other": (5, 3)}
    # positions are gapless again: the next append lands last, and removing the first still works
    store.append_message("c", Message("u6", "user", "six"))
    store.delete_message("c", "u1")
    store.append_message("c", Message("u7", "user", "seven"))
    assert [m.id for m in store.load("c").messages] == ["u3", "a4", "u5", "u6", "u7"]
    assert [m.id for m in store.load("other").messages] == ["u1", "a2", "u3", "a4", "u5"]


def test_delete_the_last_message_and_a_live_reply(store: Store) -> None:
    store.import_history(_conversation("c"))
    store.begin_reply("c", "a6", vessel="kimi", created_at=None)
    store.record_call("c", "a6", ToolCall("coop", {"id": 9}, None, call_id="x"))
    store.delete_message("c", "a6")
    store.delete_message("c", "u5")
    assert [m.id for m in store.load("c").messages] == ["u1", "a2", "u3", "a4"]
    store.begin_reply("c", "a6", vessel="kimi", created_at=None)  # the id is free again, with no calls
    assert store.load("c").messages[-1].tool_uses == ()


def test_delete_conversation_takes_everything(store: Store) -> None:
    store.import_history(_conversation("c"))
    store.import_history(_conversation("other"))
    store.delete_conversation("c")
    assert not store.exists("c")
    assert [r.id for r in store.list_conversations()] == ["other"]
    with pytest.raises(StoreError, match="no conversation 'c'"):
        store.load("c")
    store.import_history(_conversation("c"))  # the id can be used again
    assert len(store.load("c").messages) == 5


def test_unknown_ids_are_refused_and_nothing_changes(store: Store) -> None:
    store.import_history(_conversation("c"))
    with pytest.raises(StoreError, match="no conversation 'nope'"):
        store.delete_conversation("nope")
    with pytest.raises(StoreError, match="no conversation 'nope'"):
        store.delete_message("nope", "u1")
    with pytest.raises(StoreError, match="conversation 'c': no message 'zz'"):
        store.delete_message("c", "zz")
    assert not store.exists("nope")
    assert [m.id for m in store.load("c").messages] == ["u1", "a2", "u3", "a4", "u5"]


def test_delete_messages_takes_a_turn_back_whole_or_not_at_all(store: Store) -> None:
    store.import_history(_conversation("c"))
    store.append_message("c", Message("u6", "user", "six"))
    store.begin_reply("c", "a7", vessel="kimi", created_at=None)
    # an unknown id anywhere in the list refuses the whole removal: a7 is not removed alone
    with pytest.raises(StoreError, match="conversation 'c': no message 'zz'"):
        store.delete_messages("c", ["a7", "zz"])
    assert [m.id for m in store.load("c").messages][-2:] == ["u6", "a7"]
    # a conversation with other messages stays, whatever drop_if_empty says
    store.delete_messages("c", ["a7", "u6"], drop_if_empty=True)
    assert [m.id for m in store.load("c").messages] == ["u1", "a2", "u3", "a4", "u5"]
    store.append_message("c", Message("u6", "user", "six"))  # positions are gapless again
    assert store.load("c").messages[-1].id == "u6"


def test_delete_messages_drops_the_conversation_it_empties_only_when_asked(store: Store) -> None:
    for cid in ("new", "kept"):
        store.append_message(cid, Message("u1", "user", "hi"))
        store.begin_reply(cid, "a2", vessel="kimi", created_at=None)
    store.delete_messages("new", ["a2", "u1"], drop_if_empty=True)
    store.delete_messages("kept", ["a2", "u1"])
    assert not store.exists("new")
    assert store.exists("kept") and store.load("kept").messages == ()
    assert [r.id for r in store.list_conversations()] == ["kept"]

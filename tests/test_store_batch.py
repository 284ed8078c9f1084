# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""``Store.batch``: the writes inside are one transaction (the proxy's recorder writes each exchange so):
committed together at the end, or, on any error, none of them; on every backend (see store_fixtures)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from store_fixtures import store, store_factory, store_url  # noqa: F401
from toolreplay._history import History, Message
from toolreplay._store import Store


def _history(cid: str) -> History:
    return History(cid, (Message("u1", "user", "hello"), Message("a2", "assistant", "hi")))


def test_a_batch_that_fails_leaves_nothing_written(store_factory: Callable[[], Store]) -> None:
    store = store_factory()
    with pytest.raises(RuntimeError), store.batch():
        store.import_history(_history("c1"))
        store.append_message("c1", Message("u3", "user", "more"))
        assert store.exists("c1")  # read inside the batch: its own writes
        raise RuntimeError("the recorder failed half way")
    assert not store.exists("c1")
    store.import_history(_history("c2"))  # the store is usable after the rollback
    again = store_factory()
    assert not again.exists("c1") and again.exists("c2")


def test_a_batch_commits_every_write_once_at_its_end(store_factory: Callable[[], Store]) -> None:
    store, other = store_factory(), store_factory()
    with store.batch():
        store.import_history(_history("c1"))
        with store.batch():  # nested: part of the outer one
            store.append_message("c1", Message("u3", "user", "more"))
        assert not other.exists("c1")  # another connection sees nothing before the commit
    assert [m.id for m in other.load("c1").messages] == ["u1", "a2", "u3"]

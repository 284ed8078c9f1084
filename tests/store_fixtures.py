"""Store fixtures parametrized over the backends, so one store suite runs on SQLite and PostgreSQL.

Import them explicitly into a test file (conftest.py stays the lead's)::

    from store_fixtures import store, store_factory, store_url  # noqa: F401

* ``store_url``: a fresh, empty database per test: a SQLite file under the test's tmp_path, or (when
  ``TOOLREPLAY_TEST_PG`` holds a ``postgresql://`` URL) a new PostgreSQL database named after the test,
  dropped afterwards. The postgres param skips, with the reason, when the variable is unset (a user's
  clone; under CI it fails instead) or when ``toolreplay._store.postgres`` cannot be imported. A server
  named by the variable that does not answer (it died, or was never started) fails the test: a set URL
  says the PostgreSQL half must run, and skipping would let the suite go green without it.
* ``store_factory``: opens (another) store on that database; every store it opened is closed afterwards.
* ``store``: one open store on that database.
* ``pg_database``: a fresh PostgreSQL database even before the backend exists (checks the shared SQL).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from toolreplay._history import History, Message, ToolCall
from toolreplay._store import Store, open_store
from toolreplay._store import rows as R

BACKENDS = ("sqlite", "postgres")
# The PostgreSQL half of the store suite is a slow tier (design 26): in the full suite, not in --quick.
_BACKEND_PARAMS = ["sqlite", pytest.param("postgres", marks=[pytest.mark.postgres, pytest.mark.slow])]
PG_ENV = "TOOLREPLAY_TEST_PG"


def _pg_admin_url(*, need_backend: bool = True) -> str:
    url = os.environ.get(PG_ENV, "")
    if not url.startswith(("postgresql://", "postgres://")):
        why = f"postgres backend: set {PG_ENV} to a postgresql:// URL to run the store suite on it"
        if os.environ.get("CI"):
            pytest.fail(f"{why} (CI runs it: scripts/dev.py test starts one)")
        pytest.skip(why)
    if need_backend:
        try:
            import toolreplay._store.postgres  # noqa: F401
        except ImportError as exc:
            pytest.skip(f"postgres backend: toolreplay._store.postgres cannot be imported yet ({exc})")
    return url


def _database_name(nodeid: str) -> str:
    """A database name per test (and per xdist worker), within PostgreSQL's 63-byte limit."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    stem = re.sub(r"[^a-z0-9]+", "_", nodeid.lower().rsplit("::", 1)[-1])[:30].strip("_")
    digest = hashlib.sha256(f"{worker}:{os.getpid()}:{nodeid}".encode()).hexdigest()[:10]
    return f"tr_{stem}_{digest}"


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _fresh_pg_database(
    request: pytest.FixtureRequest, *, need_backend: bool = True, suffix: str = ""
) -> Iterator[str]:
    admin = _pg_admin_url(need_backend=need_backend)
    import psycopg

    name = _database_name(request.node.nodeid + suffix)
    try:
        conn = psycopg.connect(admin, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        pytest.fail(f"postgres backend: the server at {PG_ENV} does not answer ({first})")
    with conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(admin, name)
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=_BACKEND_PARAMS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database for this test, on each backend."""
    if request.param == "sqlite":
        yield str(tmp_path / "store" / "toolreplay.db")
        return
    yield from _fresh_pg_database(request)


@pytest.fixture(params=_BACKEND_PARAMS)
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Two fresh, empty databases of one backend: a run and the run it is compared with."""
    if request.param == "sqlite":
        yield str(tmp_path / "first.db"), str(tmp_path / "second.db")
        return
    first, second = _fresh_pg_database(request, suffix="first"), _fresh_pg_database(request, suffix="second")
    yield next(first), next(second)
    for made in (second, first):
        next(made, None)  # its database dropped


@pytest.fixture
def pg_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh PostgreSQL database URL (no toolreplay backend needed): for checking the shared SQL."""
    yield from _fresh_pg_database(request, need_backend=False)


@pytest.fixture
def store_factory(store_url: str) -> Iterator[Callable[[], Store]]:
    """Open another store on this test's database (each is closed at the end of the test)."""
    opened: list[Store] = []

    def make() -> Store:
        s = open_store(store_url)
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


@pytest.fixture
def store(store_factory: Callable[[], Store]) -> Store:
    """One open store on a fresh database, on each backend."""
    return store_factory()


def backend_of(url: str) -> str:
    return "postgres" if url.startswith(("postgresql://", "postgres://")) else "sqlite"


__all__ = ["BACKENDS", "backend_of", "pg_database", "store", "store_factory", "store_url"]


# --------------------------------------------------------------------------------------------------
# rows of the schema before migration 0005 (no ``steps``, no ``parts``), for tests that build an older
# database and upgrade it

OLD_INSERT_MESSAGE = """INSERT INTO messages
    (conversation_id, position, id, role, text, status, created_at, vessel, provider_data, meta)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
#: A message as migrations 0005 to 0007 hold it (steps, no parts of a user message).
STEPS_INSERT_MESSAGE = """INSERT INTO messages
    (conversation_id, position, id, role, text, status, created_at, vessel, provider_data, meta, steps)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
#: A call as migrations 0005 to 0010 hold it (answer parts; no kind, no sent).
PARTS_INSERT_TOOL_USE = """INSERT INTO tool_uses
    (conversation_id, message_id, position, name, input, answer, call_id, is_error, provider_data, parts)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
OLD_INSERT_TOOL_USE = """INSERT INTO tool_uses
    (conversation_id, message_id, position, name, input, answer, call_id, is_error, provider_data)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""


def before_steps(h: History) -> History:
    """``h`` as a database from before migration 0005 holds it: no step record, no answer parts (nor,
    before 0008, parts of user messages)."""
    messages = tuple(
        replace(m, steps=(), parts=(), tool_uses=tuple(replace(c, parts=()) for c in m.tool_uses))
        for m in h.messages
    )
    return replace(h, messages=messages)


def old_message_row(conversation_id: str, position: int, m: Message) -> tuple[Any, ...]:
    return R.message_row(conversation_id, position, m)[:-3]  # no steps (0005), parts (0008), sent (0011)


def old_tool_use_rows(
    conversation_id: str, message_id: str, calls: Sequence[ToolCall]
) -> list[tuple[Any, ...]]:
    return [r[:-3] for r in R.tool_use_rows(conversation_id, message_id, calls)]  # no parts, kind, sent

# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""Load: many processes appending to one conversation and to their own, and 200 turns in one event loop.

* 16 writer processes (tests/helpers_load.py) each append ``TURNS`` turns (a user message and a reply with
  three calls) to one shared conversation and as many to a conversation of their own, alternately, on
  SQLite and on PostgreSQL. Half store each reply in one transaction, half the way the turn loop does
  (begin, three recorded calls, finish). While they run, this process reads the shared conversation
  again and again; every snapshot must be consistent: a finished reply with all its calls, each writer's
  messages a gap-free prefix of its own sequence. Afterwards every turn is there exactly once, with all
  its calls, and the positions are 0..n-1. The throughput (turns/s, from the moment all writers start
  to the last one finishing) is printed.
* 200 conversations run a turn each at once in one asyncio loop against a provider double (a call, an
  async tool, an answer); all complete, and the tracemalloc peak stays under a loose bound.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from helpers_load import CALLS_PER_REPLY, positions, turn_calls
from store_fixtures import backend_of, store, store_factory, store_url  # noqa: F401
from toolreplay._history import History, Message
from toolreplay._loop import TurnOptions, TurnResult, run_turn_async
from toolreplay._store import Store
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import Tool, ToolRegistry
from toolreplay._transport.client import RetryPolicy, Transport
from toolreplay.testing import Call, Calls, ProviderDouble, RecordedRequest, Text

pytestmark = pytest.mark.slow  # many processes writing at once: see docs/design.md, design 26

HERE = Path(__file__).resolve().parent
WRITERS = 16
TURNS = 8  # per writer and conversation: 16 x 8 x 2 = 256 turns per backend
CONVERSATIONS = 200


def expected_ids(writer: str, upto: int) -> list[str]:
    return [f"{writer}-{kind}{k}" for k in range(upto) for kind in ("u", "a")]


def check_snapshot(h: History, writers: list[str]) -> int:
    """The invariants any reader must see; returns how many replies it checked."""
    ids = [m.id for m in h.messages]
    assert len(ids) == len(set(ids)), "a message appears twice"
    checked = 0
    for w in writers:
        mine = [m for m in h.messages if m.id.startswith(f"{w}-")]
        # each writer's own order, without a gap: a prefix of u0 a0 u1 a1 ...
        assert [m.id for m in mine] == expected_ids(w, len(mine) // 2 + 1)[: len(mine)], w
        for m in mine:
            if m.role != "assistant":
                continue
            k = int(m.id.rsplit("-a", 1)[1])
            want = turn_calls(w, k, h.id)
            if m.status == "complete":
                assert m.tool_uses == want, f"{m.id}: a finished reply without all its calls"
            else:  # a reply being made the turn loop's way: its calls so far, in order
                assert m.status == "in_progress" and m.tool_uses == want[: len(m.tool_uses)], m.id
            checked += 1
    return checked


def run_writers(url: str, tmp_path: Path, store: Store) -> tuple[float, int, int]:
    """Start the writers, release them at once, read while they write; (seconds, reads, replies seen)."""
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "helpers_load.py"), url, f"w{i}", str(TURNS), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(WRITERS)
    ]
    try:
        for p in procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            assert line.strip() == "ready", p.communicate()[1]
        go.touch()
        start = time.time()
        writers = [f"w{i}" for i in range(WRITERS)]
        reads = replies = 0
        while any(p.poll() is None for p in procs):
            if store.exists("shared"):
                replies += check_snapshot(store.load("shared"), writers)
                reads += 1
            time.sleep(0.005)
        ends = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            ends.append(float(out.split()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return max(ends) - start, reads, replies


def test_sixteen_writers_lose_nothing(
    store_url: str, store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seconds, reads, seen = run_writers(store_url, tmp_path, store)
    writers = [f"w{i}" for i in range(WRITERS)]
    shared = store.load("shared")
    assert len(shared.messages) == WRITERS * TURNS * 2
    assert check_snapshot(shared, writers) == WRITERS * TURNS
    assert all(m.status == "complete" for m in shared.messages)
    assert positions(store_url, "shared") == list(range(WRITERS * TURNS * 2))  # no gap, no duplicate
    for w in writers:
        own = store.load(f"own-{w}")
        assert [m.id for m in own.messages] == expected_ids(w, TURNS)
        assert check_snapshot(own, [w]) == TURNS
        assert positions(store_url, f"own-{w}") == list(range(TURNS * 2))
    calls = sum(len(m.tool_uses) for m in shared.messages)
    assert calls == WRITERS * TURNS * CALLS_PER_REPLY
    turns = WRITERS * TURNS * 2
    rate = turns / seconds
    with capsys.disabled():
        print(
            f"\n[load] {backend_of(store_url)}: {WRITERS} processes, {turns} turns "
            f"({turns * CALLS_PER_REPLY} calls) in {seconds:.2f} s = {rate:.0f} turns/s; "
            f"{reads} concurrent reads checked {seen} replies"
        )
    assert reads > 0, "the reader never ran while the writers wrote"
    assert rate > 2, f"{rate:.1f} turns/s"  # loose: a loaded 2-core CI machine


# --------------------------------------------------------------------------------------------------
# 200 conversations in one event loop


def answer(req: RecordedRequest) -> Calls | Text:
    """A call first; the answer once the call's result is in the request (Chat wire)."""
    messages = req.body["messages"]
    if messages[-1]["role"] == "tool":
        return Text("Done: " + messages[-1]["content"])
    return Calls([Call("work", {"n": messages[-1]["content"]})])


async def work(args: Mapping[str, Any]) -> str:
    await asyncio.sleep(0.01)  # a tool that waits: the turns really overlap
    return f"worked on {args['n']}"


async def _run_many(double: ProviderDouble, store: SQLiteStore) -> list[TurnResult]:
    registry = ToolRegistry([Tool(_WORK_SPEC, work)])
    vessel = double.vessel("kimi")

    async def no_wait(_: float) -> None:
        return None

    async with Transport(retry=RetryPolicy(sleep=no_wait), timeout=60) as transport:
        return await asyncio.gather(
            *(
                run_turn_async(
                    f"c{i}",
                    f"job {i}",
                    vessel,
                    registry,
                    store=store,
                    transport=transport,
                    options=TurnOptions(max_requests=3),
                )
                for i in range(CONVERSATIONS)
            )
        )


def _work_spec() -> Any:
    from toolreplay._history import ToolSpec

    return ToolSpec("work", "Do some work", {"type": "object", "properties": {"n": {"type": "string"}}})


_WORK_SPEC = _work_spec()


def test_two_hundred_conversations_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with ProviderDouble(responder=answer) as double, SQLiteStore(":memory:") as store:
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            results = asyncio.run(_run_many(double, store))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        seconds = time.perf_counter() - t0
        assert len(double.requests) == 2 * CONVERSATIONS
        assert all(r.rejected is None for r in double.requests)
        for i, res in enumerate(results):
            assert res.stopped == "answer" and res.reply.text == f"Done: worked on job {i}"
        for i in range(CONVERSATIONS):
            h = store.load(f"c{i}")
            assert [(m.role, m.status) for m in h.messages] == [
                ("user", "complete"),
                ("assistant", "complete"),
            ]
            (call,) = h.messages[1].tool_uses
            assert (call.name, call.input, call.answer) == ("work", {"n": f"job {i}"}, f"worked on job {i}")
    with capsys.disabled():
        print(
            f"\n[load] {CONVERSATIONS} concurrent turns (asyncio, in-memory SQLite, provider double): "
            f"{seconds:.2f} s, tracemalloc peak {peak / 2**20:.1f} MiB"
        )
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_positions_helper_reads_the_stored_order(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "p.db") as s:
        for k in range(3):
            s.append_message("c", Message(f"m{k}", "user", "x"))
    assert positions(str(tmp_path / "p.db"), "c") == [0, 1, 2]

# ruff: noqa: F811  (pytest fixtures imported from store_fixtures are parameters here)
"""Crashes: real ``toolreplay turn`` processes killed with SIGKILL at seeded random points, many times.

Each conversation gets a run of turns, one process each, against a provider double on 127.0.0.1 that
answers every turn with two rounds of two calls and then a text. The tool (tests/helpers_crash.py)
writes a marker before and after its work, so the test knows which calls were executed. Each process is
killed (or not) at one of these points, all drawn in advance from one seed (:func:`kill_plan`; each mode
equally often, in a shuffled order):

* ``request``: while the double is answering the turn's first, second or third request;
* ``tool``: while the tool of a chosen call is running (at a random moment of its sleep);
* ``commit``: inside a store write, just before its k-th write statement (BEGIN, INSERT, UPDATE or
  COMMIT), by a SQLite trace installed in the process (SQLite only);
* ``anytime``: at a random moment after the process's first request.

Afterwards the database opens cleanly (SQLite ``integrity_check`` and ``foreign_key_check``), and:
every executed call is stored exactly once, with its answer or marked as having none; every finished
reply holds all the calls it made; every unfinished reply holds a prefix of them; the conversation
renders validly on every HTTP wire; and one more turn (not killed) finishes and sends every stored call
as a call (read back with the Chat wire's request parser).

The seed is ``$TOOLREPLAY_CRASH_SEED`` or a fixed default; a failure names it, and setting the variable
to it replays the same kill points (the moments of ``tool`` and ``anytime`` kills are seeded fractions of
a wall-clock pause, so those land close to, not exactly at, the same instruction).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from store_fixtures import _fresh_pg_database, store, store_factory, store_url  # noqa: F401
from toolreplay._api import render
from toolreplay._audit.validate import rule_problems
from toolreplay._history import History, ToolCall, ToolSpec
from toolreplay._loop import run_turn
from toolreplay._replay import NO_ANSWER
from toolreplay._store import Store, open_store
from toolreplay._tools import Tool, ToolRegistry
from toolreplay.testing import Call, Calls, ProviderDouble, RecordedRequest, Text
from toolreplay.wires import parse_request

pytestmark = pytest.mark.slow  # real processes SIGKILLed over and over: see docs/design.md, design 26

HERE = Path(__file__).resolve().parent
SEED_ENV = "TOOLREPLAY_CRASH_SEED"
DEFAULT_SEED = 8_2026
ROUNDS = 2  # requests with calls per turn, two calls each, then a text
CALLS = 2 * ROUNDS
HTTP_VESSELS = ("kimi", "openai-responses", "anthropic", "gemini", "ollama")


def tool_ms(token: str) -> int:
    return 40 + zlib.crc32(token.encode()) % 60


def tokens(label: str) -> list[str]:
    return [f"{label}/{j}" for j in range(CALLS)]


def crash_seed() -> int:
    """The seed of the kill points: ``$TOOLREPLAY_CRASH_SEED`` to replay a failure, else the default."""
    raw = os.environ.get(SEED_ENV, "").strip()
    if not raw:
        return DEFAULT_SEED
    try:
        return int(raw)
    except ValueError:
        raise AssertionError(f"{SEED_ENV}={raw!r}: not an integer seed") from None


@dataclass(frozen=True)
class Kill:
    """Where one turn process is killed: ``mode`` and the point inside it, drawn from the seed."""

    mode: str
    request: int = 0  # request: killed while the double answers this request (0 = the first)
    write: int = 0  # commit: killed just before this write statement (1 = the first)
    call: int = 0  # tool: killed while this call's tool runs
    pause: float = 0.0  # tool and anytime: how far into the pause (a fraction of it)


NO_KILL = Kill("none")


def kill_plan(seed: int, conversation: str, turns: int, *, sqlite: bool) -> list[Kill]:
    """The kill points of a conversation's turns: a pure function of the seed (so a failure replays)."""
    rng = random.Random(f"{seed}:{conversation}")
    modes = ["request", "tool", "commit", "anytime"] if sqlite else ["request", "tool", "anytime"]
    order = (modes * (turns // len(modes) + 1))[:turns]
    rng.shuffle(order)
    return [
        Kill(m, rng.randint(0, ROUNDS), rng.randint(1, 40), rng.randrange(CALLS), rng.random()) for m in order
    ]


@dataclass
class Launch:
    label: str
    conversation: str
    mode: str
    returncode: int | None = None
    stderr: str = ""


@dataclass
class CrashLab:
    """The double, the processes in flight, and where each should be killed."""

    db: str
    tmp: Path
    sqlite: bool
    double: ProviderDouble = field(init=False)
    procs: dict[str, subprocess.Popen[str]] = field(default_factory=dict)
    kill_on_request: dict[str, int] = field(default_factory=dict)
    first_request: dict[str, threading.Event] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    launches: list[Launch] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.double = ProviderDouble(responder=self.respond)

    # -- the double's side --------------------------------------------------------------------------

    def respond(self, req: RecordedRequest) -> Any:
        messages = req.body["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        label = messages[last_user]["content"]
        answered = sum(1 for m in messages[last_user:] if m["role"] == "tool")
        with self.lock:
            event = self.first_request.get(label)
            proc = self.procs.get(label)
            kill_at = self.kill_on_request.get(label)
        if event is not None:
            event.set()
        if proc is not None and kill_at == answered // 2:
            proc.send_signal(signal.SIGKILL)  # killed while its request is being answered
            proc.wait()
        if answered >= CALLS:
            return Text(f"finished {label}")
        mine = tokens(label)[answered : answered + 2]
        return Calls([Call("work", {"token": t, "ms": tool_ms(t)}) for t in mine])

    # -- launching ------------------------------------------------------------------------------------

    def command(self, label: str, conversation: str, kill_at_write: int | None) -> list[str]:
        args = [
            "turn",
            label,
            "--vessel",
            "kimi",
            "--conversation",
            conversation,
            "--base-url",
            self.double.base_url_for("kimi"),
            "--db",
            self.db,
            "--tools",
            "helpers_crash:TOOLS",
            "--max-steps",
            str(ROUNDS + 2),
        ]
        if kill_at_write is not None:
            return [sys.executable, str(HERE / "helpers_crash.py"), str(kill_at_write), *args]
        return [sys.executable, "-m", "toolreplay", *args]

    def markers(self, label: str) -> Path:
        return self.tmp / f"markers-{label.replace('/', '_')}.txt"

    def launch(self, label: str, conversation: str, kill: Kill) -> Launch:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
        env["CRASH_MARKERS"] = str(self.markers(label))
        run = Launch(label, conversation, kill.mode)
        started = threading.Event()
        kill_at_write = kill.write if kill.mode == "commit" else None
        with self.lock:
            self.first_request[label] = started
            if kill.mode == "request":
                self.kill_on_request[label] = kill.request
            proc = subprocess.Popen(
                self.command(label, conversation, kill_at_write),
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            self.procs[label] = proc
        if kill.mode == "tool":
            self._kill_during_tool(proc, label, kill)
        elif kill.mode == "anytime" and started.wait(60):
            time.sleep(kill.pause * 0.6)
            proc.send_signal(signal.SIGKILL)
        _, run.stderr = proc.communicate(timeout=120)
        run.returncode = proc.returncode
        with self.lock:
            self.launches.append(run)
        return run

    def _kill_during_tool(self, proc: subprocess.Popen[str], label: str, kill: Kill) -> None:
        token = tokens(label)[kill.call]
        marker = self.markers(label)
        pause = kill.pause * tool_ms(token) / 1000
        while proc.poll() is None:
            if marker.exists() and f"start {token}\n" in marker.read_text():
                time.sleep(pause)
                proc.send_signal(signal.SIGKILL)
                return
            time.sleep(0.002)

    def executed(self) -> dict[str, bool]:
        """Token -> whether the tool also finished, for every call whose tool started."""
        out: dict[str, bool] = {}
        for path in self.tmp.glob("markers-*.txt"):
            for line in path.read_text().splitlines():
                what, token = line.split(" ", 1)
                out[token] = out.get(token, False) or what == "done"
        return out


def run_conversation(lab: CrashLab, conversation: str, turns: int, seed: int) -> None:
    for k, kill in enumerate(kill_plan(seed, conversation, turns, sqlite=lab.sqlite)):
        lab.launch(f"{conversation}.t{k}", conversation, kill)


# --------------------------------------------------------------------------------------------------
# the checks


def check_database_file(path: str) -> None:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        conn.close()


def check_conversation(h: History, executed: dict[str, bool]) -> int:
    """The invariants after the crashes; returns how many calls are stored."""
    stored: dict[str, str | None] = {}
    for i, m in enumerate(h.messages):
        if m.role != "assistant":
            continue
        label = h.messages[i - 1].text  # each reply follows its own user message (one writer here)
        mine = [c.input["token"] for c in m.tool_uses]
        assert mine == tokens(label)[: len(mine)], f"{m.id}: not the calls its turn made, in order"
        for c in m.tool_uses:
            assert c.input["token"] not in stored, f"{c.input['token']} stored twice"
            stored[c.input["token"]] = c.answer
        if m.status == "complete":
            assert m.text == f"finished {label}" and len(mine) == CALLS, f"{m.id}: finished without its calls"
            assert all(c.answer is not None for c in m.tool_uses)
        else:
            # a reply its process never finished: read as interrupted, its writer gone (design 40);
            # every call answered but the one it died in
            assert m.status == "interrupted", m.status
            assert all(c.answer is not None for c in m.tool_uses[:-1]), m.id
    for token, answer in stored.items():
        assert answer in (None, f"did {token}"), (token, answer)
        if answer is not None:
            assert executed.get(token), f"{token}: answered but its tool never finished"
    conversation_tokens = {t for t in executed if t.startswith(f"{h.id}.")}
    lost = sorted(conversation_tokens - set(stored))
    assert not lost, f"executed calls missing from the store: {lost}"
    return len(stored)


def check_replay(lab: CrashLab, url: str, conversation: str) -> None:
    """The conversation renders validly everywhere, and a last turn sends every stored call as a call."""
    with open_store(url) as store:  # type: ignore[attr-defined]
        h = store.load(conversation)
    for vessel in HTTP_VESSELS:
        assert rule_problems(vessel, render(h, vessel)) == [], vessel
    label = f"{conversation}.final"
    run = lab.launch(label, conversation, NO_KILL)
    assert run.returncode == 0, run.stderr
    # a process killed while it sent leaves a request whose body is cut short (None: not JSON)
    sent_whole = [r for r in lab.double.requests if isinstance(r.body, dict)]
    first = next(r for r in sent_whole if r.body["messages"][-1].get("content") == label)
    assert rule_problems("kimi", first.body) == []
    sent = [
        (c.name, c.input, c.answer)
        for m in parse_request("openai-chat", first.body).messages
        for c in m.tool_uses
    ]
    want = [
        (c.name, c.input, NO_ANSWER if c.answer is None else c.answer)
        for m in h.messages
        for c in m.tool_uses
    ]
    assert sent == want


def crash_run(db: str, tmp: Path, *, sqlite: bool, conversations: int, turns: int) -> dict[str, int]:
    """Run the killed turns and every check; the number of kills per mode. A failure names the seed."""
    seed = crash_seed()
    try:
        return _crash_run(db, tmp, seed, sqlite=sqlite, conversations=conversations, turns=turns)
    except BaseException as exc:
        exc.add_note(f"crash seed {seed}: replay these kill points with {SEED_ENV}={seed}")
        raise


def _crash_run(
    db: str, tmp: Path, seed: int, *, sqlite: bool, conversations: int, turns: int
) -> dict[str, int]:
    lab = CrashLab(db, tmp, sqlite)
    with lab.double:
        threads = [
            threading.Thread(target=run_conversation, args=(lab, f"c{n}", turns, seed))
            for n in range(conversations)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        unexpected = [r for r in lab.launches if r.returncode not in (0, -signal.SIGKILL)]
        assert not unexpected, [(r.label, r.mode, r.returncode, r.stderr[-500:]) for r in unexpected]
        if sqlite:
            check_database_file(db)
        executed = lab.executed()
        calls = 0
        with open_store(db) as store:  # type: ignore[attr-defined]
            for n in range(conversations):
                calls += check_conversation(store.load(f"c{n}"), executed)
        for n in range(conversations):
            check_replay(lab, db, f"c{n}")
    kills: dict[str, int] = {}
    for r in lab.launches:
        if r.returncode == -signal.SIGKILL:
            kills[r.mode] = kills.get(r.mode, 0) + 1
    kills["launches"] = len(lab.launches)
    kills["calls"] = calls
    kills["executed"] = len(executed)
    kills["seed"] = seed
    return kills


def report(capsys: pytest.CaptureFixture[str], backend: str, counts: dict[str, int]) -> int:
    killed = {k: v for k, v in counts.items() if k not in ("launches", "calls", "executed", "seed")}
    total = sum(killed.values())
    modes = ", ".join(f"{k} {v}" for k, v in sorted(killed.items()))
    with capsys.disabled():
        print(
            f"\n[crash] {backend}: {total} SIGKILLs ({modes}) "
            f"in {counts['launches']} turn processes; {counts['executed']} executed calls, "
            f"{counts['calls']} stored calls checked (seed {counts['seed']})"
        )
    return total


def test_sigkill_anywhere_loses_no_executed_call_sqlite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    counts = crash_run(str(tmp_path / "crash.db"), tmp_path, sqlite=True, conversations=3, turns=12)
    assert report(capsys, "sqlite", counts) >= 27  # most of the 36 killed turns (a few may finish first)
    assert all(counts.get(mode, 0) >= 3 for mode in ("request", "tool", "commit", "anytime")), counts


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    yield from _fresh_pg_database(request)


def test_sigkill_anywhere_loses_no_executed_call_postgres(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    counts = crash_run(pg_url, tmp_path, sqlite=False, conversations=2, turns=7)
    assert report(capsys, "postgres", counts) >= 9
    assert all(counts.get(mode, 0) >= 1 for mode in ("request", "tool", "anytime")), counts


def test_kill_points_come_from_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = kill_plan(7, "c0", 12, sqlite=True)
    assert plan == kill_plan(7, "c0", 12, sqlite=True)  # the same seed, the same kill points
    assert plan != kill_plan(8, "c0", 12, sqlite=True) and plan != kill_plan(7, "c1", 12, sqlite=True)
    assert sorted(k.mode for k in plan) == sorted(["request", "tool", "commit", "anytime"] * 3)
    assert {k.mode for k in kill_plan(7, "c0", 7, sqlite=False)} == {"request", "tool", "anytime"}
    monkeypatch.setenv(SEED_ENV, "123")
    assert crash_seed() == 123
    monkeypatch.setenv(SEED_ENV, "")
    assert crash_seed() == DEFAULT_SEED
    monkeypatch.setenv(SEED_ENV, "x")
    with pytest.raises(AssertionError, match="not an integer seed"):
        crash_seed()


def test_a_crash_run_failure_names_its_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(db: str, tmp: Path, seed: int, **_: Any) -> dict[str, int]:
        raise AssertionError(f"c0: executed calls missing from the store (kill points of seed {seed})")

    monkeypatch.setenv(SEED_ENV, "4242")
    monkeypatch.setattr(sys.modules[__name__], "_crash_run", failing)
    with pytest.raises(AssertionError, match="seed 4242") as failed:
        crash_run(str(tmp_path / "crash.db"), tmp_path, sqlite=True, conversations=1, turns=1)
    assert failed.value.__notes__ == [f"crash seed 4242: replay these kill points with {SEED_ENV}=4242"]


# --------------------------------------------------------------------------------------------------
# the fix the crash test found: a call is committed before its tool runs (regressions, fast)


def test_a_call_is_stored_before_its_tool_runs(tmp_path: Path) -> None:
    seen: list[list[tuple[str, str | None]]] = []
    with open_store(str(tmp_path / "t.db")) as store:  # type: ignore[attr-defined]

        def work(args: Any) -> str:
            reply = store.load("c").messages[-1]
            seen.append([(c.input["token"], c.answer) for c in reply.tool_uses])
            return f"did {args['token']}"

        reg = ToolRegistry([Tool(ToolSpec("work"), work)])
        with ProviderDouble() as double:
            for vessel in ("kimi", "gemini"):  # with provider ids, and without (Gemini sends none)
                double.script(Calls([Call("work", {"token": "a"}), Call("work", {"token": "a"})]), Text("ok"))
                run_turn("c", "go", double.vessel(vessel), reg, store=store)
        # while the tool ran, its call was already committed, unanswered; each answer then filled it in
        assert seen == [[("a", None)], [("a", "did a"), ("a", None)]] * 2
        for reply in store.load("c").messages[1::2]:
            assert [(c.input, c.answer) for c in reply.tool_uses] == [({"token": "a"}, "did a")] * 2


def test_an_unanswered_call_without_an_id_is_filled_in(store: Store) -> None:
    store.begin_reply("c", "a1", vessel="gemini", created_at=None)
    store.record_call("c", "a1", ToolCall("t", {"x": 1}, "has an id", call_id="k"))
    store.record_call("c", "a1", ToolCall("t", {"x": 1}))  # no id: after a call with one, appended
    store.record_call("c", "a1", ToolCall("t", {"x": 1}, "filled", provider_data={"gemini": {"s": "y"}}))
    store.record_call("c", "a1", ToolCall("t", {"x": 1}))  # the latest has an answer: appended
    store.record_call("c", "a1", ToolCall("t", {"x": 2}, "other input"))  # not the same call: appended
    store.record_call("c", "a1", ToolCall("t", {"x": 1}, "late"))  # not the latest call: appended
    calls = store.load("c").messages[0].tool_uses
    assert [(c.input, c.answer, c.call_id) for c in calls] == [
        ({"x": 1}, "has an id", "k"),
        ({"x": 1}, "filled", None),
        ({"x": 1}, None, None),
        ({"x": 2}, "other input", None),
        ({"x": 1}, "late", None),
    ]
    assert calls[1].provider_data == {"gemini": {"s": "y"}}

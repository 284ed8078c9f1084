"""Issue 4 §6 against the provider doubles on 127.0.0.1: real turns on every vessel, calls stored and
replayed as calls in each wire's shape, vessels switched mid-conversation, retries, a provider's 400, and a
process killed during a tool call. (The claude vessel is covered by
tests/wires/claude_prompt/test_claude_cli.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers_shapes import calls_in
from toolreplay._errors import BadRequestError
from toolreplay._loop import Retrying, TurnEvent, TurnOptions, run_turn
from toolreplay._replay import NO_ANSWER
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import build_registry
from toolreplay._vessels import BUILTIN
from toolreplay.testing import Call, Calls, Error, ProviderDouble, Text
from wire_helpers import is_http

HTTP_VESSELS = [name for name, v in BUILTIN.items() if is_http(v.wire)]


def close(n: int) -> tuple[str, dict[str, Any], str]:
    return ("coop", {"action": "close", "id": n}, "status: closed")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "acceptance.db")
    for text in ("fix the flaky build", "update the README", "rotate the staging keys"):
        board_of(s).add(text)
    yield s
    s.close()


@pytest.fixture(scope="module")
def _server() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.fixture
def double(_server: ProviderDouble) -> ProviderDouble:
    _server.clear()  # one server for the module (stopping one takes half a second), fresh per test
    return _server


def _turn(store: SQLiteStore, double: ProviderDouble, vessel: str, text: str, **kw: Any) -> Any:
    return run_turn(
        "accept",
        text,
        double.vessel(vessel),
        build_registry(["coop"], store),
        store=store,
        **kw,
    )


@pytest.mark.slow
@pytest.mark.parametrize("vessel", HTTP_VESSELS)
def test_three_turns_closing_todos(vessel: str, store: SQLiteStore, double: ProviderDouble) -> None:
    wire = BUILTIN[vessel].wire
    for n in (1, 2, 3):
        double.script(Calls([Call("coop", {"action": "close", "id": n})]), Text(f"Closed #{n}."))
        result = _turn(store, double, vessel, f"Todo #{n} is done, close it.")
        assert result.reply.text == f"Closed #{n}." and result.flag is None
    assert all(r.status == 200 and r.rejected is None for r in double.requests)
    # the store holds every call with its answer
    replies = [m for m in store.load("accept").messages if m.role == "assistant"]
    assert [(m.status, [(c.name, c.input, c.answer) for c in m.tool_uses]) for m in replies] == [
        ("complete", [close(1)]),
        ("complete", [close(2)]),
        ("complete", [close(3)]),
    ]
    assert all(board_of(store).get(n).status == "closed" for n in (1, 2, 3))  # type: ignore[union-attr]
    # requests: turn k sends 2 (the call, then the answer); the 2nd and 3rd turns' first requests carry
    # the earlier calls as calls, in this wire's shape
    bodies = [r.body for r in double.requests]
    assert len(bodies) == 6
    assert calls_in(wire, bodies[0]) == []
    assert calls_in(wire, bodies[1]) == [close(1)]
    assert calls_in(wire, bodies[2]) == [close(1)]
    assert calls_in(wire, bodies[4]) == [close(1), close(2)]
    assert calls_in(wire, bodies[5]) == [close(1), close(2), close(3)]


def test_switching_kimi_gemini_anthropic(store: SQLiteStore, double: ProviderDouble) -> None:
    for n, vessel in ((1, "kimi"), (2, "gemini"), (3, "anthropic")):
        double.script(Calls([Call("coop", {"action": "close", "id": n})]), Text(f"Closed #{n}."))
        _turn(store, double, vessel, f"Close #{n}.")
    reqs = double.requests
    assert [r.vessel for r in reqs] == ["kimi", "kimi", "gemini", "gemini", "anthropic", "anthropic"]
    assert all(r.status == 200 for r in reqs)
    # gemini sees kimi's call as a signed functionCall; anthropic sees both earlier calls as tool_use
    assert calls_in("gemini", reqs[2].body) == [close(1)]
    first_call = next(p for c in reqs[2].body["contents"] for p in c["parts"] if "functionCall" in p)
    assert first_call["thoughtSignature"] == "skip_thought_signature_validator"
    assert calls_in("anthropic", reqs[4].body) == [close(1), close(2)]
    ids = [b["id"] for m in reqs[5].body["messages"] if m["role"] == "assistant"
           for b in m["content"] if b["type"] == "tool_use"]  # fmt: skip
    assert ids == ["replay_a2_0", "replay_a4_0", "replay_a6_0"]
    assert [m.vessel for m in store.load("accept").messages if m.role == "assistant"] == [
        "kimi",
        "gemini",
        "anthropic",
    ]


def test_a_429_with_retry_after_is_retried(store: SQLiteStore, double: ProviderDouble) -> None:
    double.script(Error(429, "Rate limit reached", retry_after=1), Text("Hello."))
    events: list[TurnEvent] = []
    start = time.monotonic()
    result = _turn(store, double, "openai", "hi", on_event=events.append)
    assert time.monotonic() - start >= 0.95
    assert result.reply.text == "Hello."
    assert [r.status for r in double.requests] == [429, 200]
    retry = next(e for e in events if isinstance(e, Retrying))
    assert retry.delay == 1.0 and "Rate limit reached" in retry.error


def test_a_400_surfaces_the_providers_message_and_leaves_nothing_behind(
    store: SQLiteStore, double: ProviderDouble
) -> None:
    message = "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: x"
    double.script(Error(400, message))
    with pytest.raises(BadRequestError) as err:
        _turn(store, double, "anthropic", "Close #1.")
    assert message in str(err.value) and err.value.status == 400
    assert len(double.requests) == 1  # never retried
    assert not store.exists("accept")  # refused before anything was answered: nothing is left (design 28)
    assert board_of(store).get(1).status == "open"  # type: ignore[union-attr]
    # the next turn sends no trace of the failed one
    double.script(Text("Ok."))
    _turn(store, double, "anthropic", "Try again.")
    assert [m["role"] for m in double.requests[-1].body["messages"]] == ["user"]
    assert calls_in("anthropic", double.requests[-1].body) == []


BLOCKING = """
import time
from pathlib import Path
from toolreplay._tools import tool

@tool("block", "Blocks until killed", {"type": "object", "properties": {}})
def block(args):
    Path(__file__).with_name("blocking.started").write_text("started")
    time.sleep(120)
    return "never"
"""


@pytest.mark.slow
def test_killed_during_a_tool_call_keeps_the_executed_calls(
    tmp_path: Path, store: SQLiteStore, double: ProviderDouble
) -> None:
    (tmp_path / "blocking_tools.py").write_text(BLOCKING, encoding="utf-8")
    marker = tmp_path / "blocking.started"
    double.script(Calls([Call("coop", {"action": "close", "id": 1}), Call("block", {})]))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolreplay", "turn", "Close #1 and wait.", "--vessel", "kimi",
         "--conversation", "accept", "--tools", "coop,blocking_tools:block", "--db", store.url,
         "--base-url", double.base_url_for("kimi")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the blocking tool never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    reply = store.load("accept").messages[1]
    # the process never got to finish it, and is gone: read as interrupted (design 40)
    assert reply.status == "interrupted"
    # both calls were made: the finished one with its answer, the one killed mid-run kept without one
    # (the loop commits a call before its tool runs; issue 8 §4)
    assert [(c.name, c.input, c.answer) for c in reply.tool_uses] == [close(1), ("block", {}, None)]
    assert board_of(store).get(1).status == "closed"  # type: ignore[union-attr]
    # the next turn replays the executed calls as calls: the answer, and the mark of no answer
    double.script(Text("#1 is closed."))
    _turn(store, double, "kimi", "Where were we?")
    assert calls_in("openai-chat", double.requests[-1].body) == [close(1), ("block", {}, NO_ANSWER)]


def test_dry_run_conversation(store: SQLiteStore, double: ProviderDouble) -> None:
    double.script(Calls([Call("coop", {"action": "close", "id": 1})]), Text("Closed #1 (dry)."))
    _turn(store, double, "gemini", "Close #1.", options=TurnOptions(dry_tools=True))
    assert board_of(store).get(1).status == "open"  # type: ignore[union-attr]
    assert calls_in("gemini", double.requests[1].body) == [
        ("coop", {"action": "close", "id": 1}, "[dry run] coop close 1: not executed")
    ]

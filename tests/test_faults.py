"""Faults, end to end: the provider double on 127.0.0.1 misbehaves in the middle of a turn.

Every case runs a real turn (toolreplay._loop) through the real transport against the double: the model
first makes a call (the tool runs and the call is recorded), then the fault hits the continuation
request. The transport's documented policy (toolreplay._transport.client.RetryPolicy) decides what follows:

* retried (429 with and without Retry-After, 500, 502, 503, a hung connection, a reset before or during
  the answer, a stream cut before its final event): the turn finishes; the stored reply holds exactly
  the retried answer's text (nothing of the broken attempt), its call once, and the retried request
  carries the same bytes as the failed one;
* surfaced (the same faults every attempt, a body that is not JSON, a Retry-After longer than the policy
  waits, 400, 401): the turn raises the transport's error with a one-line message; the reply is stored
  ``interrupted`` with the call that was executed and no half-written text; the next turn's request
  carries that call as a call (read back with the wire's own request parser) and passes the wire rules;
* broken JSON arguments: the call is stored with its raw text and an error answer, never executed, and
  the turn goes on.

Each case runs on every HTTP wire (Chat through kimi, Responses, Anthropic, Gemini, Ollama), streamed;
the faults that differ without streaming run whole too; the store is SQLite, and PostgreSQL for a
sample of cases when TOOLREPLAY_TEST_PG is set.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from store_fixtures import _fresh_pg_database
from toolreplay._audit.validate import rule_problems
from toolreplay._errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionFault,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    ResponseFormatError,
    ServerError,
)
from toolreplay._history import ToolSpec
from toolreplay._loop import Retrying, TextDelta, TurnEvent, TurnOptions, TurnResult, run_turn_async
from toolreplay._store import Store, open_store
from toolreplay._tools import Tool, ToolRegistry
from toolreplay._transport.client import RetryPolicy, Transport
from toolreplay.testing import (
    BrokenArgs,
    Call,
    Calls,
    CutStream,
    Error,
    Hang,
    Item,
    NotJSON,
    ProviderDouble,
    Reset,
    Text,
)
from toolreplay.wires import parse_request

VESSELS = ("kimi", "openai-responses", "anthropic", "gemini", "ollama")
ATTEMPTS = 3
TIMEOUT_S = 1.0  # the transport's timeout where the double hangs: each hung attempt costs this much
PARTIAL = "PARTIAL-TEXT-OF-A-BROKEN-ATTEMPT " * 3
FINAL = "Finished after the fault."


@dataclass(frozen=True)
class Fault:
    name: str
    items: tuple[Item, ...]
    error: type[ProviderError] | None = None  # None: retried until the turn finishes
    delay: float | None = None  # the wait the policy must choose (Retry-After), when it is fixed
    attempts: int = ATTEMPTS
    streamed_only: bool = False
    message: str = ""  # a regex the error's message must match (surfaced, or each retried one)

    @property
    def timeout(self) -> float:
        """The transport's timeout: short where the double hangs (each attempt costs it), else generous,
        so a slow CI machine never times out a healthy answer."""
        return TIMEOUT_S if any(isinstance(i, Hang) for i in self.items) else 30.0


def _every(name: str, item: Item, error: type[ProviderError], message: str = "") -> Fault:
    return Fault(f"{name} every time", (item,) * ATTEMPTS, error, message=message)


CUT = r"final event|without sending complete|connection failed"
RETRIED = [
    Fault("429 Retry-After", (Error(429, retry_after=2),), delay=2.0, message="HTTP 429"),
    Fault("429 no Retry-After", (Error(429),), message="HTTP 429"),
    Fault("500", (Error(500),), message="HTTP 500"),
    Fault("502", (Error(502),), message="HTTP 502"),
    Fault("503 Retry-After", (Error(503, retry_after=1),), delay=1.0, message="HTTP 503"),
    Fault("reset before answering", (Reset(),), message="connection failed"),
    Fault("reset mid-stream", (Reset(after_events=2, then=Text(PARTIAL)),), message="connection failed"),
    Fault("stream cut before the final event", (CutStream(after_events=2, then=Text(PARTIAL)),), message=CUT),
    Fault("hung, then answers", (Hang(seconds=30),), message="no answer in time"),
    Fault(
        "hung mid-stream",
        (Hang(seconds=30, after_events=2, then=Text(PARTIAL)),),
        streamed_only=True,
        message="no answer in time",
    ),
    Fault(
        "several faults in a row",
        (Error(503), Reset(after_events=1, then=Text(PARTIAL))),
        message="HTTP 503|connection failed",
    ),
]
SURFACED = [
    _every("500", Error(500), ServerError, r"HTTP 500"),
    _every("502", Error(502), ServerError, r"HTTP 502"),
    _every("503", Error(503), ServerError, r"HTTP 503"),
    _every("429", Error(429), RateLimitError, r"HTTP 429"),
    _every("reset", Reset(after_events=2, then=Text(PARTIAL)), ConnectionFault, r"connection failed"),
    _every(
        "stream cut",
        CutStream(after_events=2, then=Text(PARTIAL)),
        ConnectionFault,
        r"final event|without sending complete",
    ),
    Fault("429 Retry-After beyond the policy", (Error(429, retry_after=3600),), RateLimitError, attempts=1),
    Fault("not JSON", (NotJSON(),), ResponseFormatError, attempts=1, message=r"not JSON"),
    Fault("400", (Error(400, "messages: bad shape"),), BadRequestError, attempts=1, message="bad shape"),
    Fault("401", (Error(401),), AuthenticationError, attempts=1, message=r"HTTP 401"),
]
HUNG_EVERY_TIME = _every("hung", Hang(seconds=30), ProviderTimeout, r"no answer in time")


@dataclass
class Bench:
    """One backend for a module's cases: a store opened per case, the double, the tool's log."""

    url: str
    double: ProviderDouble
    executed: list[Mapping[str, Any]] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)

    def registry(self) -> ToolRegistry:
        def work(args: Mapping[str, Any]) -> str:
            self.executed.append(dict(args))
            return f"worked {args.get('n')}"

        spec = ToolSpec("work", "Do some work", {"type": "object", "properties": {"n": {"type": "integer"}}})
        return ToolRegistry([Tool(spec, work)])

    def turn(
        self, store: Store, cid: str, text: str, vessel: str, stream: bool, timeout: float = 30.0
    ) -> tuple[TurnResult, list[TurnEvent]]:
        events: list[TurnEvent] = []

        async def wait(seconds: float) -> None:
            self.waits.append(seconds)  # recorded, not slept: the policy's choice is what is tested

        async def go() -> TurnResult:
            policy = RetryPolicy(max_attempts=ATTEMPTS, sleep=wait)
            async with Transport(retry=policy, timeout=timeout) as transport:
                return await run_turn_async(
                    cid,
                    text,
                    self.double.vessel(vessel),
                    self.registry(),
                    store=store,
                    transport=transport,
                    options=TurnOptions(stream=stream, max_requests=4),
                    on_event=events.append,
                )

        try:
            return asyncio.run(go()), events
        except ProviderError as exc:
            exc.events = events  # type: ignore[attr-defined]
            raise


@pytest.fixture(scope="module")
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.fixture
def bench(double: ProviderDouble, tmp_path: Path) -> Bench:
    double.clear()
    return Bench(str(tmp_path / "faults.db"), double)


@pytest.fixture(scope="module")
def pg_bench(double: ProviderDouble, request: pytest.FixtureRequest) -> Iterator[Bench]:
    for url in _fresh_pg_database(request):
        yield Bench(url, double)


def conversation_id(request: pytest.FixtureRequest) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", request.node.name)[-60:]


def check_stored(store: Store, cid: str, *, status: str, text: str) -> None:
    """The reply: the executed call once, answered; exactly the expected text; no reply left open."""
    h = store.load(cid)
    assert [m.role for m in h.messages] == ["user", "assistant"]
    reply = h.messages[1]
    assert (reply.status, reply.text) == (status, text)
    assert [(c.name, c.input, c.answer, c.is_error) for c in reply.tool_uses] == [
        ("work", {"n": 1}, "worked 1", False)
    ]


def replayed_calls(vessel: str, body: Mapping[str, Any]) -> list[tuple[str, Any, str | None]]:
    from toolreplay._vessels import get_vessel

    h = parse_request(get_vessel(vessel).wire, body)
    return [(c.name, c.input, c.answer) for m in h.messages for c in m.tool_uses]


def run_retried(bench: Bench, store: Store, cid: str, vessel: str, fault: Fault, stream: bool) -> None:
    d = bench.double
    d.script(Calls([Call("work", {"n": 1})]), *fault.items, Text(FINAL))
    result, events = bench.turn(store, cid, "Do the work.", vessel, stream, fault.timeout)
    assert result.stopped == "answer" and result.reply.text == FINAL
    check_stored(store, cid, status="complete", text=FINAL)  # nothing of the broken attempt
    assert bench.executed == [{"n": 1}]  # the tool ran once, never again on a retry
    retries = [e for e in events if isinstance(e, Retrying)]
    assert len(retries) == len(fault.items) == len(bench.waits)
    assert all(re.search(fault.message, r.error) for r in retries), [r.error for r in retries]
    if fault.delay is not None:
        assert bench.waits == [fault.delay]  # Retry-After honoured
    sent = d.requests
    assert len(sent) == 2 + len(fault.items) and d.pending == []
    assert all(r.raw == sent[1].raw for r in sent[1:])  # a retry sends the very same bytes
    assert rule_problems(vessel, sent[-1].body) == []
    if any(isinstance(e, TextDelta) and "PARTIAL" in e.text for e in events):
        assert "PARTIAL" not in store.load(cid).messages[1].text


def run_surfaced(bench: Bench, store: Store, cid: str, vessel: str, fault: Fault, stream: bool) -> None:
    d = bench.double
    d.script(Calls([Call("work", {"n": 1})]), *fault.items[: fault.attempts])
    assert fault.error is not None
    with pytest.raises(fault.error) as err:
        bench.turn(store, cid, "Do the work.", vessel, stream, fault.timeout)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{vessel}: ") and re.search(fault.message, msg), msg
    assert len(d.requests) == 1 + fault.attempts and d.pending == []
    # the words the last attempt showed before it broke are kept (issue 27, item 7); a retried
    # attempt's words were superseded
    events = err.value.events  # type: ignore[attr-defined]
    last = max((i for i, e in enumerate(events) if isinstance(e, Retrying)), default=-1)
    shown = "".join(e.text for e in events[last + 1 :] if isinstance(e, TextDelta))
    assert PARTIAL.startswith(shown)
    check_stored(store, cid, status="interrupted", text=shown)
    meta = store.load(cid).messages[1].meta
    assert meta is not None and meta["error"] == msg[:500]
    assert bench.executed == [{"n": 1}]
    # the next turn replays the interrupted turn's executed call as a call, with its answer
    d.script(Text("Picked up where it stopped."))
    bench.turn(store, cid, "Go on.", vessel, stream)
    body = d.requests[-1].body
    assert replayed_calls(vessel, body) == [("work", {"n": 1}, "worked 1")]
    assert rule_problems(vessel, body) == []
    assert [m.status for m in store.load(cid).messages] == ["complete", "interrupted", "complete", "complete"]


def _cases(faults: list[Fault]) -> list[Any]:
    out = []
    for f in faults:
        for v in VESSELS:
            out.append(pytest.param(v, f, True, id=f"{v}-{f.name}-streamed"))
        if not f.streamed_only and any(isinstance(i, Reset | CutStream | Hang | NotJSON) for i in f.items):
            out.append(pytest.param("kimi", f, False, id=f"kimi-{f.name}-whole"))
            out.append(pytest.param("anthropic", f, False, id=f"anthropic-{f.name}-whole"))
    return out


def _fast(faults: list[Fault]) -> list[Fault]:
    return [f for f in faults if not any(isinstance(i, Hang) for i in f.items)]


@pytest.mark.parametrize(("vessel", "fault", "stream"), _cases(_fast(RETRIED)))
def test_retried_faults_finish_the_turn(
    bench: Bench, vessel: str, fault: Fault, stream: bool, request: pytest.FixtureRequest
) -> None:
    with open_store(bench.url) as store:  # type: ignore[attr-defined]
        run_retried(bench, store, conversation_id(request), vessel, fault, stream)


@pytest.mark.parametrize(("vessel", "fault", "stream"), _cases(SURFACED))
def test_surfaced_faults_keep_the_executed_call(
    bench: Bench, vessel: str, fault: Fault, stream: bool, request: pytest.FixtureRequest
) -> None:
    with open_store(bench.url) as store:  # type: ignore[attr-defined]
        run_surfaced(bench, store, conversation_id(request), vessel, fault, stream)


# A hung double costs a whole timeout per attempt: these run on two wires, not five.
HUNG = [f for f in RETRIED if f not in _fast(RETRIED)]


@pytest.mark.parametrize("vessel", ["kimi", "anthropic"])
@pytest.mark.parametrize("fault", HUNG, ids=[f.name for f in HUNG])
def test_a_hung_provider_times_out_and_is_retried(
    bench: Bench, vessel: str, fault: Fault, request: pytest.FixtureRequest
) -> None:
    with open_store(bench.url) as store:  # type: ignore[attr-defined]
        run_retried(bench, store, conversation_id(request), vessel, fault, True)


def test_a_provider_hung_every_time_is_surfaced(bench: Bench, request: pytest.FixtureRequest) -> None:
    with open_store(bench.url) as store:  # type: ignore[attr-defined]
        run_surfaced(bench, store, conversation_id(request), "gemini", HUNG_EVERY_TIME, True)


@pytest.mark.parametrize("vessel", VESSELS)
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_broken_json_arguments_are_stored_raw_and_answered_with_an_error(
    bench: Bench, vessel: str, stream: bool, request: pytest.FixtureRequest
) -> None:
    cid = conversation_id(request)
    d = bench.double
    d.script(BrokenArgs("work", raw='{"n": 1'), Text("I will send valid JSON next time."))
    with open_store(bench.url) as store:  # type: ignore[attr-defined]
        result, _ = bench.turn(store, cid, "Do the work.", vessel, stream)
        assert result.stopped == "answer" and bench.executed == []  # never executed
        (call,) = store.load(cid).messages[1].tool_uses
        assert call.name == "work" and call.is_error and call.answer is not None
        assert isinstance(call.input, str) and call.input.startswith('{"n": 1')  # the raw text, kept
        assert "not valid JSON" in call.answer
        continuation = d.requests[1].body
        assert rule_problems(vessel, continuation) == []  # replayed validly, whatever the wire
        d.script(Text("ok"))
        bench.turn(store, cid, "Again.", vessel, stream)
        assert rule_problems(vessel, d.requests[-1].body) == []


@pytest.mark.parametrize("vessel", VESSELS)
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("raw", ['{"n": 1e999}', '{"n": [NaN]}', '{"n": -Infinity}'])
def test_a_number_json_cannot_represent_is_kept_as_sent_and_not_run(
    bench: Bench, vessel: str, stream: bool, raw: str, request: pytest.FixtureRequest
) -> None:
    """Read as inf or nan, the input would be stored as null and run as inf (issue 27, item 10)."""
    cid = conversation_id(request)
    d = bench.double
    d.script(BrokenArgs("work", raw=raw), Text("I will send a finite number."))
    with open_store(bench.url) as store:  # type: ignore[attr-defined]
        result, _ = bench.turn(store, cid, "Do the work.", vessel, stream)
        assert result.stopped == "answer" and bench.executed == []  # never run
        (call,) = store.load(cid).messages[1].tool_uses
        assert call.input == raw and call.is_error  # the model's text, as it sent it
        assert call.answer is not None and "cannot represent" in call.answer
        continuation = d.requests[1].body
        assert "cannot represent" in json.dumps(continuation)  # the model is told why
        assert rule_problems(vessel, continuation) == []


# PostgreSQL: a sample of the cases against one database for the module (one conversation per case).
PG_CASES = [
    pytest.param("kimi", RETRIED[0], id="kimi-429-Retry-After"),
    pytest.param("anthropic", RETRIED[6], id="anthropic-reset-mid-stream"),
    pytest.param("gemini", RETRIED[7], id="gemini-stream-cut"),
]


@pytest.mark.parametrize(("vessel", "fault"), PG_CASES)
def test_retried_faults_on_postgres(
    pg_bench: Bench, double: ProviderDouble, vessel: str, fault: Fault, request: pytest.FixtureRequest
) -> None:
    double.clear()
    pg_bench.executed.clear()
    pg_bench.waits.clear()
    with open_store(pg_bench.url) as store:  # type: ignore[attr-defined]
        run_retried(pg_bench, store, conversation_id(request), vessel, fault, True)


@pytest.mark.parametrize(("vessel", "fault"), [("openai-responses", SURFACED[4]), ("ollama", SURFACED[7])])
def test_surfaced_faults_on_postgres(
    pg_bench: Bench, double: ProviderDouble, vessel: str, fault: Fault, request: pytest.FixtureRequest
) -> None:
    double.clear()
    pg_bench.executed.clear()
    pg_bench.waits.clear()
    with open_store(pg_bench.url) as store:  # type: ignore[attr-defined]
        run_surfaced(pg_bench, store, conversation_id(request), vessel, fault, True)

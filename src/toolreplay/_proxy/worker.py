"""The recorder's thread: every exchange is read, audited, stored and logged here, one at a time, in the
order the answers ended (design 44: the event loop that serves the agents never waits on the store).

It gives way to the requests in hand (design 54): an exchange waits for a quiet moment (no request in
hand for :data:`QUIET` seconds) so that the recorder's work does not share the interpreter with a request
being served; it waits at most :data:`MAX_WAIT` seconds, or while fewer than :data:`MAX_WAITING` wait,
and not at all while someone waits for the store (:meth:`RecorderThread.settle`, ``drain``).

A failure here is logged (a console line, the log's ``error``) and never reaches the agent, whose answer
has already gone out.
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from toolreplay._errors import ToolreplayError
from toolreplay._limits import PROXY_MAX_BODY
from toolreplay._proxy.agents import session_of
from toolreplay._proxy.bodies import BodyError, json_body
from toolreplay._proxy.exchange import Exchange, model_of, read_answer, translated_answer
from toolreplay._proxy.matching import Known
from toolreplay._proxy.record import Recorded, Writer, Written, upstream_label
from toolreplay._transport.dump import redact
from toolreplay.wires import get_wire

if TYPE_CHECKING:
    from toolreplay._store import Store

log = logging.getLogger("toolreplay.proxy")
Say = Callable[[str], None]
#: Called on the recorder's thread once an exchange is handled: what was recorded (None: nothing).
Heard = Callable[[Exchange, Recorded | None], None]
_STOP = object()
#: Seconds with no request in hand before the recorder takes the next exchange.
QUIET = 0.02
#: The longest an exchange waits for a quiet moment, and how many may wait at once.
MAX_WAIT = 2.0
MAX_WAITING = 64


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one exchange: where it was recorded, what the audit found, or why it was not."""

    recorded: Recorded | None = None
    error: str | None = None


def log_line(ex: Exchange, outcome: Outcome) -> dict[str, Any]:
    """The ``--log`` record of one request."""
    rec = outcome.recorded
    line: dict[str, Any] = {
        "time": datetime.fromtimestamp(ex.started, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z",
        "wire": ex.wire,
        "path": ex.path,
        "model": ex.model,
        "upstream": upstream_label(ex),
        "agent": ex.agent,
        "conversation": rec.conversation_id if rec else None,
        "reply": rec.reply_id if rec else None,
        "status": ex.status,
        "stream": ex.streamed,
        "bytes": {"request": ex.request_bytes, "answer": ex.answer_bytes},
        "added_ms": round(ex.added_ms, 3),
        "audit": dict(rec.audit.counts) if rec else {},
        "repairs": list(ex.repairs),
    }
    if ex.received:
        line["sha256"] = hashlib.sha256(ex.received).hexdigest()  # the agent's bytes, as they came
    if ex.route:
        line.update(route=ex.route, vessel=ex.vessel, notes=list(ex.notes))
    if ex.cut:
        line["cut"] = ex.cut
    if ex.refused:
        line["refused"] = ex.refused
    if outcome.error:
        line["error"] = outcome.error
    return line


_NUMBERS = re.compile(r"\d+")


def note_kind(note: str) -> str:
    """What a note is about, its numbers aside (``messages[3]`` and ``messages[7]`` are one kind)."""
    return _NUMBERS.sub("#", note.partition(":")[0])


class RecorderThread:
    """Takes finished exchanges (:meth:`submit`, from any thread) and handles them on its own thread."""

    def __init__(
        self,
        open_store: Callable[[], Store] | None,
        *,
        log_path: Path | None = None,
        say: Say | None = None,
        max_answer: int = PROXY_MAX_BODY,
    ) -> None:
        self._open_store = open_store
        self._log_path = log_path
        self._say = say
        self._max = max_answer
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        #: told of each exchange handled, and asked what it knows of the conversation an exchange
        #: continues (the routed path's memory, design 54)
        self.heard: Heard | None = None
        self.knows: Callable[[Exchange], Known | None] | None = None
        self._thread = threading.Thread(target=self._run, name="toolreplay-proxy-recorder", daemon=True)
        self._idle = threading.Condition()
        self._submitted = 0
        self._handled = 0
        self._expected = 0
        self._serving = 0
        self._urgent = 0
        self._opaque = 0
        self._busy_at = time.monotonic()
        #: requests (by their :meth:`expect` number) whose answer the agent has whole while their exchange
        #: is not handled yet
        self._answered: set[int] = set()
        self.records: int = 0
        self.failures: int = 0
        self._noted: set[str] = set()
        #: what the recorder left in the conversations it wrote lately (not loaded back to extend them)
        self._written = Written()

    def start(self) -> RecorderThread:
        self._thread.start()
        return self

    def expect(self) -> int:
        """A request is on its way: :meth:`drain` waits for its exchange too (its answer may reach the
        agent a moment before the exchange is handed over). Its number, for :meth:`answered`."""
        with self._idle:
            self._expected += 1
            return self._expected

    def answered(self, ticket: int) -> None:
        """The answer to request ``ticket`` is whole on its way to the agent, its exchange handed over in a
        moment: :meth:`settle` waits for it (the agent may send its next request first, and a repair of
        that one reads back what this answer stored)."""
        with self._idle:
            self._answered.add(ticket)

    def submit(self, ex: Exchange, ticket: int = 0) -> None:
        """Queue the exchange of a request :meth:`expect` announced (never blocks: the caller is the
        event loop)."""
        opaque = ex.kind == "generate" and ex.history is None and ex.refused is None
        with self._idle:  # the recorder is not woken: it looks again once QUIET has passed
            self._submitted += 1
            self._opaque += opaque
            self._busy_at = time.monotonic()
        self._queue.put((ex, time.monotonic(), opaque, ticket))

    @contextmanager
    def serving(self) -> Iterator[None]:
        """A request in hand before :meth:`expect` announces its exchange (a routed one being
        translated): the recorder gives way meanwhile."""
        with self._idle:
            self._serving += 1
        try:
            yield
        finally:
            with self._idle:
                self._serving -= 1
                self._busy_at = time.monotonic()

    def opaque(self) -> int:
        """How many queued exchanges are the agents' own bodies, not yet read (pass-through): what they
        will store is not known before the recorder reads them."""
        with self._idle:
            return self._opaque

    def settle(self, timeout: float = 10.0) -> bool:
        """Wait until every exchange submitted so far is handled, and those of the answers already whole
        (:meth:`answered`), not those still coming: a repair reads back what the answers before it
        stored."""
        with self._idle:
            target, whole = self._submitted, set(self._answered)
            return self._urgently(
                lambda: self._handled >= target and whole.isdisjoint(self._answered), timeout
            )

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until every queued exchange is handled (tests, shutdown); False on timeout."""
        with self._idle:
            return self._urgently(lambda: self._handled == self._expected, timeout)

    def _urgently(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait (holding ``_idle``) until ``done()``; the recorder waits for no quiet moment meanwhile."""
        end = time.monotonic() + timeout
        self._urgent += 1
        self._idle.notify_all()
        try:
            while not done():
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
            return True
        finally:
            self._urgent -= 1

    def _quiet(self, since: float) -> None:
        """Wait for a quiet moment before handling an exchange submitted at ``since`` (module docstring)."""
        with self._idle:
            while not self._urgent and self._submitted - self._handled < MAX_WAITING:
                now = time.monotonic()
                left = min(MAX_WAIT - (now - since), QUIET - (now - self._busy_at))
                in_hand = self._serving + self._expected - self._submitted
                if now - since >= MAX_WAIT or (not in_hand and left <= 0):
                    return
                self._idle.wait(left if not in_hand else min(QUIET, MAX_WAIT - (now - since)))

    def close(self) -> None:
        self.drain()
        self._queue.put(_STOP)
        self._thread.join(timeout=30)

    def _opened(self) -> Store | None:
        """The recorder's store; one it cannot open is said once and the exchanges go on unrecorded, so
        the thread still counts them off (``drain`` and ``settle`` return; the queue does not grow)."""
        if self._open_store is None:
            return None
        try:
            return self._open_store()
        except ToolreplayError as exc:
            log.error("toolreplay proxy: nothing is recorded: %s", exc)
            return None

    def _run(self) -> None:
        store = self._opened()
        out: IO[str] | None = self._log_path.open("a", encoding="utf-8") if self._log_path else None
        try:
            while (item := self._queue.get()) is not _STOP:
                ex, since, opaque, ticket = item
                self._quiet(since)
                try:
                    self._handle(ex, store, out)
                finally:
                    with self._idle:
                        self._handled += 1
                        self._opaque -= opaque
                        self._answered.discard(ticket)
                        self._idle.notify_all()
        finally:
            if out is not None:
                out.close()
            if store is not None:
                store.close()

    def _handle(self, ex: Exchange, store: Store | None, out: IO[str] | None) -> None:
        ex = self._read_body(ex)
        outcome = Outcome()
        if store is not None and ex.kind == "generate" and ex.refused is None:
            try:
                outcome = Outcome(self._record(ex, store))
                self.records += 1
            except (ToolreplayError, ValueError, TypeError, KeyError, OSError) as exc:
                # a failure to record is the proxy's, not the agent's: its answer has already gone out
                self.failures += 1
                outcome = Outcome(error=redact(f"{type(exc).__name__}: {exc}")[:500])
                log.warning("toolreplay proxy: not recorded: %s", outcome.error)
        if self.heard is not None:
            try:
                self.heard(ex, outcome.recorded)
            except Exception as exc:  # the memory's failure must not stop the recording
                log.warning("toolreplay proxy: the routed path's memory: %s: %s", type(exc).__name__, exc)
        self._speak(ex, outcome)
        if out is not None:
            out.write(json.dumps(log_line(ex, outcome), ensure_ascii=False) + "\n")
            out.flush()

    def _read_body(self, ex: Exchange) -> Exchange:
        """A model request's body read from the agent's bytes (the event loop only checked it), with the
        session and the model it names."""
        if ex.kind != "generate" or ex.refused is not None or ex.body is not None or not ex.received:
            return ex
        if ex.history is not None:  # translated: read on the way
            return ex
        try:
            body = json_body(ex.received, ex.request_encoding, self._max)
        except BodyError:  # checked before it went upstream: not met here
            return ex
        http = get_wire(ex.wire).http
        session = ex.session or session_of({}, body, http.session_field if http is not None else "")
        return replace(ex, body=body, session=session, model=ex.model or model_of(body))

    def _record(self, ex: Exchange, store: Store) -> Recorded:
        from toolreplay._proxy.bodies import answer_bytes
        from toolreplay.wires import parse_request

        known = None
        if ex.history is not None:  # translated: read on the way (design 47)
            request, answer = ex.history, translated_answer(ex)
            known = self.knows(ex) if self.knows is not None else None
        else:
            request = parse_request(ex.wire, ex.body)
            answer = None
            if ex.status == 200 and ex.answer:
                answer = read_answer(ex, answer_bytes(ex.answer, ex.answer_encoding, self._max))
        with store.batch():  # one exchange, one commit: nothing half-written
            return Writer(store, self._written).record(ex, request, answer, known)

    def _speak(self, ex: Exchange, outcome: Outcome) -> None:
        if self._say is None:
            return
        where = outcome.recorded.conversation_id if outcome.recorded else "-"
        head = f"{ex.wire} {ex.model or '?'} {where}"
        if outcome.error:
            self._say(f"[not recorded] {head}: {outcome.error}")
        if ex.cut:
            self._say(f"[cut] {head}: {ex.cut}")
        for line in outcome.recorded.audit.lines if outcome.recorded else ():
            self._say(redact(f"[audit] {head}: {line}"))
        for r in ex.repairs:
            self._say(f"[repair] {head}: {r}")
        for note in ex.notes:
            kind = note_kind(note)
            if kind not in self._noted:  # a translation's notes repeat on every request: once per kind
                self._noted.add(kind)
                self._say(f"[route] {ex.route or head}: {note}")


__all__ = ["Outcome", "RecorderThread", "log_line", "note_kind"]

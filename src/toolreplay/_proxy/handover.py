"""A recorded routed answer's exchange handed over off the event loop, once the answer is out (design 63).

What the recorder and the routed path's memory get of an exchange (its record, the memory's entry and the
state it leaves, design 54) is worked out from the answer after its last event. On the loop that work
ran between the answer's first bytes and the loop's next wait, and the agent, woken by those bytes, often
waited for the processor the loop held. Here it runs on a thread of its own, one exchange at a time, in
the order the answers ended, while the loop waits for the agent's next request.

Every routed request asks :meth:`HandOvers.wait` before it asks the memory or the store what it
continues, so it never misses an exchange handed over before it came. Only pure work is handed over here
(no store, no loop): the wait is bounded by that work, which the loop would otherwise have done itself.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger("toolreplay.proxy")
#: The longest a request waits for the hand-overs before it (the recorder's ``settle`` waits as long).
WAIT = 10.0


class HandOvers:
    """The exchanges being handed over, on the hand-over thread, and a wait for them."""

    def __init__(self) -> None:
        # a thread and a queue, not an executor: a put is what the loop pays (no future to make)
        self._queue: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._idle = threading.Condition()
        self._pending = 0
        self._open = True
        self._thread = threading.Thread(target=self._serve, name="toolreplay-proxy-handover", daemon=True)
        self._thread.start()

    def later(self, work: Callable[[], None]) -> None:
        """Run ``work`` (an exchange's hand-over) on the hand-over thread, after those queued before it;
        here and now once the proxy is stopping (the thread is gone)."""
        with self._idle:  # put under the lock: nothing is queued behind the thread's last one
            self._pending += 1
            if self._open:
                self._queue.put(work)
                return
        self._run(work)  # stopped: the stream closed as the proxy stops

    def _serve(self) -> None:
        while (work := self._queue.get()) is not None:
            self._run(work)

    def _run(self, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception as exc:  # the proxy's own fault; the agent has its answer already
            log.error("toolreplay proxy: an exchange was not handed over: %s: %s", type(exc).__name__, exc)
        finally:
            with self._idle:
                self._pending -= 1
                if not self._pending:
                    self._idle.notify_all()

    def wait(self, timeout: float = WAIT) -> bool:
        """Return once every exchange queued so far is handed over (at once when none is: the usual
        case, an agent taking longer to read its answer and run its tools than the thread takes); False,
        said in the log, when they are not within ``timeout`` seconds (the request then goes on as
        though they were not yet out: the store answers, once the recorder has them)."""
        with self._idle:
            if self._idle.wait_for(lambda: not self._pending, timeout):
                return True
        log.warning(
            "toolreplay proxy: the answers' hand-over is taking over %g s; going on without it", timeout
        )
        return False

    def close(self) -> None:
        """Hand over what is queued, then let the thread go (before the recorder is drained)."""
        with self._idle:
            self._open = False
            self._queue.put(None)
        self._thread.join()


__all__ = ["HandOvers"]

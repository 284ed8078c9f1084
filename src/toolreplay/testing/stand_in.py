"""A scripted stand-in for a model, for the provider doubles: try the lab end to end without a key.

:class:`ScriptedAgent` is a responder for :class:`toolreplay.testing.ProviderDouble`. It reads each request
with the audit (:func:`toolreplay._audit.report.audit_request`) and acts like the models that motivated this
project: when the request carries earlier calls as calls it calls the tool; otherwise it calls it only
sometimes, and often just says it did ("Closed #14.") or says it will. The draws are seeded from the
request's bytes and how many times the same bytes were seen, so the multiset of answers per request is the
same on every run, whatever the order in which concurrent trials arrive.

Numbers it produces are a demonstration of the lab's machinery, not a measurement of any model.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ScriptedAgent:
    """Call probabilities per kind of request, and what to say instead (see the module docstring).

    ``call``: the chance to make ``call_name`` with ``call_input`` when the request carries earlier calls
    ``as_calls``, as a ``prose`` record, or ``plain`` words only; ``claim``: when not calling, the chance to
    say ``claim_text`` (said without doing) rather than ``intent_text`` (neither).
    """

    call: Mapping[str, float] = field(default_factory=lambda: {"as_calls": 1.0, "prose": 0.2, "plain": 0.15})
    claim: float = 0.6
    call_name: str = "coop"
    call_input: Mapping[str, Any] = field(default_factory=lambda: {"action": "close", "id": 14})
    claim_text: str = "Closed #14."
    intent_text: str = "I'll close #14 now."
    seed: str = "toolreplay"
    _seen: dict[str, int] = field(default_factory=lambda: {}, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def kind(self, body: Any, wire: str | None) -> str:
        """``as_calls``, ``prose`` or ``plain``: how this request carries its earlier calls."""
        from toolreplay._audit.body import load_request
        from toolreplay._audit.report import audit_request

        report = audit_request(load_request(body, wire=wire))
        if report.found:
            return "as_calls"
        if any(p.kind == "call syntax" for p in report.passages):
            return "prose"
        return "plain"

    def draw(self, raw: bytes) -> random.Random:
        """The random source of the next answer to these request bytes (k-th time seen: k-th stream)."""
        digest = hashlib.sha256(raw).hexdigest()
        with self._lock:
            k = self._seen.get(digest, 0)
            self._seen[digest] = k + 1
        return random.Random(f"{self.seed}:{digest}:{k}")

    def __call__(self, request: Any) -> Any:
        from toolreplay.testing import Call, Calls, Text

        kind = self.kind(request.body, request.wire)
        rng = self.draw(request.raw)
        if rng.random() < self.call.get(kind, 0.0):
            return Calls([Call(self.call_name, dict(self.call_input))])
        return Text(self.claim_text if rng.random() < self.claim else self.intent_text)


__all__ = ["ScriptedAgent"]

"""The doubles' prompt cache: how much of a request an earlier one already sent, as providers count it.

Providers cache the longest prefix a request shares with one they saw before. The double simulates
that without any wire knowledge beyond where the message list is: a request is the byte sequence
``encode(body without its message list)`` followed by ``encode(element)`` for each element of the list
(so a change to the model, the system prompt or the tools misses, as it does at the providers). The
cached part is the longest common prefix, in bytes, with any of the last :data:`KEEP` requests of the
same wire and model (at most :data:`MAX_BYTES` of requests in all, the oldest forgotten first, so a
long-running double's memory stays bounded); it is converted to tokens with the documented estimate
(bytes / 3, rounded down, so the double never reports more than was shared), and the whole prompt with
the same estimate (rounded up). No minimum length and no block granularity: the figure says how much a
provider *could* reuse. Each wire's answer builder puts it in that provider's own usage field. A wire
whose provider caches by rules of its own (Anthropic: only up to a marked block) names a
:class:`PromptCacheRule` in its double (``Double.prompt_cache``), and that rule counts instead (design 36).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._tokens import BYTES_PER_TOKEN, bytes_to_tokens
from toolreplay.wires.doubles import PromptCacheRule, PromptCount

#: How many earlier requests per (wire, model) a new one is compared with.
KEEP = 64
#: Bytes of earlier requests remembered in all, and (wire, model) pairs: beyond them the oldest go.
#: Far above what a test sends, so no figure a test reads changes; a double fed 20 MB bodies (or a
#: new model name per request) no longer keeps 64 of each for good (issue 27).
MAX_BYTES = 64 * 1024 * 1024
MAX_KEYS = 256


@dataclass(frozen=True, slots=True)
class _Seen:
    seq: int
    pieces: list[bytes]
    size: int


def pieces(wire: str, body: Mapping[str, Any]) -> list[bytes]:
    """The request as the cache sees it: the body's other fields, then each message-list element."""
    from toolreplay.wires import get_wire

    key = get_wire(wire).list_key
    items = body.get(key)
    if not isinstance(items, list):
        return [jsonenc.encode(dict(body))]
    rest = {k: v for k, v in body.items() if k != key}
    return [jsonenc.encode(rest), *(jsonenc.encode(x) for x in items)]


def common_prefix(a: Sequence[bytes], b: Sequence[bytes]) -> int:
    """Bytes two piece sequences share from their start (whole pieces, then into the first that differs)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x == y:
            n += len(x)
            continue
        return n + jsonenc.common_prefix(x, y)
    return n


class PrefixCache:
    """The simulated prompt cache of one double (thread-safe: the double answers on many threads)."""

    def __init__(self, keep: int = KEEP, max_bytes: int = MAX_BYTES) -> None:
        # (wire, model) -> its remembered requests, the least recently asked pair first
        self._seen: OrderedDict[tuple[str, str], deque[_Seen]] = OrderedDict()
        self._rules: dict[str, PromptCacheRule | None] = {}
        self._keep, self._max_bytes = keep, max_bytes
        self._bytes = self._seq = 0
        self._lock = threading.Lock()

    def count(self, wire: str, model: str, body: Mapping[str, Any]) -> PromptCount:
        """Count ``body``'s prompt and the part an earlier request of the same wire and model shared,
        then remember ``body`` (a wire with a rule of its own: as that rule counts)."""
        rule = self._rule(wire)
        if rule is not None:
            return rule.count(model, body)
        now = pieces(wire, body)
        total = sum(len(p) for p in now)
        with self._lock:
            earlier = self._seen.pop((wire, model), None) or deque()
            self._seen[(wire, model)] = earlier
            shared = max((common_prefix(now, old.pieces) for old in earlier), default=0)
            self._remember(earlier, now, total)
        return PromptCount(bytes_to_tokens(total), shared // BYTES_PER_TOKEN)

    def _remember(self, earlier: deque[_Seen], now: list[bytes], size: int) -> None:
        """Keep ``now``, then forget the oldest until the bounds hold (under the lock)."""
        self._seq += 1
        earlier.append(_Seen(self._seq, now, size))
        self._bytes += size
        if len(earlier) > self._keep:
            self._bytes -= earlier.popleft().size
        while len(self._seen) > MAX_KEYS:
            self._bytes -= sum(old.size for old in self._seen.popitem(last=False)[1])
        while self._bytes > self._max_bytes:
            oldest = min((q for q in self._seen.values() if q), key=lambda q: q[0].seq)
            self._bytes -= oldest.popleft().size

    def _rule(self, wire: str) -> PromptCacheRule | None:
        """The wire's own cache rule, made on first use (None: the common prefix counts)."""
        from toolreplay.wires import get_wire

        with self._lock:
            if wire not in self._rules:
                loader = get_wire(wire).double
                make = loader().prompt_cache if loader is not None else None
                self._rules[wire] = make() if make is not None else None
            return self._rules[wire]

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()
            self._bytes = 0
            for rule in self._rules.values():
                if rule is not None:
                    rule.clear()


__all__ = [
    "BYTES_PER_TOKEN",
    "KEEP",
    "MAX_BYTES",
    "MAX_KEYS",
    "PrefixCache",
    "PromptCacheRule",
    "PromptCount",
    "bytes_to_tokens",
    "common_prefix",
    "pieces",
]

"""``--repair`` (design 46): what the provider needs back and the agent dropped, put back from the store
as the smallest edit of the body's bytes, before the request goes upstream.

The repairs themselves are the wires' (``Http.repairs``: each reads the body's list and the stored
conversation and says what to insert where); this module finds the conversation on a thread of its own
(the event loop never waits on the store, design 44), finds each list element's first byte, and splices.
A compressed body is sent as it came (a repair would have to compress it again).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from toolreplay._proxy.matching import continued, prefix_heads
from toolreplay._steps import Issuer, host_of
from toolreplay.wires.contract import Insertion, Wire

if TYPE_CHECKING:
    from toolreplay._proxy.worker import RecorderThread
    from toolreplay._store import Store

_SPACE = b" \t\r\n"


def _skip(raw: bytes, i: int) -> int:
    while i < len(raw) and raw[i] in _SPACE:
        i += 1
    return i


def _string_end(raw: bytes, i: int) -> int:
    """The index after the string that opens at ``raw[i]`` (a ``"``)."""
    j = i + 1
    while raw[j] != 0x22:
        j += 2 if raw[j] == 0x5C else 1
    return j + 1


def element_starts(raw: bytes, key: str) -> list[int]:
    """The offset of the first byte of each element of the top-level array ``key`` in a JSON object's
    bytes (empty when there is none)."""
    want, depth, i, out = b'"' + key.encode() + b'"', 0, 0, []
    target = False
    while i < len(raw):
        c = raw[i]
        if c == 0x22:
            end = _string_end(raw, i)
            if depth == 1 and not target and raw[i:end] == want:
                k = _skip(raw, end)
                if raw[k : k + 1] == b":" and raw[_skip(raw, k + 1) : _skip(raw, k + 1) + 1] == b"[":
                    target, i, depth = True, _skip(raw, k + 1) + 1, 2
                    if raw[_skip(raw, i) : _skip(raw, i) + 1] != b"]":
                        out.append(_skip(raw, i))
                    continue
            i = end
            continue
        if c in b"{[":
            depth += 1
        elif c in b"}]":
            depth -= 1
            if target and depth == 1:
                return out
            if depth == 0:
                return []  # the object ended without the list
        elif c == 0x2C and target and depth == 2:
            out.append(_skip(raw, i + 1))
        i += 1
    return out if target else []


def _place(raw: bytes, starts: Sequence[int], ins: Insertion) -> int | None:
    """Where an insertion's bytes go: right after the ``{`` it names (None: not an object there)."""
    if ins.index >= len(starts):
        return None
    at = starts[ins.index]
    if ins.within:
        inner = element_starts(raw[at:], ins.within)
        if ins.at >= len(inner):
            return None
        at += inner[ins.at]
    return at + 1 if raw[at : at + 1] == b"{" else None


def splice(raw: bytes, starts: Sequence[int], insertions: Sequence[Insertion]) -> bytes:
    """``raw`` with each insertion's bytes right after the ``{`` of its object; the rest unchanged."""
    places = sorted((p, ins.data) for ins in insertions if (p := _place(raw, starts, ins)) is not None)
    out, pos = [], 0
    for at, data in places:
        out += [raw[pos:at], data]
        pos = at
    out.append(raw[pos:])
    return b"".join(out)


class Repairer:
    """Runs the wires' repairs for requests, on one thread with its own store connection."""

    def __init__(self, open_store: Callable[[], Store], recorder: RecorderThread | None) -> None:
        self._open = open_store
        self._recorder = recorder
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="toolreplay-proxy-repair")

    async def __call__(
        self,
        wire: Wire,
        upstream: str,
        raw: bytes,
        body: Mapping[str, Any],
        session: str | None,
        encoded: bool,
    ) -> tuple[bytes, tuple[str, ...]]:
        if wire.http is None or not wire.http.repairs or encoded:
            return raw, ()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._repair, wire, upstream, raw, body, session)

    def _store(self) -> Store:
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = self._open()
        return store

    def _repair(
        self, wire: Wire, upstream: str, raw: bytes, body: Mapping[str, Any], session: str | None
    ) -> tuple[bytes, tuple[str, ...]]:
        from toolreplay.wires import parse_request

        if self._recorder is not None:
            self._recorder.settle()  # the answers already given are stored before they are read back
        store = self._store()
        request = parse_request(wire.name, dict(body))
        heads = prefix_heads(request.messages)
        cont = continued(store.find_heads(heads, session), heads)
        if cont is None:
            return raw, ()
        stored = store.load(cont.conversation_id)
        model = body.get("model") if isinstance(body.get("model"), str) else ""
        issuer = Issuer(wire.name, host_of(upstream), str(model))
        elements = wire.body_elements(body)
        assert wire.http is not None
        insertions = [i for repair in wire.http.repairs for i in repair(elements, stored, issuer)]
        if not insertions:
            return raw, ()
        starts = element_starts(raw, wire.list_key)
        if len(starts) != len(elements):
            return raw, ()
        return splice(raw, starts, insertions), tuple(i.note for i in insertions)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


__all__ = ["Repairer", "element_starts", "splice"]

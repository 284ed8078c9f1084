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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolreplay._history import History
from toolreplay._proxy.matching import find_continued
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


def _value_end(raw: bytes, i: int) -> int:
    """The index after the JSON value that opens at ``raw[i]``."""
    if raw[i] == 0x22:
        return _string_end(raw, i)
    if raw[i] not in b"{[":
        while i < len(raw) and raw[i] not in b",}]" and raw[i] not in _SPACE:
            i += 1
        return i
    depth = 0
    while True:
        c = raw[i]
        if c == 0x22:
            i = _string_end(raw, i)
            continue
        if c in b"{[":
            depth += 1
        elif c in b"}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def _member(raw: bytes, at: int, key: str) -> int | None:
    """Where the value of member ``key`` of the object that opens at ``raw[at]`` starts (None: absent)."""
    if raw[at : at + 1] != b"{":
        return None
    want, i = b'"' + key.encode() + b'"', _skip(raw, at + 1)
    while i < len(raw) and raw[i] == 0x22:
        end = _string_end(raw, i)
        v = _skip(raw, _skip(raw, end) + 1)  # past the colon
        if raw[i:end] == want:
            return v
        i = _skip(raw, _value_end(raw, v))
        i = _skip(raw, i + 1) if raw[i : i + 1] == b"," else len(raw)
    return None


@dataclass(frozen=True, slots=True)
class Elements:
    """A JSON array's elements in the raw bytes: each one's ``(first byte, index after it)``, and where
    its closing ``]`` is."""

    spans: tuple[tuple[int, int], ...]
    close: int


def elements_at(raw: bytes, at: int | None) -> Elements | None:
    """The elements of the array that opens at ``raw[at]`` (None: no array there)."""
    if at is None or raw[at : at + 1] != b"[":
        return None
    spans, i = [], _skip(raw, at + 1)
    while raw[i : i + 1] != b"]":
        end = _value_end(raw, i)
        spans.append((i, end))
        i = _skip(raw, end)
        if raw[i : i + 1] == b",":
            i = _skip(raw, i + 1)
    return Elements(tuple(spans), i)


def body_elements(raw: bytes, key: str) -> Elements | None:
    """The elements of the body's top-level list ``key``."""
    return elements_at(raw, _member(raw, _skip(raw, 0), key))


def element_starts(raw: bytes, key: str) -> list[int]:
    """The offset of the first byte of each element of the top-level array ``key`` in a JSON object's
    bytes (empty when there is none)."""
    found = body_elements(raw, key)
    return [s for s, _ in found.spans] if found is not None else []


#: One edit of the raw bytes: ``raw[start:end]`` becomes ``data``.
Edit = tuple[int, int, bytes]


def _list_edit(raw: bytes, found: Elements, k: int, ins: Insertion) -> Edit | None:
    """An insertion's edit in its list: a new element before element ``k`` (or at the end), or its bytes
    right after element ``k``'s ``{``."""
    spans = found.spans
    if ins.how == "before":
        if k < len(spans):
            return (spans[k][0], spans[k][0], ins.data + b",")
        if k > len(spans):
            return None
        return (
            (spans[-1][1], spans[-1][1], b"," + ins.data) if spans else (found.close, found.close, ins.data)
        )
    at = spans[k][0] if k < len(spans) else -1
    return (at + 1, at + 1, ins.data) if at >= 0 and raw[at : at + 1] == b"{" else None


def _removals(found: Elements, gone: set[int]) -> list[Edit]:
    """Elements taken out of one list, each run of them with the comma after it (before it, for a run
    that ends the list), so what stays is still a list."""
    spans, out, k = found.spans, [], 0
    while k < len(spans):
        if k not in gone:
            k += 1
            continue
        q = k
        while q + 1 < len(spans) and q + 1 in gone:
            q += 1
        if q + 1 < len(spans):
            out.append((spans[k][0], spans[q + 1][0], b""))
        else:
            out.append((spans[k - 1][1] if k else spans[k][0], spans[q][1], b""))
        k = q + 1
    return out


def _target(raw: bytes, top: Elements, ins: Insertion) -> tuple[Elements, int] | None:
    """The list an insertion edits and its position there (None: the body has no such list)."""
    if not ins.within:
        return top, ins.index
    if ins.index >= len(top.spans):
        return None
    inner = elements_at(raw, _member(raw, top.spans[ins.index][0], ins.within))
    return (inner, ins.at) if inner is not None else None


def _edits(raw: bytes, top: Elements, insertions: Sequence[Insertion]) -> tuple[list[Edit], list[Insertion]]:
    """The edits, and the insertions that have their place (removals from one list made together)."""
    edits: list[Edit] = []
    made: list[Insertion] = []
    gone: dict[int, tuple[Elements, set[int]]] = {}
    filled: set[int] = set()
    for ins in insertions:
        found = _target(raw, top, ins)
        if found is None:
            continue
        lst, k = found
        if ins.how == "remove":
            if k < len(lst.spans):
                gone.setdefault(lst.close, (lst, set()))[1].add(k)
                made.append(ins)
        elif (e := _list_edit(raw, lst, k, ins)) is not None:
            if not lst.spans and ins.how == "before":
                # a second new element of an empty list follows the first
                e = (e[0], e[1], b"," + e[2]) if lst.close in filled else e
                filled.add(lst.close)
            edits.append(e)
            made.append(ins)
    for lst, ks in gone.values():
        edits += _removals(lst, ks)
    return edits, made


def splice(raw: bytes, starts: Sequence[int] | Elements, insertions: Sequence[Insertion]) -> bytes:
    """``raw`` with each insertion made (after the ``{`` of its object, a new element before one, an
    element taken out); the rest unchanged. ``starts``: the body list's elements (:func:`body_elements`;
    a list of starts is read again from ``raw``)."""
    return _spliced(raw, starts, insertions)[0]


def _spliced(
    raw: bytes, starts: Sequence[int] | Elements, insertions: Sequence[Insertion]
) -> tuple[bytes, list[Insertion]]:
    """The spliced bytes and the insertions made."""
    top = starts if isinstance(starts, Elements) else _elements_from(raw, starts)
    edits, made = _edits(raw, top, insertions)
    out, pos = [], 0
    for start, end, data in sorted(edits, key=lambda e: e[0]):  # stable: insertions at one place in order
        if start < pos:
            continue  # inside what an edit before it took out
        out += [raw[pos:start], data]
        pos = end
    out.append(raw[pos:])
    return b"".join(out), made


def _elements_from(raw: bytes, starts: Sequence[int]) -> Elements:
    spans = tuple((s, _value_end(raw, s)) for s in starts)
    return Elements(spans, _skip(raw, spans[-1][1]) if spans else len(raw))


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
        if wire.http is None or not (wire.http.repairs or wire.http.body_repairs) or encoded:
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
        # a request the store holds nothing of still has its orphaned calls answered
        stored = find_continued(store, request.messages, session).stored or History("", ())
        model = body.get("model") if isinstance(body.get("model"), str) else ""
        issuer = Issuer(wire.name, host_of(upstream), str(model))
        elements = wire.body_elements(body)
        assert wire.http is not None
        insertions = [i for repair in wire.http.repairs for i in repair(elements, stored, issuer)]
        insertions += [i for fix in wire.http.body_repairs for i in fix(body, elements, stored, issuer)]
        if not insertions:
            return raw, ()
        top = body_elements(raw, wire.list_key)
        if top is None or len(top.spans) != len(elements):
            return raw, ()
        out, made = _spliced(raw, top, insertions)
        return out, tuple(i.note for i in made)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


__all__ = ["Elements", "Repairer", "body_elements", "element_starts", "elements_at", "splice"]

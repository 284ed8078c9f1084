"""A translated answer on its way back (design 47): the upstream's bytes cut into its events as they
arrive, each event read into deltas by the upstream wire's bridge reader and written at once by the
agent's wire's bridge writer. Nothing waits for the whole answer; the deltas are kept for the recorder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

import httpx

from toolreplay import _jsonenc as jsonenc
from toolreplay.wires.bridge import (
    CallBegin,
    CallDelta,
    CallEnd,
    Delta,
    DeltaReader,
    DeltaWriter,
    Event,
    Failed,
)
from toolreplay.wires.contract import Framing
from toolreplay.wires.reply import Reply


class Payloads:
    """The events of an SSE or NDJSON stream, cut out of its chunks as they come: each SSE event's
    ``data`` lines (joined by a line break), or each NDJSON line."""

    __slots__ = ("_buf", "_data", "_sse")

    def __init__(self, framing: Framing) -> None:
        self._sse = framing == "sse"
        self._buf = b""
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[str]:
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        out: list[str] = []
        for line in lines:
            line = line.removesuffix(b"\r")
            if not self._sse:
                if line.strip():
                    out.append(line.decode("utf-8", "replace"))
            elif not line:
                if self._data:
                    out.append(b"\n".join(self._data).decode("utf-8", "replace"))
                    self._data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(b" ") else value)
        return out

    def end(self) -> list[str]:
        """What a stream that ended without its last line break still holds."""
        rest = self.feed(b"\n\n") if self._buf or self._data else []
        return rest


def frame(framing: Framing, event: Event) -> bytes:
    """One event as the agent's wire sends it (a string payload, Chat's ``[DONE]``, as it is)."""
    name, payload = event
    data = payload if isinstance(payload, str) else jsonenc.dumps(payload)
    if framing == "ndjson":
        return (data + "\n").encode()
    if framing == "json-array":  # each element after its separator: :func:`as_array` opens and closes it
        return (",\r\n" + data).encode()
    return (f"event: {name}\n" if name else "").encode() + f"data: {data}\n\n".encode()


def decoded(payload: str) -> object:
    """A payload as the reader takes it: JSON decoded, Chat's ``[DONE]`` as the string."""
    text = payload.strip()
    return text if text == "[DONE]" else jsonenc.loads(text)


class AgentNames:
    """The upstream's calls under the agent's tool names: a name the upstream's wire could not take
    (``names``: the upstream's name -> the agent's) goes back as the agent declared it, and a call of a
    free-form tool sent as a function of one string ``input`` goes back free-form, its text whole (its
    arguments are held until the call ends: the text is inside their JSON)."""

    __slots__ = ("_free", "_held", "_names")

    def __init__(self, names: Mapping[str, str], free_form: frozenset[str]) -> None:
        self._names, self._free = names, free_form
        self._held: dict[int, list[str]] = {}

    def __call__(self, d: Delta) -> list[Delta]:
        if isinstance(d, CallBegin):
            name = self._names.get(d.name, d.name)
            if name in self._free:
                self._held[d.index] = []
                return [replace(d, name=name, call_kind="custom")]
            return [replace(d, name=name)] if name != d.name else [d]
        if isinstance(d, CallDelta) and d.index in self._held:
            self._held[d.index].append(d.arguments)
            return []
        if isinstance(d, CallEnd) and d.index in self._held:
            return [CallDelta(d.index, _free_text("".join(self._held.pop(d.index)))), d]
        return [d]

    def reply(self, reply: Reply) -> Reply:
        """A whole reply's calls under the agent's names (free-form ones with their text)."""
        calls = []
        for c in reply.calls:
            name = self._names.get(c.name, c.name)
            if name in self._free and isinstance(c.input, dict) and isinstance(c.input.get("input"), str):
                calls.append(replace(c, name=name, input=c.input["input"], kind="custom"))
            else:
                calls.append(replace(c, name=name))
        return replace(reply, calls=tuple(calls))


def _free_text(arguments: str) -> str:
    """The text of a free-form call sent as ``{"input": text}`` (the arguments as they came otherwise)."""
    try:
        value = jsonenc.loads(arguments)
    except ValueError:
        return arguments
    got = value.get("input") if isinstance(value, dict) else None
    return got if isinstance(got, str) else arguments


@dataclass(slots=True)
class Carried:
    """What a relayed stream carried: its deltas (for the recorder), why it broke off, when the
    upstream's first bytes came and when the agent's first bytes went, and how many went."""

    deltas: list[Delta] = field(default_factory=list)
    cut: str | None = None
    came: float | None = None
    first: float | None = None
    size: int = 0


def written(
    writer: DeltaWriter, deltas: Iterable[Delta], carried: Carried, framing: Framing, names: AgentNames
) -> bytes:
    """The agent's events for ``deltas`` (kept in ``carried`` as the agent sees them), framed."""
    out: list[bytes] = []
    for raw in deltas:
        for d in names(raw):
            carried.deltas.append(d)
            out.extend(frame(framing, e) for e in writer.write(d))
    return b"".join(out)


async def translated_events(
    chunks: AsyncIterator[bytes],
    upstream: Framing,
    reader: DeltaReader,
    writer: DeltaWriter,
    agent: Framing,
    carried: Carried,
    names: AgentNames,
    clock: Callable[[], float],
) -> AsyncIterator[bytes]:
    """The agent's stream, written event by event as the upstream's events arrive (design 51): the
    answer's first event at once, then the events of one chunk (what one read brought) together, so they
    go out in one write; nothing waits for an event that has not come."""
    cut = Payloads(upstream)
    try:
        async for chunk in chunks:
            carried.came = carried.came or clock()
            together: list[bytes] = []
            for payload in cut.feed(chunk):
                out = written(writer, reader.feed(decoded(payload)), carried, agent, names)
                if out and carried.first is None:  # the agent's first bytes: not held for the rest
                    carried.first = clock()
                    yield out
                elif out:
                    together.append(out)
            if together:
                yield b"".join(together)
        tail = [d for p in cut.end() for d in reader.feed(decoded(p))]
        yield written(writer, [*tail, *reader.finish()], carried, agent, names)
    except httpx.HTTPError as exc:
        carried.cut = f"the upstream's answer broke off ({type(exc).__name__})"
        yield written(writer, [Failed(f"toolreplay proxy: {carried.cut}")], carried, agent, names)
    except ValueError as exc:  # an event that is not JSON: the stream cannot be read on
        carried.cut = f"the upstream sent an event that is not JSON ({exc})"[:300]
        yield written(writer, [Failed(f"toolreplay proxy: {carried.cut}")], carried, agent, names)
    yield b"".join(frame(agent, e) for e in writer.close())


def answer_chunks(resp: httpx.Response) -> AsyncIterator[bytes]:
    """The upstream answer's bytes as they come: as received when nothing encoded them (no decoder to
    pass on the way), else decoded."""
    return resp.aiter_bytes() if resp.headers.get("content-encoding") else resp.aiter_raw()


class Sink:
    """A writer that writes nothing: the deltas of a stream collected into a whole answer."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def write(self, delta: Delta) -> list[Event]:
        return []

    def close(self) -> list[Event]:
        return []


async def as_array(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """A stream framed ``json-array`` as the one JSON array it is (Gemini's REST streaming): the first
    element's separator becomes the array's ``[``, and ``]`` follows the last."""
    opened = False
    try:
        async for chunk in chunks:
            if chunk and not opened:
                chunk, opened = b"[" + chunk.removeprefix(b",\r\n"), True
            yield chunk
        yield b"]" if opened else b"[]"
    finally:
        closing = getattr(chunks, "aclose", None)
        if closing is not None:
            await closing()


__all__ = [
    "AgentNames",
    "Carried",
    "Payloads",
    "Sink",
    "answer_chunks",
    "as_array",
    "decoded",
    "frame",
    "translated_events",
    "written",
]

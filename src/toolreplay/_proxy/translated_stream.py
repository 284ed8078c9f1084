"""A translated answer on its way back (design 47): the upstream's bytes cut into its events as they
arrive, each event read into deltas by the upstream wire's bridge reader and written at once by the
agent's wire's bridge writer. Nothing waits for the whole answer; the deltas are kept for the recorder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field

import httpx

from toolreplay import _jsonenc as jsonenc
from toolreplay.wires.bridge import Delta, DeltaReader, DeltaWriter, Event, Failed
from toolreplay.wires.contract import Framing


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
    return (f"event: {name}\n" if name else "").encode() + f"data: {data}\n\n".encode()


def decoded(payload: str) -> object:
    """A payload as the reader takes it: JSON decoded, Chat's ``[DONE]`` as the string."""
    text = payload.strip()
    return text if text == "[DONE]" else jsonenc.loads(text)


@dataclass(slots=True)
class Carried:
    """What a relayed stream carried: its deltas (for the recorder), why it broke off, when its first
    byte went to the agent."""

    deltas: list[Delta] = field(default_factory=list)
    cut: str | None = None
    first: float | None = None


def _written(writer: DeltaWriter, deltas: Iterable[Delta], carried: Carried, framing: Framing) -> bytes:
    out: list[bytes] = []
    for d in deltas:
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
    clock: Callable[[], float],
) -> AsyncIterator[bytes]:
    """The agent's stream, written event by event as the upstream's events arrive."""
    cut = Payloads(upstream)
    try:
        async for chunk in chunks:
            for payload in cut.feed(chunk):
                out = _written(writer, reader.feed(decoded(payload)), carried, agent)
                if out:
                    carried.first = carried.first or clock()
                    yield out
        tail = [d for p in cut.end() for d in reader.feed(decoded(p))]
        yield _written(writer, [*tail, *reader.finish()], carried, agent)
    except httpx.HTTPError as exc:
        carried.cut = f"the upstream's answer broke off ({type(exc).__name__})"
        yield _written(writer, [Failed(f"toolreplay proxy: {carried.cut}")], carried, agent)
    except ValueError as exc:  # an event that is not JSON: the stream cannot be read on
        carried.cut = f"the upstream sent an event that is not JSON ({exc})"[:300]
        yield _written(writer, [Failed(f"toolreplay proxy: {carried.cut}")], carried, agent)
    yield b"".join(frame(agent, e) for e in writer.close())


__all__ = ["Carried", "Payloads", "decoded", "frame", "translated_events"]

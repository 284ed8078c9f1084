"""Where a routed request's time goes, in one process (no HTTP, no threads): each step the proxy takes
for the translation benchmark's request (:mod:`bench.proxy_translate_body`), timed alone, p50 of many,
and a cProfile of them all by module function. The steps are those of ``toolreplay._proxy.translated``:
the body parsed, read into the neutral history, translated for the vessel, prepared as its request; the
upstream's whole answer read and written as the agent's; its stream relayed event by event.

``python -m bench.proxy_translate_steps`` prints them; :func:`steps` gives them to the benchmark.
"""

from __future__ import annotations

import asyncio
import copy
import cProfile
import json
import pstats
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.proxy_translate_body import request
from bench.proxy_translate_upstream import DONE, EVENTS, USAGE_EVENT, WHOLE

#: A step: what it times, or (its untimed setup, what it times).
Step = Callable[[], object] | tuple[Callable[[], None], Callable[[], object]]
PREPARED = "the vessel's request prepared (_transport.request.prepare)"


def _routed() -> dict[str, Step]:
    """The steps, each a callable doing one request's worth (the earlier steps' results prepared)."""
    from toolreplay import _jsonenc as jsonenc
    from toolreplay._issuers import host_of
    from toolreplay._proxy.bodies import json_body, sliced
    from toolreplay._proxy.translate import read_inbound, translate_request
    from toolreplay._proxy.translate_renders import RENDERS
    from toolreplay._proxy.translated_stream import AgentNames, Carried, translated_events
    from toolreplay._transport.request import prepare
    from toolreplay._vessels import get_vessel
    from toolreplay.model import Issuer
    from toolreplay.wires import get_wire
    from toolreplay.wires.bridge import Outbound

    inbound, upstream = get_wire("anthropic"), get_wire("openai-chat")
    # the vessel on a loopback URL, as the benchmark points it (no key needed there)
    vessel = replace(get_vessel("openai"), base_url="http://127.0.0.1:9/v1")
    issuer = Issuer(vessel.wire, host_of(vessel.base_url), vessel.model)
    raw = json.dumps(request(True)).encode()
    body = json_body(raw, "", 1 << 26)
    history = read_inbound(inbound, body)
    done = translate_request(inbound, history, None, vessel, issuer=issuer)
    out = Outbound(model=body["model"], answer_id=done.answer_id, thinking=done.thinking, seal=done.seal,
                   call_id=done.call_id, created=0)  # fmt: skip
    names = AgentNames(done.tool_names, done.free_form)
    assert upstream.bridge is not None and inbound.bridge is not None
    up, agent = upstream.bridge(), inbound.bridge()
    chunks = [*EVENTS, USAGE_EVENT, DONE]

    async def relay() -> int:
        async def source() -> AsyncIterator[bytes]:
            for c in chunks:
                yield c

        n = 0
        events = translated_events(source(), "sse", up.reader(), agent.writer(out), "sse", Carried(), names,
                                   time.perf_counter)  # fmt: skip
        async for piece in events:
            n += len(piece)
        return n

    def whole() -> bytes:
        reply = names.reply(upstream.parse_response(jsonenc.loads(WHOLE)))
        return jsonenc.encode(agent.body(reply, out)[0])

    stored, load = _stored(history)
    loop = asyncio.new_event_loop()
    cold = inbound.parse_request
    assert cold is not None
    return {
        PARSED: lambda: json_body(raw, "", 1 << 26),
        SLICED: lambda: sliced(raw),
        COLD_READ: lambda: cold(dict(body)),
        COLD_TRANSLATE: lambda: translate_request(inbound, history, None, vessel, issuer=issuer),
        **_continued(body, vessel, issuer),
        "the same request again: read from its bytes (translate.unsliced, read_inbound: all from the memo)": (
            lambda: _read(inbound, raw)
        ),
        "and translated (the conversation's render cache)": lambda: translate_request(
            inbound, history, None, vessel, issuer=issuer, path_stream=False, renders=RENDERS
        ),
        "a turn that continues a stored conversation: it loaded (SQLite, store.load)": load,
        "and translated with it (translate.translate_request, the store's replies merged)": lambda: (
            translate_request(inbound, history, stored, vessel, issuer=issuer, renders=RENDERS)
        ),
        PREPARED: lambda: prepare(vessel, done.body, model=vessel.model, stream=True),
        "the whole answer read and written as Anthropic's": whole,
        f"the stream relayed ({len(chunks)} Chat events, translated_stream)": lambda: loop.run_until_complete(
            relay()
        ),
    }


PARSED = "the agent's body parsed whole (bodies.json_body)"
SLICED = "the agent's body read at its top level alone, what the route is picked by (bodies.sliced)"
COLD_READ = "read into the neutral history, nothing memoized (the wire's parse_request)"
COLD_TRANSLATE = "translated for the vessel, no render cache (translate.translate_request)"
CONTINUED = (
    "a turn continued (request N+1 after N-1 and N): sliced from N, read and translated as the proxy does"
)
#: How many requests back the continued turns start (each two messages more than the one before).
TURNS = 12


def _grown(body: dict[str, Any], k: int) -> dict[str, Any]:
    """Claude Code's request ``k``: the first ``k`` messages, its prompt-cache marker moved to the last."""
    out = copy.deepcopy(body)
    msgs = out["messages"][:k]
    for m in msgs:
        for b in m["content"] if isinstance(m["content"], list) else []:
            b.pop("cache_control", None)
    if isinstance(msgs[-1]["content"], list) and msgs[-1]["content"]:
        msgs[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    out["messages"] = msgs
    return out


def _read(inbound: Any, raw: bytes) -> Any:
    """The history the proxy reads from a routed request's bytes: its top-level slices, the body through
    the read memo, the history keyed by the slices."""
    from toolreplay._proxy.bodies import sliced
    from toolreplay._proxy.translate import read_inbound, unsliced

    top = sliced(raw, inbound.list_key)
    assert top is not None
    whole = unsliced(inbound, top)
    return read_inbound(inbound, whole.body, raws=whole.raws)


def _continued(body: dict[str, Any], vessel: Any, issuer: Any) -> dict[str, Step]:
    """Request N+1 (a reply and its tool result more, the marker moved) read from its bytes and
    translated through the proxy's memos when they hold exactly request N (set up, untimed, before each
    run)."""
    from toolreplay._proxy.continued import LAYOUTS
    from toolreplay._proxy.translate import translate_request
    from toolreplay._proxy.translate_renders import RENDERS
    from toolreplay.wires import get_wire
    from toolreplay.wires.read_memo import READ_MEMO

    inbound = get_wire("anthropic")
    n = len(body["messages"])
    bodies = [json.dumps(_grown(body, k)).encode() for k in range(n - 2 * TURNS, n + 1, 2)]
    at = [0]

    def seen() -> None:  # the proxy has translated requests N-1 and N, and nothing since
        READ_MEMO.clear()
        RENDERS.clear()
        LAYOUTS.clear()
        at[0] = max((at[0] + 1) % (len(bodies) - 1), 1)
        for k in (at[0] - 1, at[0]):
            h = _read(inbound, bodies[k])
            translate_request(inbound, h, None, vessel, issuer=issuer, renders=RENDERS)

    def next_one() -> object:
        h = _read(inbound, bodies[at[0] + 1])
        return translate_request(inbound, h, None, vessel, issuer=issuer, renders=RENDERS)

    return {CONTINUED: (seen, next_one)}


def _stored(history: Any) -> tuple[Any, Callable[[], object]]:
    """The request's conversation up to its last reply, stored in a fresh SQLite file, as the recording
    proxy holds it when the agent's next request comes (that request continues it); and its load."""
    from toolreplay._store import open_store

    last = max(i for i, m in enumerate(history.messages) if m.role == "assistant")
    store = open_store(str(Path(tempfile.mkdtemp(prefix="toolreplay-bench-steps-")) / "steps.db"))
    cid = store.import_history(
        replace(history, id="bench-steps", messages=history.messages[: last + 1])
    ).conversation_id
    return store.load(cid), lambda: store.load(cid)


def steps(n: int = 30) -> tuple[list[tuple[str, float]], str]:
    """``(step, p50 ms)`` of each step over ``n`` runs, and a cProfile of ``n`` more (top functions by
    their own time)."""
    todo = {name: f if isinstance(f, tuple) else (_nothing, f) for name, f in _routed().items()}
    for setup, f in todo.values():  # warm: imports, caches
        setup()
        f()
    out = []
    for name, (setup, f) in todo.items():
        times = []
        for _ in range(n):
            setup()
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        out.append((name, sorted(times)[n // 2] * 1000))
    prof = cProfile.Profile()
    for _ in range(n):
        for setup, f in todo.values():
            setup()
            prof.enable()
            f()
            prof.disable()
    return out, _top(prof, n)


def _nothing() -> None:
    pass


def _top(prof: cProfile.Profile, n: int, count: int = 15) -> str:
    """The functions that spend the most time of their own, per request: ``file:function  ms``."""
    stats: Any = pstats.Stats(prof).stats
    rows = sorted(stats.items(), key=lambda kv: -kv[1][2])[:count]
    lines = []
    for (file, line, func), (_cc, calls, own, cum, _callers) in rows:
        where = file.split("/src/")[-1] if "/src/" in file else file.rsplit("/", 1)[-1]
        lines.append(
            f"| `{where}:{func}` (line {line}) | {calls // n} | {own / n * 1000:.3f} | {cum / n * 1000:.3f} |"
        )
    return "\n".join(["| function | calls per request | own ms | with callees ms |", "|---|---:|---:|---:|",
                      *lines])  # fmt: skip


def lines(n: int = 30) -> list[str]:
    """The steps as a results section (one line saying why, when the routed path is not in this tree)."""
    try:
        timed, top = steps(n)
    except ImportError as exc:
        return [f"(the routed path is not in this tree: {exc})"]
    ms = dict(timed)
    prepared = ms[PREPARED]
    cold = ms[PARSED] + ms[COLD_READ] + ms[COLD_TRANSLATE] + prepared
    warm = ms[CONTINUED] + prepared  # the continued turn is sliced from the one before it (design 57)
    return [
        "| step | p50 ms |", "|---|---:|", *[f"| {name} | {t:.3f} |" for name, t in timed], "",
        f"Before the upstream is sent anything (nothing stored): {warm:.2f} ms at p50 for a turn continued "
        "(the body sliced from the one before it, read from its bytes, translated, prepared), "
        f"{cold:.2f} ms with nothing memoized (the body parsed, read, translated, prepared).", "",
        "The functions with the most time of their own (cProfile, which slows them; per request, all steps):",
        "", top,
    ]  # fmt: skip


if __name__ == "__main__":
    print("\n".join(lines(int(sys.argv[1]) if len(sys.argv) > 1 else 30)))

"""Where a routed request's time goes, in one process (no HTTP, no threads): each step the proxy takes
for the translation benchmark's request (:mod:`bench.proxy_translate_body`), timed alone, p50 of many,
and a cProfile of them all by module function. The steps are those of ``toolreplay._proxy.translated``:
the body parsed, read into the neutral history, translated for the vessel, prepared as its request; the
upstream's whole answer read and written as the agent's; its stream relayed event by event.

``python -m bench.proxy_translate_steps`` prints them; :func:`steps` gives them to the benchmark.
"""

from __future__ import annotations

import asyncio
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


def _routed() -> dict[str, Callable[[], object]]:
    """The steps, each a callable doing one request's worth (the earlier steps' results prepared)."""
    from toolreplay import _jsonenc as jsonenc
    from toolreplay._issuers import host_of
    from toolreplay._proxy.bodies import json_body
    from toolreplay._proxy.translate import read_inbound, translate_request
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
    return {
        "the agent's body parsed (bodies.json_body)": lambda: json_body(raw, "", 1 << 26),
        "read into the neutral history (translate.read_inbound)": lambda: read_inbound(inbound, body),
        "translated for the vessel (translate.translate_request)": lambda: translate_request(
            inbound, history, None, vessel, issuer=issuer, path_stream=False
        ),
        "a turn that continues a stored conversation: it loaded (SQLite, store.load)": load,
        "and translated with it (translate.translate_request, the store's replies merged)": lambda: (
            translate_request(inbound, history, stored, vessel, issuer=issuer, path_stream=False)
        ),
        "the vessel's request prepared (_transport.request.prepare)": lambda: prepare(
            vessel, done.body, model=vessel.model, stream=True
        ),
        "the whole answer read and written as Anthropic's": whole,
        f"the stream relayed ({len(chunks)} Chat events, translated_stream)": lambda: loop.run_until_complete(
            relay()
        ),
    }


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
    todo = _routed()
    for f in todo.values():  # warm: imports, caches
        f()
    out = []
    for name, f in todo.items():
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        out.append((name, sorted(times)[n // 2] * 1000))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        for f in todo.values():
            f()
    prof.disable()
    return out, _top(prof, n)


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
    total = sum(ms for name, ms in timed[:6] if "stored" not in name and "with it" not in name)
    return [
        "| step | p50 ms |", "|---|---:|", *[f"| {name} | {ms:.3f} |" for name, ms in timed], "",
        f"Before the upstream is sent anything (nothing stored): {total:.2f} ms at p50.", "",
        "The functions with the most time of their own (cProfile, which slows them; per request, all steps):",
        "", top,
    ]  # fmt: skip


if __name__ == "__main__":
    print("\n".join(lines(int(sys.argv[1]) if len(sys.argv) > 1 else 30)))

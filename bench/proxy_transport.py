"""What the proxy's own upstream transport (``toolreplay._proxy.upstream``, design 44) buys against httpx's
own (httpcore's pool and h11) on the translation benchmark's traffic: the Chat request toolreplay makes of
the 199-message Claude Code request, sent to the benchmark's upstream (another process, on loopback),
which answers its 16-event stream; the time to the answer's head and to its last byte, p50, the two
transports taking turns in one run.

``python -m bench.proxy_transport`` prints the lines; :func:`lines` gives them to the benchmark.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.proxy import free_port, pct

ROOT = Path(__file__).resolve().parent.parent
ROUNDS, PER = 10, 30


def _chat_body() -> bytes:
    """The Chat request the routed proxy sends for the benchmark's Anthropic request."""
    from dataclasses import replace

    from bench.proxy_translate_body import request
    from toolreplay import _jsonenc as jsonenc
    from toolreplay._issuers import host_of
    from toolreplay._proxy.translate import read_inbound, translate_request
    from toolreplay._vessels import get_vessel
    from toolreplay.model import Issuer
    from toolreplay.wires import get_wire

    inbound = get_wire("anthropic")
    vessel = replace(get_vessel("openai"), base_url="http://127.0.0.1:9/v1")
    issuer = Issuer(vessel.wire, host_of(vessel.base_url), vessel.model)
    history = read_inbound(inbound, request(True))
    done = translate_request(inbound, history, None, vessel, issuer=issuer)
    return jsonenc.encode(done.body)


async def _timed(transport: httpx.AsyncBaseTransport, url: httpx.URL, body: bytes) -> tuple[float, float]:
    headers = [(b"content-type", b"application/json"), (b"authorization", b"Bearer sk-bench-upstream-0000"),
               (b"accept-encoding", b"identity")]  # fmt: skip
    t0 = time.perf_counter()
    resp = await transport.handle_async_request(
        httpx.Request("POST", url, headers=headers, content=body, extensions={"timeout": {}})
    )
    head = time.perf_counter() - t0
    async for _ in resp.aiter_raw():
        pass
    await resp.aclose()
    if resp.status_code != 200:
        raise RuntimeError(f"the upstream answered {resp.status_code}")
    return head, time.perf_counter() - t0


async def _run(port: int, body: bytes, rounds: int, per: int) -> dict[str, list[tuple[float, float]]]:
    from toolreplay._proxy.upstream import LoopTransport, parsed_url

    url = parsed_url(f"http://127.0.0.1:{port}/v1/chat/completions")
    limits = httpx.Limits(max_connections=100)
    made: dict[str, Callable[[], httpx.AsyncBaseTransport]] = {
        "httpx's own transport (httpcore, h11)": lambda: httpx.AsyncHTTPTransport(limits=limits),
        "the proxy's transport (httptools)": lambda: LoopTransport(limits),
    }
    transports = {name: make() for name, make in made.items()}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in transports}
    for t in transports.values():  # warm: the connection, the imports
        for _ in range(per):
            await _timed(t, url, body)
    for r in range(rounds):
        order = list(transports.items())
        for name, t in order[r % 2 :] + order[: r % 2]:
            times[name] += [await _timed(t, url, body) for _ in range(per)]
    for t in transports.values():
        await t.aclose()
    return times


def measure(rounds: int = ROUNDS, per: int = PER) -> list[tuple[str, float, float]]:
    """``(transport, head p50 ms, last byte p50 ms)`` for each transport."""
    from bench.proxy import spawned

    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    cmd = [sys.executable, "-m", "bench.proxy_translate_upstream", str(port)]
    body = _chat_body()
    try:
        import uvloop

        runner: Callable[[Any], Any] = uvloop.run
    except ImportError:
        runner = asyncio.run
    with spawned(cmd, f"http://127.0.0.1:{port}/last", env):
        times = runner(_run(port, body, rounds, per))
    return [
        (name, pct([h for h, _ in ts], 0.5) * 1000, pct([e for _, e in ts], 0.5) * 1000)
        for name, ts in times.items()
    ]


def lines(rounds: int = ROUNDS, per: int = PER) -> list[str]:
    rows = measure(rounds, per)
    out = [
        "| upstream transport | to the answer's head, p50 ms | to its last byte, p50 ms |",
        "|---|---:|---:|",
    ]
    out += [f"| {name} | {head:.3f} | {end:.3f} |" for name, head, end in rows]
    (_, h0, e0), (_, h1, e1) = rows
    said = (
        f"The proxy's transport: {h0 - h1:.3f} ms sooner to the head, {e0 - e1:.3f} ms to the last byte, "
        f"than httpx's own ({rounds * per} requests each, taking turns)."
    )
    out += ["", said]
    return out


if __name__ == "__main__":
    quick = "--quick" in sys.argv[1:]
    print("\n".join(lines(2, 10) if quick else lines()))

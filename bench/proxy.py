"""``python -m bench.proxy``: what ``toolreplay proxy`` adds to a request, against LiteLLM's proxy, in
one run (``python3 scripts/dev.py bench-proxy`` runs it where LiteLLM's proxy is installed).

Every contender is its own process in front of one local upstream (:mod:`bench.proxy_upstream`, OpenAI
Chat, keep-alive): the upstream directly, ``toolreplay proxy --no-record``, ``toolreplay proxy``
recording into a fresh SQLite file, and ``litellm --config`` with one ``openai/`` model on that upstream.
One keep-alive client sends the same requests to each, alternately (the order rotates every round, so a
slow stretch of the shared machine falls on all alike): a small request and a 200-message one, whole
(time to the whole answer) and streamed (time to the first byte of the answer). What a proxy adds is its
percentile minus the upstream's own. Then the recording proxy's memory (RSS) over 1,000 requests of 50
growing agent sessions, read every 100 once the recorder has caught up, and over rounds of 64 concurrent
streams: "flat" is a growth below 2 MB after a warm-up (the first 200 requests, the first round).

    python -m bench.proxy                 # the full run (a few minutes)
    python -m bench.proxy --quick         # a smoke run
    python -m bench.proxy --results bench/RESULTS.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
MARK_START = "<!-- proxy results: start -->"
MARK_END = "<!-- proxy results: end -->"
TOOL = {"type": "function", "function": {"name": "coop", "description": "the todo board",
        "parameters": {"type": "object", "properties": {"action": {"type": "string"}}}}}  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str, proc: subprocess.Popen[bytes], seconds: float = 120.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the process ended ({proc.returncode})")
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{url}: did not start within {seconds:.0f} s")


@contextmanager
def spawned(
    cmd: list[str], probe: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env or dict(os.environ)
    )
    try:
        _wait(probe, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def hello(port: int) -> str:
    return f"http://127.0.0.1:{port}/api/hello"


def small_request(stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-4.1",
        "tools": [TOOL],
        "messages": [{"role": "user", "content": "list"}],
    }
    return body | ({"stream": True} if stream else {})


def session_messages(n: int, session: int = 0) -> list[dict[str, Any]]:
    """A Chat history of ``n`` messages: a system prompt, the user's ask, then rounds of a call and its
    answer (what an agent's request looks like deep into a task)."""
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent. " * 40},
        {"role": "user", "content": f"session {session}: tidy the todo board"},
    ]
    k = 0
    while len(out) < n:
        args = json.dumps({"action": "list", "page": k})
        call = {
            "id": f"call_{session}_{k}",
            "type": "function",
            "function": {"name": "coop", "arguments": args},
        }
        out.append({"role": "assistant", "content": f"Looking at page {k}.", "tool_calls": [call]})
        out.append(
            {"role": "tool", "tool_call_id": call["id"], "content": f"page {k}: " + "todo item; " * 30}
        )
        k += 1
    return out[:n] if out[n - 1]["role"] != "assistant" else out[: n - 1]


def large_request(stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "gpt-4.1", "tools": [TOOL], "messages": session_messages(200)}
    return body | ({"stream": True} if stream else {})


@dataclass(frozen=True)
class Contender:
    name: str
    url: str


def one(client: httpx.Client, url: str, data: bytes, stream: bool) -> float:
    """Seconds to the whole answer (whole) or to its first byte (streamed); the stream is read to its end."""
    headers = {"content-type": "application/json", "authorization": "Bearer sk-bench-0000"}
    t0 = time.perf_counter()
    if not stream:
        r = client.post(url, content=data, headers=headers)
        took = time.perf_counter() - t0
        if r.status_code != 200:
            raise RuntimeError(f"{url}: {r.status_code} {r.text[:200]}")
        return took
    with client.stream("POST", url, content=data, headers=headers) as r:
        it = r.iter_raw()
        next(it)
        took = time.perf_counter() - t0
        for _ in it:
            pass
        if r.status_code != 200:
            raise RuntimeError(f"{url}: {r.status_code}")
    return took


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def latency(contenders: list[Contender], rounds: int, per: int) -> list[dict[str, Any]]:
    rows = []
    cases = [("small", small_request), ("200 messages", large_request)]
    with httpx.Client(timeout=60, limits=httpx.Limits(max_keepalive_connections=20)) as client:
        for label, make in cases:
            for stream in (False, True):
                data = json.dumps(make(stream)).encode()
                times: dict[str, list[float]] = {c.name: [] for c in contenders}
                for c in contenders:  # warm up each (connections, imports, caches)
                    for _ in range(20):
                        one(client, c.url, data, stream)
                for r in range(rounds):
                    k = r % len(contenders)
                    for c in contenders[k:] + contenders[:k]:
                        times[c.name] += [one(client, c.url, data, stream) for _ in range(per)]
                base = times[contenders[0].name]
                for c in contenders:
                    t = times[c.name]
                    rows.append({
                        "request": label, "mode": "streamed (first byte)" if stream else "whole",
                        "contender": c.name, "n": len(t),
                        "p50_ms": pct(t, 0.5) * 1000, "p99_ms": pct(t, 0.99) * 1000,
                        "added_p50_ms": (pct(t, 0.5) - pct(base, 0.5)) * 1000,
                        "added_p99_ms": (pct(t, 0.99) - pct(base, 0.99)) * 1000,
                    })  # fmt: skip
    return rows


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def caught_up(log: Path, n: int, seconds: float = 300.0) -> float:
    """Wait until the recorder has logged ``n`` exchanges; the seconds it took."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if log.exists() and log.read_bytes().count(b"\n") >= n:
            break
        time.sleep(0.2)
    return time.monotonic() - t0


def memory_requests(
    url: str, pid: int, log: Path, sessions: int = 50, steps: int = 20, every: int = 100
) -> list[tuple[int, int, int, float]]:
    """``(requests, RSS, RSS once the recorder has caught up, seconds it took)`` every ``every`` requests of
    ``sessions`` agent sessions growing ``steps`` steps each."""
    out = [(0, rss_kb(pid), rss_kb(pid), 0.0)]
    n = 0
    with httpx.Client(timeout=60) as client:
        for step in range(steps):
            for s in range(sessions):
                body = {"model": "gpt-4.1", "tools": [TOOL], "messages": session_messages(2 + 2 * step, s)}
                one(client, url, json.dumps(body).encode(), False)
                n += 1
                if n % every == 0:
                    now = rss_kb(pid)
                    waited = caught_up(log, n)
                    out.append((n, now, rss_kb(pid), waited))
    return out


#: Memory is "flat" when, after a warm-up, it grows by less than this (and the streams' rounds alike).
FLAT_MB = 2.0


def growth(points: list[tuple[int, int]], warm: int) -> tuple[float, float, float]:
    """``(RSS after the warm-up, RSS at the end, the growth)`` in MB, from ``(count, RSS kB)`` points."""
    start = next(kb for n, kb in points if n >= warm)
    end = points[-1][1]
    return start / 1024, end / 1024, (end - start) / 1024


def _verdict(ok: bool) -> str:
    return "met" if ok else "not met"


async def _streams(url: str, n: int) -> None:
    data = json.dumps(small_request(True)).encode()
    headers = {"content-type": "application/json", "authorization": "Bearer sk-bench-0000"}
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=n)) as client:

        async def go() -> None:
            async with client.stream("POST", url, content=data, headers=headers) as r:
                async for _ in r.aiter_raw():
                    pass

        await asyncio.gather(*(go() for _ in range(n)))


def memory_streams(url: str, pid: int, rounds: int = 10) -> list[tuple[int, int]]:
    out = [(0, rss_kb(pid))]
    for r in range(rounds):
        asyncio.run(_streams(url, 64))
        out.append(((r + 1) * 64, rss_kb(pid)))
    return out


def _litellm_config(path: Path, upstream: str) -> None:
    path.write_text(
        "model_list:\n  - model_name: gpt-4.1\n    litellm_params:\n      model: openai/gpt-4.1\n"
        f"      api_base: {upstream}\n      api_key: sk-bench-0000\n"
        "litellm_settings:\n  telemetry: false\n  turn_off_message_logging: true\n"
    )


def _table(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| request | answer | contender | p50 ms | p99 ms | added p50 ms | added p99 ms |",
           "|---|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for r in rows:
        out.append(
            f"| {r['request']} | {r['mode']} | {r['contender']} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | "
            f"{r['added_p50_ms']:.2f} | {r['added_p99_ms']:.2f} |"
        )
    return out


#: The pass-through's targets (issue 25): what it adds at p50, and how far below LiteLLM's proxy.
MAX_ADDED_MS = 1.0
MIN_RATIO = 5.0


def _ratios(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for key in dict.fromkeys((r["request"], r["mode"]) for r in rows):
        got = {r["contender"]: r["added_p50_ms"] for r in rows if (r["request"], r["mode"]) == key}
        ours, theirs = got.get("toolreplay pass-through"), got.get("litellm proxy")
        if ours is not None and theirs is not None:
            ratio = theirs / ours if ours > 0 else float("inf")
            out.append(
                f"- {key[0]}, {key[1]}: pass-through adds {ours:.2f} ms at p50, LiteLLM {theirs:.2f} ms "
                f"({ratio:.0f}x); at most {MAX_ADDED_MS:.0f} ms: {_verdict(ours <= MAX_ADDED_MS)}, "
                f"at least {MIN_RATIO:.0f}x below LiteLLM: {_verdict(ratio >= MIN_RATIO)}"
            )
    return out


def run(quick: bool) -> list[str]:
    py = sys.executable
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",
    }  # no key: a local bench
    tmp = Path(tempfile.mkdtemp(prefix="toolreplay-bench-proxy-"))
    up, slow = free_port(), free_port()
    p_pass, p_rec, p_lite = free_port(), free_port(), free_port()
    upstream = f"http://127.0.0.1:{up}/v1"
    litellm = shutil.which("litellm") or str(Path(py).parent / "litellm")
    _litellm_config(tmp / "litellm.yaml", upstream)
    tr = [py, "-m", "toolreplay", "proxy", "-q", "--upstream", f"openai-chat={upstream}"]
    lines: list[str] = []
    with (
        spawned([py, "-m", "bench.proxy_upstream", str(up)], f"http://127.0.0.1:{up}/", env),
        spawned([py, "-m", "bench.proxy_upstream", str(slow), "20"], f"http://127.0.0.1:{slow}/", env),
        spawned([*tr, "--no-record", "-p", str(p_pass)], f"http://127.0.0.1:{p_pass}/api/hello", env),
        spawned([*tr, "--db", str(tmp / "bench.db"), "-p", str(p_rec)], hello(p_rec), env),
        spawned([litellm, "--config", str(tmp / "litellm.yaml"), "--port", str(p_lite), "--num_workers", "1"],
                f"http://127.0.0.1:{p_lite}/health/liveliness", env),
    ):  # fmt: skip
        contenders = [
            Contender("upstream direct", f"http://127.0.0.1:{up}/v1/chat/completions"),
            Contender("toolreplay pass-through", f"http://127.0.0.1:{p_pass}/v1/chat/completions"),
            Contender("toolreplay recording", f"http://127.0.0.1:{p_rec}/v1/chat/completions"),
            Contender("litellm proxy", f"http://127.0.0.1:{p_lite}/v1/chat/completions"),
        ]
        rows = latency(contenders, rounds=2 if quick else 8, per=10 if quick else 40)
        lines += ["### Added latency per request", "", *_table(rows), "", *_ratios(rows), ""]
    with (
        spawned([py, "-m", "bench.proxy_upstream", str(up), "20"], f"http://127.0.0.1:{up}/", env),
        spawned([*tr, "--db", str(tmp / "memory.db"), "--log", str(tmp / "memory.log"), "-p", str(p_rec)],
                hello(p_rec), env) as proc,
    ):  # fmt: skip
        url = f"http://127.0.0.1:{p_rec}/v1/chat/completions"
        sessions, steps = (10, 10) if quick else (50, 20)
        mem = memory_requests(url, proc.pid, tmp / "memory.log", sessions, steps)
        streams = memory_streams(url, proc.pid, 3 if quick else 10)
    lines += ["### Memory of the recording proxy (RSS)", ""]
    lines.append("| requests | RSS | RSS, the recorder caught up | its wait |")
    lines.append("|---:|---:|---:|---:|")
    lines += [f"| {n} | {a / 1024:.1f} MB | {b / 1024:.1f} MB | {w:.1f} s |" for n, a, b, w in mem]
    lines.append("")
    lines.append(
        "64 concurrent streams, by round: " + ", ".join(f"{n}: {kb / 1024:.1f} MB" for n, kb in streams)
    )
    lines += ["", *_memory_lines(mem, streams)]
    shutil.rmtree(tmp, ignore_errors=True)
    return lines


def _memory_lines(mem: list[tuple[int, int, int, float]], streams: list[tuple[int, int]]) -> list[str]:
    """The memory lines against the target: growth after a warm-up (a fifth of the requests, the first
    round of streams) below :data:`FLAT_MB`."""
    warm = mem[-1][0] // 5
    a, b, d = growth([(n, kb) for n, _, kb, _ in mem], warm)
    sa, sb, sd = growth(streams, streams[1][0])
    return [
        f"- {mem[-1][0]:,} recorded requests: {a:.1f} MB after a warm-up of {warm}, {b:.1f} MB at the end "
        f"(the recorder caught up): {d:+.1f} MB; flat (below +{FLAT_MB:.0f} MB): {_verdict(d < FLAT_MB)}",
        f"- 64 concurrent streams, {len(streams) - 1} rounds: {sa:.1f} MB after the first, {sb:.1f} MB after "
        f"the last: {sd:+.1f} MB; flat (below +{FLAT_MB:.0f} MB): {_verdict(sd < FLAT_MB)}",
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.proxy")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--results", type=Path)
    args = ap.parse_args(argv)
    lines = run(args.quick)
    from importlib.metadata import version

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    head = [
        "## toolreplay proxy against LiteLLM's proxy (issue 25)", "",
        f"Command: `{os.environ.get('TOOLREPLAY_BENCH_COMMAND', 'python -m bench.proxy')}`"
        + (" --quick" if args.quick else ""),
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, load {load};"
        f" Python {platform.python_version()}; litellm {version('litellm')}, uvicorn {version('uvicorn')}, "
        f"starlette {version('starlette')}, httpx {version('httpx')}.", "",
    ]  # fmt: skip
    text = "\n".join([*head, *lines]) + "\n"
    print(text)
    if args.results is not None:
        old = args.results.read_text(encoding="utf-8") if args.results.exists() else ""
        block = f"{MARK_START}\n{text}{MARK_END}\n"
        if MARK_START in old and MARK_END in old:
            new = old[: old.index(MARK_START)] + block + old[old.index(MARK_END) + len(MARK_END) + 1 :]
        else:
            new = old.rstrip("\n") + "\n\n" + block
        args.results.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

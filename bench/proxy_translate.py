"""``python -m bench.proxy_translate``: what ``toolreplay proxy`` adds to a translated request, against
LiteLLM's proxy doing the same translation, in one run (``python3 scripts/dev.py bench-translate``).

A Claude Code request 199 messages deep (:mod:`bench.proxy_translate_body`, Anthropic Messages,
``POST /v1/messages``) is routed to the OpenAI Chat wire and its answer (a sentence and a tool call, whole
or streamed: :mod:`bench.proxy_translate_upstream`) translated back into an Anthropic message. Contenders,
each its own process in front of the same upstream: the upstream directly (sent the Chat request
toolreplay made of the Anthropic one, so its own time is the floor), ``toolreplay proxy --route
'claude-*=openai:gpt-4.1'`` without and with recording, and ``litellm --config`` with ``claude-sonnet-4-5``
as an ``openai/`` model on the upstream (``/v1/messages`` through chat/completions, not its default of the
Responses API, which the upstream does not serve). One keep-alive client sends the same request to each,
alternately (the order rotates every round, as in :mod:`bench.proxy`): whole (time to the whole answer)
and streamed (time to the first byte of the translated stream, and to its last), with a pause between
two contenders' turns (:data:`PAUSE`, in which the recording proxy writes what its turn left). What a
proxy adds is its percentile minus the upstream's own. Each contender's answer is checked once per run
(a valid Anthropic message with the upstream's text, call and usage); a wrong one is printed and named in
the results.

    python -m bench.proxy_translate                 # the full run (a minute or two)
    python -m bench.proxy_translate --quick         # a smoke run
    python -m bench.proxy_translate --results bench/RESULTS.md
    python -m bench.proxy_translate --continued     # conversations request after request, as agents send
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from bench.cpu import per_request, spent
from bench.proxy import free_port, pct, spawned
from bench.proxy_translate_body import HEADERS, MODEL, check_answer, request, sessions
from bench.proxy_translate_upstream import MODEL as UPSTREAM_MODEL

ROOT = Path(__file__).resolve().parent.parent
MARK_START = "<!-- proxy translation results: start -->"
MARK_END = "<!-- proxy translation results: end -->"
UPSTREAM_KEY = "sk-bench-upstream-0000"
MODES = ("whole", "streamed, first byte", "streamed, last byte")
#: Seconds between two contenders' turns: the recording proxy's recorder gives way to the requests in hand
#: (design 54) and writes what a turn of back-to-back requests left after it; without the pause that
#: work would fall in the next contender's turn.
PAUSE = 0.5


@dataclass(frozen=True)
class Contender:
    """A process to send to: its name, its URL, and the body it is sent (whole, streamed)."""

    name: str
    url: str
    bodies: tuple[bytes, bytes]
    headers: dict[str, str]
    #: ``--continued``: the requests to send in turn (whole, streamed), each its conversation's next.
    turns: tuple[Iterator[bytes], Iterator[bytes]] | None = None


def body_of(c: Contender, stream: bool) -> bytes:
    """The next body to send ``c``: its one body, or its conversations' next request."""
    return c.bodies[stream] if c.turns is None else next(c.turns[stream])


def timed(client: httpx.Client, c: Contender, stream: bool) -> tuple[float, float]:
    """Seconds to the first byte of the answer and to its last (the same for a whole answer)."""
    data = body_of(c, stream)
    t0 = time.perf_counter()
    if not stream:
        r = client.post(c.url, content=data, headers=c.headers)
        took = time.perf_counter() - t0
        if r.status_code != 200:
            raise RuntimeError(f"{c.name}: {r.status_code} {r.text[:300]}")
        return took, took
    with client.stream("POST", c.url, content=data, headers=c.headers) as r:
        it = r.iter_raw()
        next(it)
        first = time.perf_counter() - t0
        for _ in it:
            pass
        last = time.perf_counter() - t0
        if r.status_code != 200:
            raise RuntimeError(f"{c.name}: {r.status_code}")
    return first, last


def answer_of(client: httpx.Client, c: Contender, stream: bool) -> bytes:
    r = client.post(c.url, content=c.bodies[stream], headers=c.headers)
    if r.status_code != 200:
        raise RuntimeError(f"{c.name}: {r.status_code} {r.text[:300]}")
    return r.content


def latency(
    client: httpx.Client, contenders: list[Contender], rounds: int, per: int, pause: float = 0.0
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for stream in (False, True):
        times: dict[str, list[tuple[float, float]]] = {c.name: [] for c in contenders}
        for c in contenders:  # warm up each (connections, imports, caches)
            for _ in range(warm_ups(per)):
                timed(client, c, stream)
        for r in range(rounds):
            k = r % len(contenders)
            for c in contenders[k:] + contenders[:k]:
                times[c.name] += [timed(client, c, stream) for _ in range(per)]
                time.sleep(pause)  # the recording proxy writes what its turn left (not in the next's)
        for which, mode in ((0, MODES[1]), (1, MODES[2])) if stream else ((0, MODES[0]),):
            base = [t[which] for t in times[contenders[0].name]]
            for c in contenders:
                t = [x[which] for x in times[c.name]]
                rows.append({
                    "mode": mode, "contender": c.name, "n": len(t),
                    "p50_ms": pct(t, 0.5) * 1000, "p99_ms": pct(t, 0.99) * 1000,
                    "added_p50_ms": (pct(t, 0.5) - pct(base, 0.5)) * 1000,
                    "added_p99_ms": (pct(t, 0.99) - pct(base, 0.99)) * 1000,
                })  # fmt: skip
    return rows


def warm_ups(per: int) -> int:
    """The requests each contender is sent before each answer mode's measured ones."""
    return max(5, per // 2)


def sent_each(rounds: int, per: int) -> int:
    """The requests :func:`latency` sends each contender, the warm-up's with them (both answer modes)."""
    return 2 * (warm_ups(per) + rounds * per)


def cpu_table(cpu: dict[str, tuple[float, float] | None]) -> list[str]:
    """Each contender's processor time per request (:mod:`bench.cpu`), and toolreplay's against
    LiteLLM's."""
    if all(v is None for v in cpu.values()):
        return ["(not measured: this system's /proc gives no schedstat)"]
    out = ["| contender | ms per request, all its threads | its main thread |", "|---|---:|---:|"]
    for name, v in cpu.items():
        out.append(f"| {name} | {v[0]:.2f} | {v[1]:.2f} |" if v else f"| {name} | - | - |")
    theirs = cpu.get("litellm proxy")
    lines = []
    for name in ("toolreplay routed", "toolreplay routed, recording"):
        ours = cpu.get(name)
        if ours and theirs and ours[0] > 0:
            lines.append(f"- {name}: {ours[0]:.2f} ms per request against LiteLLM's {theirs[0]:.2f} ms: "
                         f"{theirs[0] / ours[0]:.1f}x less")  # fmt: skip
    out += ["", *lines] if lines else []
    return out


def _upstream_body(client: httpx.Client, up: str, c: Contender, stream: bool) -> bytes:
    """The Chat body ``c`` sent the upstream for its request (the upstream keeps the last one)."""
    answer_of(client, c, stream)
    return client.get(f"{up}/last").content


def _litellm_config(path: Path, upstream: str) -> None:
    """Claude Code's model as an ``openai/`` model on the upstream. LiteLLM 1.110 sends ``/v1/messages``
    for an OpenAI model to the Responses API unless told to use chat/completions, and a request with
    thinking on to the Responses API anyway unless the model is marked as not reasoning (gpt-4.1 is
    not); ``drop_params`` lets it drop the thinking setting, as toolreplay names and drops it."""
    path.write_text(
        f"model_list:\n  - model_name: {MODEL}\n    litellm_params:\n      model: openai/{UPSTREAM_MODEL}\n"
        f"      api_base: {upstream}\n      api_key: {UPSTREAM_KEY}\n"
        "    model_info:\n      supports_reasoning: false\n"
        "litellm_settings:\n  telemetry: false\n  turn_off_message_logging: true\n  drop_params: true\n"
        "  use_chat_completions_url_for_anthropic_messages: true\n"
    )


def _env(tmp: Path, upstream: str) -> dict[str, str]:
    vessels = tmp / "vessels.toml"
    vessels.write_text(f'[vessels.openai]\nbase_url = "{upstream}"\n', encoding="utf-8")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "TOOLREPLAY_VESSELS": str(vessels),
        "OPENAI_API_KEY": UPSTREAM_KEY,  # the routed vessel's key (the agent's never goes upstream)
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",  # no key: a local bench
        "LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES": "True",
    }


def _chat_summary(name: str, data: bytes) -> str:
    try:
        body = json.loads(data)
    except ValueError:
        return f"- {name}: sent the upstream {data[:120]!r}"
    msgs = body.get("messages") or []
    calls = sum(len(m.get("tool_calls") or []) for m in msgs if isinstance(m, dict))
    return (
        f"- {name}: sent the upstream {len(data):,} bytes, {len(msgs)} Chat messages with {calls} calls, "
        f"model {body.get('model')!r}, keys {sorted(body)}"
    )


def checks(client: httpx.Client, contenders: list[Contender], up: str) -> list[str]:
    """Each proxy's answer checked once, whole and streamed, and what it sent the upstream."""
    lines = []
    for c in contenders[1:]:
        for stream in (False, True):
            problems = check_answer(answer_of(client, c, stream), stream)
            mode = "streamed" if stream else "whole"
            if problems:
                line = f"- {c.name}, {mode}: WRONG answer: " + "; ".join(problems)
                print(line, file=sys.stderr)
            else:
                line = (
                    f"- {c.name}, {mode}: a valid Anthropic message with the upstream's text, call and usage"
                )
            lines.append(line)
        lines.append(_chat_summary(c.name, _upstream_body(client, up, c, True)))
    return lines


def _commands(tmp: Path, up: int, ports: list[int], litellm: bool) -> list[tuple[list[str], str]]:
    py = sys.executable
    _litellm_config(tmp / "litellm.yaml", f"http://127.0.0.1:{up}/v1")
    tr = [py, "-m", "toolreplay", "proxy", "-q", "--route", f"claude-*=openai:{UPSTREAM_MODEL}"]
    p_pass, p_rec, p_lite = ports
    out = [
        ([py, "-m", "bench.proxy_translate_upstream", str(up)], f"http://127.0.0.1:{up}/last"),
        ([*tr, "--no-record", "-p", str(p_pass)], f"http://127.0.0.1:{p_pass}/api/hello"),
        ([*tr, "--db", str(tmp / "bench.db"), "-p", str(p_rec)], f"http://127.0.0.1:{p_rec}/api/hello"),
    ]
    if litellm:
        exe = shutil.which("litellm") or str(Path(py).parent / "litellm")
        out.append(([exe, "--config", str(tmp / "litellm.yaml"), "--port", str(p_lite), "--num_workers", "1"],
                    f"http://127.0.0.1:{p_lite}/health/liveliness"))  # fmt: skip
    return out


def machine_speed(data: bytes, n: int = 200) -> float:
    """Milliseconds a ``json.loads`` of ``data`` takes at p50 here, now: the same work on every machine,
    so two runs' figures can be read against how fast their machines were (a virtual machine's speed
    moves by half within minutes)."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        json.loads(data)
        times.append(time.perf_counter() - t0)
    return pct(times, 0.5) * 1000


def in_process(env: dict[str, str], module: str, *args: str) -> list[str]:
    """``python -m module *args`` (:mod:`bench.proxy_translate_steps`, :mod:`bench.proxy_transport`) in a
    process of its own (this tree's toolreplay, nothing else running in it): the lines it prints."""
    cmd = [sys.executable, "-m", module, *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode != 0:
        return [f"(not measured: {done.stderr.strip().splitlines()[-1:]})"]
    return done.stdout.rstrip("\n").splitlines()


#: ``--continued``: conversations per answer mode, and requests in each (more than a contender is sent).
SESSIONS, TURNS = 26, 10


def continued(c: Contender, quick: bool) -> Contender:
    """``c`` sent conversations one after the other instead of one body again and again: every contender
    the same requests, the whole ones and the streamed ones conversations of their own."""
    count = 2 if quick else SESSIONS
    whole, streamed = sessions(False, count, TURNS), sessions(True, count, TURNS, first=count)
    return replace(c, turns=(iter(whole), iter(streamed)))


def measure(
    client: httpx.Client, contenders: list[Contender], procs: list[subprocess.Popen[bytes]], quick: bool
) -> tuple[list[dict[str, Any]], dict[str, tuple[float, float] | None]]:
    """:func:`latency`'s rows, and each contender's processor time per request over the same requests
    (``procs``: the contenders' processes, in their order)."""
    rounds, per = (2, 5) if quick else (8, 30)
    before = [spent(p.pid) for p in procs]
    rows = latency(client, contenders, rounds=rounds, per=per, pause=PAUSE)
    after = [spent(p.pid) for p in procs]
    each = sent_each(rounds, per)  # the upstream answered every contender's requests
    cpu = {c.name: per_request(b, a, each * (len(contenders) if i == 0 else 1))
           for i, (c, b, a) in enumerate(zip(contenders, before, after, strict=True))}  # fmt: skip
    return rows, cpu


def _how(sent: dict[str, Any], quick: bool) -> str:
    return (
        f"Sent as {SESSIONS if not quick else 2} conversations per answer mode, one after the other, "
        f"{TURNS} requests each (each its conversation's last and a call and its result more, the marker "
        f"moved; the last {len(sent['messages'])} messages deep), every contender the same requests "
        "(`--continued`); the upstream directly the one Chat request."
    )


def run(quick: bool, litellm: bool = True, turns: bool = False) -> list[str]:
    tmp = Path(tempfile.mkdtemp(prefix="toolreplay-bench-translate-"))
    up, ports = free_port(), [free_port() for _ in range(3)]
    env = _env(tmp, f"http://127.0.0.1:{up}/v1")
    anthropic = (json.dumps(request(False)).encode(), json.dumps(request(True)).encode())
    names = ["toolreplay routed", "toolreplay routed, recording", "litellm proxy"][: 3 if litellm else 2]
    speed = [machine_speed(anthropic[0])]
    with ExitStack() as stack, httpx.Client(timeout=120) as client:
        procs = [
            stack.enter_context(spawned(cmd, probe, env)) for cmd, probe in _commands(tmp, up, ports, litellm)
        ]
        proxies = [
            Contender(n, f"http://127.0.0.1:{p}/v1/messages", anthropic, HEADERS)
            for n, p in zip(names, ports, strict=False)
        ]
        base = f"http://127.0.0.1:{up}"
        direct = (
            _upstream_body(client, base, proxies[0], False),
            _upstream_body(client, base, proxies[0], True),
        )
        chat = {"content-type": "application/json", "authorization": f"Bearer {UPSTREAM_KEY}"}
        contenders = [Contender("upstream direct", f"{base}/v1/chat/completions", direct, chat), *proxies]
        found = checks(client, contenders, base)
        if turns:
            contenders = [contenders[0], *(continued(c, quick) for c in contenders[1:])]
        rows, cpu = measure(client, contenders, procs, quick)
    speed.append(machine_speed(anthropic[0]))
    steps = in_process(env, "bench.proxy_translate_steps", "10" if quick else "50")
    transport = in_process(env, "bench.proxy_transport", *(["--quick"] if quick else []))
    shutil.rmtree(tmp, ignore_errors=True)
    sent = request(False)
    how = _how(sent, quick) if turns else "The same request sent again and again."
    return [
        f"The request: {len(sent['messages'])} Anthropic messages and the system prompt, "
        f"{len(anthropic[0]):,} bytes, Claude Code's {len(sent['tools'])} tools. {how}", "",
        f"The machine's speed: a `json.loads` of the request took {speed[0]:.2f} ms at p50 before the run "
        f"and {speed[1]:.2f} ms after it (the same work in every run: figures of two runs are read "
        "against it).", "",
        "### Answers checked (once per contender)", "", *found, "",
        "### Added latency per request", "", *table(rows), "", *verdict(rows), "",
        "### Processor time per request", "",
        "Each contender's process and what it started, every thread, over the requests above, the "
        "pauses between turns with them (what the recorder writes then is counted; Linux's /proc, "
        "`bench/cpu.py`); the upstream per request it answered, every contender's alike. It moves less "
        "with the machine's load than latency does.", "", *cpu_table(cpu), "",
        "### Where the routed path's time goes", "",
        "In one process, no HTTP (`python -m bench.proxy_translate_steps`):", "", *steps, "",
        "### The proxy's upstream transport against httpx's own", "",
        "The Chat request sent to the same upstream, in one process (`python -m bench.proxy_transport`):", "",
        *transport, "",
    ]  # fmt: skip


def table(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| answer | contender | n | p50 ms | p99 ms | added p50 ms | added p99 ms |",
           "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in rows:
        out.append(
            f"| {r['mode']} | {r['contender']} | {r['n']} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | "
            f"{r['added_p50_ms']:.2f} | {r['added_p99_ms']:.2f} |"
        )
    return out


def verdict(rows: list[dict[str, Any]]) -> list[str]:
    """The targets: 5x below LiteLLM's added latency at p50, the first translated byte within 2 ms."""
    out = []
    got = {(r["mode"], r["contender"]): r for r in rows}
    for mode in MODES:
        theirs = got.get((mode, "litellm proxy"))
        for name in ("toolreplay routed", "toolreplay routed, recording"):
            ours = got.get((mode, name))
            if ours is None or theirs is None:
                continue
            a, b = ours["added_p50_ms"], theirs["added_p50_ms"]
            ratio = b / a if a > 0 else float("inf")
            line = f"- {mode}, {name}: adds {a:.2f} ms at p50, LiteLLM {b:.2f} ms: {ratio:.1f}x"
            line += " (target 5x: " + ("met" if ratio >= 5 else "MISSED") + ")"
            if mode == MODES[1]:
                met = "met" if a <= 2.0 else "MISSED"
                line += f"; first byte {a:.2f} ms after the upstream's at p50 (target 2 ms: {met})"
            out.append(line)
    return out


def write_results(path: Path, text: str) -> None:
    """``text`` between this benchmark's markers in ``path`` (added at the end the first time)."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"{MARK_START}\n{text}{MARK_END}\n"
    if MARK_START in old and MARK_END in old:
        new = old[: old.index(MARK_START)] + block + old[old.index(MARK_END) + len(MARK_END) + 1 :]
    else:
        new = old.rstrip("\n") + "\n\n" + block
    path.write_text(new, encoding="utf-8")


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def _tree() -> str:
    """The commit of the toolreplay measured (its routed path changes fast), where ROOT is a checkout."""
    done = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                          text=True, check=False)  # fmt: skip
    return done.stdout.strip() or "not a git checkout"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.proxy_translate")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--results", type=Path)
    ap.add_argument(
        "--no-litellm", action="store_true", help="toolreplay and the upstream only (a smoke run)"
    )
    ap.add_argument(
        "--continued", action="store_true",
        help="send conversations request after request (as an agent does), not one body again and again",
    )  # fmt: skip
    args = ap.parse_args(argv)
    lines = run(args.quick, litellm=not args.no_litellm, turns=args.continued)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    command = os.environ.get("TOOLREPLAY_BENCH_COMMAND", "python -m bench.proxy_translate")
    head = [
        "## toolreplay proxy translating Anthropic to Chat, against LiteLLM's proxy (issue 26)", "",
        f"Command: `{command}{' --quick' if args.quick and '--quick' not in command else ''}"
        f"{' --continued' if args.continued and '--continued' not in command else ''}`",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, load {load};"
        f" Python {platform.python_version()}; toolreplay at {_tree()};"
        f" litellm {_version('litellm')}, httpx {_version('httpx')}.", "",
    ]  # fmt: skip
    text = "\n".join([*head, *lines]) + "\n"
    print(text)
    if args.results is not None:
        write_results(args.results, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

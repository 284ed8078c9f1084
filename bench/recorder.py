"""``python -m bench.recorder``: the proxy recorder's own CPU per exchange, this tree against an earlier
commit's, in one run.

The recorder (``toolreplay._proxy.worker.RecorderThread``) is handed exchanges as the proxy hands them,
and its work on each (the body read, the conversation found, the audit, the store's writes, one
transaction) is timed in CPU time of the thread (``time.thread_time``: what it takes from the requests
that share the interpreter, design 54), no HTTP, no queue. Two kinds of exchange:

* **pass-through, continued**: Claude Code's Anthropic requests (:mod:`bench.proxy_translate_body`) of a
  session that grows, request N+1 carrying request N, the answer the upstream gave it (a sentence and a
  call) and the call's result: 101 to 199 messages, sessions after one another;
* **routed, new**: the translation benchmark's request (199 Anthropic messages routed to Chat, its answer
  a sentence and a call), each a new conversation, as that benchmark sends one body again and again.

Each runs on SQLite (a fresh file) and, with ``TOOLREPLAY_TEST_PG`` set, PostgreSQL (fresh tables). The
earlier commit (``--against``, default the commit before the recorder's batched writes) is checked out
into a temporary folder and timed in a process of its own beside this tree's, rounds alternating, so a
slow stretch of the shared machine falls on both alike.

    python -m bench.recorder                   # the full run
    python -m bench.recorder --quick           # a smoke run
    python -m bench.recorder --results bench/RESULTS.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The recorder before this work: a new conversation's id checked one query at a time, every message and
#: call written by a statement of its own.
BEFORE = "da8f6dd"
MARK_START = "<!-- recorder results: start -->"
MARK_END = "<!-- recorder results: end -->"
KINDS = ("pass-through, continued", "routed, new")
AGENT = "claude-cli/2.1.332 (external, sdk-cli)"


def _answer(content: list[dict[str, Any]], k: int) -> bytes:
    """The upstream's whole Anthropic answer carrying ``content`` (what the next request sends back)."""
    usage = {"input_tokens": 52000 + k, "output_tokens": 40, "cache_read_input_tokens": 51000}
    return json.dumps({
        "id": f"msg_bench_{k}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": "tool_use", "stop_sequence": None, "usage": usage,
    }).encode()  # fmt: skip


def passthrough(n: int) -> Iterator[Any]:
    """``n`` pass-through exchanges: sessions of requests growing from 101 to 199 messages."""
    from bench.proxy_translate_body import messages, request
    from toolreplay._proxy.exchange import Exchange

    every = messages(201)
    base = {k: v for k, v in request(False).items() if k != "messages"}
    done = 0
    while done < n:
        for size in range(101, 200, 2):
            if done >= n:
                return
            msgs = [dict(m) for m in every[:size]]
            raw = json.dumps({**base, "messages": msgs}).encode()
            answer = _answer(every[size]["content"], done)
            yield Exchange(
                started=time.time(), wire="anthropic", kind="generate", path="/v1/messages",
                model=None, upstream="https://api.anthropic.com", agent=AGENT, session=None, body=None,
                request_bytes=len(raw), status=200, answer=answer, answer_bytes=len(answer), received=raw,
            )  # fmt: skip
            done += 1


def routed(n: int) -> Iterator[Any]:
    """``n`` routed exchanges of the translation benchmark's request (each a new conversation)."""
    from bench.proxy_translate_body import request
    from bench.proxy_translate_upstream import WHOLE
    from toolreplay import _jsonenc as jsonenc
    from toolreplay._issuers import host_of
    from toolreplay._proxy.exchange import Exchange
    from toolreplay._proxy.matching import prefix_heads
    from toolreplay._proxy.translate import read_inbound, translate_request
    from toolreplay._vessels import get_vessel
    from toolreplay.model import Issuer
    from toolreplay.wires import get_wire

    inbound, upstream = get_wire("anthropic"), get_wire("openai-chat")
    vessel = replace(get_vessel("openai"), base_url="http://127.0.0.1:9/v1")
    issuer = Issuer(vessel.wire, host_of(vessel.base_url), vessel.model)
    raw = json.dumps(request(False)).encode()
    for _ in range(n):  # each request read and translated afresh, as the proxy does
        done = translate_request(inbound, read_inbound(inbound, json.loads(raw)), None, vessel, issuer=issuer)
        reply = done.agent_reply(upstream.parse_response(jsonenc.loads(WHOLE)))
        yield Exchange(
            started=time.time(), wire="anthropic", kind="generate", path="/v1/messages",
            model="claude-sonnet-4-5", upstream=vessel.base_url, agent=AGENT, session=None, body=None,
            request_bytes=len(raw), status=200, history=done.history, reply=reply, issuer=issuer,
            route="claude-*=openai", vessel="openai", notes=done.notes,
            heads=tuple(prefix_heads(done.history.messages)),
        )  # fmt: skip


def _fresh_store(db: str) -> Any:
    """A store with nothing in it: a new SQLite file, or PostgreSQL's tables emptied."""
    from toolreplay._store import open_store

    store = open_store(db)
    if db.startswith("postgresql"):
        store.transact(lambda c: c.execute("TRUNCATE usage, tool_uses, messages, conversations"), "truncate")
    return store


def timed(kind: str, db: str, n: int, warm: int = 5) -> list[float]:
    """CPU ms of the recorder's thread for each of ``n`` exchanges of ``kind`` (after ``warm``)."""
    from toolreplay._proxy.worker import RecorderThread

    made: Callable[[int], Iterator[Any]] = passthrough if kind == KINDS[0] else routed
    exchanges = list(made(n + warm))
    store = _fresh_store(db)
    rec = RecorderThread(None)
    out = []
    try:
        for i, ex in enumerate(exchanges):
            t0 = time.thread_time()
            rec._handle(ex, store, None)
            if i >= warm:
                out.append((time.thread_time() - t0) * 1000)
        if rec.failures:
            raise RuntimeError(f"{kind}: {rec.failures} exchanges not recorded")
    finally:
        store.close()
    return out


def _child(kind: str, db: str, n: int) -> None:
    print(json.dumps(timed(kind, db, n)))


def _tree(ref: str) -> Path:
    """The commit ``ref`` of this repository, checked out into a temporary folder (its ``src`` only)."""
    where = Path(tempfile.mkdtemp(prefix="toolreplay-bench-recorder-"))
    archive = subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


def _run(src: Path, kind: str, db: str, n: int) -> list[float]:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
    cmd = [sys.executable, "-m", "bench.recorder", "--child", kind, "--db", db, "-n", str(n)]
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} on {db}: {done.stderr.strip().splitlines()[-3:]}")
    result: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _databases(tmp: Path) -> list[tuple[str, Callable[[], str]]]:
    counter = iter(range(1 << 30))
    out: list[tuple[str, Callable[[], str]]] = [("SQLite", lambda: str(tmp / f"r{next(counter)}.db"))]
    pg = os.environ.get("TOOLREPLAY_TEST_PG")
    if pg:
        out.append(("PostgreSQL", lambda: pg))
    return out


def run(quick: bool, against: str) -> list[str]:
    tmp = Path(tempfile.mkdtemp(prefix="toolreplay-bench-recorder-db-"))
    old = _tree(against)
    n, rounds = (20, 2) if quick else (60, 5)
    rows = []
    try:
        for db_name, db in _databases(tmp):
            for kind in KINDS:
                before: list[float] = []
                after: list[float] = []
                for r in range(rounds):  # alternate, the order turned each round
                    pair = [(old / "src", before), (ROOT / "src", after)]
                    for src, into in pair if r % 2 == 0 else pair[::-1]:
                        into += _run(src, kind, db(), n)
                rows.append((db_name, kind, statistics.median(before), statistics.median(after)))
    finally:
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return _table(rows, against, n * rounds)


def _table(rows: list[tuple[str, str, float, float]], against: str, n: int) -> list[str]:
    out = [
        f"CPU of the recorder's thread per exchange, median of {n} (`time.thread_time`), commit {against} "
        "against this tree, in one run:",
        "",
        "| store | exchange | before ms | after ms | before / after |",
        "|---|---|---:|---:|---:|",
    ]
    for db, kind, b, a in rows:
        out.append(f"| {db} | {kind} | {b:.2f} | {a:.2f} | {b / a:.2f}x |")
    return out


def write_results(path: Path, lines: list[str]) -> None:
    text = path.read_text(encoding="utf-8")
    block = "\n".join([MARK_START, *lines, MARK_END])
    if MARK_START in text:
        head, rest = text.split(MARK_START, 1)
        text = head + block + rest.split(MARK_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## The proxy's recorder: CPU per exchange\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.recorder", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--against", default=BEFORE, help="the commit to compare with (default %(default)s)")
    p.add_argument("--results", type=Path)
    p.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    p.add_argument("--db", help=argparse.SUPPRESS)
    p.add_argument("-n", type=int, default=40, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(args.child, args.db, args.n)
        return 0
    lines = run(args.quick, args.against)
    print("\n".join(lines))
    if args.results:
        write_results(args.results, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Do the stored render fragments (design 35) pay end to end? ``python -m bench.fragments_pay``.

Issue 23: the fragments keep their place only if load + render + encode is at least 2x faster with them,
at 1,000 and 10,000 turns. The conversation is the cold bench's Chat history (``render_cold``) imported
into a SQLite file. Per wire (on its cold-bench vessel), alternately in one process, CPU time of the
process (the machine is shared):

* ``without``: ``store.load(id)`` + ``render`` + ``encode`` (a conversation rendered for the first time);
* ``with``: ``store.load(id, fragments=key)`` + ``render`` + ``encode``, the fragments of an earlier render
  stored (the CLI's ``render`` and each new turn's process);
* and a whole CLI turn (``run_turn`` against a stand-in transport, SQLite file, the vessel's own context
  window as the budget), with the loop reading and writing the fragments and with both hooks off.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.long import _Clock
from bench.render_cold import COLD_VESSELS, chat_messages
from toolreplay import render
from toolreplay._jsonenc import encode
from toolreplay._render_cache import RenderCache

ROUNDS = 7


def _cpu_alternate(contenders: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median CPU seconds per call of each contender, run alternately (order rotated each round)."""
    names = list(contenders)
    out: dict[str, list[float]] = {n: [] for n in names}
    for f in contenders.values():  # warm up (lazy imports, first use of each table)
        f()
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            gc.collect()
            gc.disable()
            t0 = time.process_time()
            contenders[n]()
            out[n].append(time.process_time() - t0)
            gc.enable()
    return {n: statistics.median(v) for n, v in out.items()}


def _store(tmp: Path, turns: int) -> tuple[Any, str]:
    import json

    from toolreplay._importers import read_file
    from toolreplay._store.sqlite import SQLiteStore

    src = tmp / f"chat{turns}.json"
    src.write_text(json.dumps(chat_messages(turns), ensure_ascii=False), encoding="utf-8")
    h = read_file(src, "openai-chat").conversations[0]
    store = SQLiteStore(str(tmp / f"c{turns}.db"))
    store.import_history(h)
    return store, h.id


def render_rows(store: Any, cid: str, turns: int, rounds: int) -> list[str]:
    lines = []
    for wire, vessel in COLD_VESSELS.items():
        cache = RenderCache()
        cache.render(store.load(cid), vessel)
        made = cache.fragments()
        assert made is not None and store.save_fragments(cid, *made) == len(made.rows)
        key = made.key
        plain = encode(render(store.load(cid), vessel))
        assert encode(render(store.load(cid, fragments=key), vessel)) == plain  # the same bytes
        s = _cpu_alternate(
            {
                "without": lambda v=vessel: encode(render(store.load(cid), v)),
                "with": lambda v=vessel, k=key: encode(render(store.load(cid, fragments=k), v)),
                "load": lambda: store.load(cid),
                "load+fragments": lambda k=key: store.load(cid, fragments=k),
            },
            rounds,
        )
        lines.append(
            f"| {turns:,} | {wire} ({vessel}) | {s['without'] * 1e3:.0f} ms | {s['with'] * 1e3:.0f} ms | "
            f"**{s['without'] / s['with']:.2f}x** | {s['load'] * 1e3:.0f} / "
            f"{s['load+fragments'] * 1e3:.0f} ms |"
        )
        print(lines[-1], flush=True)
    return lines


def turn_rows(store: Any, cid: str, turns: int, rounds: int) -> list[str]:
    from toolreplay._loop import http, run_turn

    real_stored, real_keep = http._stored, http._keep

    def turn(vessel: str, on: bool) -> None:
        http._stored = real_stored if on else (lambda *a: None)  # type: ignore[assignment]
        http._keep = real_keep if on else (lambda *a: None)  # type: ignore[assignment]
        try:
            run_turn(cid, "What is still open?", vessel, store=store, transport=_Clock())  # type: ignore[arg-type]
        finally:
            http._stored, http._keep = real_stored, real_keep  # type: ignore[assignment]

    lines = []
    for vessel in ("anthropic", "gemini", "codex"):
        turn(vessel, True)  # the fragments of this vessel's settings are stored
        s = _cpu_alternate(
            {"without": lambda v=vessel: turn(v, False), "with": lambda v=vessel: turn(v, True)}, rounds
        )
        lines.append(
            f"| {turns:,} | a CLI turn, {vessel} | {s['without'] * 1e3:.0f} ms | {s['with'] * 1e3:.0f} ms | "
            f"**{s['without'] / s['with']:.2f}x** | |"
        )
        print(lines[-1], flush=True)
    return lines


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [1000, 10000]
    for k in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "CODEX_API_KEY"):
        os.environ.setdefault(k, "bench-key-not-sent")
    print(f"load {os.getloadavg()}; CPU time, medians of {ROUNDS} alternated rounds")
    print(
        "| turns | wire (vessel) | load + render + encode, without | with fragments | gain "
        "| load alone: without / with |"
    )
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for turns in sizes:
            store, cid = _store(Path(tmp), turns)
            try:
                render_rows(store, cid, turns, ROUNDS)
                turn_rows(store, cid, turns, ROUNDS)
            finally:
                store.close()


if __name__ == "__main__":
    main(sys.argv[1:])

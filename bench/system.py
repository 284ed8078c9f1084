"""The measures outside rendering: import time, the SQLite store, the lab's throughput."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bench import histories
from bench.cases import Config, Row, ms, times
from bench.timing import Contender, alternate, median, order
from toolreplay._history import History, Message

if TYPE_CHECKING:
    from toolreplay._store import Store

# --------------------------------------------------------------------------------------------------
# import time


def _cli() -> list[str]:
    """How to run ``toolreplay --help``: the console script beside this Python, else ``-m toolreplay``."""
    script = Path(sys.executable).parent / "toolreplay"
    return [str(script), "--help"] if script.exists() else [sys.executable, "-m", "toolreplay", "--help"]


def import_commands(with_peer: bool) -> dict[str, list[str]]:
    cmds = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import toolreplay": [sys.executable, "-c", "import toolreplay"],
        "toolreplay --help": _cli(),
        "toolreplay check --offline": [*_cli()[:-1], "check", "--offline"],
    }
    if with_peer:
        cmds["import litellm"] = [sys.executable, "-c", "import litellm"]
    return cmds


def wall(cmd: Sequence[str], env: dict[str, str]) -> float:
    """Seconds a fresh process takes to run ``cmd`` (it must succeed)."""
    t0 = time.perf_counter()
    subprocess.run(list(cmd), env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def import_times(cfg: Config, with_peer: bool) -> dict[str, list[float]]:
    """Each command ``cfg.import_runs`` times in fresh processes, in rotating order (drift cancels)."""
    env = dict(os.environ)
    # LiteLLM would fetch a price map over the network at import: its documented switch keeps it local,
    # so the figure is the import itself, not a network timeout.
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    cmds = import_commands(with_peer)
    for cmd in cmds.values():  # warm the file cache and the .pyc files once
        wall(cmd, env)
    out: dict[str, list[float]] = {name: [] for name in cmds}
    for r in range(cfg.import_runs):
        for name in order(list(cmds), r):
            out[name].append(wall(cmds[name], env))
    return out


def _own_cost_rows(t: dict[str, float]) -> list[Row]:
    """Issue 13's two start-up targets, as the command's time over the interpreter's own start-up."""
    from toolreplay._vessels import vessels

    base = t["python -c pass"]
    help_over = t["toolreplay --help"] - base
    per_vessel = (t["toolreplay check --offline"] - base) / len(vessels())
    return [
        Row("import", "toolreplay --help over the interpreter", "< 100 ms", ms(help_over), help_over < 0.1),
        Row("import", "check --offline, per vessel", "< 1 s", ms(per_vessel), per_vessel < 1.0),
    ]


def import_rows(cfg: Config, with_peer: bool) -> list[Row]:
    t = {name: median(xs) for name, xs in import_times(cfg, with_peer).items()}
    peer = t.get("import litellm")
    rows = [Row("import", "python -c pass (the interpreter alone)", "", ms(t["python -c pass"]), None)]
    rows += _own_cost_rows(t)
    for name in ("import toolreplay", "toolreplay --help"):
        if peer is None:
            rows.append(Row("import", name, "", f"{ms(t[name])} (LiteLLM not installed)", None))
            continue
        r = peer / t[name]
        target = name == "import toolreplay"
        rows.append(
            Row(
                "import",
                f"{name} vs import litellm",
                "≥ 20x faster" if target else "",
                f"{times(r)} ({ms(t[name])} vs {ms(peer)})",
                r >= 20 if target else None,
            )
        )
    return rows


# --------------------------------------------------------------------------------------------------
# the SQLite store


def store_rows(cfg: Config) -> list[Row]:
    """Append one turn (a reply plus 3 calls) to SQLite; load a conversation of ``cfg.load_messages``."""
    from toolreplay._store import open_store

    tmp = Path(tempfile.mkdtemp(prefix="toolreplay-bench-"))
    try:
        store = open_store(str(tmp / "bench.db"))
        try:
            return [*_append_rows(store, cfg), fsync_row(tmp, cfg), *_load_rows(store, cfg)]
        finally:
            store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def fsync_row(folder: Path, cfg: Config) -> Row:
    """What one durable write costs on the database's file system: a 4 KiB write plus ``fsync``.

    The store commits with ``synchronous = FULL`` (a reply and its calls survive a power cut), so every
    append pays at least this once; the rest of the append is the store's own work.
    """
    path = folder / "fsync-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    samples: list[float] = []
    try:
        for _ in range(max(10, cfg.repeats)):
            os.write(fd, b"x" * 4096)
            t0 = time.perf_counter()
            os.fsync(fd)
            samples.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
    return Row(
        "store",
        "fsync of a 4 KiB write on the same file system (a durable commit's floor)",
        "",
        ms(median(samples)),
        None,
    )


def _append_rows(s: Store, cfg: Config) -> list[Row]:
    h = histories.synthetic_history(cfg.big)
    s.import_history(h)
    more = histories.iter_turns(seed=1, first=cfg.big)  # fresh ids after the stored ones

    def setup() -> Message:
        user, reply = next(more)
        s.append_message(h.id, user)  # untimed: the turn's user message
        return reply

    samples = alternate(
        [Contender("append", lambda reply: s.append_message(h.id, reply), setup=setup)],
        repeats=cfg.repeats,
        min_seconds=0.0,
    )
    t = samples.median("append")
    fastest = min(samples.by_name["append"])
    return [
        Row(
            "store",
            f"SQLite: append one turn (reply + 3 calls) to {cfg.big} turns",
            "< 2 ms",
            f"{ms(t)} (fastest {ms(fastest)})",
            t < 0.002,
        )
    ]


def _load_rows(s: Store, cfg: Config) -> list[Row]:
    turns = cfg.load_messages // 2
    h = histories.synthetic_history(turns)
    h = History("load-" + h.id, h.messages, h.tools)
    s.import_history(h)
    loaded = s.load(h.id)
    if len(loaded.messages) != len(h.messages):
        return [Row("store", "SQLite: load", "", "WRONG: message count differs", False)]
    samples = alternate(
        [Contender("load", lambda _: s.load(h.id))], repeats=cfg.loads, min_seconds=0.0, warmup=1
    )
    t = samples.median("load")
    fastest = min(samples.by_name["load"])
    calls = sum(len(m.tool_uses) for m in h.messages)
    return [
        Row(
            "store",
            f"SQLite: load {len(h.messages):,} messages ({calls:,} calls)",
            "< 100 ms",
            f"{ms(t)} (fastest {ms(fastest)})",
            t < 0.1,
        )
    ]


__all__ = ["import_rows", "store_rows"]

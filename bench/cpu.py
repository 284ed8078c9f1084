"""The processor time a benchmark's contender spent: every thread of its process and of the processes it
started, read from Linux's ``/proc``: each process's ``stat`` (its threads' time, the ended ones' too, in
clock ticks) and its main thread's ``schedstat`` (nanoseconds).

Latency at p50 moves with whatever else the machine does (three processes on two cores take turns, and a
virtual machine's speed moves within minutes); the processor time a contender spends per request moves
far less, so it says what a change to the proxy's own work bought when the latency figures of two runs
cannot. Where ``/proc`` has no ``schedstat`` (not Linux) nothing is measured and the figures say so.
A tick is 10 ms on most systems: over the hundreds of requests a benchmark sends, a part in a hundred.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 1e7


@dataclass(frozen=True, slots=True)
class Spent:
    """Nanoseconds on a processor: the whole process tree's, and its main thread's alone (the proxies'
    event loop runs there; a recorder's or a pool's threads are the rest)."""

    total: int
    main: int

    def __sub__(self, other: Spent) -> Spent:
        return Spent(self.total - other.total, self.main - other.main)


def _ran(task: Path) -> int:
    """A task's nanoseconds on a processor (0 when it ended meanwhile)."""
    try:
        return int((task / "schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the process's name (which, in parentheses, may hold
    spaces): its state first, its parent second (None: it is gone)."""
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None


def _ticks(fields: list[str]) -> int:
    """The user and system time of every thread of the process, ended ones too (``utime``, ``stime``)."""
    return int(fields[11]) + int(fields[12])


def _processes() -> dict[int, list[str]]:
    """Every process's ``stat`` fields, read once (a process gone meanwhile is left out)."""
    out = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            out[int(entry.name)] = fields
    return out


def spent(pid: int) -> Spent | None:
    """What process ``pid`` and its descendants have spent so far; None where it cannot be read."""
    main = PROC / str(pid) / "task" / str(pid)
    every = _processes()
    if pid not in every or not (main / "schedstat").exists():
        return None
    children: dict[str, list[int]] = {}
    for p, fields in every.items():
        children.setdefault(fields[1], []).append(p)
    ticks, todo = 0, [pid]
    while todo:
        p = todo.pop()
        ticks += _ticks(every[p]) if p in every else 0
        todo += children.get(str(p), [])
    return Spent(round(ticks * _TICK_NS), _ran(main))


def per_request(before: Spent | None, after: Spent | None, requests: int) -> tuple[float, float] | None:
    """Milliseconds per request, the whole tree's and the main thread's (None: not measured)."""
    if before is None or after is None or requests <= 0:
        return None
    d = after - before
    return d.total / requests / 1e6, d.main / requests / 1e6


__all__ = ["Spent", "per_request", "spent"]

"""The lab's trials: one request per trial, sent concurrently with a bound, classified, written as they end.

A trial sends its cell's request once (the tools are never run: the first answer decides the class, and
its calls are recorded as made) and is classified with :func:`toolreplay._lab.classify.classify_trial`.

Under ``out`` (optional) the run writes:

* ``trials.jsonl``: one line per finished trial, appended and flushed as it ends: ``vessel``, ``mode``,
  ``trial``, ``request_hash``, ``class``, ``reason`` (design 43), ``text``, ``calls``, ``usage``,
  ``latency_s``, ``attempts``, ``finish_reason``, ``model``, ``expect`` (and ``claim`` for a
  said-without-doing trial);
* ``errors.jsonl``: trials that failed after the transport's retries (not counted; a rerun tries them again);
* ``requests/<vessel>-<mode>.json``: the exact body each cell sends (for ``toolreplay audit``);
* ``summary.json`` and ``chart.png`` at the end.

**Resume.** A trial is done when ``trials.jsonl`` holds a line with its vessel, mode, trial index and the
request hash of the cell as planned now; rerunning with the same ``out`` sends only the rest. Lines of a
different request (the history, the options or the code changed) are kept in the file but not counted. A
line cut short by a kill is ignored.

**Errors.** The transport retries what is transient (its
:class:`~toolreplay._transport.client.RetryPolicy`). A trial that still fails is written to
``errors.jsonl``; an error that no retry fixes (a 400, a 401) stops the other trials of that vessel and
mode.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._claims import said_without_doing
from toolreplay._errors import AuthenticationError, BadRequestError, ConfigError, ProviderError
from toolreplay._lab.classify import classify_trial, trial_reason
from toolreplay._lab.plan import Cell, LabConfig, check_budget, plan_cells
from toolreplay._lab.summary import Summary, summarize

if TYPE_CHECKING:
    from toolreplay._lab.sequential import EarlyStop, Stop
    from toolreplay._transport.client import SendResult, Transport

OnEvent = Callable[[Mapping[str, Any]], None]
#: Errors no retry fixes: the rest of that cell's trials are not sent.
FATAL = (BadRequestError, AuthenticationError)


@dataclass
class LabOutcome:
    """What a run did: the summary over every counted trial, and how many were sent, resumed, failed."""

    summary: Summary
    cells: list[Cell]
    records: list[dict[str, Any]]
    sent: int = 0
    resumed: int = 0
    stale: int = 0
    broken_lines: int = 0
    errors: list[dict[str, Any]] = field(default_factory=lambda: [])
    stopped: bool = False
    out: Path | None = None


def load_records(
    path: Path, cells: Sequence[Cell]
) -> tuple[dict[tuple[str, str, int], dict[str, Any]], int, int]:
    """The finished trials of ``path`` that match the planned requests: ``(kept, stale, broken lines)``."""
    hashes = {c.key: c.request_hash for c in cells}
    kept: dict[tuple[str, str, int], dict[str, Any]] = {}
    stale = broken = 0
    if not path.exists():
        return kept, 0, 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            broken += 1  # a line cut short when the process was killed
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("trial"), int):
            broken += 1
            continue
        key = (str(rec.get("vessel")), str(rec.get("mode")))
        if hashes.get(key) != rec.get("request_hash"):
            stale += 1
            continue
        kept[(key[0], key[1], rec["trial"])] = rec
    return kept, stale, broken


class _Writer:
    """Appends JSON lines and flushes each one, so a killed run loses at most the line being written."""

    def __init__(self, path: Path | None) -> None:
        self._fh: IO[str] | None = None
        if path is None:
            return
        ends_clean = not path.exists() or path.stat().st_size == 0 or path.read_bytes().endswith(b"\n")
        self._fh = path.open("a", encoding="utf-8")
        if not ends_clean:
            self._fh.write("\n")  # the previous run died mid-line: start a fresh one

    def write(self, record: Mapping[str, Any]) -> None:
        if self._fh is not None:
            self._fh.write(jsonenc.dumps(record) + "\n")
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def trial_record(cell: Cell, trial: int, result: SendResult, config: LabConfig) -> dict[str, Any]:
    """The ``trials.jsonl`` line of one finished trial."""
    reply = result.reply
    calls = [{"name": c.name, "input": c.input, "id": c.call_id} for c in reply.calls]
    cls = classify_trial(reply.text, reply.calls, config.expect_tool, config.expect_action)
    record: dict[str, Any] = {
        "vessel": cell.vessel.name,
        "mode": cell.mode,
        "trial": trial,
        "request_hash": cell.request_hash,
        "class": cls,
        "reason": trial_reason(cls, reply.text, reply.calls, reply.finish_reason),
        "text": reply.text,
        "calls": calls,
        "usage": {
            "input_tokens": reply.usage.input_tokens,
            "output_tokens": reply.usage.output_tokens,
            "cached_tokens": reply.usage.cached_tokens,
        },
        "latency_s": round(result.latency_s, 4),
        "attempts": result.attempts,
        "finish_reason": reply.finish_reason,
        "model": reply.model,
        "expect": config.expect,
    }
    if cls == "said_without_doing":
        claim = said_without_doing(reply.text, reply.calls)
        record["claim"] = claim.as_json() if claim is not None else None
    return record


def _check_keys(cells: Sequence[Cell], config: LabConfig) -> None:
    """Refuse before sending anything when a vessel's key is missing (the transport's own rule)."""
    from toolreplay._transport.client import prepare
    from toolreplay.wires import get_wire

    for c in cells:
        if get_wire(c.vessel.wire).http is None:
            raise ConfigError(
                f"--vessel {c.vessel.name}: the lab sends HTTP requests; "
                f"the {c.vessel.name} CLI vessel has none"
            )
        prepare(c.vessel, c.body, base_url=config.base_url, send_key=config.send_key)


def _check_tools(cells: Sequence[Cell], config: LabConfig) -> None:
    """Refuse before sending anything when a local server's chat template drops the tools (design 43)."""
    from toolreplay._lab.preflight import check_tools

    dropped = check_tools(cells, config)
    if dropped:
        said = "; ".join(f"--vessel {name}: the server drops the tools: {why}" for name, why in dropped)
        raise ConfigError(
            f"{said}; no trial could call {config.expect_tool} (nothing was sent; --allow-dropped-tools "
            "runs the trials anyway)"
        )


class _Run:
    """The state of one run: the queue of trials to send, the writers, the counters."""

    def __init__(
        self, config: LabConfig, transport: Transport, out: Path | None, on_event: OnEvent | None
    ) -> None:
        self.config = config
        self.transport = transport
        self.on_event = on_event
        self.trials = _Writer(out / "trials.jsonl" if out else None)
        self.errors_file = _Writer(out / "errors.jsonl" if out else None)
        self.records: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.dead: dict[tuple[str, str], str] = {}
        self.sent = 0
        self.stop_after: int | None = None
        from toolreplay._transport.client import AttemptBudget

        # Every attempt counts, retries included: --max-requests bounds what is really sent.
        self.budget = AttemptBudget(config.max_requests)
        self.spent = False
        self.cut_short = False

    def close(self) -> None:
        self.trials.close()
        self.errors_file.close()

    async def trial(self, cell: Cell, trial: int) -> None:
        from toolreplay._transport.client import BudgetSpent

        if cell.key in self.dead:
            return
        self.sent += 1
        try:
            result = await self.transport.exchange(
                cell.vessel,
                cell.body,
                base_url=self.config.base_url,
                send_key=self.config.send_key,
                budget=self.budget,
            )
        except BudgetSpent:  # not an outcome: the trial stays to do (a rerun with --out sends it)
            self.sent -= 1
            self.spent = True
            return
        except ProviderError as exc:
            err = {
                "vessel": cell.vessel.name,
                "mode": cell.mode,
                "trial": trial,
                "request_hash": cell.request_hash,
                "error": type(exc).__name__,
                "status": exc.status,
                "message": str(exc),
            }
            if isinstance(exc, FATAL):
                self.dead[cell.key] = str(exc)
            self.errors.append(err)
            self.errors_file.write(err)
            if self.on_event:
                self.on_event(err)
            return
        record = trial_record(cell, trial, result, self.config)
        self.records.append(record)
        self.trials.write(record)
        if self.on_event:
            self.on_event(record)

    async def send(self, items: Sequence[tuple[Cell, int]]) -> None:
        """Send ``items`` with the run's concurrency; ``cut_short`` when ``stop_after`` left some unsent."""
        queue: asyncio.Queue[tuple[Cell, int]] = asyncio.Queue()
        for item in items:
            queue.put_nowait(item)
        workers = min(self.config.concurrency, max(1, len(items)))
        await asyncio.gather(*(self.worker(queue) for _ in range(workers)))
        self.cut_short = self.cut_short or not queue.empty()

    async def worker(self, queue: asyncio.Queue[tuple[Cell, int]]) -> None:
        while True:
            if self.spent or (self.stop_after is not None and self.sent >= self.stop_after):
                return
            try:
                cell, trial = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await self.trial(cell, trial)


def _write_requests(out: Path, cells: Sequence[Cell]) -> None:
    folder = out / "requests"
    folder.mkdir(parents=True, exist_ok=True)
    for c in cells:
        (folder / f"{c.vessel.name}-{c.mode}.json").write_bytes(jsonenc.encode(c.body))


def _open_out(
    folder: Path | None, cells: Sequence[Cell]
) -> tuple[dict[tuple[str, str, int], dict[str, Any]], int, int]:
    """Create ``--out`` and read the trials already in it: ``(done, stale lines, broken lines)``."""
    if folder is None:
        return {}, 0, 0
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--out {folder}: cannot create the directory ({exc.strerror or exc})") from None
    return load_records(folder / "trials.jsonl", cells)


async def _execute(
    config: LabConfig,
    transport: Transport | None,
    folder: Path | None,
    on_event: OnEvent | None,
    stop_after: int | None,
    pending: Sequence[tuple[Cell, int]],
    done: Mapping[tuple[str, str, int], dict[str, Any]],
) -> tuple[_Run, EarlyStop | None]:
    """Send the pending trials (in rounds under ``--until-clear``) on ``transport`` or a fresh one."""
    own = transport is None
    if transport is None:
        from toolreplay._transport.client import Transport

        transport = Transport(deadline=config.timeout)
    run = _Run(config, transport, folder, on_event)
    run.stop_after = stop_after
    early = None
    try:
        if config.until_clear:
            early = await _send_all(run, pending, done)
        else:
            await run.send(pending)
    finally:
        run.close()
        if own:
            await transport.aclose()
    return run, early


async def run_lab_async(
    config: LabConfig,
    *,
    out: str | Path | None = None,
    transport: Transport | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_event: OnEvent | None = None,
    stop_after: int | None = None,
    chart: bool = True,
) -> LabOutcome:
    """Run the trials of ``config`` not yet in ``out`` (see the module docstring).

    ``on_start(pending, resumed)`` is called once before sending; ``on_event(line)`` after every trial
    (a trial record, or an error record with an ``error`` key). ``stop_after`` stops starting new trials
    once that many were sent (trials already in flight finish and are written).
    """
    cells = plan_cells(config)
    _check_keys(cells, config)  # before --out is made: a missing key or bad URL leaves nothing behind
    if not config.allow_dropped_tools:
        _check_tools(cells, config)
    folder = Path(out) if out is not None else None
    done, stale, broken = _open_out(folder, cells)
    pending = [(c, i) for c in cells for i in range(config.trials) if (c.vessel.name, c.mode, i) not in done]
    check_budget(len(pending), config)
    if folder is not None:
        _write_requests(folder, cells)
    if on_start:
        on_start(len(pending), len(done))
    run, early = await _execute(config, transport, folder, on_event, stop_after, pending, done)
    planned = {(c.vessel.name, c.mode, i) for c in cells for i in range(config.trials)}
    counted = [r for k, r in done.items() if k in planned] + run.records
    summary = summarize(
        counted, [v.name for v in config.vessels], list(config.modes), errors_left_out(run.errors, counted)
    )
    summary = replace(summary, early=early)
    outcome = LabOutcome(
        summary,
        cells,
        counted,
        run.budget.used,
        len(done),
        stale,
        broken,
        run.errors,
        run.spent or run.cut_short,
        folder,
    )
    if folder is not None:
        write_outputs(outcome, config, chart=chart)
    return outcome


async def _send_all(
    run: _Run, pending: Sequence[tuple[Cell, int]], done: Mapping[tuple[str, str, int], dict[str, Any]]
) -> EarlyStop:
    """``--until-clear``: the trials in rounds; after each, the pairs that crossed their boundary stop
    (their cells send no more trials unless another pair still needs them)."""
    from toolreplay._lab.sequential import EarlyStop, Schedule, check_look

    config = run.config
    schedule = Schedule.plan(config.trials)
    active = [(v.name, m) for v in config.vessels for m in config.modes if m != "native"]
    stops: list[Stop] = []
    before = 0
    for look, n in enumerate(schedule.looks):
        live = {(v, "native") for v, _ in active} | set(active)
        await run.send([(c, i) for c, i in pending if before <= i < n and c.key in live])
        before = n
        if run.cut_short:
            break
        crossed = check_look(schedule, look, [*done.values(), *run.records], active)
        stops += crossed
        gone = {(c.vessel, c.other) for c in crossed}
        active = [pair for pair in active if pair not in gone]
        if not active:
            break
    return EarlyStop(schedule, tuple(stops), tuple(active))


def errors_left_out(
    errors: Sequence[Mapping[str, Any]], counted: Sequence[Mapping[str, Any]]
) -> dict[tuple[str, str], int]:
    """Per ``(vessel, mode)``: the trials whose last attempt ended in an error (none of them counted)."""
    done = {(r["vessel"], r["mode"], r["trial"]) for r in counted}
    failed = {(e["vessel"], e["mode"], e["trial"]) for e in errors} - done
    out: dict[tuple[str, str], int] = {}
    for vessel, mode, _ in failed:
        out[(vessel, mode)] = out.get((vessel, mode), 0) + 1
    return out


def run_lab(config: LabConfig, **kwargs: Any) -> LabOutcome:
    """:func:`run_lab_async` for synchronous callers."""
    return asyncio.run(run_lab_async(config, **kwargs))


def summary_document(outcome: LabOutcome, config: LabConfig) -> dict[str, Any]:
    """``summary.json``: the run's settings, the cells' request hashes, the numbers."""
    return {
        "conversation": config.history.id,
        "at": config.at,
        "expect": config.expect,
        "trials_per_cell": config.trials,
        "temperature": config.temperature,
        "model": config.model,
        "base_url": config.base_url,
        "requests": [
            {"vessel": c.vessel.name, "mode": c.mode, "request_hash": c.request_hash, "wire": c.vessel.wire}
            for c in outcome.cells
        ],
        "counted": len(outcome.records),
        "sent_this_run": outcome.sent,
        "resumed": outcome.resumed,
        "stale_lines": outcome.stale,
        "errors_this_run": len(outcome.errors),
        "complete": all(c.trials == config.trials for c in outcome.summary.cells),
        **outcome.summary.as_json(),
    }


def write_outputs(outcome: LabOutcome, config: LabConfig, *, chart: bool = True) -> None:
    """``summary.json`` and (matplotlib permitting) ``chart.png`` under the run's folder."""
    folder = outcome.out
    if folder is None:
        return
    doc = summary_document(outcome, config)
    (folder / "summary.json").write_text(
        json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    if chart:
        write_run_chart(outcome, config)


def write_run_chart(outcome: LabOutcome, config: LabConfig) -> Path | None:
    """``chart.png`` under the run's folder (None without a folder); ConfigError without matplotlib."""
    from toolreplay._lab.chart import write_chart

    if outcome.out is None:
        return None
    return write_chart(
        outcome.summary,
        outcome.out / "chart.png",
        title=f"{config.history.id} at {config.at}: {config.expect}",
    )


__all__ = [
    "LabOutcome",
    "load_records",
    "run_lab",
    "run_lab_async",
    "summary_document",
    "trial_record",
    "write_outputs",
    "write_run_chart",
]

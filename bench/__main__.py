"""``python -m bench``: every measure of issue 7 in one table (``python3 scripts/dev.py bench`` runs it in
an environment with LiteLLM installed).

    python -m bench                       # the full run (several minutes)
    python -m bench --quick               # a smoke run: small sizes, few repetitions
    python -m bench --only render,import  # some sections only
    python -m bench --results bench/RESULTS.md   # also write the table, the machine and the versions
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from bench import cases, early_stop, handoff, histories, lab, long, reasoning, render_cold, system
from bench.cases import QUICK, Config, Row
from bench.peers import Peer, PeerMissing, litellm_version, load_peers

SECTIONS = (
    "check",
    "render",
    "cold",
    "transcripts",
    "handoff",
    "incremental",
    "reasoning",
    "import",
    "store",
    "memory",
    "lab",
    "early-stop",
    "long",
    "cache",
)
NOTES_MARK = "<!-- notes: everything below this line is kept when the results are written again -->"


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import toolreplay

    return {
        # other processes share the cores: the ratios hold (contenders alternate), the milliseconds do not
        "load": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
        "cpus": str(os.cpu_count()),
        "cpu": cpu,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "toolreplay": toolreplay.__version__,
        "litellm": litellm_version(),
    }


def run(cfg: Config, only: Sequence[str], peers: list[Peer], log: Callable[[str], None]) -> list[Row]:
    rows: list[Row] = []
    named: list[tuple[str, object]] = []
    transcripts = histories.load_transcripts()
    real = [(t.history.id, t.history) for t in transcripts]
    synthetic = [(f"synthetic {n} turns", histories.synthetic_history(n)) for n in cfg.sizes]
    named = [*synthetic, *real]
    steps: list[tuple[str, Callable[[], list[Row]]]] = [
        ("check", lambda: cases.like_with_like(peers, named)),  # type: ignore[arg-type]
        ("render", lambda: cases.render_vs_peer(peers, cfg)),
        ("cold", lambda: render_cold.cold_rows(peers, cfg)),
        ("transcripts", lambda: cases.transcripts_vs_peer(peers, cfg, real) if real else []),
        ("handoff", lambda: handoff.handoff_rows(cfg)),
        ("incremental", lambda: cases.incremental(cfg)),
        ("reasoning", lambda: reasoning.reasoning_rows(cfg)),
        ("import", lambda: system.import_rows(cfg, with_peer=bool(peers))),
        ("store", lambda: system.store_rows(cfg)),
        ("memory", lambda: cases.memory(peers, cfg)),
        ("lab", lambda: lab.lab_rows(cfg)),
        ("early-stop", lambda: early_stop.early_stop_rows(cfg)),
        ("long", lambda: long.long_rows(cfg)),
        ("cache", lambda: long.cache_rows(cfg)),
    ]
    for name, step in steps:
        if name not in only:
            continue
        if name in ("check", "render", "cold", "transcripts") and not peers:
            rows.append(Row(name, f"{name}: LiteLLM comparison", "", "skipped: LiteLLM not installed", None))
            continue
        log(f"bench: {name} ...")
        t0 = time.perf_counter()
        got = step()
        rows.extend(got)
        log(f"bench: {name} done in {time.perf_counter() - t0:.1f} s")
        if name == "check" and any(r.ok is False for r in got):
            raise SystemExit("bench: the two sides carry different calls; the comparison would be unfair")
    if cfg.quick:  # smaller sizes than the targets speak of: shown, not judged (the check still is)
        rows = [
            dataclasses.replace(r, target=f"{r.target} (full run)", ok=None)
            if r.target and r.section != "check"
            else r
            for r in rows
        ]
    return rows


def verdict(ok: bool | None) -> str:
    return "—" if ok is None else ("pass" if ok else "MISS")


def print_table(rows: Sequence[Row]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        for r in rows:
            print(f"{r.section:12} {r.measure:70} {r.target:14} {r.value:50} {verdict(r.ok)}")
        return
    table = Table(title="toolreplay bench (issue 7)", show_lines=False)
    for col in ("section", "measure", "target", "measured", "result"):
        table.add_column(col, overflow="fold")
    for r in rows:
        style = "red" if r.ok is False else ("green" if r.ok else "")
        table.add_row(r.section, r.measure, r.target or "—", r.value, verdict(r.ok), style=style)
    Console(width=200).print(table)


def markdown(rows: Sequence[Row], info: dict[str, str], command: str, peers: Sequence[Peer]) -> str:
    lines = [
        "# Benchmark results (issue 7)",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {info['cpus']} CPUs, {info['cpu']}; {info['python']}; {info['platform']}; "
        f"load average when the table was written (1, 5, 15 min): {info.get('load', 'not recorded')}",
        "",
        f"Versions: toolreplay {info['toolreplay']}, litellm {info['litellm']}",
        "",
        "LiteLLM functions compared (fed the Chat messages toolreplay renders for the same history):",
        "",
    ]
    lines += [f"- {p.wire}: `{p.function}`" for p in peers]
    lines += ["", "| section | measure | target | measured | result |", "|---|---|---|---|---|"]
    for r in rows:
        cells = (r.section, r.measure, r.target or "—", r.value, verdict(r.ok))
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def write_results(path: Path, text: str) -> None:
    kept = ""
    if path.exists():
        old = path.read_text(encoding="utf-8")
        if NOTES_MARK in old:
            kept = old[old.index(NOTES_MARK) + len(NOTES_MARK) :]
    path.write_text(f"{text}\n{NOTES_MARK}{kept or chr(10)}", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a fast smoke run (small sizes, few repetitions)")
    ap.add_argument(
        "--only", default=",".join(SECTIONS), help=f"sections, comma-separated: {','.join(SECTIONS)}"
    )
    ap.add_argument("--results", type=Path, help="also write the table as markdown (bench/RESULTS.md)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument(
        "--chat-history",
        type=Path,
        help="the cold section's OpenAI Chat history (a JSON array of messages); default: generated",
    )
    args = ap.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        ap.error(f"unknown section(s) {', '.join(unknown)}; known: {', '.join(SECTIONS)}")
    cfg = QUICK if args.quick else Config()
    if args.chat_history is not None:
        cfg = dataclasses.replace(cfg, chat_history=str(args.chat_history))
    try:
        peers = load_peers()
    except PeerMissing as exc:
        print(f"bench: {exc}; the LiteLLM comparisons are skipped", file=sys.stderr)
        peers = []
    rows = run(cfg, only, peers, lambda s: print(s, file=sys.stderr, flush=True))
    print_table(rows)
    info = machine()
    given = " ".join(sys.argv[1:] if argv is None else argv)
    command = os.environ.get("TOOLREPLAY_BENCH_COMMAND") or f"python -m bench {given}"
    print(f"\n{info['cpus']} CPUs, {info['cpu']}; {info['python']}; litellm {info['litellm']}")
    if args.results:
        write_results(args.results, markdown(rows, info, command.strip(), peers))
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "rows": [asdict(r) for r in rows]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

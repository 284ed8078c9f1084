"""The measures that compare rendering: toolreplay against LiteLLM, against ``json.dumps``, against itself.

Each case returns :class:`Row` values: a measure, its target (issue 7 §2), the measured value, and
whether the target is met (None where the issue sets no target). Timings come from
:func:`bench.timing.alternate`: every contender of a comparison runs in the same process, alternately.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

import toolreplay
from bench import histories
from bench.peers import (
    PEER_INPUT_VESSEL,
    VESSELS,
    BenchMismatch,
    CallSummary,
    Peer,
    check_like,
    peer_input,
    summary,
)
from bench.timing import Contender, Samples, alternate
from toolreplay._api import render_options
from toolreplay._history import History
from toolreplay._jsonenc import encode
from toolreplay._render_cache import RenderCache
from toolreplay._replay import prepare_turn_messages
from toolreplay._vessels import get_vessel
from toolreplay.wires import get_wire, render_wire


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the results table."""

    section: str
    measure: str
    target: str
    value: str
    ok: bool | None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Config:
    """How much to measure: ``quick`` is a smoke run (small sizes, few repetitions)."""

    sizes: tuple[int, ...] = (10, 100, 1000)
    big: int = 1000
    repeats: int = 15
    min_seconds: float = 0.02
    import_runs: int = 7
    appends: int = 200
    load_messages: int = 10_000
    loads: int = 15
    lab_trials: int = 1000
    lab_concurrency: int = 16
    lab_latency: float = 0.05
    lab_runs: int = 3
    quick: bool = False
    #: The cold section's OpenAI Chat history file (None: the bench's own generator makes one).
    chat_history: str | None = None


QUICK = Config(
    sizes=(10, 100),
    big=100,
    repeats=5,
    min_seconds=0.005,
    import_runs=3,
    appends=30,
    load_messages=2_000,
    loads=3,
    lab_trials=64,
    lab_runs=1,
    quick=True,
)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms" if seconds < 0.001 else f"{seconds * 1000:.2f} ms"


def times(x: float) -> str:
    return f"{x:.1f}x" if x < 100 else f"{x:.0f}x"


def short(function: str) -> str:
    """The last two parts of a qualified name (``Class.method`` or ``module.function``)."""
    return ".".join(function.split(".")[-2:])


# --------------------------------------------------------------------------------------------------
# like with like


def carried(wire: str, history: History) -> tuple[dict[str, Any], CallSummary]:
    """toolreplay's body for ``wire`` and the calls its message list carries."""
    body = toolreplay.render(history, VESSELS[wire])
    return body, summary(body[get_wire(wire).list_key])


def like_with_like(peers: Sequence[Peer], named: Sequence[tuple[str, History]]) -> list[Row]:
    """Once per run: each peer, given toolreplay's Chat messages, carries the calls toolreplay carries.

    Also proves the peer leaves its input unchanged (so timing it repeatedly on one input is fair).
    """
    rows: list[Row] = []
    for peer in peers:
        calls = answers = 0
        problem = ""
        for where, h in named:
            chat = toolreplay.render(h, PEER_INPUT_VESSEL)["messages"]
            given = peer_input(chat, peer)
            before = orjson.dumps(given)
            theirs = summary(peer.convert(given))
            if orjson.dumps(given) != before:
                problem = f"{where}: LiteLLM changed its input; timings would not be of the same work"
                break
            _, ours = carried(peer.wire, h)
            try:
                check_like(peer.wire, where, ours, theirs)
            except BenchMismatch as exc:
                problem = str(exc)
                break
            calls += len(ours.names)
            answers += ours.answers
        value = problem or f"{calls} calls (same names, same order), {answers} answers, on both sides"
        rows.append(
            Row(
                "check",
                f"like with like: {peer.wire} vs {short(peer.function)}",
                "same calls",
                value,
                not problem,
            )
        )
    return rows


# --------------------------------------------------------------------------------------------------
# render against LiteLLM and against json.dumps


def wire_whole(vessel: str, h: History) -> dict[str, Any]:
    """The path ``render()`` took before it was the render cache (design 29): the wire's own render of
    every prepared turn, from the vessel's name."""
    v = get_vessel(vessel)
    return render_wire(v.wire, prepare_turn_messages(h), render_options(v, tools=h.tools or ()))


def _contenders(peer: Peer, prev: History, h: History) -> list[Contender]:
    """LiteLLM's converter, and toolreplay's render of ``h`` (which is ``prev`` plus one turn) four ways:
    from scratch, plus encode, the wire step alone, and per turn of a conversation (a cache that
    rendered ``prev`` renders ``h``); and ``json.dumps`` of the body."""
    vessel = VESSELS[peer.wire]
    v = get_vessel(vessel)
    given = peer_input(toolreplay.render(h, PEER_INPUT_VESSEL)["messages"], peer)
    turns = prepare_turn_messages(h)
    opts = render_options(v, tools=h.tools or ())
    body = toolreplay.render(h, vessel)
    convert = peer.convert
    cache = RenderCache()
    if encode(cache.render(h, vessel)) != encode(body):
        raise BenchMismatch(f"{peer.wire}: the cached render differs from the render")

    def primed() -> RenderCache:
        cache.render(prev, vessel)  # the conversation one turn earlier (the cache drops the last turn)
        return cache

    return [
        Contender("litellm", lambda _: convert(given)),
        Contender("render", lambda _: toolreplay.render(h, vessel)),
        Contender("render+encode", lambda _: encode(toolreplay.render(h, vessel))),
        Contender("wire only", lambda _: render_wire(v.wire, turns, opts)),
        Contender("wire whole", lambda _: wire_whole(vessel, h)),
        Contender("per turn", lambda c: c.render(h, vessel), setup=primed),
        Contender("json.dumps", lambda _: json.dumps(body, ensure_ascii=False, separators=(",", ":"))),
    ]


#: contender, what the row says, whether the 5x target applies to it
_RENDER_ROWS = (
    ("render", "render from the stored history (no cache)", True),
    ("per turn", "render per turn of a conversation (cache; one turn appended)", True),
    ("render+encode", "render + encode to bytes (no cache)", False),
    ("wire only", "the wire step alone (prepared turns to body)", False),
)


def _render_rows(peer: Peer, label: str, s: Samples, target: bool) -> list[Row]:
    fn = short(peer.function)
    lit = s.median("litellm")
    rows = []
    for name, what, counts in _RENDER_ROWS:
        r = s.ratio("litellm", name)
        judged = target and counts
        rows.append(
            Row(
                "render",
                f"{peer.wire}, {label}: {what} vs LiteLLM {fn}",
                "≥ 5x faster" if judged else "",
                f"{times(r)} (LiteLLM {ms(lit)}, toolreplay {ms(s.median(name))})",
                r >= 5 if judged else None,
            )
        )
    # design 29: render() is the render cache with nothing cached; it must not cost more than the wire's
    # own render of every prepared turn (the path render() took before)
    path = s.median("render") / s.median("wire whole")
    rows.append(
        Row(
            "one path",
            f"{peer.wire}, {label}: render() (the cache, nothing cached) vs the wire's own render of "
            "every prepared turn",
            "≤ 1.05x" if target else "",
            f"{path:.3f}x (render {ms(s.median('render'))}, wire's own {ms(s.median('wire whole'))})",
            path <= 1.05 if target else None,
        )
    )
    floor = s.ratio("render+encode", "json.dumps")
    rows.append(
        Row(
            "floor",
            f"{peer.wire}, {label}: render + encode vs json.dumps of the body",
            "≤ 3x" if target else "",
            f"{floor:.2f}x (json.dumps {ms(s.median('json.dumps'))}, "
            f"render alone {s.ratio('render', 'json.dumps'):.2f}x)",
            floor <= 3 if target else None,
        )
    )
    return rows


def render_vs_peer(peers: Sequence[Peer], cfg: Config) -> list[Row]:
    """Each wire at each synthetic size: LiteLLM's converter against toolreplay, interleaved."""
    rows: list[Row] = []
    for n in cfg.sizes:
        prev = histories.synthetic_history(n - 1)
        h = histories.appended(prev, histories.next_turn(prev))  # = synthetic_history(n), prev's objects
        for peer in peers:
            s = alternate(_contenders(peer, prev, h), repeats=cfg.repeats, min_seconds=cfg.min_seconds)
            rows.extend(_render_rows(peer, f"{n} turns", s, target=n == cfg.big))
    return rows


def _transcript_contenders(peer: Peer, hs: Sequence[History]) -> list[Contender]:
    vessel = VESSELS[peer.wire]
    inputs = [peer_input(toolreplay.render(h, PEER_INPUT_VESSEL)["messages"], peer) for h in hs]
    convert = peer.convert
    return [
        Contender("litellm", lambda _: [convert(m) for m in inputs]),
        Contender("render", lambda _: [toolreplay.render(h, vessel) for h in hs]),
        Contender("render+encode", lambda _: [encode(toolreplay.render(h, vessel)) for h in hs]),
    ]


def transcripts_vs_peer(
    peers: Sequence[Peer], cfg: Config, named: Sequence[tuple[str, History]]
) -> list[Row]:
    """The real transcripts, every one of them per sample, LiteLLM against toolreplay."""
    rows: list[Row] = []
    hs = [h for _, h in named]
    for peer in peers:
        s = alternate(_transcript_contenders(peer, hs), repeats=cfg.repeats, min_seconds=cfg.min_seconds)
        for name in ("render", "render+encode"):
            rows.append(
                Row(
                    "render",
                    f"{peer.wire}, {len(hs)} real transcripts: {name.replace('+', ' + ')} vs LiteLLM",
                    "",
                    f"{times(s.ratio('litellm', name))} (LiteLLM {ms(s.median('litellm'))}, "
                    f"toolreplay {ms(s.median(name))})",
                    None,
                )
            )
    return rows


# --------------------------------------------------------------------------------------------------
# the incremental turn


INCREMENTAL_VESSELS = ("openai", "openai-responses", "anthropic", "gemini", "ollama", "claude")


def _reloaded(h: History) -> History:
    """``h`` stored in SQLite and loaded back: the same messages as new objects (a loop that reloads the
    conversation every turn hands the cache these)."""
    from toolreplay._store.sqlite import SQLiteStore

    with SQLiteStore(":memory:") as store:
        store.import_history(h)
        return store.load(h.id)


def _incremental_contenders(cache: RenderCache, vessel: str, h: History, grown: History) -> list[Contender]:
    reloaded = _reloaded(grown)

    def primed() -> RenderCache:
        cache.render(h, vessel)  # back to the earlier turn (cheap: the cache drops the last turn)
        return cache

    return [
        Contender("full", lambda _: toolreplay.render(grown, vessel)),
        Contender("incremental", lambda c: c.render(grown, vessel), setup=primed),
        Contender("reloaded", lambda c: c.render(reloaded, vessel), setup=primed),
    ]


def incremental(cfg: Config) -> list[Row]:
    """A conversation of ``cfg.big`` turns rendered once; one more turn appended; rendered again."""
    h = histories.synthetic_history(cfg.big)
    grown = histories.appended(h, histories.next_turn(h))
    rows: list[Row] = []
    for vessel in INCREMENTAL_VESSELS:
        cache = RenderCache()
        cache.render(h, vessel)
        if encode(cache.render(grown, vessel)) != encode(toolreplay.render(grown, vessel)):
            rows.append(
                Row("incremental", f"{vessel}: incremental render", "= full render", "DIFFERENT", False)
            )
            continue
        contenders = _incremental_contenders(cache, vessel, h, grown)
        s = alternate(contenders, repeats=cfg.repeats, min_seconds=cfg.min_seconds)
        share = s.median("incremental") / s.median("full")
        rows.append(
            Row(
                "incremental",
                f"{vessel}: one turn appended to {cfg.big} turns, cached vs full render",
                "≤ 5%",
                f"{share:.2%} ({ms(s.median('incremental'))} vs {ms(s.median('full'))})",
                share <= 0.05,
            )
        )
        again = s.median("reloaded") / s.median("full")
        rows.append(
            Row(
                "incremental",
                f"{vessel}: the same, the history loaded from SQLite (equal messages, new objects)",
                "",
                f"{again:.2%} ({ms(s.median('reloaded'))})",
                None,
            )
        )
    return rows


# --------------------------------------------------------------------------------------------------
# memory


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak memory traced while ``fn`` runs (what it allocates, not what existed before)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def memory(peers: Sequence[Peer], cfg: Config) -> list[Row]:
    """Peak memory of rendering the ``cfg.big``-turn history on each wire (and LiteLLM's, beside it)."""
    h = histories.synthetic_history(cfg.big)
    by_wire = {p.wire: p for p in peers}
    rows: list[Row] = []
    for wire, vessel in (*VESSELS.items(), ("ollama", "ollama"), ("claude-prompt", "claude")):
        ours = peak_bytes(lambda v=vessel: toolreplay.render(h, v))
        size = len(encode(toolreplay.render(h, vessel)))
        value = f"{ours / 1e6:.1f} MB (body {size / 1e6:.1f} MB encoded)"
        peer = by_wire.get(wire)
        if peer is not None:
            given = peer_input(toolreplay.render(h, PEER_INPUT_VESSEL)["messages"], peer)
            theirs = peak_bytes(lambda p=peer, g=given: p.convert(g))
            value += f"; LiteLLM {theirs / 1e6:.1f} MB"
        rows.append(Row("memory", f"{wire}: peak memory, render {cfg.big} turns", "", value, None))
    return rows

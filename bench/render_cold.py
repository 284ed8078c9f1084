"""Cold render against LiteLLM (issue 14): a 1,000-turn OpenAI Chat history, every wire side by side.

The input is an OpenAI Chat message list: a user message, an assistant message with calls
(``content: null``, ``tool_calls`` whose ``arguments`` are JSON text), one ``tool`` message per call, and
the assistant's final text, per turn. ``--chat-history FILE`` names such a file (a JSON array); without it
the bench makes its own from its seeded generator (:mod:`bench.histories`), 1,000 turns of 3 calls.

LiteLLM's converters get the messages as they are. toolreplay imports them (the ``openai-chat``
importer), stores them in SQLite, and each timed render gets the conversation freshly loaded from the
store (new objects, nothing remembered from an earlier render in the process): what each ``toolreplay
turn`` and ``toolreplay render`` process pays. Loading is timed too, so load + render + encode is seen end
to end. Each wire is measured on one vessel (Responses on ``codex``), all contenders of a wire
alternately in one process, every wire in the same run.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from bench import histories
from bench.cases import Config, Row, ms, short, times, wire_whole
from bench.peers import BenchMismatch, Peer, check_like, peer_input, summary
from bench.timing import Contender, Samples, alternate
from toolreplay import render
from toolreplay._history import History
from toolreplay._jsonenc import encode
from toolreplay.wires import get_wire

if TYPE_CHECKING:
    from toolreplay._store.sqlite import SQLiteStore

#: The vessel each wire is measured on (the issue names codex, gemini and anthropic).
COLD_VESSELS: dict[str, str] = {
    "openai-responses": "codex",
    "gemini": "gemini",
    "anthropic": "anthropic",
    "openai-chat": "openai",
    "ollama": "ollama",
    "claude-prompt": "claude",  # no LiteLLM counterpart (a prompt for the Claude Code CLI)
}
#: The turns and calls per turn of the issue's history.
TURNS, CALLS = 1000, 3
_ID_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def ollama_peer() -> Peer:
    """LiteLLM's Ollama ``/api/chat`` conversion (its parameters are popped: fresh dicts each call)."""
    from litellm.llms.ollama.chat.transformation import OllamaChatConfig

    config = OllamaChatConfig()
    return Peer(
        "ollama",
        "litellm.llms.ollama.chat.transformation.OllamaChatConfig.transform_request",
        lambda m: config.transform_request("llama3.1", m, {}, {}, {}),
        keeps_system=True,
    )


def chat_messages(turns: int = TURNS, calls: int = CALLS, seed: int = 7) -> list[dict[str, Any]]:
    """A Chat history of ``turns`` turns of ``calls`` calls, from the bench's own seeded generator: the
    arguments as JSON text written with spaces (as clients send them), ids like OpenAI's."""
    rng = random.Random(f"toolreplay-bench-chat:{seed}")
    out: list[dict[str, Any]] = []
    gen = histories.iter_turns(calls, seed)
    for _ in range(turns):
        user, reply = next(gen)
        out.append({"role": "user", "content": user.text})
        ids = ["call_" + "".join(rng.choice(_ID_CHARS) for _ in range(24)) for _ in reply.tool_uses]
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": json.dumps(c.input, ensure_ascii=False, separators=(", ", ": ")),
                        },
                    }
                    for cid, c in zip(ids, reply.tool_uses, strict=True)
                ],
            }
        )
        out += [
            {"role": "tool", "tool_call_id": cid, "content": c.answer}
            for cid, c in zip(ids, reply.tool_uses, strict=True)
        ]
        out.append({"role": "assistant", "content": reply.text})
    return out


def chat_input(path: Path | None, turns: int) -> tuple[list[dict[str, Any]], str]:
    """The Chat messages the section measures, and where they came from (for the table)."""
    if path is not None:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise SystemExit(f"bench: {path}: not a JSON array of Chat messages")
        return data, path.name
    return chat_messages(turns), f"the bench's own generator, {turns} turns of {CALLS} calls"


class Stored(NamedTuple):
    """The imported conversation in its store: ``fresh()`` loads it afresh."""

    store: SQLiteStore
    cid: str
    fresh: Callable[[], History]


def imported(messages: list[dict[str, Any]]) -> Stored:
    """The messages through the ``openai-chat`` importer into an in-memory SQLite store."""
    from toolreplay._importers import read_file
    from toolreplay._store.sqlite import SQLiteStore

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "chat.json"
        src.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
        h = read_file(src, "openai-chat").conversations[0]
    store = SQLiteStore(":memory:")
    store.import_history(h)
    return Stored(store, h.id, lambda: store.load(h.id))


def _contenders(peer: Peer | None, vessel: str, given: list[dict[str, Any]], db: Stored) -> list[Contender]:
    """LiteLLM (when it has a counterpart); the render of a freshly loaded conversation, alone and plus
    encode; the wire's own render of every prepared turn (the path before design 29); ``json.dumps`` of
    the body; loading the conversation."""
    fresh = db.fresh
    body = render(fresh(), vessel)
    load, cid = db.store.load, db.cid
    out = [
        Contender("first", lambda h: render(h, vessel), setup=fresh),
        Contender("first+encode", lambda h: encode(render(h, vessel)), setup=fresh),
        Contender("wire whole", lambda h: wire_whole(vessel, h), setup=fresh),
        Contender("json.dumps", lambda _: json.dumps(body, ensure_ascii=False, separators=(",", ":"))),
        Contender("load", lambda _: load(cid)),
    ]
    if peer is not None:
        convert = peer.convert
        out.insert(0, Contender("litellm", lambda _: convert(given)))
    return out


def _peer_rows(peer: Peer, where: str, s: Samples, judged: bool) -> list[Row]:
    r = s.ratio("litellm", "first")
    return [
        Row(
            "cold",
            f"{where}: cold render (a freshly loaded conversation: each CLI process) vs LiteLLM "
            f"{short(peer.function)}",
            "≥ 5x faster" if judged else "",
            f"{times(r)} (LiteLLM {ms(s.median('litellm'))}, toolreplay {ms(s.median('first'))}; render + "
            f"encode {times(s.ratio('litellm', 'first+encode'))})",
            r >= 5 if judged else None,
        ),
    ]


def _load_row(where: str, s: Samples) -> Row:
    """Loading the conversation, and load + render + encode end to end."""
    load = s.median("load")
    return Row(
        "cold",
        f"{where}: loading the conversation from SQLite; load + render + encode",
        "",
        f"load {ms(load)}; load + render + encode {ms(load + s.median('first+encode'))}",
        None,
    )


def _rows(wire: str, peer: Peer | None, vessel: str, label: str, s: Samples, judged: bool) -> list[Row]:
    floor = s.median("first+encode") / s.median("json.dumps")
    path = s.median("first") / s.median("wire whole")
    where = f"{wire} ({vessel}), {label}"
    rows = _peer_rows(peer, where, s, judged) if peer is not None else []
    rows.append(
        Row(
            "cold",
            f"{where}: first render() (design 29, the cache with nothing cached) vs the wire's own render of "
            "every prepared turn",
            "≤ 1.05x" if judged else "",
            f"{path:.3f}x (render {ms(s.median('first'))}, wire's own {ms(s.median('wire whole'))})",
            path <= 1.05 if judged else None,
        )
    )
    # claude-prompt's body is one long string: json.dumps of it is one escape pass, no yardstick for
    # building the prompt, so that row is shown, not judged
    judged = judged and peer is not None
    rows.append(
        Row(
            "cold",
            f"{where}: cold render + encode vs json.dumps of the same body",
            "≤ 1.0x" if judged else "",
            f"{floor:.2f}x (render + encode {ms(s.median('first+encode'))}, "
            f"json.dumps {ms(s.median('json.dumps'))})",
            floor <= 1.0 if judged else None,
        )
    )
    rows.append(_load_row(where, s))
    return rows


def bytecodes(fn: Callable[[], object]) -> int:
    """How many Python bytecode instructions ``fn()`` executes (``sys.settrace`` opcode events): a count
    that does not move with the machine's load. C code (orjson, list copies) is not counted."""
    count = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return trace

    before = sys.gettrace()
    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(before)
    return count


def _counted(wire: str, vessel: str, h: History, judged: bool) -> Row:
    """render() against the wire's own render of every prepared turn, in bytecodes executed."""
    ours, old = bytecodes(lambda: render(h, vessel)), bytecodes(lambda: wire_whole(vessel, h))
    turns = sum(1 for m in h.messages if m.role == "user")
    return Row(
        "cold",
        f"{wire} ({vessel}), {turns} turns: render() vs the wire's own render of every prepared turn, in "
        "Python bytecodes executed (deterministic)",
        "≤ 1.0x" if judged else "",
        f"{ours / old:.3f}x ({ours:,} vs {old:,})",
        ours <= old if judged else None,
    )


def _check(
    peer: Peer, vessel: str, label: str, given: list[dict[str, Any]], fresh: Callable[[], History]
) -> None:
    """Both sides carry the same calls and answers, and LiteLLM leaves its input as it was."""
    before = encode(given)
    ours = summary(get_wire(peer.wire).body_elements(render(fresh(), vessel)))
    check_like(peer.wire, label, ours, summary(peer.convert(given)))
    if encode(given) != before:
        raise BenchMismatch(f"{peer.wire}: LiteLLM changed its input; timings would not be of the same work")


def cold_rows(peers: Sequence[Peer], cfg: Config) -> list[Row]:
    """Every wire: the cold render against LiteLLM (where it converts to that wire), against the wire's
    own render of every prepared turn, and render + encode against ``json.dumps``."""
    path = Path(cfg.chat_history) if cfg.chat_history else None
    turns = cfg.big if cfg.quick else TURNS
    messages, source = chat_input(path, turns)
    db = imported(messages)
    fresh = db.fresh
    n = sum(1 for m in messages if m.get("role") == "user")
    label = f"{n} turns ({source})"
    rows: list[Row] = []
    by_wire = {p.wire: p for p in [*peers, ollama_peer()]}
    for wire, vessel in COLD_VESSELS.items():
        peer = by_wire.get(wire)
        given = peer_input(messages, peer) if peer is not None else []
        if peer is not None:
            _check(peer, vessel, label, given, fresh)
        s = alternate(_contenders(peer, vessel, given, db), repeats=cfg.repeats, min_seconds=cfg.min_seconds)
        rows.extend(_rows(wire, peer, vessel, label, s, judged=n >= TURNS and not cfg.quick))
        h = fresh()
        # the first 100 turns: counting every instruction is slow, and the count grows with the length alike
        rows.append(_counted(wire, vessel, History(h.id, h.messages[:200], h.tools), not cfg.quick))
    return rows


__all__ = ["chat_messages", "cold_rows", "ollama_peer"]

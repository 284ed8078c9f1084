"""The bench's histories: a seeded synthetic generator and the real transcripts of the shared material
(``$TOOLREPLAY_SHARED``).

Synthetic shape (issue 7): ``turns`` turns, each a user message and an assistant reply that made
``calls`` calls (inputs of 100-300 characters of JSON text, answers of 200-600 characters) and then said
something. The generator draws each turn from one seeded stream, in order, so the history of ``n + 1``
turns starts with the ``2n`` messages of the history of ``n`` turns: "one more turn appended" is exact.

Transcripts: ``dev.jsonl`` holds ``openai-chat`` (tau-bench v1) and ``tau2-bench`` conversations, read
by toolreplay's own importer (``toolreplay._importers``, format ``tau-bench``).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolreplay._history import History, Message, ToolCall, ToolSpec

#: The tools of the synthetic agent: name, description, the input keys it fills.
TOOLS: tuple[tuple[str, str], ...] = (
    ("search_code", "Search the repository for a pattern."),
    ("read_file", "Read part of a file."),
    ("run_tests", "Run a test selection and report failures."),
    ("edit_file", "Replace a span of a file."),
    ("coop", "The todo board: add, close or list todos."),
)

_VOCAB = (
    "alpha beta gamma delta render wire replay history call answer token cache prefix bytes store "
    "sqlite turn agent tool input output model request provider stream error retry vessel café naïve "
    "über résumé 東京 module function value schema patch commit branch merge review"
)
_WORDS = tuple(_VOCAB.split())

INPUT_CHARS = (100, 300)
ANSWER_CHARS = (200, 600)


def tool_specs() -> tuple[ToolSpec, ...]:
    """The synthetic agent's tool definitions (every input is an object of three fields)."""
    schema = {
        "type": "object",
        "properties": {
            "target": {"type": "string"},
            "detail": {"type": "string"},
            "limit": {"type": "integer"},
        },
        "required": ["target"],
    }
    return tuple(ToolSpec(name, desc, schema) for name, desc in TOOLS)


def _words(rng: random.Random, chars: int) -> str:
    """About ``chars`` characters of words (exactly ``chars``, cut at the end)."""
    out: list[str] = []
    n = 0
    while n <= chars:
        w = rng.choice(_WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:chars]


def _input(rng: random.Random) -> dict[str, Any]:
    """A call input whose compact JSON text is 100-300 characters long."""
    want = rng.randint(*INPUT_CHARS)
    limit = rng.randint(1, 500)
    skeleton = json.dumps(
        {"target": "", "detail": "", "limit": limit}, ensure_ascii=False, separators=(",", ":")
    )
    room = want - len(skeleton)
    first = rng.randint(10, max(10, room // 2))
    return {"target": _words(rng, first), "detail": _words(rng, room - first), "limit": limit}


def _turn(rng: random.Random, i: int, calls: int) -> tuple[Message, Message]:
    user = Message(id=f"u{i}", role="user", text=_words(rng, rng.randint(30, 150)))
    uses = tuple(
        ToolCall(
            name=rng.choice(TOOLS)[0],
            input=_input(rng),
            answer=_words(rng, rng.randint(*ANSWER_CHARS)),
        )
        for _ in range(calls)
    )
    reply = Message(id=f"a{i}", role="assistant", text=_words(rng, rng.randint(50, 200)), tool_uses=uses)
    return user, reply


def iter_turns(calls: int = 3, seed: int = 0, first: int = 0) -> Iterator[tuple[Message, Message]]:
    """Endless synthetic turns (user message, reply) from one seeded stream; ids count from ``first``."""
    rng = random.Random(f"toolreplay-bench:{seed}:{calls}")
    i = first
    while True:
        yield _turn(rng, i, calls)
        i += 1


def synthetic_history(turns: int, calls: int = 3, seed: int = 0) -> History:
    """A history of ``turns`` turns, each a user message and a reply with ``calls`` answered calls."""
    messages: list[Message] = []
    gen = iter_turns(calls, seed)
    for _ in range(turns):
        messages.extend(next(gen))
    return History(id=f"synthetic-{turns}x{calls}-s{seed}", messages=tuple(messages), tools=tool_specs())


def next_turn(history: History, calls: int = 3, seed: int = 0) -> tuple[Message, Message]:
    """The turn the generator would append next to a synthetic ``history`` made with the same settings."""
    n = sum(1 for m in history.messages if m.role == "user")
    gen = iter_turns(calls, seed)
    for _ in range(n):
        next(gen)
    return next(gen)


def appended(history: History, turn: Sequence[Message]) -> History:
    """``history`` with ``turn``'s messages appended (the same objects before them)."""
    return History(history.id, history.messages + tuple(turn), history.tools, history.warnings)


# --------------------------------------------------------------------------------------------------
# the real transcripts


@dataclass(frozen=True, slots=True)
class Transcript:
    """One conversation of ``dev.jsonl`` as the importers read it."""

    source: str
    history: History


def default_transcripts_path() -> Path:
    """``dev.jsonl`` in the shared material: ``$TOOLREPLAY_SHARED`` when set (as the tests read it), else
    ``shared`` beside the checkout."""
    shared = os.environ.get("TOOLREPLAY_SHARED")
    root = Path(shared) if shared else Path(__file__).resolve().parent.parent.parent / "shared"
    return root / "data" / "transcripts" / "dev.jsonl"


def load_transcripts(path: Path | None = None) -> list[Transcript]:
    """Every conversation of ``dev.jsonl``, read by toolreplay's own ``tau-bench`` importer (one reply
    per agent turn, design 10; the simulated user's calls kept out of the replies, design 11).
    Empty when the file is absent (a user's clone)."""
    from toolreplay._importers import read_file

    p = path or default_transcripts_path()
    if not p.is_file():
        return []
    batch = read_file(p, "tau-bench")
    return [Transcript(f"{batch.source}#{h.id}", h) for h in batch.conversations]

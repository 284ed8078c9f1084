"""The bench's histories: a seeded synthetic generator and the real transcripts of ``../shared``.

Synthetic shape (issue 7): ``turns`` turns, each a user message and an assistant reply that made
``calls`` calls (inputs of 100-300 characters of JSON text, answers of 200-600 characters) and then said
something. The generator draws each turn from one seeded stream, in order, so the history of ``n + 1``
turns starts with the ``2n`` messages of the history of ``n`` turns: "one more turn appended" is exact.

Transcripts: ``dev.jsonl`` holds ``openai-chat`` (tau-bench v1) and ``tau2-bench`` conversations. They
are turned into toolreplay histories the simple way the importers do it (DECISIONS 10, 11): one reply per
agent turn (the assistant messages between two user messages), its calls in order with their answers,
its texts joined with a blank line; calls made by the simulated user (tau2 telecom) are left out.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolreplay.history import History, Message, ToolCall, ToolSpec

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
    """One converted conversation of ``dev.jsonl``; ``user_calls_left_out`` counts DECISIONS 11 drops."""

    source: str
    format: str
    history: History
    user_calls_left_out: int


def default_transcripts_path() -> Path:
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "transcripts" / "dev.jsonl"


def _arguments(raw: Any) -> Any:
    """A call's input: tau2 keeps an object; OpenAI Chat a JSON string (parsed when it is valid JSON)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return raw


class _Builder:
    """Collects one conversation's messages, one reply per agent turn."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.texts: list[str] = []
        self.calls: list[dict[str, Any]] = []  # name, input, id, answer, is_error
        self.open = False
        self.left_out = 0

    def _next_id(self) -> str:
        return f"t{len(self.messages)}"

    def finish_reply(self) -> None:
        if not self.open:
            return
        uses = tuple(
            ToolCall(c["name"], c["input"], c.get("answer"), c.get("id"), bool(c.get("is_error")))
            for c in self.calls
        )
        text = "\n\n".join(t for t in self.texts if t)
        self.messages.append(Message(self._next_id(), "assistant", text, uses))
        self.texts, self.calls, self.open = [], [], False

    def plain(self, role: str, text: str) -> None:
        self.finish_reply()
        if role == "system" and any(m.role != "system" for m in self.messages):
            role = "user"  # a late system message is not allowed by the history format
        self.messages.append(Message(self._next_id(), role, text))  # type: ignore[arg-type]

    def assistant(self, text: str, calls: Sequence[Mapping[str, Any]]) -> None:
        self.open = True
        self.texts.append(text)
        for c in calls:
            self.calls.append({"name": c["name"], "input": c["input"], "id": c.get("id")})

    def answer(self, call_id: Any, content: str, is_error: bool) -> None:
        for c in reversed(self.calls):
            if c.get("id") == call_id and "answer" not in c:
                c["answer"], c["is_error"] = content, is_error
                return


def _content(raw: Any) -> str:
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        return "\n".join(str(p.get("text", "")) for p in raw if isinstance(p, Mapping))
    return str(raw)


def transcript_history(row: Mapping[str, Any], name: str) -> Transcript:
    """One ``dev.jsonl`` row (``openai-chat`` or ``tau2-bench``) as a toolreplay history."""
    fmt = str(row.get("format"))
    b = _Builder()
    for m in row["messages"]:
        role = m.get("role")
        if role == "tool":
            if m.get("requestor") == "user":  # the answer to a simulated user's call
                continue
            b.answer(m.get("tool_call_id", m.get("id")), _content(m.get("content")), bool(m.get("error")))
        elif role == "assistant":
            calls = []
            for tc in m.get("tool_calls") or ():
                fn = tc.get("function")
                if isinstance(fn, Mapping):  # OpenAI Chat
                    calls.append(
                        {"name": fn["name"], "input": _arguments(fn.get("arguments")), "id": tc["id"]}
                    )
                else:  # tau2
                    calls.append(
                        {"name": tc["name"], "input": _arguments(tc.get("arguments")), "id": tc["id"]}
                    )
            b.assistant(_content(m.get("content")), calls)
        elif role in ("user", "system"):
            user_calls = len(m.get("tool_calls") or ())  # tau2 telecom: the simulated user's own calls
            b.left_out += user_calls
            text = _content(m.get("content"))
            if text or not user_calls:
                b.plain(role, text)
    b.finish_reply()
    hist = History(id=name, messages=tuple(b.messages))
    return Transcript(str(row.get("source", name)), fmt, hist, b.left_out)


def load_transcripts(path: Path | None = None) -> list[Transcript]:
    """Every conversation of ``dev.jsonl`` converted (empty when the file is absent: a user's clone)."""
    p = path or default_transcripts_path()
    if not p.is_file():
        return []
    out: list[Transcript] = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines()):
        if line.strip():
            out.append(transcript_history(json.loads(line), f"dev-{n}"))
    return out

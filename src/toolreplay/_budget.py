"""The context budget: the newest whole turns that fit, moved in large steps (design 33).

A conversation that runs for months does not fit any model's context. The replay keeps the system
prompt, the current turn, and the newest earlier turns that fit the budget, by the estimate of
:mod:`toolreplay._tokens` counted on the encoded body. Rules:

* **The unit dropped is a whole turn**: a user message and every message after it up to the next user
  message. A reply's calls, their answers and its reasoning live inside the reply, so nothing inside a
  reply is ever separated; and the kept part always starts with a user message (never with an answer
  whose question was left out). System messages and the current turn are always kept.
* **Large steps, so the prompt cache keeps hitting.** Each message has a planning size (its stored
  :func:`~toolreplay._tokens.replay_size`); the conversation is a line of bytes. The window may start
  only at the first turn at or after a multiple of the step (``step`` of the budget, a quarter by
  default), at the smallest multiple whose body fits. As the conversation grows the start stays put
  until the body no longer fits, then jumps a whole step: every turn between two steps sends the same
  leading messages, byte for byte, and so shares its prefix with the turn before.
* The start depends only on the stored conversation (no state between turns), so every process, and
  every step inside one turn, picks the same one.
* What was left out is said in a warning; an optional summary hook (none by default) may describe the
  left-out part: its text travels as a system message after the others (make it deterministic, or the
  prefix changes every turn).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from toolreplay._errors import ConfigError
from toolreplay._history import Message, ToolSpec
from toolreplay._tokens import BYTES_PER_TOKEN, Counter, replay_size

#: The window moves by this fraction of the budget at a time.
STEP_FRACTION = 0.25
#: Tokens kept free for the answer when the budget comes from the vessel's context window.
OUTPUT_RESERVE = 16_384
#: The id of the system message that carries the summary hook's text.
SUMMARY_ID = "context-summary"

SummaryHook = Callable[[Sequence[Message]], str | None]
"""Given the left-out messages (oldest first), a text that stands for them, or None."""


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """How much of a conversation a request carries.

    ``max_tokens``: the prompt's budget in estimated tokens; None: the vessel's context window less
    :data:`OUTPUT_RESERVE` (or less the request's ``max_tokens`` when set). ``step``: the fraction of the
    budget the window moves by. ``summary``: the hook described in the module docstring.
    """

    max_tokens: int | None = None
    step: float = STEP_FRACTION
    summary: SummaryHook | None = None

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigError(f"max_context_tokens must be at least 1, not {self.max_tokens}")
        if not 0 < self.step <= 1:
            raise ConfigError(f"the budget step must be a fraction in (0, 1], not {self.step}")

    def tokens(self, context_window: int | None, max_output: int | None = None) -> int | None:
        """The prompt budget in force (None: no budget known, everything is sent)."""
        if self.max_tokens is not None:
            return self.max_tokens
        if context_window is None:
            return None
        reserve = max_output if max_output is not None else min(OUTPUT_RESERVE, context_window // 4)
        return max(1, context_window - reserve)


Row = tuple[str, int]
"""(role, planning size) of one stored message, in stored order."""


def rows_of(messages: Sequence[Message]) -> list[Row]:
    return [(m.role, replay_size(m)) for m in messages]


def candidate_starts(rows: Sequence[Row], budget: int, step: float, reserved: int = 0) -> Iterator[int]:
    """The starts the window may take, best first: the index of the first message kept after the system
    messages, for ``k = k0, k0 + 1, ...`` (see the module docstring), ending with the current turn.

    ``reserved``: planning bytes the body needs besides the messages (system prompt, tools).
    """
    head = 0
    while head < len(rows) and rows[head][0] == "system":
        head += 1
    last_user = next((i for i in range(len(rows) - 1, head - 1, -1) if rows[i][0] == "user"), head)
    cum = [0, *accumulate([r[1] for r in rows[head:]])]
    room = budget * BYTES_PER_TOKEN - reserved
    step_bytes = max(1, int(step * budget * BYTES_PER_TOKEN))
    over = cum[-1] - room
    k = 0 if over <= 0 else -(-over // step_bytes)
    boundaries = [head, *(i for i in range(head + 1, last_user + 1) if rows[i][0] == "user")]
    b = 0
    last = -1
    while True:
        mark = k * step_bytes
        while b < len(boundaries) and cum[boundaries[b] - head] < mark:
            b += 1
        start = boundaries[b] if b < len(boundaries) else last_user
        if start != last:
            yield start
            last = start
        if start >= last_user:
            return
        k += 1


@dataclass(frozen=True, slots=True)
class Fitted:
    """The messages a request carries, and what the budget did."""

    messages: tuple[Message, ...]
    body: dict[str, Any]
    dropped: int
    tokens: int
    warnings: tuple[str, ...]


def _with_summary(
    system: Sequence[Message], kept: Sequence[Message], dropped: Sequence[Message], hook: SummaryHook | None
) -> tuple[Message, ...]:
    if hook is None or not dropped:
        return (*system, *kept)
    text = hook(dropped)
    if not text:
        return (*system, *kept)
    return (*system, Message(SUMMARY_ID, "system", text), *kept)


def fit(
    messages: Sequence[Message],
    render: Callable[[Sequence[Message]], dict[str, Any]],
    count: Callable[[dict[str, Any]], int],
    budget: int,
    *,
    step: float = STEP_FRACTION,
    summary: SummaryHook | None = None,
    rows: Sequence[Row] | None = None,
    offset: int = 0,
    reserved: int = 0,
) -> Fitted:
    """Render the newest whole turns of ``messages`` that fit ``budget`` tokens (``count`` of the body).

    ``rows`` (default: computed from ``messages``) are the planning rows of the whole conversation when
    ``messages`` holds only its last part, from row ``offset`` on (the store reads only the window): the
    system messages then come first in ``messages`` whatever their row.
    """
    rows = rows if rows is not None else rows_of(messages)
    head = sum(1 for m in messages if m.role == "system")
    system, rest = messages[:head], messages[head:]
    row_head = sum(1 for r in rows if r[0] == "system")
    body: dict[str, Any] = {}
    tokens = 0
    for start in candidate_starts(rows, budget, step, reserved):
        cut = max(0, start - max(offset, row_head))
        kept = rest[cut:]
        sent = _with_summary(system, kept, rest[:cut], summary)
        body = render(sent)
        tokens = count(body)
        dropped = (start - row_head) if start > row_head else 0
        if tokens <= budget:
            return Fitted(sent, body, dropped, tokens, _said(dropped, kept, tokens, budget, fits=True))
    return Fitted(sent, body, dropped, tokens, _said(dropped, kept, tokens, budget, fits=False))


def _said(dropped: int, kept: Sequence[Message], tokens: int, budget: int, *, fits: bool) -> tuple[str, ...]:
    out: list[str] = []
    if dropped:
        first = f" (from message {kept[0].id} on)" if kept else ""
        out.append(
            f"context budget: left out the oldest {dropped} message{'s' if dropped != 1 else ''}; "
            f"kept {len(kept)}{first}, about {tokens} of {budget} tokens"
        )
    if not fits:
        out.append(
            f"context budget: the system prompt and the current turn alone take about {tokens} tokens, "
            f"more than the budget of {budget}; sent anyway"
        )
    return tuple(out)


def reserved_bytes(tools: Sequence[ToolSpec], system: str | None) -> int:
    """Planning bytes a body needs besides its messages: the tool definitions and the system prompt."""
    from toolreplay._jsonenc import encode

    return sum(len(t.description) + len(encode(dict(t.parameters))) for t in tools) + len(system or "")


def body_counter(counter: Counter) -> Callable[[dict[str, Any]], int]:
    """The estimate of a whole body: ``counter`` over its encoded JSON text."""
    from toolreplay._jsonenc import encode
    from toolreplay._tokens import byte_count, bytes_to_tokens

    if counter is byte_count:
        return lambda body: bytes_to_tokens(len(encode(body)))
    return lambda body: counter(encode(body).decode("utf-8"))


__all__ = [
    "OUTPUT_RESERVE",
    "STEP_FRACTION",
    "SUMMARY_ID",
    "ContextBudget",
    "Fitted",
    "SummaryHook",
    "body_counter",
    "candidate_starts",
    "fit",
    "reserved_bytes",
    "rows_of",
]

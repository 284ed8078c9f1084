"""The context budget: the newest whole turns that fit, moved in large jumps (design 33).

A conversation that runs for months does not fit any model's context. The replay keeps the system
prompt, the current turn, and the newest earlier turns that fit the budget, by the estimate of
:mod:`toolreplay._tokens` counted on the encoded body. Rules:

* **The unit dropped is a whole turn**: a user message and every message after it up to the next user
  message. A reply's calls, their answers and its reasoning live inside the reply, so nothing inside a
  reply is ever separated; and the kept part always starts with a user message (never with an answer
  whose question was left out). System messages and the current turn are always kept.
* **Large jumps, so the prompt cache keeps hitting.** Each message has a planning size
  (:func:`~toolreplay._tokens.planning_size`, kept in the store): an upper bound of what its replay
  sends. What every vessel gets of each message, laid end to end, makes a line of bytes. The window may
  start only at the first turn at or after a multiple of the jump (``jump`` of the budget, a quarter by
  default), at the smallest multiple from which the vessel's own planned bytes (reasoning counted where
  it goes back to its issuer) fit; the :class:`Plan` is made once per turn, and the body is still
  counted (the next start is tried if it does not fit). As the conversation grows the start stays put
  until the body no longer fits, then moves a whole jump: every turn between two jumps sends the same
  leading messages, byte for byte, and so shares its prefix with the turn before.
* The start depends only on the stored conversation (no state between turns), so every process, and
  every request inside one turn, picks the same one.
* What was left out is said in a warning; an optional summary hook (none by default) may describe the
  left-out part: its text travels as a system message after the others (make it deterministic, or the
  prefix changes every turn).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import InitVar, dataclass
from typing import Any, NamedTuple

from toolreplay._errors import ConfigError
from toolreplay._history import Message, ToolSpec
from toolreplay._limits import check_context_tokens
from toolreplay._steps import Issuer
from toolreplay._tokens import BYTES_PER_TOKEN, Counter, planning_size

#: The window moves by this fraction of the budget at a time.
JUMP_FRACTION = 0.25
#: Tokens kept free for the answer when the budget comes from the vessel's context window.
OUTPUT_RESERVE = 16_384
#: Bytes a body's frame takes at most besides its messages, tools and system prompt (model, settings,
#: the keys around the list, the claude-prompt's head, Anthropic's four cache markers: design 36).
BODY_FRAME_BYTES = 1024
#: Bytes each tool definition adds at most besides its name, description and schema.
TOOL_FRAME_BYTES = 128
#: The id of the system message that carries the summary hook's text.
SUMMARY_ID = "context-summary"

SummaryHook = Callable[[Sequence[Message]], str | None]
"""Given the left-out messages (oldest first), a text that stands for them, or None."""


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """How much of a conversation a request carries.

    ``max_tokens``: the prompt's budget in estimated tokens; None: the vessel's context window less
    :data:`OUTPUT_RESERVE` (or less the request's ``max_tokens`` when set). ``jump``: the fraction of the
    budget the window moves by. ``summary``: the hook described in the module docstring.
    """

    max_tokens: int | None = None
    jump: float = JUMP_FRACTION
    summary: SummaryHook | None = None
    step: InitVar[float | None] = None
    """The old name of ``jump`` (given, it sets it)."""

    def __post_init__(self, step: float | None) -> None:
        if step is not None:
            object.__setattr__(self, "jump", step)
        check_context_tokens(self.max_tokens)
        if not 0 < self.jump <= 1:
            raise ConfigError(f"the budget jump must be a fraction in (0, 1], not {self.jump}")

    def tokens(self, context_window: int | None, max_output: int | None = None) -> int | None:
        """The prompt budget in force (None: no budget known, everything is sent)."""
        if self.max_tokens is not None:
            return self.max_tokens
        if context_window is None:
            return None
        reserve = max_output if max_output is not None else min(OUTPUT_RESERVE, context_window // 4)
        return max(1, context_window - reserve)


class PlanRow(NamedTuple):
    """One stored message as the planner sees it."""

    position: int
    role: str
    before: int
    """Planning bytes every vessel gets of the messages before it, from the first non-system message on
    (where it stands on the line of the jump rule)."""
    size: int
    """This vessel's planning bytes of the message (:func:`~toolreplay._tokens.size_for`)."""


Accepts = Callable[[Issuer | None], bool] | None
"""Whether the vessel takes back what an issuer made (None: no reasoning is replayed)."""


def rows_of(messages: Sequence[Message], accepts: Accepts = None) -> tuple[list[PlanRow], int]:
    """The plan rows of a whole conversation held in memory, and its total on the line."""
    rows: list[PlanRow] = []
    lead = leading_system(messages)
    line = 0
    for i, m in enumerate(messages):
        common, issued = planning_size(m)
        size = common + (sum(n for who, n in issued if accepts(who)) if accepts is not None else 0)
        rows.append(PlanRow(i, m.role, line, size))
        if i >= lead:
            line += common
    return rows, line


def leading_system(messages: Sequence[Message] | Sequence[PlanRow]) -> int:
    """How many system messages come first."""
    n = 0
    while n < len(messages) and messages[n].role == "system":
        n += 1
    return n


def _jump_bytes(budget: int, jump: float) -> int:
    return max(1, int(jump * budget * BYTES_PER_TOKEN))


def first_mark(total: int, budget: int, jump: float, reserved: int) -> int:
    """The window's earliest start on the line: the smallest multiple of the jump that leaves at most
    the room for the messages after it (0: everything fits). ``total``: the line's length."""
    sb = _jump_bytes(budget, jump)
    over = total - (budget * BYTES_PER_TOKEN - reserved)
    return 0 if over <= 0 else -(-over // sb) * sb


@dataclass(frozen=True, slots=True)
class Plan:
    """The window's candidate starts, computed once per turn (the module docstring's jump rule)."""

    head: int
    """How many system messages come first (always sent)."""
    starts: tuple[int, ...]
    """The positions the window may start at, best first; the last is the current turn's."""
    sizes: tuple[int, ...]
    """This vessel's planning bytes from each start to the end."""
    room: int
    """Planning bytes the messages may take (the budget less the body's reserve)."""

    def ranked(self, extra: int = 0) -> tuple[int, ...]:
        """The starts to try, best first: from the first whose planned bytes, with ``extra`` more (the
        reply in progress), fit the room; the current turn's when none does."""
        for i, n in enumerate(self.sizes):
            if n + extra <= self.room:
                return self.starts[i:]
        return self.starts[-1:]


def plan(
    rows: Sequence[PlanRow], head: int, last_user: int, mark: int, budget: int, jump: float, reserved: int
) -> Plan:
    """The :class:`Plan` of ``rows`` (the messages from the window's earliest possible start, or from
    ``last_user`` when that comes first, to the end): the starts at ``k = mark / jump, k + 1, ...``, each
    the first turn at or after ``k`` jumps on the line, ending with the current turn (``last_user``,
    the last user message; ``head`` when there is none)."""
    sb = _jump_bytes(budget, jump)
    suffix = [0] * (len(rows) + 1)
    for i in range(len(rows) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + rows[i].size
    room = budget * BYTES_PER_TOKEN - reserved
    last = next((i for i, r in enumerate(rows) if r.position == last_user), None)
    if last is None:  # nothing but system messages
        return Plan(head, (last_user,), (0,), room)
    bounds = [
        i for i, r in enumerate(rows) if (r.role == "user" or r.position == head) and head <= r.position
    ]
    bounds = [i for i in bounds if rows[i].position <= last_user]
    starts: list[int] = []
    k, b = mark // sb, 0
    while True:
        while b < len(bounds) and rows[bounds[b]].before < k * sb:
            b += 1
        start = bounds[b] if b < len(bounds) else last
        if not starts or starts[-1] != start:
            starts.append(start)
        if start >= last:
            break
        k += 1
    return Plan(head, tuple(rows[i].position for i in starts), tuple(suffix[i] for i in starts), room)


def plan_of(messages: Sequence[Message], budget: int, jump: float, reserved: int, accepts: Accepts) -> Plan:
    """The :class:`Plan` of a whole conversation held in memory."""
    rows, total = rows_of(messages, accepts)
    head = leading_system(messages)
    last_user = next((i for i in range(len(rows) - 1, head - 1, -1) if rows[i].role == "user"), head)
    return plan(rows, head, last_user, first_mark(total, budget, jump, reserved), budget, jump, reserved)


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


@dataclass(frozen=True, slots=True)
class Trial:
    """One start the plan offers: the messages a body rendered from it carries (``sent``), how many it
    leaves out, and the kept conversation (the warnings name its first message)."""

    sent: tuple[Message, ...]
    dropped: int
    kept: Sequence[Message]

    def fitted(self, body: dict[str, Any], tokens: int, budget: int) -> Fitted:
        """What the budget did, given the body rendered from :attr:`sent` and its estimate: a fit when
        ``tokens <= budget``; the last start's body is sent anyway, said in the warnings."""
        fits = tokens <= budget
        said = _said(self.dropped, self.kept, tokens, budget, fits=fits)
        return Fitted(self.sent, body, self.dropped, tokens, said)


def trials(
    messages: Sequence[Message],
    the_plan: Plan,
    *,
    extra: int = 0,
    summary: SummaryHook | None = None,
    offset: int = 0,
) -> Iterator[Trial]:
    """The starts of ``the_plan`` to try, in order, as the messages each body carries (``extra``: planning
    bytes of messages after the plan's end, the reply in progress); the caller renders and counts each and
    stops at the first that fits its budget (:meth:`Trial.fitted`), so the render is the caller's, never
    called back from here. ``messages``: the leading system messages, then the conversation from position
    ``offset`` (or from the first non-system message, when later) on: the store reads only the window.
    There is always one start at least (the current turn)."""
    lead = leading_system(messages)
    system, rest = messages[:lead], messages[lead:]
    first = max(offset, the_plan.head)
    for start in the_plan.ranked(extra):
        cut = max(0, start - first)
        kept = rest[cut:]
        yield Trial(_with_summary(system, kept, rest[:cut], summary), max(0, start - the_plan.head), kept)


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
    """Planning bytes a body needs besides its messages: its own frame (the model, the settings, the
    keys around the message list), the tool definitions and the system prompt."""
    from toolreplay._jsonenc import encode

    defs = sum(TOOL_FRAME_BYTES + 2 * len(t.name) + len(encode(t.description)) for t in tools)
    schemas = sum(len(encode(dict(t.parameters))) for t in tools)
    return BODY_FRAME_BYTES + defs + schemas + (len(encode(system)) if system else 0)


BodyCounter = Callable[[dict[str, Any], Sequence[Message]], int]
"""The estimate of a whole body, given it and the messages it was rendered from."""


def body_counter(counter: Counter) -> BodyCounter:
    """The estimate of a whole body rendered from ``messages``: ``counter`` over its encoded JSON text,
    each image or document of the messages counted as the tokens a provider counts it as, not as its
    base64 (design 34, :func:`~toolreplay._tokens.estimate`)."""
    from toolreplay._jsonenc import encode
    from toolreplay._tokens import estimate, media_of

    return lambda body, messages: estimate(encode(body), media_of(messages), counter)


__all__ = [
    "JUMP_FRACTION",
    "OUTPUT_RESERVE",
    "SUMMARY_ID",
    "Accepts",
    "BodyCounter",
    "ContextBudget",
    "Fitted",
    "Plan",
    "PlanRow",
    "SummaryHook",
    "Trial",
    "body_counter",
    "first_mark",
    "leading_system",
    "plan",
    "plan_of",
    "reserved_bytes",
    "rows_of",
    "trials",
]

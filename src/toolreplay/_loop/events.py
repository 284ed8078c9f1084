"""What a turn is given and what it reports: its options, the events a UI follows, its result."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import InitVar, dataclass
from pathlib import Path
from typing import Any, Literal

from toolreplay._budget import ContextBudget
from toolreplay._history import Message
from toolreplay._limits import MAX_REQUESTS, TIMEOUT, check_max_requests, check_timeout
from toolreplay._replay import DEFAULT_SETTINGS, ReplaySettings
from toolreplay.wires.reply import Usage

DEFAULT_MAX_REQUESTS = MAX_REQUESTS  # the turn's limits: _limits
DEFAULT_MAX_STEPS = DEFAULT_MAX_REQUESTS  # the old name
DEFAULT_BUDGET = ContextBudget()
Stopped = Literal["answer", "request_limit"]
"""Why a turn ended: the model answered without calls, or it used every request ``max_requests`` allows.
(A turn's requests are not its reply's steps: a step is the reasoning, words and calls of one answer.)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOptions:
    """How a turn is run. ``model`` and ``base_url`` override the vessel's. Given by name only: fifteen
    fields, several of the same type (two flags, two optional strings), must not be swapped by position."""

    system: str | None = None
    model: str | None = None
    base_url: str | None = None
    max_requests: int = DEFAULT_MAX_REQUESTS
    """Requests per turn at most (the claude vessel: ``--max-turns``)."""
    dry_tools: bool = False
    """Record every call, execute none: each gets a canned ``[dry run]`` answer."""
    stream: bool = True
    temperature: float | None = None
    max_tokens: int | None = None
    replay: ReplaySettings = DEFAULT_SETTINGS
    dump_requests: Path | None = None
    """Write every request body sent and its answer here (keys redacted), for the audit."""
    send_key: bool = False
    """The vessel's key may go to ``base_url`` although it is not the vessel's own host (``--send-key``)."""
    timeout: float | None = TIMEOUT
    """Seconds the whole turn may take (every request, retry and tool run); None: no limit."""
    context: ContextBudget = DEFAULT_BUDGET
    """The context budget (default: the vessel's context window); ``ContextBudget(max_tokens=N)``."""
    cache_breakpoints: int | None = None
    """Prompt-cache markers per request on a wire that places them (Anthropic, design 36), 0 to 4;
    None: the vessel profile's. Folded into the turn's vessel and checked there (``resolve_vessel``)."""

    max_steps: InitVar[int | None] = None
    """The old name of ``max_requests`` (given, it sets it)."""

    def __post_init__(self, max_steps: int | None) -> None:
        if max_steps is not None:
            object.__setattr__(self, "max_requests", max_steps)
        check_max_requests(self.max_requests)
        check_timeout(self.timeout)


# -- events for a UI ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """New text from the model, as it streams in."""

    text: str


@dataclass(frozen=True, slots=True)
class CallStarted:
    """The model made a call; ``call_id`` is its derived id (``replay_a7_0``), final from now on."""

    call_id: str
    name: str
    input: Any


@dataclass(frozen=True, slots=True)
class CallFinished:
    """A call was answered and recorded (``executed`` False: dry run, broken arguments, unknown tool)."""

    call_id: str
    name: str
    input: Any
    answer: str
    is_error: bool
    executed: bool
    dry: bool = False


@dataclass(frozen=True, slots=True)
class Retrying:
    """A request failed with a retryable error; it is sent again after ``delay`` seconds."""

    error: str
    attempt: int
    delay: float


@dataclass(frozen=True, slots=True)
class Flagged:
    """The finished reply claims an action its turn never called ("Closed #506." and no close call)."""

    claim: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ContextTrimmed:
    """The context budget left the oldest messages out of this turn's requests (said once per turn)."""

    dropped: int
    tokens: int
    budget: int
    warnings: tuple[str, ...]


TurnEvent = TextDelta | CallStarted | CallFinished | Retrying | Flagged | ContextTrimmed
EventCallback = Callable[[TurnEvent], None]


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What a finished turn stored: the user message and the reply, plus how it went."""

    conversation_id: str
    user_message: Message
    reply: Message
    requests: int
    """How many requests the turn sent (the reply's steps are ``reply.steps``)."""
    usage: Usage
    stopped: Stopped
    flag: Mapping[str, Any] | None = None

    @property
    def steps(self) -> int:
        """The old name of :attr:`requests`."""
        return self.requests


__all__ = [
    "DEFAULT_MAX_REQUESTS",
    "DEFAULT_MAX_STEPS",
    "CallFinished",
    "CallStarted",
    "ContextTrimmed",
    "EventCallback",
    "Flagged",
    "Retrying",
    "Stopped",
    "TextDelta",
    "TurnEvent",
    "TurnOptions",
    "TurnResult",
]

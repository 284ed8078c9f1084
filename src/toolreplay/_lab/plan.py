"""What a lab run will send: the history frozen at one user message, one request body per vessel and mode.

The requests of one run differ only in how the history is replayed (design 8): every mode gets the
same system prompt and the same tool definitions, namely the given tools (or the history's own), plus a
definition inferred for every tool the history's calls use, computed once from the native rendering so
that a words-only body still offers the tools the native one declares.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError, HistoryError
from toolreplay._history import History, ToolSpec
from toolreplay._lab.classify import parse_expect
from toolreplay._limits import (
    LAB_CONCURRENCY,
    LAB_MAX_REQUESTS,
    LAB_MODES,
    LAB_TRIALS,
    TIMEOUT,
    check_concurrency,
    check_timeout,
    check_trials,
)
from toolreplay._replay import (
    DEFAULT_SETTINGS,
    MODES,
    Mode,
    ReplaySettings,
    prepare_turn_messages,
    replay_name,
)
from toolreplay._vessels import Vessel, get_vessel


@dataclass(frozen=True, slots=True)
class LabConfig:
    """Everything a lab run needs besides the transport."""

    history: History
    at: str
    vessels: tuple[Vessel, ...]
    modes: tuple[Mode, ...] = field(default_factory=lambda: parse_modes(LAB_MODES))
    trials: int = LAB_TRIALS
    expect_tool: str = "coop"
    expect_action: str | None = None
    concurrency: int = LAB_CONCURRENCY
    temperature: float | None = None
    max_requests: int = LAB_MAX_REQUESTS
    """The requests the run may send at most, retries included (``--max-requests``)."""
    base_url: str | None = None
    send_key: bool = False
    until_clear: bool = False
    """The vessels' key may go to ``base_url`` (``--send-key``; one key at most)."""
    timeout: float | None = TIMEOUT
    """Seconds one trial may take, retries included (``--timeout``); None: no limit."""
    model: str | None = None
    system: str | None = None
    tools: tuple[ToolSpec, ...] | None = None
    settings: ReplaySettings = field(default_factory=lambda: DEFAULT_SETTINGS)
    allow_dropped_tools: bool = False
    """Run even when a local server's chat template drops the tools (``--allow-dropped-tools``)."""

    def __post_init__(self) -> None:
        check_trials(self.trials)
        check_concurrency(self.concurrency)
        check_timeout(self.timeout)
        if not self.vessels:
            raise ConfigError("--vessel: name at least one vessel")
        if self.send_key:
            from toolreplay._transport.request import one_key_per_url

            one_key_per_url(self.vessels)
        bad = [m for m in self.modes if m not in MODES]
        if bad or not self.modes:
            raise ConfigError(
                f"--modes: use some of {', '.join(MODES)} (got {', '.join(self.modes) or 'none'})"
            )

        if self.until_clear and ("native" not in self.modes or len(self.modes) < 2):
            raise ConfigError(
                "--until-clear tests native against the other modes: --modes needs native and another"
            )

    @property
    def expect(self) -> str:
        return self.expect_tool + (f":{self.expect_action}" if self.expect_action else "")


@dataclass(frozen=True, slots=True)
class Cell:
    """One vessel and mode: the request body every trial of the cell sends, and its hash."""

    vessel: Vessel
    mode: Mode
    body: dict[str, Any]
    request_hash: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.vessel.name, self.mode)


def request_hash(body: Any) -> str:
    """16 hex digits of SHA-256 of the body's bytes (what resume keys on, with vessel, mode and trial)."""
    return hashlib.sha256(jsonenc.encode(body)).hexdigest()[:16]


def parse_modes(text: str) -> tuple[Mode, ...]:
    """``"plain,prose,native"`` -> the modes, in the order given, each once."""
    out: list[Mode] = []
    for part in text.split(","):
        name = part.strip()
        if not name:
            continue
        if name not in MODES:
            raise ConfigError(f"--modes: {name!r} is not a replay mode; use some of {', '.join(MODES)}")
        if name not in out:
            out.append(name)
    if not out:
        raise ConfigError(f"--modes: name at least one of {', '.join(MODES)}")
    return tuple(out)


def parse_vessels(text: str) -> tuple[Vessel, ...]:
    """``"kimi,gemini"`` -> the vessels (unknown names list the known ones)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    return tuple(get_vessel(n) for n in dict.fromkeys(names))


def frozen(history: History, at: str) -> History:
    """The history up to and including message ``at``, which must be a user message."""
    try:
        i = history.index_of(at)
    except HistoryError as exc:
        raise ConfigError(f"--at {at}: {exc}") from None
    if history.messages[i].role != "user":
        raise ConfigError(
            f"--at {at}: message {at} is an {history.messages[i].role} message; freeze the history at the "
            "user message where the agent should act"
        )
    return History(history.id, history.messages[: i + 1], history.tools, history.warnings)


def lab_tools(config: LabConfig) -> tuple[ToolSpec, ...]:
    """The one tool list every request of the run declares (design 8)."""
    from toolreplay.wires.common import declared_tools

    base = tuple(config.tools if config.tools is not None else (config.history.tools or ()))
    turns = prepare_turn_messages(config.history, "native", upto=config.at, settings=config.settings)
    tools = declared_tools(turns, base)
    expected = replay_name(config.expect_tool)
    if expected not in {replay_name(t.name) for t in tools}:
        offered = ", ".join(t.name for t in tools) or "none"
        raise ConfigError(
            f"--expect {config.expect}: the requests offer no tool named {expected} (offered: {offered}); "
            "pass its definition with --tools"
        )
    return tools


def plan_cells(config: LabConfig) -> list[Cell]:
    """The request of every vessel and mode, rendered once (all trials of a cell send the same bytes).
    Each cell holds its vessel with ``--model`` folded in (:func:`~toolreplay._vessels.resolve_vessel`):
    the render, the tools probe and the request read the model from it, not from the config again."""
    from toolreplay._render import render
    from toolreplay._vessels import resolve_vessel

    history = frozen(config.history, config.at)
    tools = lab_tools(config)
    cells: list[Cell] = []
    for named in config.vessels:
        vessel = resolve_vessel(named, model=config.model)
        for mode in config.modes:
            body = render(
                history,
                vessel,
                mode=mode,
                system=config.system,
                tools=tools,
                settings=config.settings,
                temperature=config.temperature,
            )
            cells.append(Cell(vessel, mode, body, request_hash(body)))
    return cells


def check_budget(pending: int, config: LabConfig) -> None:
    """Refuse a run that would send more requests than allowed (before anything is sent)."""
    if pending > config.max_requests:
        raise ConfigError(
            f"this run would send {pending} requests (vessels x modes x trials not yet done), more than "
            f"--max-requests {config.max_requests}; raise --max-requests or run fewer trials"
        )


__all__ = [
    "Cell",
    "LabConfig",
    "check_budget",
    "frozen",
    "lab_tools",
    "parse_expect",
    "parse_modes",
    "parse_vessels",
    "plan_cells",
    "request_hash",
]

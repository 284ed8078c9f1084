"""The one seam every wire renders from: a stored history becomes the turn messages of the next request.

:func:`reply_calls` turns one stored reply's calls into bounded, renamed, id-stamped :class:`ReplayCall`
values; :func:`prepare_turn_messages` turns a whole history into :class:`TurnMessage` values under one of
three replay modes:

* ``native``: each reply carries its calls; wires render them ahead of the reply's text, as calls.
* ``plain``: words only (what agents sent before the fix; kept for comparison).
* ``prose``: no calls on the reply, but a text record of them at the head of the next user message
  (the first fix, which measurably did not work; kept for experiments).

All functions here are pure: the same history gives the same values on every run and machine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, cast

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError, HistoryError
from toolreplay._history import History, Message, Role, ToolCall
from toolreplay._ids import StemAllocator, call_id, message_stem

Mode = Literal["native", "plain", "prose"]
MODES: tuple[Mode, ...] = ("native", "plain", "prose")

#: The answer replayed for a call whose answer was never recorded (e.g. the process died while it ran).
NO_ANSWER = "(no answer was recorded for this call)"

_MCP_NAME = re.compile(r"^mcp__(.+?)__(.+)$")


@dataclass(frozen=True, slots=True)
class ReplaySettings:
    """The replay bounds and vocabulary. The store keeps everything; these apply only at replay."""

    max_calls: int = 12
    """Only a reply's last ``max_calls`` calls are replayed."""
    max_chars: int = 500
    """Inputs and answers are replayed up to this many characters (an answer including its cut marker)."""
    aliases: Mapping[str, str] = field(default_factory=lambda: {})
    """Extra renames, applied after the ``mcp__<server>__<tool>`` rule (stored name or renamed name)."""
    skip_textless: bool = True
    """A finished reply with no text is left out of the replay entirely (calls included)."""

    def __post_init__(self) -> None:
        if self.max_calls < 1:
            raise ConfigError(f"max_calls must be at least 1, not {self.max_calls}")
        if self.max_chars < 40:
            raise ConfigError(f"max_chars must be at least 40, not {self.max_chars}")


DEFAULT_SETTINGS = ReplaySettings()


class ReplayCall(NamedTuple):
    """One earlier call as it is replayed: always a JSON-object input and an answer string.

    ``patches`` names what the replay changed, so nothing is changed silently: ``renamed``,
    ``input_excerpt`` (input not a JSON object, or cut), ``answer_cut``, ``no_answer``.

    An immutable NamedTuple rather than a frozen dataclass: every render builds one per replayed call, and
    a NamedTuple is built in about a third of the time (issue 7's render budget).
    """

    call_id: str
    name: str
    input: Mapping[str, Any]
    arguments: str
    answer: str
    is_error: bool = False
    stored_name: str = ""
    provider_call_id: str | None = None
    provider_data: Mapping[str, Any] | None = None
    patches: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.call_id,
            "name": self.name,
            "input": dict(self.input),
            "arguments": self.arguments,
            "answer": self.answer,
        }


class TurnMessage(NamedTuple):
    """One message of the next request, before any wire shape: role, words, and (native) the calls.

    A NamedTuple for the same reason as :class:`ReplayCall`.
    """

    role: Role
    message_id: str
    text: str
    calls: tuple[ReplayCall, ...] = ()
    vessel: str | None = None
    provider_data: Mapping[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "message_id": self.message_id,
            "text": self.text,
            "calls": [c.as_json() for c in self.calls],
        }


def replay_name(stored: str, aliases: Mapping[str, str] | None = None) -> str:
    """One vocabulary: ``mcp__<server>__<tool>`` replays as ``<tool>``; then the alias map applies."""
    if aliases and stored in aliases:
        return aliases[stored]
    m = _MCP_NAME.match(stored)
    name = m.group(2) if m else stored
    if aliases and name in aliases:
        return aliases[name]
    return name


def cut_answer(text: str, limit: int) -> str:
    """``text`` if it fits, else a prefix plus a marker; the whole is at most ``limit`` characters."""
    if len(text) <= limit:
        return text
    marker = f" …[cut: {len(text)} characters in all]"
    return text[: max(0, limit - len(marker))] + marker


def _excerpt(text: str, limit: int) -> tuple[dict[str, Any], str]:
    value = {"input_excerpt": text[:limit]}
    return value, jsonenc.dumps(value)


def replay_input(call: ToolCall, limit: int) -> tuple[Mapping[str, Any], str, bool]:
    """The replayed input, its JSON text, and whether it was turned into an ``input_excerpt``.

    A JSON object whose text fits travels as it is. Anything else (an object whose text is too long, a
    cut-short JSON string, plain text, an array or a number) travels as ``{"input_excerpt": text}`` with
    at most ``limit`` characters of the input's text, never as broken JSON.
    """
    raw = call.input
    if raw is None:
        return {}, "{}", False
    if isinstance(raw, Mapping):
        text = call.input_text
        if len(text) <= limit:
            return cast(Mapping[str, Any], raw), text, False
        value, args = _excerpt(text, limit)
        return value, args, True
    if isinstance(raw, str):
        # Text holding a JSON object (e.g. OpenAI ``arguments`` kept as sent, with spaces) travels as the
        # object when its compact text fits; only then is it not an excerpt.
        try:
            parsed = json.loads(raw) if raw.lstrip().startswith("{") else None
        except (json.JSONDecodeError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            text = jsonenc.dumps(parsed)
            if len(text) <= limit:
                return cast(dict[str, Any], parsed), text, False
        value, args = _excerpt(raw, limit)
        return value, args, True
    value, args = _excerpt(call.input_text, limit)
    return value, args, True


def reply_calls(
    message: Message,
    *,
    settings: ReplaySettings = DEFAULT_SETTINGS,
    stem: str | None = None,
) -> tuple[ReplayCall, ...]:
    """The calls one stored reply made, each paired with its answer, as they are replayed.

    Only the last ``settings.max_calls`` calls are kept. ``stem`` is the message's unique stem within its
    history (see :mod:`toolreplay._ids`); when omitted it is derived from the message id alone.
    """
    calls = message.tool_uses
    if not calls:
        return ()
    stem = stem if stem is not None else message_stem(message.id)
    limit = settings.max_chars
    aliases = settings.aliases
    prefix = call_id(stem, 0)[:-1]  # "replay_<stem>_": the id of the call at position n is prefix + n
    out: list[ReplayCall] = []
    new = tuple.__new__  # a NamedTuple built without its Python-level __new__ (every call of a render)
    for pos in range(max(0, len(calls) - settings.max_calls), len(calls)):
        c = calls[pos]
        stored = c.name
        patches: tuple[str, ...] = ()
        # The common case first (a short object input, a short answer, a plain name): no patch at all.
        name = replay_name(stored, aliases) if aliases or stored.startswith("mcp__") else stored
        if name != stored:
            patches += ("renamed",)
        text = c.input_text
        if type(c.input) is dict and len(text) <= limit:
            value: Mapping[str, Any] = c.input
            arguments = text
        else:
            value, arguments, excerpt = replay_input(c, limit)
            if excerpt:
                patches += ("input_excerpt",)
        answer = c.answer
        if answer is None:
            answer = NO_ANSWER
            patches += ("no_answer",)
        elif len(answer) > limit:
            answer = cut_answer(answer, limit)
            patches += ("answer_cut",)
        out.append(
            new(
                ReplayCall,
                (
                    prefix + str(pos),
                    name,
                    value,
                    arguments,
                    answer,
                    c.is_error,
                    stored,
                    c.call_id,
                    c.provider_data,
                    patches,
                ),
            )
        )
    return tuple(out)


def prose_record(calls: Sequence[ReplayCall]) -> str:
    """The text record of a reply's calls used by the ``prose`` mode."""
    lines = ["[Tool calls made in the previous reply]"]
    for c in calls:
        lines.append(f"- {c.name}({c.arguments}) -> {c.answer}")
    return "\n".join(lines)


def _replayable(m: Message, settings: ReplaySettings) -> bool:
    """Only finished replies with text are replayed; an interrupted or in-progress reply keeps its calls."""
    if m.role != "assistant":
        return True
    if m.status != "complete":
        return bool(m.text) or bool(m.tool_uses)
    return bool(m.text) or not settings.skip_textless


def prepare_turn_messages(
    history: History | Sequence[Message],
    mode: Mode = "native",
    *,
    upto: str | None = None,
    settings: ReplaySettings = DEFAULT_SETTINGS,
) -> list[TurnMessage]:
    """The turn messages of the next request for ``history`` (cut after message ``upto`` when given).

    A reply's in-progress or interrupted state keeps its calls (design 4): they always travel as calls,
    whatever the mode, because the model must see its own results to continue.
    """
    if mode not in MODES:
        raise ConfigError(f"unknown replay mode {mode!r}; use one of {', '.join(MODES)}")
    messages = history.messages if isinstance(history, History) else tuple(history)
    if upto is not None:
        for i, m in enumerate(messages):
            if m.id == upto:
                messages = messages[: i + 1]
                break
        else:
            cid = history.id if isinstance(history, History) else "history"
            raise HistoryError(f"no message with id {upto!r} in {cid}", field="upto")
    alloc = StemAllocator()
    out: list[TurnMessage] = []
    # prose mode: the records of every reply since the last user message (two replies in a row keep both)
    pending: list[str] = []
    stem_of = alloc.stem
    new = tuple.__new__  # TurnMessage built without its Python-level __new__ (every message of a render)
    for m in messages:
        stem = stem_of(m.id)
        if m.role != "assistant":
            text = m.text
            if pending and m.role == "user":
                record = "\n\n".join(pending)
                text = f"{record}\n\n{text}" if text else record
                pending = []
            out.append(new(TurnMessage, (m.role, m.id, text, (), m.vessel, m.provider_data)))
            continue
        if not _replayable(m, settings):
            continue
        if mode == "native" or m.status != "complete":
            calls = reply_calls(m, settings=settings, stem=stem)
            out.append(new(TurnMessage, ("assistant", m.id, m.text, calls, m.vessel, m.provider_data)))
            continue
        if mode == "prose" and m.tool_uses:
            pending.append(prose_record(reply_calls(m, settings=settings, stem=stem)))
        out.append(TurnMessage("assistant", m.id, m.text, (), m.vessel, m.provider_data))
    return out


def split_system(turns: Sequence[TurnMessage], system: str | None) -> tuple[str | None, list[TurnMessage]]:
    """The system prompt (the given one, then any system messages of the history) and the other turns."""
    parts = [system] if system else []
    rest: list[TurnMessage] = []
    for t in turns:
        if t.role == "system":
            if t.text:
                parts.append(t.text)
        else:
            rest.append(t)
    return ("\n\n".join(parts) if parts else None), rest

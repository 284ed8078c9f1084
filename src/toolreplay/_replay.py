"""The one seam every wire renders from: a stored history becomes the turn messages of the next request.

:func:`reply_calls` turns one stored reply's calls into bounded, renamed, id-stamped :class:`ReplayCall`
values; :func:`prepare_turn_messages` turns a whole history into :class:`TurnMessage` values under one of
three replay modes:

* ``native``: each reply carries its calls, step by step (design 16): each step's reasoning (only to its
  issuer, design 17), its words and its calls, then their answers; the reply's final text after its last
  step. Wires render :attr:`TurnMessage.steps` in that order.
* ``plain``: words only (what agents sent before the fix; kept for comparison). No reasoning.
* ``prose``: no calls on the reply, but a text record of them at the head of the next user message
  (the first fix, which measurably did not work; kept for experiments). No reasoning.

A reply in progress (or interrupted) renders as it was made in every mode, so a continuation request
ends with the answers of its last step. What the replay leaves out besides the bounds (reasoning for
another vessel, the reasoning of a step cut by the call window) is named in :attr:`TurnMessage.warnings`.

All functions here are pure: the same history gives the same values on every run and machine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from toolreplay import jsonenc
from toolreplay._issuers import Audience
from toolreplay._tokens import PLAN_MAX_CALLS, PLAN_MAX_CHARS
from toolreplay.errors import ConfigError, HistoryError
from toolreplay.ids import StemAllocator, call_id, message_stem
from toolreplay.model import History, Issuer, Message, Part, Reasoning, ServerTool, Step, Text, ToolCall
from toolreplay.wires.replayed import ReplayCall, ReplayStep, TurnMessage, split_system, turn_steps

Mode = Literal["native", "plain", "prose"]
MODES: tuple[Mode, ...] = ("native", "plain", "prose")

#: The answer replayed for a call whose answer was never recorded (e.g. the process died while it ran).
NO_ANSWER = "(no answer was recorded for this call)"

_MCP_NAME = re.compile(r"^mcp__(.+?)__(.+)$")


@dataclass(frozen=True, slots=True)
class ReplaySettings:
    """The replay bounds and vocabulary. The store keeps everything; these apply only at replay."""

    # the defaults are defined once, where the stored planning size (which assumes them) reads them too
    max_calls: int = PLAN_MAX_CALLS
    """Only a reply's last ``max_calls`` calls are replayed."""
    max_chars: int = PLAN_MAX_CHARS
    """Inputs and answers are replayed up to this many characters (an answer including its cut marker)."""
    aliases: Mapping[str, str] = field(default_factory=lambda: {})
    """Extra renames, applied after the ``mcp__<server>__<tool>`` rule (stored name or renamed name)."""
    skip_textless: bool = True
    """A finished reply with no text is left out of the replay entirely (calls included)."""
    audience: Audience | None = None
    """The vessel the replay is for: reasoning and signatures go back only to their issuer (design 17).
    None: to no one (nothing provider-made is replayed)."""
    as_sent: bool = False
    """Reproduce the stored request (design 38): every call whole and under its own id (design 39),
    every step with what its issuer made, every reply; the bounds and the audience do not apply."""
    whole_calls: bool = False
    """Every call whole, under its own id (a derived one where none was stored) and its stored name, as
    ``as_sent`` has them, while steps still go by the audience: the proxy's translated request (design
    48), which carries the agent's full inputs and answers (no bounds, no renaming) and reasoning only to
    its issuer."""

    def __post_init__(self) -> None:
        if self.max_calls < 1:
            raise ConfigError(f"max_calls must be at least 1, not {self.max_calls}")
        if self.max_chars < 40:
            raise ConfigError(f"max_chars must be at least 40, not {self.max_chars}")


DEFAULT_SETTINGS = ReplaySettings()


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
    if settings.as_sent or settings.whole_calls:
        return _as_sent_calls(calls, call_id(stem, 0)[:-1])
    limit = settings.max_chars
    aliases = settings.aliases
    prefix = call_id(stem, 0)[:-1]  # "replay_<stem>_": the id of the call at position n is prefix + n
    out: list[ReplayCall] = []
    for pos in range(max(0, len(calls) - settings.max_calls), len(calls)):
        c = calls[pos]
        stored = c.name
        patches: tuple[str, ...] = ()
        # The common case first (a short object input, a short answer, a plain name): no patch at all.
        name = replay_name(stored, aliases) if aliases or stored.startswith("mcp__") else stored
        if name != stored:
            patches += ("renamed",)
        text = c.input_text
        free = ""
        if type(c.input) is dict and len(text) <= limit:
            value: Mapping[str, Any] = c.input
            arguments = text
        elif c.kind == "custom":
            free, value, arguments, cut = _free_form(text, limit)
            if cut:
                patches += ("input_cut",)
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
        out.append(ReplayCall(call_id=prefix + str(pos), name=name, input=value, arguments=arguments,
                              answer=answer, is_error=c.is_error, stored_name=stored,
                              provider_call_id=c.call_id, provider_data=c.provider_data, patches=patches,
                              parts=c.parts, kind=c.kind, text=free, sent=c.sent))  # fmt: skip
    return tuple(out)


def _free_form(text: str, limit: int | None) -> tuple[str, Mapping[str, Any], str, bool]:
    """A custom (free-form) call's raw text, cut to ``limit`` (None: whole), and the function-call input
    it travels as where a wire has no free-form calls: ``{"input": text}``."""
    cut = limit is not None and len(text) > limit
    free = text[:limit] if cut else text
    value = {"input": free}
    return free, value, jsonenc.dumps(value), cut


def _as_sent_calls(calls: Sequence[ToolCall], prefix: str) -> tuple[ReplayCall, ...]:
    """Every call of a reply whole, under its own id (a derived one where none was stored), its input
    and its arguments' text as stored (design 38-39)."""
    out: list[ReplayCall] = []
    for pos, c in enumerate(calls):
        free = ""
        if c.kind == "custom":
            free, value, arguments, _ = _free_form(c.input_text, None)
        elif isinstance(c.input, Mapping):
            value, arguments = cast(Mapping[str, Any], c.input), c.input_text
        else:  # raw text kept as sent (broken JSON, spaced JSON): its own text goes back
            value, arguments = {}, c.input_text
        answer = c.answer if c.answer is not None else NO_ANSWER
        wid = c.call_id if c.call_id else prefix + str(pos)
        out.append(ReplayCall(call_id=wid, name=c.name, input=value, arguments=arguments, answer=answer,
                              is_error=c.is_error, stored_name=c.name, provider_call_id=c.call_id,
                              provider_data=c.provider_data, parts=c.parts, kind=c.kind, text=free,
                              sent=c.sent))  # fmt: skip
    return tuple(out)


def flat_text(m: Message) -> str:
    """All of a reply's words in order (each step's words, then the final text), joined with a blank line:
    what the ``plain`` and ``prose`` modes show, as agents sent it before steps existed."""
    if not m.steps:
        return m.text
    words = [s.words for s in m.steps if s.said]
    return "\n\n".join(w for w in (*words, m.text) if w)


def _data_names(step: Step, calls: Sequence[ReplayCall], target: Audience | None = None) -> list[str]:
    """What of a step's provider-made content a replay would send: its reasoning, signatures, data; for a
    ``target`` vessel, signatures and data only where its wire has a place for them (Chat never carries
    a signature, so losing one is no news there)."""
    out: list[str] = []
    n = tools = 0
    text_data = False
    for p in step.said:  # one pass (every step of a render on another vessel asks)
        if type(p) is Reasoning:
            n += 1
        elif type(p) is ServerTool:
            tools += 1
        elif p.data:
            text_data = True
    data = target is None or target.takes_data  # reasoning lost is said everywhere (design 18)
    if n:
        out.append(f"{n} piece{'s' if n > 1 else ''} of reasoning")
    if tools:
        out.append(f"{tools} server-tool piece{'s' if tools > 1 else ''} (a tool the provider ran itself)")
    if text_data and data:
        out.append("data on its text")
    if data and any(c.provider_data for c in calls):
        out.append("its calls' provider data (signatures)")
    return out


def _plain_step(step: Step, calls: Sequence[ReplayCall]) -> ReplayStep:
    """A step with nothing provider-made: its words only, its calls without provider data."""
    said = tuple([p if p.data is None else Text(p.text) for p in step.said if type(p) is Text and p.text])
    if any(c.provider_data for c in calls):
        calls = tuple(c._replace(provider_data=None) if c.provider_data else c for c in calls)
    return ReplayStep(said, tuple(calls))


def _step_for(
    step: Step,
    calls: tuple[ReplayCall, ...],
    cut: bool,
    allowed: bool,
    where: str,
    warns: list[str],
    target: Audience | None = None,
) -> ReplayStep:
    """One step as replayed: whole to its issuer; else (another vessel, a mode that replays no reasoning,
    a step cut by the call window) without anything provider-made, named in a warning (only what the
    ``target`` vessel's wire could have carried)."""
    if allowed and not cut:
        return ReplayStep(step.said, calls)
    lost = _data_names(step, calls, target)
    if lost:
        if cut:
            why = "cut by the call window (design 19)"
        elif step.issuer is None:
            why = "its issuer is not recorded"
        else:
            why = f"made by {step.issuer.describe()}, not this vessel"
        warns.append(f"{where}: {' and '.join(lost)} not replayed: {why}")
    return _plain_step(step, calls)


def _kept_reasoning(step: Step, audience: Audience, where: str, warns: list[str]) -> Step:
    """The step with its reasoning, or without it (named in a warning) where its own vessel cannot take it
    back: a profile that takes none, or a provider that keeps nothing between requests while a piece
    lacks the field that carries it whole (Responses ``store: false`` without ``encrypted_content``)."""
    if not audience.takes_reasoning:
        why = "the vessel's profile takes none back (flag reasoning_content)"
    elif n := audience.unsealed(step.reasoning):
        why = (f"the vessel keeps nothing between requests and {n} of its {len(step.reasoning)} pieces "
               f"lack {audience.sealed}")  # fmt: skip
    else:
        return step
    warns.append(f"{where}: reasoning not replayed: {why}")
    return replace(step, said=tuple(p for p in step.said if not isinstance(p, Reasoning)))


def reply_steps(
    m: Message, calls: tuple[ReplayCall, ...], settings: ReplaySettings, reasoning: bool
) -> tuple[tuple[ReplayStep, ...], tuple[str, ...]]:
    """The replayed steps of reply ``m`` whose windowed calls are ``calls`` (the last ones), and warnings.

    Steps wholly before the window are left out; a step the window cuts keeps its calls inside the
    window and loses its reasoning (design 19). With ``reasoning`` (native mode), a step goes whole to its
    issuer (design 17); otherwise, and for every other vessel, without reasoning or signatures.
    """
    if settings.as_sent:
        return _whole_steps(m, calls), ()
    audience = settings.audience if reasoning else None
    first = len(m.tool_uses) - len(calls)  # the reply position of calls[0]
    out: list[ReplayStep] = []
    warns: list[str] = []
    pos = 0
    steps = m.steps or ((Step((), len(m.tool_uses)),) if m.tool_uses else ())
    last: Issuer | None = None
    allowed = False  # no issuer recorded: nothing provider-made goes back
    for k, step in enumerate(steps):
        end = pos + step.calls
        if step.calls and end <= first:
            pos = end
            continue
        kept = calls[max(pos, first) - first : end - first]
        if step.issuer is not last:  # a reply's steps share their issuer: ask the audience once
            last = step.issuer
            allowed = audience is not None and audience.accepts(last)
        if allowed and pos >= first and audience is not None and _whole(step, audience):
            out.append(ReplayStep(said=step.said, calls=kept))  # the common case: whole to its issuer
        else:
            where = f"message {m.id}: step {k + 1}"
            if allowed and audience is not None and step.reasoning:
                step = _kept_reasoning(step, audience, where, warns)
            out.append(_step_for(step, kept, pos < first, allowed, where, warns, settings.audience))
        pos = end
    return tuple(out), tuple(warns)


def _whole(step: Step, audience: Audience) -> bool:
    """Whether the step's own vessel takes its reasoning back as it is (see :func:`_kept_reasoning`)."""
    if audience.takes_reasoning and not audience.sealed:
        return True  # every piece goes back (``unsealed`` finds none lacking a field)
    reasoning = step.reasoning
    return not reasoning or (audience.takes_reasoning and not audience.unsealed(reasoning))


def prose_record(calls: Sequence[ReplayCall]) -> str:
    """The text record of a reply's calls used by the ``prose`` mode."""
    lines = ["[Tool calls made in the previous reply]"]
    for c in calls:
        lines.append(f"- {c.name}({c.arguments}) -> {c.answer}")
    return "\n".join(lines)


def _whole_steps(m: Message, calls: tuple[ReplayCall, ...]) -> tuple[ReplayStep, ...]:
    """Every step of ``m`` with all it said and its calls (an as-sent replay: the body reproduced)."""
    out: list[ReplayStep] = []
    pos = 0
    for step, made in m.step_calls():
        out.append(ReplayStep(step.said, calls[pos : pos + len(made)]))
        pos += len(made)
    return tuple(out)


def _replayable(m: Message, settings: ReplaySettings) -> bool:
    """Only finished replies with text are replayed; an interrupted or in-progress reply keeps its calls."""
    if m.role != "assistant" or settings.as_sent:
        return True
    if m.status != "complete":
        return bool(m.text) or bool(m.tool_uses) or bool(m.steps)
    return bool(m.text) or (bool(m.steps) and bool(flat_text(m))) or not settings.skip_textless


def prepare_turn_messages(
    history: History | Sequence[Message],
    mode: Mode = "native",
    *,
    upto: str | None = None,
    settings: ReplaySettings = DEFAULT_SETTINGS,
) -> list[TurnMessage]:
    """The turn messages of the next request for ``history`` (cut after message ``upto`` when given).

    A reply in progress or interrupted renders as it was made, whatever the mode (design 16): the model
    must see its own steps and results to continue, so the request ends with the last step's answers.
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
    for m in messages:
        stem = stem_of(m.id)
        if m.role != "assistant":
            text, parts = m.text, m.parts
            if pending and m.role == "user":
                record = "\n\n".join(pending)
                text = f"{record}\n\n{text}" if text else record
                parts = (Part("text", text=record), *parts) if parts else ()
                pending = []
            out.append(TurnMessage(role=m.role, message_id=m.id, text=text, vessel=m.vessel,
                                   provider_data=m.provider_data, parts=parts, sent=m.sent))  # fmt: skip
            continue
        if not _replayable(m, settings):
            continue
        if mode == "native" or m.status != "complete":
            out.append(_native_turn(m, stem, settings, reasoning=mode == "native"))
            continue
        if mode == "prose" and m.tool_uses:
            pending.append(prose_record(reply_calls(m, settings=settings, stem=stem)))
        out.append(TurnMessage(role="assistant", message_id=m.id, text=flat_text(m), vessel=m.vessel,
                               provider_data=m.provider_data, sent=m.sent))  # fmt: skip
    return out


def _native_turn(m: Message, stem: str, settings: ReplaySettings, *, reasoning: bool) -> TurnMessage:
    """A reply with its calls, step by step; a reply without a step record and without provider data
    (the common case) takes the short path: one step of all its calls, as before steps existed."""
    calls = reply_calls(m, settings=settings, stem=stem)
    if not m.steps and not any(c.provider_data for c in calls):
        return TurnMessage(role="assistant", message_id=m.id, text=m.text, calls=calls, vessel=m.vessel,
                           provider_data=m.provider_data, sent=m.sent)  # fmt: skip
    steps, warns = reply_steps(m, calls, settings, reasoning)
    flat = tuple(c for s in steps for c in s.calls)
    return TurnMessage(role="assistant", message_id=m.id, text=m.text, calls=flat, vessel=m.vessel,
                       provider_data=m.provider_data, steps=steps, warnings=warns, sent=m.sent)  # fmt: skip


__all__ = [
    "DEFAULT_SETTINGS",
    "MODES",
    "NO_ANSWER",
    "Mode",
    "ReplayCall",
    "ReplaySettings",
    "ReplayStep",
    "TurnMessage",
    "prepare_turn_messages",
    "reply_calls",
    "reply_steps",
    "split_system",
    "turn_steps",
]

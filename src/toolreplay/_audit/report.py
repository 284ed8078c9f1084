"""The audit of one request: which earlier calls it carries as calls, which only as text, which not at all.

:func:`audit_request` reads a request body with its wire's own parser (``toolreplay.wires.parse_request``)
and lists every call it carries in the wire's call shape (``found``). With a stored history it also says,
for every call the history holds (design 13):

* **as call**: a call in the wire's shape with the same name (the stored name, or the name the replay
  sends: ``mcp__coop__coop`` -> ``coop``, a name the wires cannot take mapped), the same input (the stored
  input, or the replay's ``input_excerpt`` of it) and an answer;
* **as text**: the call's tool name and every one of its input values appear in the text of one message
  that is not a tool result (a prose record, a summary the agent wrote);
* **missing**: neither.

Without a history it lists the calls found, and text passages that read like described calls (a prose
record ``coop({...}) -> ...``, a JSON call in text, "called the coop tool", a claim such as "Closed #12").
Either way it reports what the replay patched, so nothing changes silently: Gemini's dummy thought
signature, renamed tools, cut inputs (``input_excerpt``), cut answers, stand-in answers.

The claude-prompt wire carries calls as the ``calls`` of its JSON transcript lines inside the prompt (the
only shape the Claude Code CLI takes): those count as its call shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from toolreplay import _jsonenc as jsonenc
from toolreplay._audit.body import RequestBody
from toolreplay._audit.passages import MessageText, TextPassage, passages
from toolreplay._audit.reasoning import ReasoningPiece, format_reasoning, media_notes, reasoning_pieces
from toolreplay._history import History, Message, ToolCall
from toolreplay._replay import (
    DEFAULT_SETTINGS,
    NO_ANSWER,
    ReplayCall,
    ReplaySettings,
    replay_name,
    reply_calls,
)
from toolreplay.wires.common import wire_tool_name

if TYPE_CHECKING:
    from toolreplay._audit.template_audit import TemplateAudit

Fate = Literal["as call", "as text", "missing"]
_CUT = re.compile(r" …\[cut: (\d+) characters in all\]$")
_HASHED_NAME = re.compile(r"_[0-9a-f]{8}$")
#: How many characters of a long input value must appear for "as text" (a prose record may cut it).
VALUE_CHARS = 200


@dataclass(frozen=True, slots=True)
class FoundCall:
    """A call the request carries in its wire's call shape: where, what, and what the replay patched."""

    message: int
    position: int
    name: str
    input: Any
    answer: str | None
    call_id: str | None = None
    patches: tuple[str, ...] = ()
    kind: str = "function"  # custom: a free-form call, its text input its whole, normal input

    def as_json(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "position": self.position,
            "name": self.name,
            "input": self.input,
            "answered": self.answer is not None,
            "id": self.call_id,
            "patches": list(self.patches),
            **({"kind": self.kind} if self.kind != "function" else {}),
        }


@dataclass(frozen=True, slots=True)
class StoredCallFate:
    """What became of one stored call in the request."""

    message_id: str
    position: int
    name: str
    input_text: str
    fate: Fate
    where: str
    patches: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "position": self.position,
            "name": self.name,
            "input": self.input_text,
            "fate": self.fate,
            "where": self.where,
            "patches": list(self.patches),
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The audit of one request (see the module docstring)."""

    source: str
    wire: str
    wire_from: str
    messages: int
    found: tuple[FoundCall, ...]
    passages: tuple[TextPassage, ...]
    stored: tuple[StoredCallFate, ...] | None = None
    warnings: tuple[str, ...] = ()
    template: TemplateAudit | None = None
    """The chat template's audit, when a prompt template was given."""
    notes: tuple[str, ...] = field(default=())
    reasoning: tuple[ReasoningPiece, ...] = ()
    """The reasoning and signatures the body carries, per earlier reply (``_audit.reasoning``)."""
    paths: tuple[str, ...] = ()
    """Where each parsed message stands in the body (``messages[4]``): the one numbering of the report."""

    def at(self, message: int) -> str:
        """The body path of parsed message ``message`` (``_audit.positions``)."""
        return self.paths[message] if message < len(self.paths) else f"message {message}"

    def counts(self) -> tuple[int, int, int, int]:
        """``(calls, as calls, as text, missing)`` over the stored history's calls."""
        return fate_counts(self.stored or ())

    def summary(self) -> str:
        """``N calls: a as calls, b as text, c missing`` (with a history), else what was found."""
        if self.stored is None:
            return f"{len(self.found)} calls as calls; {len(self.passages)} text passages read like calls"
        n, a, b, c = self.counts()
        return f"{n} calls: {a} as calls, {b} as text, {c} missing"

    def patches(self) -> list[str]:
        out = [
            f"{self.at(f.message)}, call {f.position} ({f.name}): {p}" for f in self.found for p in f.patches
        ]
        for r in self.stored or ():
            out.extend(f"{r.message_id} call {r.position} ({r.name}): {p}" for p in r.patches)
        return out

    def as_json(self) -> dict[str, Any]:
        n, a, b, c = self.counts()
        out: dict[str, Any] = {
            "source": self.source,
            "wire": self.wire,
            "wire_from": self.wire_from,
            "messages": self.messages,
            "summary": self.summary(),
            "found": [{**f.as_json(), "at": self.at(f.message)} for f in self.found],
            "passages": [
                {
                    "message": p.message,
                    "at": self.at(p.message),
                    "role": p.role,
                    "kind": p.kind,
                    "excerpt": p.excerpt,
                }
                for p in self.passages
            ],
            "patches": self.patches(),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "reasoning": [{**p.as_json(), "at": self.at(p.message)} for p in self.reasoning],
        }
        if self.stored is not None:
            out["counts"] = {"calls": n, "as_call": a, "as_text": b, "missing": c}
            out["stored"] = [r.as_json() for r in self.stored]
        if self.template is not None:
            out["template"] = self.template.as_json()
        return out


# --------------------------------------------------------------------------------------------------
# reading the request


def _own_calls(found: Sequence[FoundCall]) -> dict[int, list[dict[str, Any]]]:
    """Per parsed message, its own calls (a claim they back is not a described call)."""
    out: dict[int, list[dict[str, Any]]] = {}
    for f in found:
        out.setdefault(f.message, []).append({"name": f.name, "input": f.input})
    return out


def _parsed(
    request: RequestBody, history: History | None = None
) -> tuple[list[FoundCall], list[MessageText], History]:
    """The calls and texts of ``request`` as its wire's parser reads it (``history``: that parse, when the
    caller has it already)."""
    from toolreplay.wires import parse_request

    if history is None:
        history = parse_request(request.wire, dict(request.body))
    found = []
    texts = []
    for i, m in enumerate(history.messages):
        if m.text:
            texts.append(MessageText(i, m.role, m.text))
        for k, c in enumerate(m.tool_uses):
            found.append(FoundCall(i, k, c.name, c.input, c.answer, c.call_id, kind=c.kind))
    return found, texts, history


def _call_patches(found: list[FoundCall], request: RequestBody, warnings: list[str]) -> list[FoundCall]:
    """The found calls with what the replay patched on each, read from the request alone."""
    from toolreplay.wires import get_wire

    notes_of = get_wire(request.wire).call_notes
    notes = notes_of(request.body) if notes_of is not None else {}
    excerpts = any("input_excerpt" in w for w in warnings)
    out: list[FoundCall] = []
    for n, f in enumerate(found):
        patches: list[str] = [notes[n]] if n in notes else []
        if isinstance(f.input, str) and f.kind != "custom":  # a free-form call's text is its input
            patches.append(
                "input cut to an excerpt (input_excerpt)" if excerpts else "input is not a JSON object"
            )
        elif isinstance(f.input, Mapping) and "input_excerpt" in f.input:
            patches.append("input cut to an excerpt (input_excerpt)")
        if f.answer == NO_ANSWER:
            patches.append("no answer was recorded: a stand-in answer is sent")
        elif f.answer is not None and (m := _CUT.search(f.answer)):
            patches.append(f"answer cut to {len(f.answer)} characters ({m.group(1)} in all)")
        if _HASHED_NAME.search(f.name):
            patches.append("tool name mapped for the wire (characters it forbids, or too long)")
        out.append(replace(f, patches=tuple(patches)))
    return out


# --------------------------------------------------------------------------------------------------
# comparing with the stored history


def _leaves(value: Any) -> Iterator[str]:
    """The text forms of an input's values (strings, numbers, booleans), depth first."""
    if isinstance(value, Mapping):
        for v in cast(Mapping[str, Any], value).values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, bool):
        yield "true" if value else "false"
    elif isinstance(value, (int, float)):
        yield jsonenc.dumps(value)
    elif isinstance(value, str) and value:
        yield value[:VALUE_CHARS]


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return value


def _in_text(text: str, needle: str) -> bool:
    if needle in text:
        return True
    return json.dumps(needle, ensure_ascii=False)[1:-1] in text


def _as_text(call: ToolCall, texts: Sequence[MessageText]) -> MessageText | None:
    names = {call.name, replay_name(call.name)}
    values = list(_leaves(_decoded(call.input)))
    for t in texts:
        if any(n in t.text for n in names) and all(_in_text(t.text, v) for v in values):
            return t
    return None


def _same_input(found: Any, stored: ToolCall, replayed: ReplayCall | None) -> bool:
    got = _decoded(found) if not isinstance(found, str) else found
    wanted = [_decoded(stored.input)]
    if replayed is not None:
        wanted.append(dict(replayed.input))
        if "input_excerpt" in replayed.input:
            wanted.append(replayed.input["input_excerpt"])
    return any(got == w for w in wanted) or (isinstance(got, str) and got == stored.input)


def _replay_forms(m: Message, settings: ReplaySettings) -> dict[int, ReplayCall]:
    """Position -> the replayed form of each call of ``m`` within the replay window."""
    start = max(0, len(m.tool_uses) - settings.max_calls)
    return {start + k: rc for k, rc in enumerate(reply_calls(m, settings=settings))}


def _match(
    call: ToolCall, replayed: ReplayCall | None, found: Sequence[FoundCall], used: set[int]
) -> int | None:
    names = {call.name, replay_name(call.name), wire_tool_name(replay_name(call.name))}
    if replayed is not None:
        names |= {replayed.name, wire_tool_name(replayed.name)}
    for i, f in enumerate(found):
        if i not in used and f.name in names and _same_input(f.input, call, replayed):
            return i
    return None


def _stored_patches(call: ToolCall, f: FoundCall) -> tuple[str, ...]:
    """What the request changed of the stored call that the request alone cannot show (its name)."""
    return (f"tool renamed {call.name!r} -> {f.name!r}",) if f.name != call.name else ()


def _fates(
    history: History,
    found: Sequence[FoundCall],
    texts: Sequence[MessageText],
    settings: ReplaySettings,
    at: Callable[[int], str],
    place_calls: bool = True,
) -> list[StoredCallFate]:
    """What became of each of ``history``'s calls; ``at`` names a parsed message by its body path. Without
    ``place_calls`` a call carried as a call is not placed (its ``where`` is empty): ``at`` is then called
    only for a call found as text."""
    used: set[int] = set()
    out: list[StoredCallFate] = []
    for m in history.messages:
        if m.role != "assistant" or not m.tool_uses:
            continue
        forms = _replay_forms(m, settings)
        for pos, call in enumerate(m.tool_uses):
            replayed = forms.get(pos)
            shown = call.input_text[:80]
            hit = _match(call, replayed, found, used)
            if hit is not None and found[hit].answer is not None:
                used.add(hit)
                f = found[hit]
                where = f"{at(f.message)}, call {f.position}" if place_calls else ""
                out.append(
                    StoredCallFate(m.id, pos, call.name, shown, "as call", where, _stored_patches(call, f))
                )
                continue
            t = _as_text(call, texts)
            if t is not None:
                out.append(
                    StoredCallFate(
                        m.id,
                        pos,
                        call.name,
                        shown,
                        "as text",
                        f"text of {at(t.message)} ({t.role})",
                    )
                )
                continue
            why = "present as a call but unanswered" if hit is not None else "not in the request"
            if replayed is None:
                why += f" (outside the replay window of {settings.max_calls} calls per reply)"
            out.append(StoredCallFate(m.id, pos, call.name, shown, "missing", why))
    return out


def audit_request(
    request: RequestBody,
    history: History | None = None,
    *,
    settings: ReplaySettings = DEFAULT_SETTINGS,
    template: str | Path | None = None,
    server: str = "transformers",
) -> AuditReport:
    """Audit ``request`` (see the module docstring); ``template`` a chat template path for Chat bodies."""
    from toolreplay._audit.positions import body_paths

    found, texts, parsed = _parsed(request)
    warnings = list(parsed.warnings)
    found = _call_patches(found, request, warnings)
    paths = body_paths(request.wire, request.body, len(parsed.messages))
    stored = None if history is None else tuple(_fates(history, found, texts, settings, paths.__getitem__))
    from toolreplay.wires import get_wire

    wire = get_wire(request.wire)
    at = dict(enumerate(paths)).__getitem__
    notes: list[str] = [*([wire.audit_note] if wire.audit_note else []), *media_notes(parsed, at)]
    tpl_audit = None
    if template is not None:
        from toolreplay._audit.template_audit import template_audit
        from toolreplay._errors import ConfigError

        if not wire.chat_template:
            raise ConfigError(
                f"--prompt-template: chat templates render Chat bodies (vLLM, llama.cpp, transformers), "
                f"not {request.wire}"
            )
        tpl_audit = template_audit(request.body, template, server)
    return AuditReport(
        source=request.source,
        wire=request.wire,
        wire_from=request.wire_from,
        messages=len(parsed.messages),
        found=tuple(found),
        passages=tuple(passages(texts, _own_calls(found))),
        paths=tuple(paths),
        stored=stored,
        warnings=tuple(warnings),
        template=tpl_audit,
        notes=tuple(notes),
        reasoning=reasoning_pieces(parsed),
    )


def stored_fates(
    request: RequestBody, parsed: History, history: History, settings: ReplaySettings
) -> tuple[StoredCallFate, ...]:
    """What became of each of ``history``'s calls in ``request``, whose parse ``parsed`` the caller has
    (the proxy's live audit, design 44): as :func:`audit_request` finds them, but a call carried as a call
    is not placed (its ``where`` is empty) and the body paths, a parse of every prefix of the body, are
    worked out only when a call is found as text."""
    from toolreplay._audit.positions import body_paths

    found, texts, _ = _parsed(request, parsed)
    paths: list[str] = []

    def at(message: int) -> str:
        if not paths:
            paths.extend(body_paths(request.wire, request.body, len(parsed.messages)))
        return paths[message]

    return tuple(_fates(history, found, texts, settings, at, place_calls=False))


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else jsonenc.dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_audit(report: AuditReport) -> str:
    """The audit as the lines ``toolreplay audit`` prints."""
    how = {"given": "as given", "dump": "named by the dump", "shape": "read from the body's shape"}
    known = how.get(report.wire_from, report.wire_from)
    lines = [f"{report.source}: {report.wire} ({known}), {report.messages} messages"]
    lines.append(report.summary())
    if report.stored is not None:
        for r in report.stored:
            lines.append(
                f"  {r.message_id} call {r.position}  {r.name} {_short(r.input_text)}  {r.fate}: {r.where}"
            )
    else:
        for f in report.found:
            answered = "answered" if f.answer is not None else "NOT answered"
            lines.append(
                f"  {report.at(f.message)} call {f.position}  {f.name} {_short(f.input)}  ({answered})"
            )
    if report.passages and report.stored is None:
        lines.append("text that reads like described calls:")
        lines.extend(f"  {report.at(p.message)} ({p.role}) {p.kind}: {p.excerpt}" for p in report.passages)
    patches = report.patches()
    lines.append("patched by the replay:" if patches else "patched by the replay: nothing")
    lines.extend(f"  - {p}" for p in patches)
    lines.extend(format_reasoning(report.reasoning, report.at))
    lines.extend(f"note: {n}" for n in report.notes)
    lines.extend(f"warning: {w}" for w in report.warnings)
    if report.template is not None:
        from toolreplay._audit.template_audit import format_template_audit

        lines.append(format_template_audit(report.template))
    return "\n".join(lines)


def fate_counts(rows: Sequence[StoredCallFate]) -> tuple[int, int, int, int]:
    """``(calls, as calls, as text, missing)`` of ``rows``."""
    fates = [r.fate for r in rows]
    return len(fates), fates.count("as call"), fates.count("as text"), fates.count("missing")


__all__ = [
    "AuditReport",
    "FoundCall",
    "StoredCallFate",
    "TextPassage",
    "audit_request",
    "fate_counts",
    "format_audit",
]

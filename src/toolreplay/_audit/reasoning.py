"""What reasoning a request body carries back to the provider, reply by reply (design 17).

A body read with its wire's parser keeps every piece of reasoning and every signature verbatim, in the
step of the reply it belongs to (design 16): Anthropic ``thinking`` blocks (with their ``signature``) and
``redacted_thinking`` blocks, Responses ``reasoning`` items (with their ``id`` and ``encrypted_content``)
and the ``fc_...`` item ids of the calls beside them, Chat ``reasoning_content`` / ``reasoning`` /
``reasoning_details`` and Mistral's ``thinking`` content parts, Ollama's ``thinking``, Gemini thought
parts and ``thoughtSignature`` on call and text parts, and the pieces of tools a provider ran itself.

:func:`reasoning_pieces` lists them, each with where it travels (the reply, its step, before its calls, on
a call, on the final words) and what it holds; the audit prints them and puts them in its JSON. The
pieces are told apart by the fields the providers gave them, so the listing needs no wire's insides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from toolreplay._history import History, Message
from toolreplay._steps import Piece, Reasoning, ServerTool, Step, Text

#: The fields that hold what only the provider can read: a signature, encrypted reasoning.
_SIGNATURE_KEYS = ("signature", "thoughtSignature", "thought_signature", "encrypted_content")


@dataclass(frozen=True, slots=True)
class ReasoningPiece:
    """One piece of reasoning or one signature a body carries: the reply (its position among the body's
    messages as read, and its id), the step (1-based), where in the step, the wire's namespace, what it
    is, and whether it is sealed by the provider (a signature or encrypted content)."""

    message: int
    message_id: str
    step: int
    where: str
    wire: str
    kind: str
    signed: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "message_id": self.message_id,
            "step": self.step,
            "where": self.where,
            "wire": self.wire,
            "kind": self.kind,
            "signed": self.signed,
        }

    def line(self, at: Callable[[int], str] | None = None) -> str:
        """One line; ``at`` names the reply by its place in the body (the audit's one numbering)."""
        place = at(self.message) if at else f"message {self.message}"
        return f"  {place} ({self.message_id}) step {self.step}, {self.where}: {self.kind}"


def _chars(value: Any) -> str:
    n = len(value) if isinstance(value, (str, list)) else 0
    return f"{n:,} characters" if isinstance(value, str) else f"{n} entr{'y' if n == 1 else 'ies'}"


def _sealed(d: Mapping[str, Any]) -> bool:
    return any(isinstance(d.get(k), str) and d.get(k) for k in _SIGNATURE_KEYS)


def _signature_note(d: Mapping[str, Any]) -> str:
    for k in _SIGNATURE_KEYS:
        v = d.get(k)
        if isinstance(v, str) and v:
            return f", {k} ({_chars(v)})"
    return ", unsigned"


def describe(d: Mapping[str, Any]) -> str:
    """What one piece of provider data is, from the fields the provider gave it."""
    kind = d.get("type")
    if kind == "thinking":
        return f"thinking block ({_chars(d.get('thinking'))}){_signature_note(d)}"
    if kind == "redacted_thinking":
        return f"redacted_thinking block (data {_chars(d.get('data'))})"
    if kind == "reasoning":
        summary = d.get("summary")
        parts = f", summary of {_chars(summary)}" if isinstance(summary, list) and summary else ""
        return f"reasoning item {d.get('id') or '(no id)'}{parts}{_signature_note(d)}"
    if d.get("thought") is True:
        return f"thought part ({_chars(d.get('text'))}){_signature_note(d)}"
    if isinstance(d.get("content_part"), Mapping):
        return "thinking content part (in the message's content)"
    fields = [
        f"{k} ({_chars(d[k])})"
        for k in ("reasoning_content", "reasoning", "reasoning_details", "thinking")
        if isinstance(d.get(k), (str, list)) and d.get(k)
    ]
    if fields:
        return " and ".join(fields) + " on the message"
    return f"provider data ({', '.join(sorted(d)) or 'empty'})"


def _piece_rows(p: Piece) -> list[tuple[str, str, bool]]:
    """``(wire, kind, signed)`` of each namespace of one step piece."""
    out: list[tuple[str, str, bool]] = []
    for wire, raw in (p.data or {}).items():
        d = cast(Mapping[str, Any], raw) if isinstance(raw, Mapping) else {}
        if isinstance(p, Text):
            out.append((wire, f"data on the words{_signature_note(d)}", _sealed(d)))
        elif isinstance(p, ServerTool):
            out.append((wire, f"a piece of a tool the provider ran itself ({p.text or 'part'})", False))
        else:
            out.append((wire, describe(d), _sealed(d)))
    return out


def _call_rows(m: Message, first: int, n: int) -> list[tuple[str, str, str, bool]]:
    """``(where, wire, kind, signed)`` of the provider data on a step's calls."""
    out: list[tuple[str, str, str, bool]] = []
    for k, c in enumerate(m.tool_uses[first : first + n], start=first):
        for wire, raw in (c.provider_data or {}).items():
            d = cast(Mapping[str, Any], raw) if isinstance(raw, Mapping) else {}
            for key, value in d.items():
                what = f"item id {value}" if key == "item_id" else f"{key} ({_chars(value)})"
                out.append((f"on call {k} ({c.name})", wire, what, key != "item_id"))
    return out


def _step_pieces(i: int, m: Message, k: int, step: Step, first: int) -> list[ReasoningPiece]:
    where = "before its calls" if step.calls else "with the final words"
    out = [
        ReasoningPiece(i, m.id, k, where, wire, kind, signed)
        for p in step.said
        if isinstance(p, (Reasoning, ServerTool)) or p.data
        for wire, kind, signed in _piece_rows(p)
    ]
    out.extend(
        ReasoningPiece(i, m.id, k, at, wire, kind, signed)
        for at, wire, kind, signed in _call_rows(m, first, step.calls)
    )
    return out


def reasoning_pieces(history: History | Sequence[Message]) -> tuple[ReasoningPiece, ...]:
    """Every piece of reasoning and every signature the replies of a body (read as a history) carry."""
    messages = history.messages if isinstance(history, History) else tuple(history)
    out: list[ReasoningPiece] = []
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        first = 0
        for k, (step, _calls) in enumerate(m.step_calls(), start=1):
            out.extend(_step_pieces(i, m, k, step, first))
            first += step.calls
    return tuple(out)


def format_reasoning(pieces: Sequence[ReasoningPiece], at: Callable[[int], str] | None = None) -> list[str]:
    """The audit's lines for what reasoning the body carries."""
    if not pieces:
        return ["reasoning carried: none"]
    replies = len({p.message for p in pieces})
    signed = sum(p.signed for p in pieces)
    head = f"reasoning carried: {len(pieces)} piece{'s' if len(pieces) != 1 else ''} in {replies} repl"
    head += f"{'y' if replies == 1 else 'ies'} ({signed} signed or encrypted):"
    return [head, *(f"{p.line(at)} [{p.wire}]" for p in pieces)]


def media_notes(history: History, at: Callable[[int], str] | None = None) -> list[str]:
    """One short line per image or document of the user's that the body carries (design 34): what it is,
    its type and size or its URL, never its data; ``at`` names the message by its place in the body."""
    return [
        f"{at(i) if at else f'message {m.id}'} (user) holds {'an' if p.kind == 'image' else 'a'} {p.label()}"
        for i, m in enumerate(history.messages)
        for p in m.parts
        if p.kind != "text"
    ]


__all__ = ["ReasoningPiece", "describe", "format_reasoning", "media_notes", "reasoning_pieces"]

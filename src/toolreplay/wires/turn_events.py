"""The neutral events a wire's request reader makes of a body (:mod:`toolreplay.wires.turns` assembles them
into stored turns): a system or user message, what the agent said and called, the answers it got."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolreplay.model import CallKind, Part, Piece, Reasoning, Sent, ServerTool, Text


@dataclass(slots=True)
class Call:
    """A call as a body carries it. ``provider_data`` is namespaced by wire (``{"gemini": {...}}``)."""

    name: str
    input: Any
    call_id: str | None = None
    provider_data: dict[str, Any] | None = None
    kind: CallKind = "function"
    sent: Sent | None = None
    """How the call stood in its body (``ToolCall.sent``); its answer's ``Result.sent`` is merged in."""


@dataclass(slots=True)
class Result:
    """An answer as a body carries it; ``where`` names the body field for warnings. ``sent``: how the
    answer stood in its body, merged into its call's ``sent`` (keys of the wire's choosing)."""

    answer: str
    call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    where: str = ""
    parts: tuple[Part, ...] = ()
    sent: Sent | None = None


@dataclass(slots=True)
class SystemText:
    """A system (or developer) message, kept where it stood; ``sent`` as on :class:`UserText`."""

    text: str
    where: str = ""
    sent: Sent | None = None


@dataclass(slots=True)
class UserText:
    """A user message. ``meta`` keeps annotations that are not sent (e.g. a simulated user's own calls)."""

    text: str
    where: str = ""
    created_at: str | None = None
    meta: dict[str, Any] | None = None
    parts: tuple[Part, ...] = ()
    """The message's content in order when it holds images or documents (``Message.parts``)."""
    sent: Sent | None = None
    """How the message stood in its body (``Message.sent``)."""


@dataclass(slots=True)
class AgentSaid:
    """One assistant message: what it holds in order (words, reasoning pieces kept verbatim, words with
    provider data such as a Gemini signature, calls), and its message-level provider data."""

    parts: list[SaidPart]
    where: str = ""
    provider_data: dict[str, Any] | None = None
    created_at: str | None = None
    sent: Sent | None = None
    """How this body message stood (per wire): a stored reply of several body messages keeps them in
    order, ``Message.sent[wire]["messages"]`` (one mapping per body message, ``{}`` for none)."""

    @property
    def calls(self) -> list[Call]:
        return [p for p in self.parts if isinstance(p, Call)]

    @property
    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text for p in self.parts if isinstance(p, str | Text))

    def said(self) -> tuple[Piece, ...]:
        """Everything but the calls, in order, as step pieces (plain strings become words)."""
        out: list[Piece] = []
        for p in self.parts:
            if isinstance(p, str):
                if p:
                    out.append(Text(p))
            elif not isinstance(p, Call):
                out.append(p)
        return tuple(out)


@dataclass(slots=True)
class Answers:
    """The answers one body message carries (a tool message, a user message of tool results)."""

    results: list[Result]
    where: str = ""


Event = SystemText | UserText | AgentSaid | Answers
#: What an assistant message holds, in order: words, calls, reasoning kept whole, words with data.
SaidPart = str | Call | Reasoning | ServerTool | Text


__all__ = ["AgentSaid", "Answers", "Call", "Event", "Result", "SaidPart", "SystemText", "UserText"]

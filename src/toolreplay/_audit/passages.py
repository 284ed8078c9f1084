"""Text passages that read like described calls: a prose record ``coop({...}) -> ...``, a JSON call in text,
"called the coop tool", a claim such as "Closed #12" that the message's own calls do not back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from toolreplay import _jsonenc as jsonenc


@dataclass(frozen=True, slots=True)
class MessageText:
    """The words of one message of the parsed request."""

    message: int
    role: str
    text: str


@dataclass(frozen=True, slots=True)
class TextPassage:
    """A passage of a message's text that reads like a described call (``kind`` says how)."""

    message: int
    role: str
    kind: str
    excerpt: str


_FUNC_SYNTAX = re.compile(r"\b([A-Za-z_][\w.-]{0,63})\(\s*(\{)")
_CALLED = re.compile(
    r"\b(?:called|calling|invoked|invoking|used|using|ran|running)\s+(?:the\s+)?`?([A-Za-z_][\w.-]{1,63})`?"
    r"\s+(?:tool|function)\b",
    re.IGNORECASE,
)


def _json_at(text: str, start: int) -> Any:
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        return None
    return value


def _excerpt(text: str, start: int, end: int) -> str:
    piece = text[start : min(end, start + 160)].replace("\n", " ")
    return piece + ("…" if end - start > 160 else "")


def _passages_in(t: MessageText, own: Mapping[int, Sequence[Mapping[str, Any]]]) -> Iterator[TextPassage]:
    from toolreplay._claims import unsupported_claims

    text = t.text
    for m in _FUNC_SYNTAX.finditer(text):
        if isinstance(_json_at(text, m.start(2)), dict):
            end = text.find("\n", m.start())
            yield TextPassage(
                t.message, t.role, "call syntax", _excerpt(text, m.start(), end if end > 0 else len(text))
            )
    for i, ch in enumerate(text):
        if ch != "{":
            continue
        value = _json_at(text, i)
        if isinstance(value, dict):
            keys = set(cast(dict[str, Any], value))
            if keys & {"name", "tool", "tool_name", "function"} and keys & {
                "arguments",
                "input",
                "args",
                "parameters",
            }:
                yield TextPassage(
                    t.message, t.role, "JSON call", _excerpt(text, i, i + len(jsonenc.dumps(value)))
                )
    for m in _CALLED.finditer(text):
        yield TextPassage(t.message, t.role, "says it called", _excerpt(text, m.start(), m.end() + 60))
    if t.role == "assistant":  # a claim its own message's calls do not back
        for c in unsupported_claims(text, list(own.get(t.message, ()))):
            yield TextPassage(t.message, t.role, f"claims {c.tool} {c.action}", c.sentence[:160])


def passages(
    texts: Sequence[MessageText], own: Mapping[int, Sequence[Mapping[str, Any]]]
) -> list[TextPassage]:
    out: list[TextPassage] = []
    for t in texts:
        # a system prompt tells the agent how to call its tools ("using the `invoke_agent` tool..."): an
        # instruction, never a call described as text (Gemini CLI's own prompt read as one)
        if t.role != "system":
            out.extend(_passages_in(t, own))
    return out


__all__ = ["MessageText", "TextPassage", "passages"]

"""What a provider answered, in one neutral shape every wire's response parser produces (the ``Wire``
contract's ``parse_response`` and stream parsers return a :class:`Reply`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolreplay.model import CallKind, Piece, Usage


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """A tool call the model made in this answer.

    ``input`` is the decoded JSON object; when the provider sent arguments that are not a JSON object
    (broken JSON), ``input`` is the raw text and ``input_error`` says what was wrong, so the caller can
    store the call as made and answer it with an error instead of crashing. ``provider_data`` holds what
    must be echoed back later, namespaced by wire (e.g. ``{"gemini": {"thoughtSignature": "..."}}``).
    """

    name: str
    input: Any
    call_id: str | None = None
    provider_data: Mapping[str, Any] | None = None
    input_error: str | None = None
    kind: CallKind = "function"
    """``custom``: a free-form call (``input`` is its raw text, not an error)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """One answer: its text, the calls it made, why it stopped, usage, and message-level provider data
    (e.g. Responses reasoning items, Anthropic thinking blocks, Kimi ``reasoning_content``).

    ``said`` is what the model produced before its calls, in order: its reasoning (kept verbatim for its
    issuer, design 17) and its text pieces. Empty when the parser records no pieces: ``text`` then stands.
    """

    text: str = ""
    calls: tuple[ParsedCall, ...] = ()
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    provider_data: Mapping[str, Any] | None = None
    model: str | None = None
    said: tuple[Piece, ...] = ()


def add_usage(a: Usage, b: Usage) -> Usage:
    """The usage of two requests of one turn, summed (a count one side lacks is the other's)."""

    def plus(x: int | None, y: int | None) -> int | None:
        return y if x is None else x if y is None else x + y

    return Usage(
        plus(a.input_tokens, b.input_tokens),
        plus(a.output_tokens, b.output_tokens),
        plus(a.cached_tokens, b.cached_tokens),
        plus(a.cache_write_tokens, b.cache_write_tokens),
    )


USAGE_FIELDS = ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens")


def usage_json(u: Usage) -> dict[str, int]:
    out = {k: getattr(u, k) for k in USAGE_FIELDS}
    return {k: v for k, v in out.items() if v is not None}


__all__ = ["USAGE_FIELDS", "ParsedCall", "Reply", "Usage", "add_usage", "usage_json"]

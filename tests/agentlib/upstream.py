"""What an upstream request carries, read per wire as JSON: its calls, their answers, the reasoning and
signatures sent back. For routed runs (``toolreplay proxy --route``), where the double receives the
upstream's wire, not the agent's, and a test checks the translation in the upstream's own terms.

Read here, not through toolreplay's parsers, so the check does not share a mistake with the code it
checks (a call flattened into text is no call here, whatever the neutral reader would make of it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolreplay.wires.bridge import TOKEN_PREFIX, base64_token


@dataclass(frozen=True, slots=True)
class Carried:
    """One request's history in the upstream's shape: ``calls`` as (id, name) in order (id None where the
    wire has none: Gemini), ``results`` the ids (or, on Gemini, names) answered, ``reasoning`` the texts of
    reasoning sent back, ``signatures`` the signatures / encrypted reasoning sent back."""

    calls: list[tuple[str | None, str]] = field(default_factory=lambda: [])
    results: list[str | None] = field(default_factory=lambda: [])
    reasoning: list[str] = field(default_factory=lambda: [])
    signatures: list[str] = field(default_factory=lambda: [])


def _dicts(value: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(value, list):
        yield from (v for v in value if isinstance(v, Mapping))


def _chat(body: Mapping[str, Any], out: Carried) -> None:
    for m in _dicts(body.get("messages")):
        if m.get("role") == "assistant":
            for c in _dicts(m.get("tool_calls")):
                out.calls.append((c.get("id"), str((c.get("function") or {}).get("name"))))
            if isinstance(m.get("reasoning_content"), str) and m["reasoning_content"]:
                out.reasoning.append(m["reasoning_content"])
        elif m.get("role") == "tool":
            out.results.append(m.get("tool_call_id"))


def _anthropic(body: Mapping[str, Any], out: Carried) -> None:
    for m in _dicts(body.get("messages")):
        for b in _dicts(m.get("content")):
            kind = b.get("type")
            if kind == "tool_use":
                out.calls.append((b.get("id"), str(b.get("name"))))
            elif kind == "tool_result":
                out.results.append(b.get("tool_use_id"))
            elif kind == "thinking":
                out.reasoning.append(str(b.get("thinking", "")))
                out.signatures.append(str(b.get("signature", "")))
            elif kind == "redacted_thinking":
                out.signatures.append(str(b.get("data", "")))


def _gemini(body: Mapping[str, Any], out: Carried) -> None:
    for c in _dicts(body.get("contents")):
        for p in _dicts(c.get("parts")):
            if isinstance(p.get("functionCall"), Mapping):
                call = p["functionCall"]
                out.calls.append((call.get("id"), str(call.get("name"))))
            if isinstance(p.get("functionResponse"), Mapping):
                answer = p["functionResponse"]
                out.results.append(answer.get("id") or answer.get("name"))
            if p.get("thought") is True and isinstance(p.get("text"), str):
                out.reasoning.append(p["text"])
            if isinstance(p.get("thoughtSignature"), str):
                out.signatures.append(p["thoughtSignature"])


_CALLS = ("function_call", "custom_tool_call")
_RESULTS = ("function_call_output", "custom_tool_call_output")


def _responses(body: Mapping[str, Any], out: Carried) -> None:
    for item in _dicts(body.get("input")):
        kind = item.get("type")
        if kind in _CALLS:
            out.calls.append((item.get("call_id"), str(item.get("name"))))
        elif kind in _RESULTS:
            out.results.append(item.get("call_id"))
        elif kind == "reasoning":
            out.reasoning.extend(str(s.get("text", "")) for s in _dicts(item.get("summary")))
            if isinstance(item.get("encrypted_content"), str):
                out.signatures.append(item["encrypted_content"])


_READERS = {"openai-chat": _chat, "anthropic": _anthropic, "gemini": _gemini, "openai-responses": _responses}


def carried(wire: str, body: Any) -> Carried:
    """What ``body`` (a request on ``wire``) carries; a wire without a reader here is a KeyError."""
    out = Carried()
    if isinstance(body, Mapping):
        _READERS[wire](body, out)
    return out


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


#: What every token of the proxy's holds, as sent and in its base64 form (Gemini's signatures).
_MARKS = (TOKEN_PREFIX, base64_token(TOKEN_PREFIX)[:16])


def tokens_in(body: Any) -> list[str]:
    """Every string in ``body`` that holds one of the proxy's reasoning tokens (plain or base64, whole or
    inside other text): a token is what the proxy shows an agent in place of a signature, and must never
    reach a provider, not even packed into some other field."""
    return [s for s in _strings(body) if any(m in s for m in _MARKS)]


__all__ = ["Carried", "carried", "tokens_in"]

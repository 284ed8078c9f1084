"""What ``toolreplay proxy --repair`` puts back on a Chat body (design 46): a thinking model's
``reasoning_content`` on the assistant tool-call messages the agent sent without it (Moonshot's 400
"thinking is enabled but reasoning_content is missing in assistant tool call message at index N",
DeepSeek's "Missing reasoning_content field in the assistant message at message index N"); and an answer
to each call the agent sent without one (OpenAI's 400 "An assistant message with 'tool_calls' must be
followed by tool messages responding to each 'tool_call_id'")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import History, Issuer, Reasoning
from toolreplay.wires.contract import NO_ANSWER, Insertion

_FIELD = "reasoning_content"


def _reasoning_of(piece: Reasoning) -> str:
    data = (piece.data or {}).get("openai-chat")
    value = data.get(_FIELD) if isinstance(data, Mapping) else None
    return value if isinstance(value, str) else ""


def _reasoning_by_call(stored: History, issuer: Issuer) -> dict[str, str]:
    """Each stored call id -> the reasoning its step's issuer (this wire, this upstream) gave before it."""
    out: dict[str, str] = {}
    for m in stored.messages:
        for step, calls in m.step_calls():
            if step.issuer is None or (step.issuer.wire, step.issuer.host) != (issuer.wire, issuer.host):
                continue
            text = "".join(_reasoning_of(p) for p in step.said if isinstance(p, Reasoning))
            for c in calls:
                if c.call_id and text:
                    out[c.call_id] = text
    return out


def reasoning_back(elements: Sequence[Any], stored: History, issuer: Issuer) -> list[Insertion]:
    """An insertion for each assistant tool-call message without ``reasoning_content`` whose calls the
    store holds with their issuer's reasoning."""
    known = _reasoning_by_call(stored, issuer)
    out: list[Insertion] = []
    for i, m in enumerate(elements):
        if not (isinstance(m, Mapping) and m.get("role") == "assistant" and m.get("tool_calls")):
            continue
        if isinstance(m.get(_FIELD), str):
            continue
        first = m["tool_calls"][0] if isinstance(m["tool_calls"], list) else None
        cid = first.get("id") if isinstance(first, Mapping) else None
        text = known.get(cid) if isinstance(cid, str) else None
        if text:
            piece = f'"{_FIELD}":'.encode() + jsonenc.encode(text) + b","
            out.append(
                Insertion(i, piece, f"messages[{i}]: reasoning_content put back ({len(text):,} characters)")
            )
    return out


def _call_ids(m: Any) -> list[str]:
    calls = m.get("tool_calls") if isinstance(m, Mapping) and m.get("role") == "assistant" else None
    ids = (c.get("id") for c in calls if isinstance(c, Mapping)) if isinstance(calls, list) else ()
    return [i for i in ids if isinstance(i, str) and i]


def orphans_answered(elements: Sequence[Any], stored: History, issuer: Issuer) -> list[Insertion]:
    """A tool message saying no answer was recorded for each call of an assistant message that the tool
    messages right after it do not answer, put after them (where OpenAI looks for it)."""
    out: list[Insertion] = []
    for i, m in enumerate(elements):
        ids = _call_ids(m)
        end = i + 1
        while (
            end < len(elements) and isinstance(elements[end], Mapping) and elements[end].get("role") == "tool"
        ):
            if elements[end].get("tool_call_id") in ids:
                ids.remove(elements[end]["tool_call_id"])
            end += 1
        for cid in ids:
            data = jsonenc.encode({"role": "tool", "tool_call_id": cid, "content": NO_ANSWER})
            note = f"messages[{i}]: call {cid} answered: {NO_ANSWER}"
            out.append(Insertion(end, data, note, how="before"))
    return out


__all__ = ["orphans_answered", "reasoning_back"]

"""What ``toolreplay proxy --repair`` puts back on a Chat body (design 46): a thinking model's
``reasoning_content`` on the assistant tool-call messages the agent sent without it (Moonshot's 400
"thinking is enabled but reasoning_content is missing in assistant tool call message at index N",
DeepSeek's "Missing reasoning_content field in the assistant message at message index N")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import History, Issuer, Reasoning
from toolreplay.wires.contract import Insertion

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


__all__ = ["reasoning_back"]

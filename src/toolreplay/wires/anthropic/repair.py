"""What ``toolreplay proxy --repair`` mends on an Anthropic body (design 46), each as the smallest edit:

* a ``tool_result`` saying no answer was recorded for each ``tool_use`` the next message does not answer
  (Anthropic's 400 "`tool_use` ids were found without `tool_result` blocks immediately after");
* a thinking block another model issued (by the store's issuer records), or a signature no provider made
  (a router's placeholder), taken out, the reply's words and calls kept (Anthropic's 400 "Invalid
  `signature` in `thinking` block");
* with thinking on, the thinking blocks the model wrote before its calls put back from the store where the
  agent dropped them (Anthropic's "a final `assistant` message must start with a thinking block", and
  DeepSeek's Anthropic endpoint, which wants them back on every tool-call message).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import History, Issuer, Reasoning
from toolreplay.wires.anthropic.render import WIRE
from toolreplay.wires.anthropic.signatures import placeholder_signature
from toolreplay.wires.contract import NO_ANSWER, Insertion

_THINKING = ("thinking", "redacted_thinking")


def _blocks(m: Any, role: str) -> list[Any]:
    content = m.get("content") if isinstance(m, Mapping) and m.get("role") == role else None
    return [b if isinstance(b, Mapping) else {} for b in content] if isinstance(content, list) else []


def _ids(blocks: list[Any], kind: str, key: str) -> list[str]:
    return [b[key] for b in blocks if b.get("type") == kind and isinstance(b.get(key), str)]


def orphans_answered(elements: Sequence[Any], stored: History, issuer: Issuer) -> list[Insertion]:
    """A ``tool_result`` for each unanswered ``tool_use``: after the results opening the next user
    message, or as a user message of its own before the next message (the server merges it with a user
    message after it) when that one has no list of blocks."""
    out: list[Insertion] = []
    for i in range(len(elements) - 1):  # a call in the last message is the agent's prefill, not an orphan
        nxt = _blocks(elements[i + 1], "user")
        answered = _ids(nxt, "tool_result", "tool_use_id")
        missing = [c for c in _ids(_blocks(elements[i], "assistant"), "tool_use", "id") if c not in answered]
        if not missing:
            continue
        results = [
            {"type": "tool_result", "tool_use_id": c, "content": NO_ANSWER, "is_error": True} for c in missing
        ]
        note = f"messages[{i}]: call(s) {', '.join(missing)} answered: {NO_ANSWER}"
        if nxt:
            lead = next((k for k, b in enumerate(nxt) if b.get("type") != "tool_result"), len(nxt))
            data = b",".join(jsonenc.encode(r) for r in results)
            out.append(Insertion(i + 1, data, note, within="content", at=lead, how="before"))
        else:
            data = jsonenc.encode({"role": "user", "content": results})
            out.append(Insertion(i + 1, data, note, how="before"))
    return out


def _seal(block: Mapping[str, Any]) -> str:
    value = block.get("signature") if block.get("type") == "thinking" else block.get("data")
    return value if isinstance(value, str) else ""


def _issued(stored: History) -> dict[str, Issuer | None]:
    """Each stored thinking block's signature (or redacted data) -> the issuer of its step."""
    out: dict[str, Issuer | None] = {}
    for m in stored.messages:
        for step in m.steps:
            for p in step.said:
                data = (p.data or {}).get(WIRE) if isinstance(p, Reasoning) else None
                if isinstance(data, Mapping) and (seal := _seal(data)):
                    out[seal] = step.issuer
    return out


def _dated(a: str, b: str) -> bool:
    """``a`` is ``b``'s dated snapshot (``claude-sonnet-4-5-20250929``): the same model (design 17)."""
    tail = a.removeprefix(b + "-")
    return tail != a and tail.replace("-", "").isdigit() and len(tail.replace("-", "")) == 8


def same_model(a: str, b: str) -> bool:
    """Whether two model names are one model: equal, or one the other's dated snapshot."""
    return a == b or _dated(a, b) or _dated(b, a)


def _ours(who: Issuer | None, issuer: Issuer) -> bool:
    return who is None or (
        (who.wire, who.host) == (issuer.wire, issuer.host) and same_model(who.model, issuer.model)
    )


def foreign_out(elements: Sequence[Any], stored: History, issuer: Issuer) -> list[Insertion]:
    """Each thinking block of an assistant message that another model issued (the store says so) or whose
    signature is a placeholder, taken out; a message left with nothing else keeps it."""
    issued = _issued(stored)
    out: list[Insertion] = []
    for i, m in enumerate(elements):
        blocks = _blocks(m, "assistant")
        gone = []
        for k, b in enumerate(blocks):
            seal = _seal(b) if b.get("type") in _THINKING else None
            if seal is None:
                continue
            if (b.get("type") == "thinking" and placeholder_signature(seal)) or not _ours(
                issued.get(seal), issuer
            ):
                gone.append(k)
        if len(gone) == len(blocks):
            continue  # an empty message is refused too; the audit names it
        for k in gone:
            who = issued.get(_seal(blocks[k]))
            whose = f"{who.model} at {who.host}" if who is not None else "no provider (a placeholder)"
            note = f"messages[{i}].content[{k}]: a {blocks[k]['type']} block {whose} issued taken out"
            out.append(Insertion(i, b"", note, within="content", at=k, how="remove"))
    return out


def _thinking_by_call(stored: History, issuer: Issuer) -> dict[str, list[Mapping[str, Any]]]:
    """Each stored call id -> the thinking blocks its step's issuer (this upstream, this model) wrote."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for m in stored.messages:
        for step, calls in m.step_calls():
            if step.issuer is None or not _ours(step.issuer, issuer):
                continue
            pieces = [(p.data or {}).get(WIRE) for p in step.said if isinstance(p, Reasoning)]
            blocks = [d for d in pieces if isinstance(d, Mapping) and d.get("type") in _THINKING]
            for c in calls:
                if c.call_id and blocks:
                    out[c.call_id] = blocks
    return out


def thinking_back(
    body: Mapping[str, Any], elements: Sequence[Any], stored: History, issuer: Issuer
) -> list[Insertion]:
    """With thinking on, the stored thinking blocks put back at the start of each assistant tool-call
    message the agent sent without any (found by the first call's id)."""
    thinking = body.get("thinking")
    if not (isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")):
        return []
    known = _thinking_by_call(stored, issuer)
    out: list[Insertion] = []
    for i, m in enumerate(elements):
        blocks = _blocks(m, "assistant")
        calls = _ids(blocks, "tool_use", "id")
        if not calls or any(b.get("type") in _THINKING for b in blocks) or calls[0] not in known:
            continue
        data = b",".join(jsonenc.encode(dict(b)) for b in known[calls[0]])
        note = f"messages[{i}]: {len(known[calls[0]])} thinking block(s) put back"
        out.append(Insertion(i, data, note, within="content", at=0, how="before"))
    return out


__all__ = ["foreign_out", "orphans_answered", "thinking_back"]

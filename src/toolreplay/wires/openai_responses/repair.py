"""What ``toolreplay proxy --repair`` puts back on a Responses body (design 46): an output for each call
the agent sent without one (OpenAI's 400 "No tool output found for function call call_..."), and on a
``store: false`` request the ``encrypted_content`` of a bare ``rs_`` reasoning item, from the store, or
the item taken out when the store has none (OpenAI's "Item with id 'rs_...' not found. Items are not
persisted when `store` is set to false")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import History, Issuer, Reasoning
from toolreplay.wires.contract import NO_ANSWER, Insertion
from toolreplay.wires.openai_responses.render import WIRE


def _kind(item: Any) -> Any:
    return item.get("type") if isinstance(item, Mapping) else None


def orphans_answered(elements: Sequence[Any], stored: History, issuer: Issuer) -> list[Insertion]:
    """A ``function_call_output`` saying no answer was recorded for each call no output answers, put
    after the outputs that follow its run of calls."""
    answered = {o.get("call_id") for o in elements if _kind(o) == "function_call_output"}
    out: list[Insertion] = []
    i = 0
    while i < len(elements):
        if _kind(elements[i]) != "function_call":
            i += 1
            continue
        start = i
        while i < len(elements) and _kind(elements[i]) == "function_call":
            i += 1
        calls = [c.get("call_id") for c in elements[start:i]]
        while i < len(elements) and _kind(elements[i]) == "function_call_output":
            i += 1
        for cid in calls:
            if isinstance(cid, str) and cid and cid not in answered:
                data = jsonenc.encode({"type": "function_call_output", "call_id": cid, "output": NO_ANSWER})
                out.append(Insertion(i, data, f"input: call {cid} answered: {NO_ANSWER}", how="before"))
    return out


def _sealed(stored: History, issuer: Issuer) -> dict[str, str]:
    """Each stored reasoning item's id -> its ``encrypted_content``, of what this upstream issued."""
    out: dict[str, str] = {}
    for m in stored.messages:
        for step in m.steps:
            if step.issuer is not None and (step.issuer.wire, step.issuer.host) != (issuer.wire, issuer.host):
                continue
            for p in step.said:
                data = (p.data or {}).get(WIRE) if isinstance(p, Reasoning) else None
                if isinstance(data, Mapping) and data.get("id") and data.get("encrypted_content"):
                    out[str(data["id"])] = str(data["encrypted_content"])
    return out


def sealed_back(
    body: Mapping[str, Any], elements: Sequence[Any], stored: History, issuer: Issuer
) -> list[Insertion]:
    """On ``store: false``: each reasoning item without ``encrypted_content`` gets it back from the store
    (found by its id), or is taken out when the store has none (the server could not read it anyway)."""
    if body.get("store") is not False:
        return []
    sealed = _sealed(stored, issuer)
    out: list[Insertion] = []
    for i, item in enumerate(elements):
        if _kind(item) != "reasoning" or item.get("encrypted_content"):
            continue
        rid = str(item.get("id") or "")
        if rid in sealed:
            data = b'"encrypted_content":' + jsonenc.encode(sealed[rid]) + b","
            out.append(Insertion(i, data, f"input[{i}]: encrypted_content put back on {rid}"))
        else:
            note = (
                f"input[{i}]: reasoning item {rid} taken out (store: false, and no encrypted_content stored)"
            )
            out.append(Insertion(i, b"", note, how="remove"))
    return out


__all__ = ["orphans_answered", "sealed_back"]

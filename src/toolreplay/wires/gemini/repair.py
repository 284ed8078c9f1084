"""What ``toolreplay proxy --repair`` puts back on a Gemini body (design 46): the ``thoughtSignature`` a
call carried when Gemini made it, on the ``functionCall`` part the agent sent without it (Gemini 3's 400
"Function call is missing a thought_signature in functionCall parts")."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import History, Issuer
from toolreplay.wires.contract import Insertion
from toolreplay.wires.gemini.signatures import either_case


def _canonical(value: Any) -> str:
    """Arguments compared as values, whatever their key order."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _signed_calls(stored: History, issuer: Issuer) -> list[tuple[str, str, str]]:
    """``(name, arguments JSON, signature)`` of every stored call its issuer (this upstream) signed."""
    out: list[tuple[str, str, str]] = []
    for m in stored.messages:
        for step, calls in m.step_calls():
            if step.issuer is not None and (step.issuer.wire, step.issuer.host) != (issuer.wire, issuer.host):
                continue
            for c in calls:
                data = (c.provider_data or {}).get("gemini")
                sig = data.get("thoughtSignature") if isinstance(data, Mapping) else None
                if isinstance(sig, str) and sig:
                    out.append((c.name, _canonical(c.input), sig))
    return out


def signatures_back(elements: Sequence[Any], stored: History, issuer: Issuer) -> list[Insertion]:
    """An insertion for each unsigned ``functionCall`` part that the store holds signed, matched by its
    name and arguments in order (Gemini's calls carry no ids)."""
    signed = _signed_calls(stored, issuer)
    out: list[Insertion] = []
    for i, content in enumerate(elements):
        parts = content.get("parts") if isinstance(content, Mapping) else None
        for k, part in enumerate(parts if isinstance(parts, list) else []):
            call = either_case(part, "functionCall", "function_call") if isinstance(part, Mapping) else None
            if not isinstance(call, Mapping) or either_case(part, "thoughtSignature", "thought_signature"):
                continue
            key = (call.get("name"), _canonical(call.get("args") or {}))
            found = next((n for n, s in enumerate(signed) if (s[0], s[1]) == key), None)
            if found is None:
                continue
            sig = signed.pop(found)[2]
            data = b'"thoughtSignature":' + jsonenc.encode(sig) + b","
            note = f"contents[{i}].parts[{k}]: thoughtSignature put back on {key[0]}"
            out.append(Insertion(i, data, note, within="parts", at=k))
    return out


__all__ = ["signatures_back"]

"""The live audit of one request against the conversation it continues (design 44).

Reuses the audit of :mod:`toolreplay._audit.report` (every earlier call carried as a call, as text, or
missing; no replay bounds: the proxy's requests are the agent's own, design 21) and adds what only a
stored conversation can tell, per reply the request and the store both hold:

* reasoning or signatures its issuer (this wire, this upstream) gave that the request no longer carries;
* reasoning or signatures the request carries that the store never had from this upstream (another
  model's, a placeholder);
* calls whose ids changed since the store had them (each changed id misses the provider's prompt cache);
* calls without answers and answers without calls (the parser's own warnings);
* reasoning sent without the field its provider reads it from (Responses' ``encrypted_content`` on
  ``store: false``).

Each problem is one short line; :class:`LiveAudit` also counts them for the log.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolreplay._history import History, Message
from toolreplay._issuers import same_model
from toolreplay._steps import Issuer, Reasoning, Text

_SEALS = ("signature", "thoughtSignature", "thought_signature", "encrypted_content", "reasoning_content")
#: No replay bounds for the audit of an agent's own request (design 21).
_UNBOUNDED = 1 << 30


@dataclass(frozen=True, slots=True)
class LiveAudit:
    """What the audit found: the counts the log keeps and one line per problem."""

    counts: Mapping[str, int] = field(default_factory=lambda: {})
    lines: tuple[str, ...] = ()


def _sealed_values(data: Mapping[str, Any] | None, wire: str) -> Iterator[str]:
    inner = (data or {}).get(wire)
    if isinstance(inner, Mapping):
        for k in _SEALS:
            v = inner.get(k)
            if isinstance(v, str) and v:
                yield v


def _other(step: Issuer | None, issuer: Issuer | None, model: bool) -> bool:
    """Whether a step's issuer is not ``issuer`` (by wire and host; by its model too when ``model``)."""
    if issuer is None or step is None:
        return False
    if (step.wire, step.host) != (issuer.wire, issuer.host):
        return True
    return model and bool(issuer.model) and not same_model(step.model, issuer.model)


def _message_seals(m: Message, wire: str, issuer: Issuer | None, model: bool = False) -> set[str]:
    """The signatures and sealed reasoning a reply carries for ``wire`` (only what ``issuer`` issued,
    when given; and only what its model issued, when ``model``)."""
    out: set[str] = set()
    for step in m.steps:
        if _other(step.issuer, issuer, model):
            continue
        for p in step.said:
            if isinstance(p, Reasoning | Text):
                out.update(_sealed_values(p.data, wire))
    for c in m.tool_uses:
        out.update(_sealed_values(c.provider_data, wire))
    return out


def _reasoning_lines(stored: Message, sent: Message, wire: str, issuer: Issuer) -> tuple[list[str], int, int]:
    kept = _message_seals(stored, wire, issuer)
    carried = _message_seals(sent, wire, None)
    dropped = len(kept - carried)
    # foreign: what the store never had on this reply from this upstream's model (another model's, a
    # placeholder); a reply first seen in a request has no known issuer: what it carried then is not
    # foreign now
    foreign = len(carried - _message_seals(stored, wire, issuer, model=True))
    lines = []
    if dropped:
        lines.append(
            f"{stored.id}: {dropped} reasoning piece(s) or signature(s) {issuer.host} issued were dropped"
        )
    if foreign:
        lines.append(
            f"{stored.id}: {foreign} reasoning piece(s) or signature(s) "
            f"{' '.join(filter(None, (issuer.host, issuer.model)))} never issued are sent"
        )
    return lines, dropped, foreign


def _id_lines(stored: Message, sent: Message) -> list[str]:
    out = []
    for k, (a, b) in enumerate(zip(stored.tool_uses, sent.tool_uses, strict=False)):
        if a.call_id and b.call_id and a.call_id != b.call_id and a.name == b.name:
            out.append(
                f"{stored.id} call {k} ({a.name}): id changed {a.call_id} -> {b.call_id} (prompt cache miss)"
            )
    return out


def _orphan_lines(request: History) -> list[str]:
    marks = ("has no answer in the body", "an answer with no", "an answer for unknown call id")
    return [f"orphan: {w}" for w in request.warnings if any(m in w for m in marks)]


def _unsealed_lines(body: Mapping[str, Any], wire: str, request: History) -> list[str]:
    """Reasoning sent without the field its provider reads it from when it keeps nothing between
    requests (Responses on ``store: false``, the vessel flag ``store_false``: ``encrypted_content``)."""
    from toolreplay.wires import get_wire

    flag, key = get_wire(wire).sealed_reasoning
    if flag != "store_false" or body.get("store") is not False:
        return []
    out = []
    for m in request.messages:
        bare = [
            p for s in m.steps for p in s.said if isinstance(p, Reasoning) and not _has(p.data, wire, key)
        ]
        if bare:
            out.append(f"{m.id}: {len(bare)} reasoning item(s) sent without {key} on store: false")
    return out


def _has(data: Mapping[str, Any] | None, wire: str, key: str) -> bool:
    inner = (data or {}).get(wire)
    return isinstance(inner, Mapping) and bool(inner.get(key))


def audit(
    body: Mapping[str, Any],
    wire: str,
    request: History,
    stored: History | None,
    holds: int,
    issuer: Issuer,
) -> LiveAudit:
    """The audit of a request (its body and its parse) against ``stored``'s first ``holds`` messages."""
    from toolreplay._audit.body import RequestBody
    from toolreplay._audit.report import fate_counts, stored_fates
    from toolreplay._replay import ReplaySettings

    lines = _orphan_lines(request)
    unsealed = _unsealed_lines(body, wire, request)
    counts: dict[str, int] = {"orphans": len(lines), "unsealed": len(unsealed)}
    lines += unsealed
    if stored is None:
        return LiveAudit(counts, tuple(lines))
    settings = ReplaySettings(max_calls=_UNBOUNDED, max_chars=_UNBOUNDED, skip_textless=False)
    # the request as the recorder parsed it, not parsed again; the body paths only for a call as text
    fates = stored_fates(RequestBody(body, wire, "request", "given"), request, stored, settings)
    n, as_call, as_text, missing = fate_counts(fates)
    counts |= {"calls": n, "as_call": as_call, "as_text": as_text, "missing": missing}
    for r in fates:
        if r.fate != "as call":
            lines.append(f"{r.message_id} call {r.position} ({r.name}) {r.fate}: {r.where}")
    dropped = foreign = 0
    seen = [m for m in stored.messages if not (isinstance(m.meta, Mapping) and m.meta.get("cut"))]
    for old, new in zip(seen[:holds], request.messages[:holds], strict=False):
        if old.role != "assistant" or new.role != "assistant":
            continue
        more, d, f = _reasoning_lines(old, new, wire, issuer)
        lines += more
        dropped, foreign = dropped + d, foreign + f
        lines += _id_lines(old, new)
    counts |= {"reasoning_dropped": dropped, "reasoning_foreign": foreign}
    counts["ids_changed"] = sum(1 for line in lines if ": id changed " in line)
    return LiveAudit(counts, tuple(lines))


__all__ = ["LiveAudit", "audit"]

"""``claude-code``: a Claude Code session file (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is an entry: ``{"type": "user"|"assistant"|"summary"|"system"|..., "message": {"role",
"content"}, "uuid", "parentUuid", "timestamp", "sessionId", "isSidechain", ...}``. The ``message`` is an
Anthropic Messages message, read with the Anthropic wire's own reader: ``tool_use`` blocks, ``tool_result``
blocks in the next user entries, ``thinking`` blocks kept with their signatures. Tool names are kept as
stored (``mcp__coop__coop``; the replay renames MCP tools).

Claude Code writes one entry per content block of a streamed answer, all with the same ``message.id``:
consecutive assistant entries with one ``message.id`` are one assistant message (text beside its calls).

Skipped, and counted in a warning: sidechain entries (a sub-agent's own conversation), meta entries
(``isMeta``: caveats and command output the CLI injects; ``isCompactSummary``), synthetic API-error
entries, and entries that are not messages (``summary``, ``system``, ``file-history-snapshot``...).
``timestamp`` is kept as ``created_at``. The conversation id is the session id (``--conversation``
overrides it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from toolreplay._errors import ImportFormatError, WireError
from toolreplay._importers._source import Document, Format, Reading, broken_warnings, kind_of, pick
from toolreplay._vessels import public_issuer
from toolreplay.wires import get_wire
from toolreplay.wires.turns import Event, assemble

NAME = "claude-code"
#: The wire of the messages a session's entries hold: Claude Code talks to Anthropic's Messages API.
WIRE = "anthropic"
_ENTRY_KEYS = ("uuid", "sessionId", "parentUuid", "leafUuid", "messageId")
#: Entry types that carry none of the keys above (a session file may open with many of them).
_BOOKKEEPING = frozenset({"summary", "file-history-snapshot", "queue-operation"})
#: How far into the file ``auto`` looks for the first message entry.
SNIFF_LINES = 200


def _is_entry(v: Any) -> bool:
    if not isinstance(v, Mapping) or not isinstance(v.get("type"), str):
        return False
    return v["type"] in _BOOKKEEPING or any(k in v for k in _ENTRY_KEYS)


def sniff(doc: Document) -> str | None:
    """None when ``doc`` is a Claude Code session file, else why not."""
    if doc.not_json is not None:
        return doc.not_json
    if doc.kind == "json":
        return "a single JSON document, not JSON Lines of session entries"
    for rec in doc.records[:SNIFF_LINES]:
        v = rec.value
        if not _is_entry(v):
            return (
                f"line {rec.line}: {kind_of(v)} without 'type' and 'uuid'/'sessionId' (not a session entry)"
            )
        if v.get("type") in ("user", "assistant") and isinstance(v.get("message"), Mapping):
            return None
    return f"no user or assistant entry with a 'message' in the first {SNIFF_LINES} lines"


def _skip_reason(v: Mapping[str, Any]) -> str | None:
    kind = v.get("type")
    if kind not in ("user", "assistant"):
        return f"{kind} entries"
    if v.get("isSidechain") is True:
        return "sidechain entries (a sub-agent's conversation)"
    if v.get("isMeta") is True or v.get("isCompactSummary") is True:
        return "meta entries (injected by the CLI)"
    if v.get("isApiErrorMessage") is True:
        return "API-error entries (written by the CLI, not the model)"
    return None


def _messages(doc: Document, skipped: Counter[str]) -> list[tuple[dict[str, Any], str, str | None]]:
    """``(message, where, timestamp)`` in file order, streamed blocks of one message merged."""
    out: list[tuple[dict[str, Any], str, str | None]] = []
    last_id: str | None = None
    for rec in doc.records:
        v = rec.value
        where = f"line {rec.line}"
        if not isinstance(v, Mapping):
            skipped["lines that are not entries"] += 1
            continue
        e = cast(Mapping[str, Any], v)
        reason = _skip_reason(e)
        if reason:
            skipped[reason] += 1
            continue
        msg = e.get("message")
        if not isinstance(msg, Mapping) or msg.get("role") not in ("user", "assistant"):
            raise ImportFormatError(f"{doc.source} {where}: message is missing or has no user/assistant role")
        m = cast(Mapping[str, Any], msg)
        ts = e.get("timestamp")
        content = m.get("content")
        blocks: list[Any] = (
            list(content)
            if isinstance(content, list)
            else [{"type": "text", "text": content}]
            if isinstance(content, str) and content
            else []
        )
        mid = m.get("id") if m.get("role") == "assistant" else None
        if mid is not None and mid == last_id and out:
            out[-1][0]["content"].extend(blocks)  # another streamed block of the same answer
            continue
        last_id = mid if isinstance(mid, str) else None
        out.append(({"role": m["role"], "content": blocks}, where, ts if isinstance(ts, str) else None))
    return out


def _model(doc: Document) -> str:
    """The model the session's first answer names (Claude Code writes it on every assistant entry)."""
    for r in doc.records:
        msg = r.value.get("message") if isinstance(r.value, Mapping) else None
        model = msg.get("model") if isinstance(msg, Mapping) and msg.get("role") == "assistant" else None
        if isinstance(model, str) and model != "<synthetic>":  # the CLI's own notes name no model
            return model
    return ""


def read(doc: Document, conversation: str | None) -> Reading:
    """The session's one conversation (``conversation`` renames it)."""
    skipped: Counter[str] = Counter()
    warnings: list[str] = []
    events: list[Event] = []
    form = get_wire(WIRE).importing
    message_events = form.message_events if form is not None else None
    assert message_events is not None, f"the {WIRE} wire reads no single messages"
    for msg, where, ts in _messages(doc, skipped):
        try:
            events.extend(message_events(msg, where, warnings, ts))
        except WireError as exc:
            raise ImportFormatError(f"{doc.source} {where}: {exc}") from None
    session = next(
        (
            r.value.get("sessionId")
            for r in doc.records
            if isinstance(r.value, Mapping) and r.value.get("sessionId")
        ),
        None,
    )
    cid = session if isinstance(session, str) else doc.path.stem
    # Claude Code talks to Anthropic's API; its thinking goes back only to that model (design 17)
    issuer = public_issuer(WIRE, _model(doc))
    h = assemble(events, conversation_id=cid, warnings=warnings, issuer=issuer)
    notes = broken_warnings(doc)
    if skipped:
        counts = ", ".join(f"{n} {why}" for why, n in sorted(skipped.items()))
        notes.append(f"{doc.source}: skipped {counts}")
    h = replace(h, warnings=tuple(f"{doc.source} {w}" for w in h.warnings))
    return Reading(pick(doc, [h], conversation, many=False), tuple(notes))


FORMAT = Format(NAME, "a Claude Code session file (~/.claude/projects/.../<session>.jsonl)", sniff, read)

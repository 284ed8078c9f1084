"""The ``toolreplay`` format: the stored history's own file format (see :mod:`toolreplay._history`).

A JSON document (``{"id", "tools"?, "messages"}`` or a list of messages), JSON Lines with one message per
line (one conversation), or JSON Lines with one conversation per line. Validation is the history's own
(:func:`toolreplay._history.history_from_dict`): a malformed file is refused with one line naming the file,
the message index and id, and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from toolreplay._history import ROLES, History, history_from_dict
from toolreplay._importers._source import Document, Format, Reading, broken_warnings, kind_of, pick

NAME = "toolreplay"


def _own_parts(parts: Any) -> bool:
    """Whether a message's ``parts`` are this format's (a user's content in order, each entry with its
    ``kind``), not a Gemini message's (``{"text"}``, ``{"functionCall"}``...)."""
    return isinstance(parts, list) and all(isinstance(p, Mapping) and "kind" in p for p in parts)


def _why_not_messages(msgs: Any, where: str) -> str | None:
    if not isinstance(msgs, list):
        return f"{where} is {kind_of(msgs)}, not a list of messages"
    for i, m in enumerate(msgs):
        at = f"{where}[{i}]"
        if not isinstance(m, Mapping):
            return f"{at} is {kind_of(m)}, not a message object"
        md = cast(Mapping[str, Any], m)
        if "id" not in md:
            return f"{at} has no 'id'"
        if not isinstance(md.get("role"), str) or md.get("role") not in ROLES:
            return f"{at}.role is {md.get('role')!r}, not user, assistant or system"
        for wire_key in ("content", "parts", "tool_calls"):
            if wire_key in md and not (wire_key == "parts" and _own_parts(md["parts"])):
                return (
                    f"{at} has {wire_key!r} (a provider's message shape; this format has 'text', 'tool_uses')"
                )
    return None


def _conversation_lines(doc: Document) -> bool:
    first = doc.first()
    return first is not None and isinstance(first.value, Mapping) and "messages" in first.value


def sniff(doc: Document) -> str | None:
    """None when ``doc`` is in the toolreplay format, else the first failing line and field."""
    if doc.not_json is not None:
        return doc.not_json
    if doc.kind == "json":
        value = doc.records[0].value
        if isinstance(value, Mapping):
            if "messages" not in value:
                return "the object has no 'messages' list"
            return _why_not_messages(value.get("messages"), "messages")
        return _why_not_messages(value, "the list")
    if _conversation_lines(doc):
        rec = doc.records[0]
        why = _why_not_messages(cast(Mapping[str, Any], rec.value).get("messages"), "messages")
        return f"line {rec.line}: {why}" if why else None
    for rec in doc.records[:20]:
        why = _why_not_messages([rec.value], "message")
        if why:
            return f"line {rec.line}: {why.replace('message[0]', 'the message')}"
    return None


#: Message keys only toolreplay's own format uses (a wire keeps a message's words in content/parts).
_OWN_KEYS = ("text", "tool_uses")


def _messages_of(doc: Document) -> list[Any]:
    """The message entries of ``doc``'s first conversation, however the file holds them."""
    if doc.kind == "json":
        value = doc.records[0].value
        msgs = value.get("messages") if isinstance(value, Mapping) else value
        return msgs if isinstance(msgs, list) else []
    if _conversation_lines(doc):
        msgs = cast(Mapping[str, Any], doc.records[0].value).get("messages")
        return msgs if isinstance(msgs, list) else []
    return [rec.value for rec in doc.records[:20]] if doc.kind == "jsonl" else []


def claims(doc: Document) -> bool:
    """Whether ``doc`` is shaped as this format: a message carries ``text`` or ``tool_uses``.

    No wire has those keys on a message, so another format would read such a file by dropping them (a
    Chat reading stored the user's words as "" and left an assistant message out, silently).
    """
    return any(isinstance(m, Mapping) and any(k in m for k in _OWN_KEYS) for m in _messages_of(doc))


def read(doc: Document, conversation: str | None) -> Reading:
    """The conversations of a toolreplay file (``conversation``: see :func:`pick`)."""
    stem = doc.path.stem
    warnings = broken_warnings(doc)
    if doc.kind == "json":
        h = history_from_dict(doc.records[0].value, source=doc.source, default_id=stem)
        return Reading(pick(doc, [h], conversation, many=False), tuple(warnings))
    if _conversation_lines(doc):
        found: list[History] = [
            history_from_dict(rec.value, source=doc.at(rec), default_id=f"{stem}-{rec.line}")
            for rec in doc.records
        ]
        return Reading(pick(doc, found, conversation, many=True), tuple(warnings))
    h = history_from_dict([rec.value for rec in doc.records], source=doc.source, default_id=stem)
    return Reading(pick(doc, [h], conversation, many=False), tuple(warnings))


FORMAT = Format(NAME, "toolreplay's own history file (JSON, or JSON Lines of messages or conversations)",
                sniff, read, claims=claims)  # fmt: skip

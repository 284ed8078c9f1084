"""The store's row codec and import plan, shared by the backends (pure: no connection here).

A message is one row of ``messages`` and its calls rows of ``tool_uses`` (see
:mod:`toolreplay._store.schema`); the functions below turn values into the parameters of the shared
INSERTs and query results back into values, and decide what an import writes (:func:`plan_import`), so
every backend follows the same rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import HistoryError, StoreError
from toolreplay._history import ROLES, STATUSES, History, Message, Status, ToolCall, ToolSpec, tool_to_dict
from toolreplay._steps_codec import (
    parts_from,
    parts_to_json,
    sent_from,
    sent_json,
    steps_from,
    steps_problem,
    steps_to_json,
)
from toolreplay.model import Part, RequestSettings, Sent, Step

MessageRow = tuple[Any, ...]
"""``(id, role, text, status, created_at, vessel, provider_data, meta, steps, parts, sent)``
(:data:`LOAD_MESSAGES`)."""
ToolUseRow = tuple[Any, ...]
"""``(message_id, name, input, answer, call_id, is_error, provider_data, parts, kind, sent)``
(:data:`LOAD_TOOL_USES`)."""


def json_text(value: Mapping[str, Any] | None) -> str | None:
    """A mapping column's text (``None`` stays NULL; an empty mapping is kept as ``{}``)."""
    return None if value is None else jsonenc.dumps(dict(value))


_LONG_NUMBER = re.compile(r"[0-9]{19}")


def _holds_float(value: Any) -> bool:
    """Whether a parsed JSON value holds a float anywhere (iterative: orjson nests deeper than Python's
    recursion limit allows)."""
    if type(value) is float:
        return True
    stack = [value]
    while stack:
        v = stack.pop()
        for x in v.values() if type(v) is dict else v if type(v) is list else ():
            t = type(x)
            if t is float:
                return True
            if t is dict or t is list:
                stack.append(x)
    return False


def loads(text: str) -> Any:
    """Parse a stored JSON column exactly.

    orjson (fast), except that orjson reads an integer beyond 64 bits as a float, which would change a
    stored input and its replayed bytes: when its result holds a float and the text a run of 19+ digits,
    the stdlib parses it instead. (Walking the parsed value is cheaper than searching every text.)
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    if _holds_float(value) and _LONG_NUMBER.search(text) is not None:
        return json.loads(text)
    return value


def json_value(text: str | None) -> Any:
    return None if text is None else loads(text)


def tools_text(tools: Sequence[ToolSpec] | None) -> str | None:
    """The ``tools`` column: the file form of each declaration (``kind``, ``sent`` only when set)."""
    if tools is None:
        return None
    return jsonenc.dumps([tool_to_dict(t) for t in tools])


def tools_value(text: str | None) -> tuple[ToolSpec, ...] | None:
    if text is None:
        return None
    return tuple(
        ToolSpec(t["name"], t["description"], t["parameters"], t.get("kind", "function"), t.get("sent"))
        for t in loads(text)
    )


def sent_text(sent: Sent | None) -> str | None:
    """A ``sent`` column: NULL when the element carried nothing beyond the neutral fields."""
    return None if sent is None else jsonenc.dumps(sent_json(sent))


def sent_value(text: str | None) -> Sent | None:
    return None if text is None else sent_from(loads(text), "sent")


def requests_text(requests: Sequence[RequestSettings]) -> str | None:
    """The ``conversations.requests`` column: each recorded request's settings, oldest first."""
    return jsonenc.dumps([r.as_json() for r in requests]) if requests else None


def requests_value(text: str | None) -> tuple[RequestSettings, ...]:
    if text is None:
        return ()
    return tuple(RequestSettings(r["wire"], r.get("fields") or {}, r.get("after")) for r in loads(text))


def input_text(call: ToolCall) -> str:
    """The stored JSON text of a call's input. A string input is stored as a JSON string, so raw text
    (a cut-short input) and the object it resembles stay distinguishable."""
    return jsonenc.dumps(call.input)


def message_row(conversation_id: str, position: int, m: Message) -> tuple[Any, ...]:
    """The parameters of :data:`INSERT_MESSAGE` for ``m``."""
    return (
        conversation_id,
        position,
        m.id,
        m.role,
        m.text,
        m.status,
        m.created_at,
        m.vessel,
        json_text(m.provider_data),
        json_text(m.meta),
        steps_text(m.steps),
        parts_text(m.parts),
        sent_text(m.sent),
    )


def tool_use_rows(
    conversation_id: str, message_id: str, calls: Iterable[ToolCall], start: int = 0
) -> list[tuple[Any, ...]]:
    """The parameters of :data:`INSERT_TOOL_USE` for ``calls``, numbered from ``start``."""
    return [
        (
            conversation_id,
            message_id,
            start + k,
            c.name,
            input_text(c),
            c.answer,
            c.call_id,
            int(c.is_error),
            json_text(c.provider_data),
            parts_text(c.parts),
            None if c.kind == "function" else c.kind,
            sent_text(c.sent),
        )
        for k, c in enumerate(calls)
    ]


def steps_text(steps: Sequence[Step]) -> str | None:
    """The ``steps`` column of a reply: NULL when it has no step record."""
    return jsonenc.dumps(steps_to_json(steps)) if steps else None


def steps_value(text: str | None, n_calls: int) -> tuple[Step, ...]:
    """A stored step record; one that no longer fits the reply's calls (calls recorded after it) is
    ignored, so the reply reads as one step of all its calls rather than failing to load."""
    if text is None:
        return ()
    try:
        return steps_from(loads(text), n_calls)
    except HistoryError:
        return ()


def parts_text(parts: Sequence[Part]) -> str | None:
    """The ``parts`` column of a call or a user message: NULL when its answer, or the message, is text
    only."""
    return jsonenc.dumps(parts_to_json(parts)) if parts else None


def parts_value(text: str | None) -> tuple[Part, ...]:
    return () if text is None else parts_from(loads(text))


def tool_call_from_row(row: ToolUseRow) -> ToolCall:
    _mid, name, text, answer, call_id, is_error, pdata, parts, kind, sent = row
    value = loads(text)
    # The stored text is the input's JSON text, so it is reused as the call's ``input_text`` (serialized
    # once, when stored); a string input's ``input_text`` is the string itself.
    return ToolCall(
        name=name,
        input=value,
        answer=answer,
        call_id=call_id,
        is_error=bool(is_error),
        provider_data=json_value(pdata),
        input_text="" if isinstance(value, str) else text,
        parts=parts_value(parts),
        kind=kind or "function",
        sent=sent_value(sent),
    )


def message_from_row(row: MessageRow, calls: Sequence[ToolCall] = ()) -> Message:
    mid, role, text, status, created_at, vessel, pdata, meta, steps, parts, sent = row
    return Message(
        id=mid,
        role=role,
        text=text,
        tool_uses=tuple(calls),
        created_at=created_at,
        vessel=vessel,
        provider_data=json_value(pdata),
        status=status,
        meta=json_value(meta),
        steps=steps_value(steps, len(calls)),
        parts=parts_value(parts),
        sent=sent_value(sent),
    )


def history_from_rows(
    conversation_id: str,
    tools: str | None,
    message_rows: Iterable[MessageRow],
    tool_rows: Iterable[ToolUseRow],
    requests: str | None = None,
) -> History:
    """A :class:`History` from one query per table (tool rows grouped by message, in position order).

    The same values as :func:`message_from_row` and :func:`tool_call_from_row` row by row, inlined: a load
    builds tens of thousands of them (NULL JSON columns are not parsed; each input's stored text is reused
    as its ``input_text``).
    """
    calls: dict[str, list[ToolCall]] = {}
    group: list[ToolCall] = []
    last: str | None = None
    parse = loads
    call = ToolCall
    for mid, name, text, answer, call_id, is_error, pdata, parts, kind, sent in tool_rows:
        if mid != last:
            group = calls.setdefault(mid, [])
            last = mid
        value = parse(text)
        group.append(
            call(
                name,
                value,
                answer,
                call_id,
                bool(is_error),
                None if pdata is None else parse(pdata),
                "" if type(value) is str else text,
                () if parts is None else parts_value(parts),
                kind or "function",
                None if sent is None else sent_value(sent),
            )
        )
    message = Message
    empty: list[ToolCall] = []
    messages = tuple(
        message(
            mid,
            role,
            text,
            mcalls := tuple(calls.get(mid, empty)),
            created_at,
            vessel,
            None if pdata is None else parse(pdata),
            status,
            None if meta is None else parse(meta),
            () if steps is None else steps_value(steps, len(mcalls)),
            () if parts is None else parts_value(parts),
            None if sent is None else sent_value(sent),
        )
        for mid, role, text, status, created_at, vessel, pdata, meta, steps, parts, sent in message_rows
    )
    return History(conversation_id, messages, tools_value(tools), requests=requests_value(requests))


def _call_differences(i: int, old: ToolCall, new: ToolCall) -> list[str]:
    out: list[str] = []
    if old.name != new.name:
        out.append(f"tool_uses[{i}].name")
    if input_text(old) != input_text(new):
        out.append(f"tool_uses[{i}].input")
    for attr in ("answer", "call_id", "is_error", "kind"):
        if getattr(old, attr) != getattr(new, attr):
            out.append(f"tool_uses[{i}].{attr}")
    if json_text(old.provider_data) != json_text(new.provider_data):
        out.append(f"tool_uses[{i}].provider_data")
    if parts_text(old.parts) != parts_text(new.parts):
        out.append(f"tool_uses[{i}].parts")
    if sent_text(old.sent) != sent_text(new.sent):
        out.append(f"tool_uses[{i}].sent")
    return out


def message_differences(old: Message, new: Message) -> list[str]:
    """The fields in which ``new`` differs from the stored ``old`` (JSON fields compared as stored text)."""
    out = [
        a for a in ("role", "text", "status", "created_at", "vessel") if getattr(old, a) != getattr(new, a)
    ]
    for attr in ("provider_data", "meta"):
        if json_text(getattr(old, attr)) != json_text(getattr(new, attr)):
            out.append(attr)
    if steps_text(old.steps) != steps_text(new.steps):
        out.append("steps")
    if parts_text(old.parts) != parts_text(new.parts):
        out.append("parts")
    if sent_text(old.sent) != sent_text(new.sent):
        out.append("sent")
    if len(old.tool_uses) != len(new.tool_uses):
        out.append(f"tool_uses (stored {len(old.tool_uses)} calls, given {len(new.tool_uses)})")
    else:
        for i, (a, b) in enumerate(zip(old.tool_uses, new.tool_uses, strict=True)):
            out.extend(_call_differences(i, a, b))
    return out


def check_conversation_id(conversation_id: str) -> None:
    """Refuse an empty conversation id: no command could name the conversation again."""
    if not isinstance(conversation_id, str) or not conversation_id:
        raise StoreError(f"a conversation id must be a non-empty string, not {conversation_id!r}")


def check_message(conversation_id: str, m: Message) -> None:
    """Refuse a message the file format could not hold (a History can be built by hand)."""
    check_conversation_id(conversation_id)
    where = f"conversation {conversation_id!r}: message {m.id!r}"
    if not isinstance(m.id, str) or not m.id:
        raise StoreError(f"conversation {conversation_id!r}: a message id must be a non-empty string")
    if m.role not in ROLES:
        raise StoreError(f"{where}: role {m.role!r} is not one of {', '.join(sorted(ROLES))}")
    if m.status not in STATUSES:
        raise StoreError(f"{where}: status {m.status!r} is not one of {', '.join(sorted(STATUSES))}")
    if m.tool_uses and m.role != "assistant":
        raise StoreError(f"{where}: only assistant messages carry tool uses")
    if m.parts and m.role != "user":
        raise StoreError(f"{where}: only user messages carry parts")
    problem = steps_problem(m.steps, len(m.tool_uses))
    if problem is not None:
        raise StoreError(f"{where}: {problem}")


def conflict(conversation_id: str, message_id: str, fields: Sequence[str]) -> StoreError:
    return StoreError(
        f"conversation {conversation_id!r}: message {message_id!r} is already stored with a different "
        f"{', '.join(fields)}; nothing of this import was written"
    )


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What an import will write: the new messages (appended in file order), and the tools to set."""

    new_messages: tuple[Message, ...]
    unchanged: int
    set_tools: bool
    requests: tuple[RequestSettings, ...] | None = None
    """The conversation's recorded requests after the import (None: unchanged)."""


def plan_import(stored: History | None, new: History) -> ImportPlan:
    """Decide what importing ``new`` over ``stored`` writes, or refuse it whole with a StoreError.

    * a message already stored with the same content is unchanged; with different content the import is
      refused, naming the conversation, the message id and the fields that differ;
    * the store only appends: new messages go after every stored one, so a new message that the file puts
      before a stored one (or stored messages in a different order) is refused rather than reordered;
    * tool definitions are set when none are stored; different ones are refused like a message.
    """
    cid = new.id
    check_conversation_id(cid)
    old_by_id = {m.id: (i, m) for i, m in enumerate(stored.messages)} if stored else {}
    seen: set[str] = set()
    fresh: list[Message] = []
    last_pos = -1
    for m in new.messages:
        check_message(cid, m)
        if m.id in seen:
            raise StoreError(f"conversation {cid!r}: message {m.id!r} appears twice in this import")
        seen.add(m.id)
        found = old_by_id.get(m.id)
        if found is None:
            fresh.append(m)
            continue
        pos, old = found
        diff = message_differences(old, m)
        if diff:
            raise conflict(cid, m.id, diff)
        if fresh:
            raise StoreError(
                f"conversation {cid!r}: message {fresh[0].id!r} is new but comes before the stored message "
                f"{m.id!r}; the store only appends, so nothing of this import was written"
            )
        if pos < last_pos:
            raise StoreError(
                f"conversation {cid!r}: message {m.id!r} comes in a different order than stored; "
                "nothing of this import was written"
            )
        last_pos = pos
    set_tools = False
    if new.tools is not None:
        if stored is None or stored.tools is None:
            set_tools = True
        elif tools_text(stored.tools) != tools_text(new.tools):
            raise StoreError(
                f"conversation {cid!r}: the stored tool definitions differ from this import's; "
                "nothing of this import was written"
            )
    return ImportPlan(tuple(fresh), len(new.messages) - len(fresh), set_tools, _requests_after(stored, new))


def _requests_after(stored: History | None, new: History) -> tuple[RequestSettings, ...] | None:
    """The recorded requests once ``new`` is imported: the stored ones, then each of ``new``'s that is not
    stored yet (an import of the same body twice records its request once); None when nothing changes."""
    old = stored.requests if stored is not None else ()
    added = tuple(r for r in new.requests if r not in old)
    return (*old, *added) if added else None


def status_of(value: str) -> Status:
    if value not in STATUSES:
        raise StoreError(f"status {value!r} is not one of {', '.join(sorted(STATUSES))}")
    return value  # type: ignore[return-value]

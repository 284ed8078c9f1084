"""The file format of a stored history: :mod:`toolreplay.model`'s values read from and written to JSON.

File format (JSON)::

    {"id": "conv-1", "messages": [
      {"id": "m1", "role": "user", "text": "Close todo #12."},
      {"id": "m2", "role": "assistant", "text": "Closed #12.",
       "tool_uses": [{"tool_name": "coop", "tool_input": {"action": "close", "id": 12}},
                     {"tool_name": "result", "tool_input": "status: closed"}]}]}

or JSON Lines with one message per line. ``tool_uses`` accepts every shape :func:`normalize_tool_uses` knows.
A reply may also carry ``steps``: how its calls were grouped and the reasoning and words before each group
(see :mod:`toolreplay._steps_codec`); a result entry may carry the answer's ``parts``; a user message may
carry ``parts``, its content in order when it holds more than words (images, documents)::

    {"id": "m3", "role": "user", "text": "What is on this receipt?",
     "parts": [{"kind": "image", "media_type": "image/png", "data": "iVBORw0..."},
               {"kind": "text", "text": "What is on this receipt?"}]}

What a body carried beyond the neutral fields (design 38) rides along: ``sent`` on a message, a part, a
call entry or a tool (``{"<wire>": {...}}``), a tool's ``kind`` (``custom``, ``hosted``), a call entry's
``kind`` (``custom``: ``tool_input`` is its text), and at the top ``requests``, the settings of each
request recorded, oldest first::

    "requests": [{"wire": "openai-chat", "fields": {"model": "gpt-5", "max_tokens": 512}, "after": "m4"}]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, cast

from toolreplay import jsonenc
from toolreplay._steps_codec import (
    data_from,
    file_objects,
    parts_from,
    parts_to_json,
    sent_from,
    sent_json,
    steps_from,
    steps_problem,
    steps_to_json,
)
from toolreplay._tool_uses import (
    RESULT,
    _refuse_constant,
    holds_calls,
    normalize_tool_uses,
    pair_tool_uses,
    shown,
    tool_uses_to_entries,
)
from toolreplay.errors import HistoryError
from toolreplay.model import (
    ROLES,
    STATUSES,
    TOOL_KINDS,
    History,
    Issuer,
    Message,
    Part,
    Piece,
    Reasoning,
    RequestSettings,
    Role,
    Status,
    Step,
    Text,
    ToolCall,
    ToolKind,
    ToolSpec,
    with_words,
)

# --------------------------------------------------------------------------------------------------
# reading and writing the file format


def _steps_of(raw: Any, role: str, n_calls: int, err: Callable[[str, str], HistoryError]) -> tuple[Step, ...]:
    try:
        steps = steps_from(raw, n_calls)
    except HistoryError as exc:
        raise err(exc.problem, exc.field or "steps") from None
    if steps and role != "assistant":
        raise err("only assistant messages carry steps", "steps")
    return steps


def _parts_of(
    d: Mapping[str, Any], role: str, text: str, err: Callable[[str, str], HistoryError]
) -> tuple[str, tuple[Part, ...]]:
    """A user message's ``parts`` and its text made to agree with them (``with_words``)."""
    raw = d.get("parts")
    if raw is None:
        return text, ()
    try:
        parts = parts_from(raw)
    except HistoryError as exc:
        raise err(exc.problem, exc.field or "parts") from None
    if parts and role != "user":
        raise err("only user messages carry parts (an answer's parts go on its result entry)", "parts")
    return with_words(text, parts)


def _message_id(d: Mapping[str, Any], index: int, source: str, seen: set[str]) -> str:
    """The message's id, as a string, unique in the file."""
    mid = d.get("id")
    if isinstance(mid, bool) or not isinstance(mid, (str, int)) or mid == "":
        raise HistoryError("missing or not a string", source=source, index=index, field="id")
    mid = str(mid)
    if mid in seen:
        raise HistoryError(
            "duplicate id (an earlier message has it)",
            source=source,
            index=index,
            message_id=shown(mid),
            field="id",
        )
    seen.add(mid)
    return mid


def _optional_fields(d: Mapping[str, Any], err: Callable[[str, str], HistoryError]) -> None:
    """``created_at`` and ``vessel`` are strings, ``provider_data`` and ``meta`` objects, when given."""
    for opt in ("created_at", "vessel"):
        v = d.get(opt)
        if v is not None and not isinstance(v, str):
            raise err(f"must be a string, not {type(v).__name__}", opt)
    for opt in ("provider_data", "meta", "sent"):
        v = d.get(opt)
        if v is not None and not isinstance(v, Mapping):
            raise err(f"must be an object, not {type(v).__name__}", opt)


def _calls_of(
    d: Mapping[str, Any],
    role: str,
    where: str,
    err: Callable[[str, str], HistoryError],
    warnings: list[str],
) -> tuple[ToolCall, ...]:
    """The message's tool uses, paired into calls with their answers (design 1)."""
    try:
        entries = normalize_tool_uses(d.get("tool_uses"))
    except HistoryError as exc:
        raise err(exc.problem, exc.field or "tool_uses") from None
    if entries and role != "assistant":
        raise err("only assistant messages carry tool uses", "tool_uses")
    calls, warns = pair_tool_uses(entries, where=where)
    warnings.extend(warns)
    return calls


#: The keys a message of the file format may hold: a Message's fields, spelled as in the file. Any other
#: key is warned about by name; one that holds calls refuses the file, whose calls would be lost.
_MESSAGE_KEYS: frozenset[str] = frozenset(f.name for f in fields(Message))


def _unknown_keys(
    d: Mapping[str, Any], where: str, err: Callable[[str, str], HistoryError], warnings: list[str]
) -> None:
    """A warning per key the format does not know; a HistoryError for one holding calls (they would be
    dropped: such a file imported as "0 calls")."""
    for key in d:
        if key in _MESSAGE_KEYS:
            continue
        name = shown(str(key))
        if holds_calls(str(key), d[key]):
            raise err(
                "an unknown key holding calls (a reply's calls go in 'tool_uses'); "
                "the file is refused, nothing of it stored",
                name,
            )
        warnings.append(f"{where}: unknown key {name!r} ignored")


def _message_from_dict(raw: Any, index: int, source: str, seen: set[str], warnings: list[str]) -> Message:
    if not isinstance(raw, Mapping):
        raise HistoryError(f"not an object ({type(raw).__name__})", source=source, index=index)
    d = cast(Mapping[str, Any], raw)
    mid = _message_id(d, index, source, seen)

    def err(problem: str, fld: str) -> HistoryError:
        return HistoryError(problem, source=source, index=index, message_id=shown(mid), field=fld)

    role = d.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise err(f"{role!r} is not a role; use user, assistant or system", "role")
    text = d.get("text", "")
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise err(f"must be a string, not {type(text).__name__}", "text")
    where = f"{source}: message {index} (id {shown(mid)})"
    _unknown_keys(d, where, err, warnings)
    calls = _calls_of(d, role, where, err, warnings)
    status = d.get("status", "complete")
    if not isinstance(status, str) or status not in STATUSES:
        raise err(f"{status!r} is not one of complete, interrupted, in_progress", "status")
    _optional_fields(d, err)
    text, parts = _parts_of(d, role, text, err)
    return Message(
        id=mid,
        role=cast(Role, role),
        text=text,
        tool_uses=calls,
        created_at=d.get("created_at"),
        vessel=d.get("vessel"),
        provider_data=d.get("provider_data"),
        status=cast(Status, status),
        meta=d.get("meta"),
        steps=_steps_of(d.get("steps"), role, len(calls), err),
        parts=parts,
        sent=_sent_of(d, err),
    )


def _sent_of(d: Mapping[str, Any], err: Callable[[str, str], HistoryError]) -> Any:
    try:
        return sent_from(d.get("sent"), "sent")
    except HistoryError as exc:
        raise err(exc.problem, exc.field or "sent") from None


def _tool_from(td: Mapping[str, Any], source: str, at: str) -> ToolSpec:
    params = td.get("parameters", td.get("input_schema", td.get("inputSchema")))
    kind = td.get("kind", "function")
    if kind not in TOOL_KINDS:
        raise HistoryError(f"kind {kind!r} is not one of {', '.join(sorted(TOOL_KINDS))}", source=source,
                           field=f"{at}.kind")  # fmt: skip
    try:
        sent = sent_from(td.get("sent"), f"{at}.sent")
    except HistoryError as exc:
        raise HistoryError(exc.problem, source=source, field=exc.field) from None
    return ToolSpec(
        name=td["name"],
        description=str(td.get("description") or ""),
        parameters=params if isinstance(params, Mapping) else {"type": "object", "properties": {}},
        kind=cast(ToolKind, kind),
        sent=sent,
    )


def _tools_from(raw: Any, source: str) -> tuple[ToolSpec, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise HistoryError("must be a list of tool definitions", source=source, field="tools")
    out: list[ToolSpec] = []
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping) or not isinstance(t.get("name"), str):
            raise HistoryError("needs a name", source=source, field=f"tools[{i}]")
        out.append(_tool_from(cast(Mapping[str, Any], t), source, f"tools[{i}]"))
    return tuple(out)


def _requests_from(raw: Any, source: str) -> tuple[RequestSettings, ...]:
    """The ``requests`` list: each ``{"wire", "fields", "after"}``."""
    out: list[RequestSettings] = []
    try:
        for at, d in file_objects(raw, "requests"):
            wire, after = d.get("wire"), d.get("after")
            if not isinstance(wire, str) or not wire:
                raise HistoryError("needs the wire's name", field=f"{at}.wire")
            if after is not None and not isinstance(after, str):
                raise HistoryError("must be a message id (a string)", field=f"{at}.after")
            out.append(RequestSettings(wire, data_from(d.get("fields"), f"{at}.fields") or {}, after))
    except HistoryError as exc:
        raise HistoryError(exc.problem, source=source, field=exc.field) from None
    return tuple(out)


def history_from_dict(
    data: Mapping[str, Any] | Sequence[Any], *, source: str = "<history>", default_id: str = "conversation"
) -> History:
    """Validate and build a :class:`History` from the file format (a dict with ``messages``, or a list)."""
    if isinstance(data, Mapping):
        msgs = data.get("messages")
        if not isinstance(msgs, list):
            raise HistoryError("needs a list of messages", source=source, field="messages")
        cid = data.get("id", default_id)
        if not isinstance(cid, (str, int)) or isinstance(cid, bool) or cid == "":
            raise HistoryError("must be a non-empty string", source=source, field="id")
        tools = _tools_from(data.get("tools"), source)
        requests = _requests_from(data.get("requests"), source)
    else:
        msgs, cid, tools, requests = list(data), default_id, None, ()
    seen: set[str] = set()
    warnings: list[str] = []
    # A system message may stand anywhere: first (the system prompt), or where an agent sent one in the
    # middle of the conversation (Claude Code's mid-conversation system messages, a developer message).
    messages = tuple(_message_from_dict(m, i, source, seen, warnings) for i, m in enumerate(msgs))
    return History(str(cid), messages, tools, tuple(warnings), requests=requests)


def _read_jsonl(text: str, source: str) -> list[Any]:
    out: list[Any] = []
    # Split at line feeds only: U+2028 and the other breaks str.splitlines knows may stand inside a string.
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            out.append(jsonenc.parse(line, parse_constant=_refuse_constant))
        except json.JSONDecodeError as exc:
            raise HistoryError(f"line {n} is not JSON ({exc.msg})", source=source) from None
        except ValueError as exc:  # NaN, nesting or digits beyond the reader's limits
            raise HistoryError(f"line {n} is not JSON ({exc})", source=source) from None
    return out


def load_history(
    path_or_dict: str | Path | Mapping[str, Any] | Sequence[Any], *, conversation_id: str | None = None
) -> History:
    """Load a history from a file path (JSON or JSON Lines), a dict in the file format, or a message list."""
    if conversation_id == "":
        raise HistoryError("a conversation id must not be empty", field="conversation_id")
    if isinstance(path_or_dict, (str, Path)):
        path = Path(path_or_dict)
        source = str(path)
        try:
            # utf-8-sig: editors on Windows save JSON with a byte-order mark, which json.loads refuses.
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise HistoryError("no such file", source=source) from None
        except IsADirectoryError:
            raise HistoryError("is a directory, not a history file", source=source) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise HistoryError(f"cannot be read ({exc})", source=source) from None
        stripped = text.lstrip()
        if not stripped:
            raise HistoryError("the file is empty", source=source)
        data: Any
        lines = stripped.startswith("{") and "\n" in stripped.strip()  # maybe JSON Lines
        try:
            data = jsonenc.parse(text, parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            if not lines:
                raise HistoryError(
                    f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", source=source
                ) from None
            data = _read_jsonl(text, source)
        except ValueError as exc:  # NaN, nesting or digits beyond the reader's limits
            if not lines:
                raise HistoryError(f"not JSON ({exc})", source=source) from None
            data = _read_jsonl(text, source)  # names the line past a limit
        if isinstance(data, dict) and "messages" not in data and "role" in data:
            data = [data]  # JSON Lines holding a single message
        if not isinstance(data, (dict, list)):
            raise HistoryError("must hold a JSON object or list", source=source)
        hist = history_from_dict(cast(Any, data), source=source, default_id=conversation_id or path.stem)
    else:
        hist = history_from_dict(path_or_dict, default_id=conversation_id or "conversation")
    if conversation_id is not None and hist.id != conversation_id:
        hist = History(conversation_id, hist.messages, hist.tools, hist.warnings, requests=hist.requests)
    return hist


def message_to_dict(m: Message) -> dict[str, Any]:
    """A message in the file format (optional fields only when set)."""
    out: dict[str, Any] = {"id": m.id, "role": m.role, "text": m.text}
    if m.tool_uses:
        out["tool_uses"] = tool_uses_to_entries(m.tool_uses)
    for name in ("created_at", "vessel"):
        v = getattr(m, name)
        if v is not None:
            out[name] = v
    if m.provider_data is not None:
        out["provider_data"] = dict(m.provider_data)
    if m.status != "complete":
        out["status"] = m.status
    if m.meta is not None:
        out["meta"] = dict(m.meta)
    if m.steps:
        out["steps"] = steps_to_json(m.steps)
    if m.parts:
        out["parts"] = parts_to_json(m.parts)
    if m.sent is not None:
        out["sent"] = sent_json(m.sent)
    return out


def tool_to_dict(t: ToolSpec) -> dict[str, Any]:
    """A tool declaration in the file form (``kind`` and ``sent`` only when set)."""
    out: dict[str, Any] = {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
    if t.kind != "function":
        out["kind"] = t.kind
    if t.sent is not None:
        out["sent"] = sent_json(t.sent)
    return out


def history_to_dict(h: History) -> dict[str, Any]:
    """A history in the file format; ``load_history(history_to_dict(h)) == h``."""
    out: dict[str, Any] = {"id": h.id}
    if h.tools is not None:
        out["tools"] = [tool_to_dict(t) for t in h.tools]
    if h.requests:
        out["requests"] = [r.as_json() for r in h.requests]
    out["messages"] = [message_to_dict(m) for m in h.messages]
    return out


__all__ = [
    "RESULT",
    "ROLES",
    "STATUSES",
    "History",
    "Issuer",
    "Message",
    "Part",
    "Piece",
    "Reasoning",
    "RequestSettings",
    "Role",
    "Status",
    "Step",
    "Text",
    "ToolCall",
    "ToolSpec",
    "history_from_dict",
    "history_to_dict",
    "load_history",
    "message_to_dict",
    "normalize_tool_uses",
    "pair_tool_uses",
    "shown",
    "steps_problem",
    "tool_to_dict",
    "tool_uses_to_entries",
]

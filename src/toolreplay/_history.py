"""The neutral stored history: messages, the calls each reply made with their answers, the file format.

No provider's wire shape lives here. Every wire renders from these values and every importer produces them.

File format (JSON)::

    {"id": "conv-1", "messages": [
      {"id": "m1", "role": "user", "text": "Close todo #12."},
      {"id": "m2", "role": "assistant", "text": "Closed #12.",
       "tool_uses": [{"tool_name": "coop", "tool_input": {"action": "close", "id": 12}},
                     {"tool_name": "result", "tool_input": "status: closed"}]}]}

or JSON Lines with one message per line. ``tool_uses`` accepts every shape :func:`normalize_tool_uses` knows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import HistoryError

Role = Literal["system", "user", "assistant"]
Status = Literal["complete", "interrupted", "in_progress"]
ROLES: frozenset[str] = frozenset({"system", "user", "assistant"})
STATUSES: frozenset[str] = frozenset({"complete", "interrupted", "in_progress"})

#: The ``tool_name`` that marks a stored entry as the answer to a call.
RESULT = "result"


class _NotJSON(ValueError):
    """NaN or Infinity: Python's json reads them, JSON has no such values."""


def _refuse_constant(name: str) -> Any:
    # Kept, NaN and Infinity would be written out as null (orjson, the store), silently changing an input.
    raise _NotJSON(f"{name} is not a JSON value")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool definition: name, description and a JSON schema for its input."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call a reply made, paired with its answer.

    ``input`` is the stored input: normally a JSON object; a string when the store kept raw text (a
    cut-short JSON input, plain text). ``answer`` is None when no answer was recorded (e.g. the process
    died while the tool ran). ``call_id`` is the provider's own id when known (never replayed blindly:
    the replay derives its own ids). ``provider_data`` holds what must be echoed back to the provider that
    made the call, namespaced by wire, e.g. ``{"gemini": {"thoughtSignature": "..."}}``.
    ``input_text`` is the input's JSON text, serialized once here and reused by every render.
    """

    name: str
    input: Any
    answer: str | None = None
    call_id: str | None = None
    is_error: bool = False
    provider_data: Mapping[str, Any] | None = None
    input_text: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.input_text:
            text = self.input if isinstance(self.input, str) else jsonenc.dumps(self.input)
            object.__setattr__(self, "input_text", text)


@dataclass(frozen=True, slots=True)
class Message:
    """One stored message. Only assistant messages carry ``tool_uses``.

    ``status`` is ``complete`` for finished messages; the turn loop writes ``in_progress`` while a reply is
    being made and ``interrupted`` when a turn failed part-way (its executed calls are kept). ``meta`` holds
    annotations that are not sent (e.g. the said-without-doing flag, where imported text pieces stood).
    """

    id: str
    role: Role
    text: str = ""
    tool_uses: tuple[ToolCall, ...] = ()
    created_at: str | None = None
    vessel: str | None = None
    provider_data: Mapping[str, Any] | None = None
    status: Status = "complete"
    meta: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class History:
    """A conversation: an id and its messages in stored order; ``tools`` when the definitions are known."""

    id: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def index_of(self, message_id: str) -> int:
        for i, m in enumerate(self.messages):
            if m.id == message_id:
                return i
        raise HistoryError(f"no message with id {message_id!r} in conversation {self.id!r}")


# --------------------------------------------------------------------------------------------------
# normalize_tool_uses


def shown(text: str) -> str:
    """``text`` as it appears inside a one-line message: escaped when it holds line breaks or controls."""
    return text if text.isprintable() else repr(text)[1:-1]


def _result_text(content: Any) -> str:
    """An answer as text: strings as they are, Anthropic block lists joined, anything else as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, Mapping) and b.get("type") == "text" for b in content):
        return "\n".join(str(cast(Mapping[str, Any], b).get("text", "")) for b in content)
    return jsonenc.dumps(content)


def _entry(name: Any, value: Any, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"tool_name": name, "tool_input": value}
    for k, v in extra.items():
        if v is not None and v is not False:
            out[k] = v
    return out


def _with_inline_answer(call: dict[str, Any], raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A call entry written with its answer inline (``"answer"``) becomes the call and its result.

    ``"answer": null`` says explicitly that no answer was recorded: the call is closed (``no_answer``) so
    that a later result, paired by position, cannot be taken for its answer.
    """
    if "answer" not in raw:
        return [call]
    if raw["answer"] is None:
        call["no_answer"] = True
        return [call]
    is_error = call.pop("is_error", False)
    return [call, _entry(RESULT, _result_text(raw["answer"]), is_error=is_error)]


def _normalize_one(raw: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    kind = raw.get("type")
    if kind == "tool_use":
        return [_entry(raw.get("name"), raw.get("input"), id=raw.get("id"))]
    if kind == "tool_result":
        return [
            _entry(
                RESULT,
                _result_text(raw.get("content")),
                tool_use_id=raw.get("tool_use_id"),
                is_error=bool(raw.get("is_error")),
            )
        ]
    pdata = raw.get("provider_data")
    if pdata is not None and not isinstance(pdata, Mapping):
        raise HistoryError(f"provider_data must be an object, not {type(pdata).__name__}", field=where)
    if "tool_name" in raw:
        out = _entry(
            raw["tool_name"],
            raw.get("tool_input"),
            id=raw.get("id") or raw.get("call_id"),
            tool_use_id=raw.get("tool_use_id"),
            is_error=bool(raw.get("is_error")),
            provider_data=pdata,
        )
        if raw["tool_name"] == RESULT:
            out["tool_input"] = _result_text(raw.get("tool_input"))
            return [out]
        return _with_inline_answer(out, raw)
    if isinstance(raw.get("function"), Mapping):  # OpenAI Chat tool_calls entry
        fn = cast(Mapping[str, Any], raw["function"])
        return [_entry(fn.get("name"), fn.get("arguments"), id=raw.get("id"))]
    if "name" in raw:
        out = _entry(
            raw["name"],
            raw.get("input", raw.get("arguments")),
            id=raw.get("id"),
            is_error=bool(raw.get("is_error")),
            provider_data=pdata,
        )
        return _with_inline_answer(out, raw)
    keys = ", ".join(sorted(shown(str(k)) for k in raw)) or "none"
    raise HistoryError(f"not a tool use or result in any known shape (keys: {keys})", field=where)


#: Keys that mark an object as a tool use or result in one of the shapes :func:`normalize_tool_uses` reads.
_ENTRY_KEYS = frozenset({"type", "tool_name", "function", "name"})


def normalize_tool_uses(raw: Any, *, field_name: str = "tool_uses") -> list[dict[str, Any]]:
    """Turn any stored shape of a reply's tool uses into one list of ``{tool_name, tool_input}`` entries.

    Accepted: ``None`` or empty; a list; a JSON string holding such a list; entries shaped
    ``{"tool_name", "tool_input"}``, ``{"name", "input"}``, ``{"name", "input", "answer"}``, Anthropic
    ``{"type": "tool_use", ...}`` / ``{"type": "tool_result", ...}`` blocks, or OpenAI ``tool_calls``
    entries. Answers become ``{"tool_name": "result", "tool_input": <text>}`` entries, in stored order.
    Ids (``id``, ``tool_use_id``), ``is_error`` and ``provider_data`` are kept on the entry when present.
    An inline ``"answer": null`` marks a call recorded with no answer (entry flag ``no_answer``).
    Raises :class:`HistoryError` naming the field for anything else.
    """
    if raw is None or raw == "" or raw == []:
        return []
    if isinstance(raw, str):
        try:
            raw = jsonenc.parse(raw, parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            raise HistoryError(
                f"a string that is not JSON ({exc.msg} at character {exc.pos})", field=field_name
            ) from None
        except ValueError as exc:  # NaN, nesting or digits beyond the reader's limits
            raise HistoryError(f"a string that is not JSON ({exc})", field=field_name) from None
        if raw is None:
            return []
    if isinstance(raw, Mapping):
        # One tool use stored without its list is read as a list of one; an object in no tool-use shape
        # is refused as what it is (tool_uses is not a list), not as a bad first entry.
        if not _ENTRY_KEYS.intersection(raw):
            keys = ", ".join(sorted(shown(str(k)) for k in raw)) or "none"
            raise HistoryError(f"must be a list, not an object (keys: {keys})", field=field_name)
        raw = [raw]
    if not isinstance(raw, list):
        raise HistoryError(f"must be a list, not {type(raw).__name__}", field=field_name)
    out: list[dict[str, Any]] = []
    for i, item in enumerate(raw):
        where = f"{field_name}[{i}]"
        if not isinstance(item, Mapping):
            raise HistoryError(f"not an object ({type(item).__name__})", field=where)
        entries = _normalize_one(cast(Mapping[str, Any], item), where)
        for e in entries:
            if not isinstance(e["tool_name"], str) or not e["tool_name"]:
                raise HistoryError("the tool name is missing or not a string", field=where)
        out.extend(entries)
    return out


def pair_tool_uses(
    entries: Sequence[Mapping[str, Any]], *, where: str = ""
) -> tuple[tuple[ToolCall, ...], list[str]]:
    """Pair normalized entries into calls with answers; returns ``(calls, warnings)``.

    A result that carries a ``tool_use_id`` answers the call with that id. Otherwise a result answers the
    earliest call before it that has no answer yet, so ``call A, call B, result 1, result 2`` pairs A-1 and
    B-2 (design 1). A result with no unanswered call before it, or a second result for the same call,
    is not replayed and is reported as a warning naming the entry.
    """
    names: list[str] = []
    inputs: list[Any] = []
    ids: list[str | None] = []
    pdata: list[Mapping[str, Any] | None] = []
    answers: list[str | None] = []
    closed: list[bool] = []  # answered, or recorded as having no answer: no later result pairs with it
    errors: list[bool] = []
    warnings: list[str] = []
    first_open = 0
    prefix = f"{where}: " if where else ""
    for i, e in enumerate(entries):
        if e["tool_name"] != RESULT:
            names.append(e["tool_name"])
            inputs.append(e.get("tool_input"))
            cid = e.get("id")
            # An empty id is no id (the file form writes it so and reads it back as none).
            ids.append(str(cid) if cid is not None and cid != "" else None)
            pdata.append(e.get("provider_data"))
            answers.append(None)
            closed.append(bool(e.get("no_answer")))
            errors.append(bool(e.get("is_error")))
            continue
        target: int | None = None
        ref = e.get("tool_use_id")
        if ref is not None:
            # The latest call with that id: providers reuse ids across turns (seen in real data).
            for j in range(len(ids) - 1, -1, -1):
                if ids[j] == str(ref):
                    target = j
                    break
            if target is None:
                warnings.append(f"{prefix}tool_uses[{i}]: result for unknown call id {ref!r}, not replayed")
                continue
            if closed[target]:
                warnings.append(f"{prefix}tool_uses[{i}]: second result for call {ref!r}, not replayed")
                continue
        else:
            # ``first_open`` only moves forward: answers are never taken back (O(n) for 10,000 calls).
            while first_open < len(closed) and closed[first_open]:
                first_open += 1
            target = first_open if first_open < len(closed) else None
            if target is None:
                warnings.append(
                    f"{prefix}tool_uses[{i}]: result with no unanswered call before it, not replayed"
                )
                continue
        answers[target] = str(e.get("tool_input") or "")
        closed[target] = True
        errors[target] = errors[target] or bool(e.get("is_error"))
    calls = tuple(
        ToolCall(
            name=names[k],
            input=inputs[k],
            answer=answers[k],
            call_id=ids[k],
            is_error=errors[k],
            provider_data=pdata[k],
        )
        for k in range(len(names))
    )
    return calls, warnings


# --------------------------------------------------------------------------------------------------
# reading and writing the file format


def _message_from_dict(raw: Any, index: int, source: str, seen: set[str], warnings: list[str]) -> Message:
    if not isinstance(raw, Mapping):
        raise HistoryError(f"not an object ({type(raw).__name__})", source=source, index=index)
    d = cast(Mapping[str, Any], raw)
    mid = d.get("id")
    if isinstance(mid, bool) or not isinstance(mid, (str, int)) or mid == "":
        raise HistoryError("missing or not a string", source=source, index=index, field="id")
    mid = str(mid)

    def err(problem: str, fld: str) -> HistoryError:
        return HistoryError(problem, source=source, index=index, message_id=shown(mid), field=fld)

    if mid in seen:
        raise err("duplicate id (an earlier message has it)", "id")
    seen.add(mid)
    role = d.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise err(f"{role!r} is not a role; use user, assistant or system", "role")
    text = d.get("text", "")
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise err(f"must be a string, not {type(text).__name__}", "text")
    try:
        entries = normalize_tool_uses(d.get("tool_uses"))
    except HistoryError as exc:
        raise err(exc.problem, exc.field or "tool_uses") from None
    if entries and role != "assistant":
        raise err("only assistant messages carry tool uses", "tool_uses")
    calls, warns = pair_tool_uses(entries, where=f"{source}: message {index} (id {shown(mid)})")
    warnings.extend(warns)
    status = d.get("status", "complete")
    if not isinstance(status, str) or status not in STATUSES:
        raise err(f"{status!r} is not one of complete, interrupted, in_progress", "status")
    for opt in ("created_at", "vessel"):
        v = d.get(opt)
        if v is not None and not isinstance(v, str):
            raise err(f"must be a string, not {type(v).__name__}", opt)
    for opt in ("provider_data", "meta"):
        v = d.get(opt)
        if v is not None and not isinstance(v, Mapping):
            raise err(f"must be an object, not {type(v).__name__}", opt)
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
        td = cast(Mapping[str, Any], t)
        params = td.get("parameters", td.get("input_schema", td.get("inputSchema")))
        out.append(
            ToolSpec(
                name=td["name"],
                description=str(td.get("description") or ""),
                parameters=params if isinstance(params, Mapping) else {"type": "object", "properties": {}},
            )
        )
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
    else:
        msgs, cid, tools = list(data), default_id, None
    seen: set[str] = set()
    warnings: list[str] = []
    messages = tuple(_message_from_dict(m, i, source, seen, warnings) for i, m in enumerate(msgs))
    for i, m in enumerate(messages):
        if m.role == "system" and any(p.role != "system" for p in messages[:i]):
            raise HistoryError(
                "a system message is allowed only at the start",
                source=source,
                index=i,
                message_id=m.id,
                field="role",
            )
    return History(id=str(cid), messages=messages, tools=tools, warnings=tuple(warnings))


def _read_jsonl(text: str, source: str) -> list[Any]:
    out: list[Any] = []
    for n, line in enumerate(text.splitlines(), 1):
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
        try:
            data = jsonenc.parse(text, parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            if stripped.startswith("{") and "\n" in stripped.strip():
                data = _read_jsonl(text, source)
            else:
                raise HistoryError(
                    f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", source=source
                ) from None
        except ValueError as exc:  # NaN, nesting or digits beyond the reader's limits
            raise HistoryError(f"not JSON ({exc})", source=source) from None
        if isinstance(data, dict) and "messages" not in data and "role" in data:
            data = [data]  # JSON Lines holding a single message
        if not isinstance(data, (dict, list)):
            raise HistoryError("must hold a JSON object or list", source=source)
        hist = history_from_dict(cast(Any, data), source=source, default_id=conversation_id or path.stem)
    else:
        hist = history_from_dict(path_or_dict, default_id=conversation_id or "conversation")
    if conversation_id is not None and hist.id != conversation_id:
        hist = History(conversation_id, hist.messages, hist.tools, hist.warnings)
    return hist


def tool_uses_to_entries(calls: Iterable[ToolCall]) -> list[dict[str, Any]]:
    """The file form of a reply's calls: each call entry followed by its result entry."""
    out: list[dict[str, Any]] = []
    for c in calls:
        entry: dict[str, Any] = {"tool_name": c.name, "tool_input": c.input}
        if c.call_id is not None:
            entry["id"] = c.call_id
        if c.provider_data is not None:
            entry["provider_data"] = dict(c.provider_data)
        if c.answer is None:
            # explicit, so that a later call's result is never paired with this one when read back
            entry["answer"] = None
            if c.is_error:
                entry["is_error"] = True
        out.append(entry)
        if c.answer is not None:
            res: dict[str, Any] = {"tool_name": RESULT, "tool_input": c.answer}
            if c.call_id is not None:
                res["tool_use_id"] = c.call_id
            if c.is_error:
                res["is_error"] = True
            out.append(res)
    return out


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
    return out


def history_to_dict(h: History) -> dict[str, Any]:
    """A history in the file format; ``load_history(history_to_dict(h)) == h``."""
    out: dict[str, Any] = {"id": h.id}
    if h.tools is not None:
        out["tools"] = [
            {"name": t.name, "description": t.description, "parameters": dict(t.parameters)} for t in h.tools
        ]
    out["messages"] = [message_to_dict(m) for m in h.messages]
    return out

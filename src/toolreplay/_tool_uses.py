"""A reply's calls in the file form: the stored shapes of ``tool_uses`` read into :class:`ToolCall` values.

:func:`normalize_tool_uses` reads every stored shape of a reply's tool uses into one list of entries;
:func:`pair_tool_uses` pairs calls with their answers (design 1); :func:`tool_uses_to_entries` writes the
file form back. The stored ``messages.tool_uses`` form with ``result`` entries stays readable as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from toolreplay import jsonenc
from toolreplay._steps_codec import parts_from, parts_to_json, sent_from, sent_json
from toolreplay.errors import HistoryError, shown
from toolreplay.model import CALL_KINDS, CallKind, Part, Sent, ToolCall

#: The ``tool_name`` that marks a stored entry as the answer to a call.
RESULT = "result"


class _NotJSON(ValueError):
    """NaN or Infinity: Python's json reads them, JSON has no such values."""


def _refuse_constant(name: str) -> Any:
    # Kept, NaN and Infinity would be written out as null (orjson, the store), silently changing an input.
    raise _NotJSON(f"{name} is not a JSON value")


# --------------------------------------------------------------------------------------------------
# normalize_tool_uses


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


def _kind_and_sent(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A call entry's ``kind`` (absent: ``function``) and ``sent``, checked."""
    kind = raw.get("kind", "function")
    if kind not in CALL_KINDS:
        raise HistoryError(
            f"kind {kind!r} is not one of {', '.join(sorted(CALL_KINDS))}", field=f"{where}.kind"
        )
    if kind == "custom" and not isinstance(raw.get("tool_input", raw.get("input")), str):
        raise HistoryError("a custom call's input is its text (a string)", field=f"{where}.tool_input")
    out: dict[str, Any] = {"sent": sent_from(raw.get("sent"), f"{where}.sent")}
    if kind != "function":
        out["kind"] = kind
    return out


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
            **_kind_and_sent(raw, where),
        )
        if raw["tool_name"] == RESULT:
            out["tool_input"] = _result_text(raw.get("tool_input"))
            parts = parts_from(raw.get("parts"), f"{where}.parts")
            if parts:
                out["parts"] = parts
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
            **_kind_and_sent(raw, where),
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


#: Keys that mark an object as a call or its answer, in any shape a log may hold one.
_CALL_MARKS = frozenset(
    {"tool_name", "tool_input", "input", "arguments", "args", "answer", "function", "tool_use_id",
     "call_id", "functionCall", "function_call", "functionResponse", "toolUse", "tool_call"}
)  # fmt: skip


def holds_calls(key: str, value: Any) -> bool:
    """Whether the value of a message key the file format does not know looks like a reply's calls:
    objects in a call's shape (``"calls": [{"name", "input", "answer"}]``, as ``toolreplay replay`` prints
    them), or a list of objects under a key named for calls (a misspelled ``"tooluses"``)."""
    items = [value] if isinstance(value, Mapping) else value
    objects = [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []
    if any(_CALL_MARKS.intersection(o) or o.get("type") in ("tool_use", "tool_result") for o in objects):
        return True
    spelled = "".join(c for c in key.lower() if c.isalpha())
    return bool(objects) and isinstance(value, list) and ("call" in spelled or "tooluse" in spelled)


def _by_id(
    ids: Sequence[str | None], closed: Sequence[bool], ref: Any, where: str, warnings: list[str]
) -> int | None:
    """The call a result with id ``ref`` answers: the latest call with that id (providers reuse ids
    across turns, seen in real data), unless it is already answered; None, with a warning, otherwise."""
    target = next((j for j in range(len(ids) - 1, -1, -1) if ids[j] == str(ref)), None)
    if target is None:
        warnings.append(f"{where}: result for unknown call id {ref!r}, not replayed")
        return None
    if closed[target]:
        warnings.append(f"{where}: second result for call {ref!r}, not replayed")
        return None
    return target


def pair_tool_uses(
    entries: Sequence[Mapping[str, Any]], *, where: str = ""
) -> tuple[tuple[ToolCall, ...], list[str]]:
    """Pair normalized entries into calls with answers; returns ``(calls, warnings)``.

    A result that carries a ``tool_use_id`` answers the call with that id. Otherwise a result answers the
    earliest call before it that has no answer yet, so ``call A, call B, result 1, result 2`` pairs A-1 and
    B-2 (design 1). A result with no unanswered call before it, or a second result for the same call,
    is not replayed and is reported as a warning naming the entry.
    """
    made: list[Mapping[str, Any]] = []  # the call entries, in order
    ids: list[str | None] = []
    answers: list[str | None] = []
    closed: list[bool] = []  # answered, or recorded as having no answer: no later result pairs with it
    errors: list[bool] = []
    parts: dict[int, tuple[Part, ...]] = {}
    warnings: list[str] = []
    first_open = 0
    prefix = f"{where}: " if where else ""
    for i, e in enumerate(entries):
        if e["tool_name"] != RESULT:
            made.append(e)
            cid = e.get("id")
            # An empty id is no id (the file form writes it so and reads it back as none).
            ids.append(str(cid) if cid is not None and cid != "" else None)
            answers.append(None)
            closed.append(bool(e.get("no_answer")))
            errors.append(bool(e.get("is_error")))
            continue
        target: int | None = None
        ref = e.get("tool_use_id")
        if ref is not None:
            target = _by_id(ids, closed, ref, f"{prefix}tool_uses[{i}]", warnings)
            if target is None:
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
        if e.get("parts"):
            parts[target] = e["parts"]
        closed[target] = True
        errors[target] = errors[target] or bool(e.get("is_error"))
    return tuple(
        _call(e, answers[k], ids[k], errors[k], parts.get(k, ())) for k, e in enumerate(made)
    ), warnings


def _call(
    e: Mapping[str, Any], answer: str | None, cid: str | None, error: bool, parts: tuple[Part, ...]
) -> ToolCall:
    kind: CallKind = e.get("kind") or "function"
    sent: Sent | None = e.get("sent")
    return ToolCall(e["tool_name"], e.get("tool_input"), answer, cid, error, e.get("provider_data"),
                    parts=parts, kind=kind, sent=sent)  # fmt: skip


def tool_uses_to_entries(calls: Iterable[ToolCall]) -> list[dict[str, Any]]:
    """The file form of a reply's calls: each call entry followed by its result entry."""
    out: list[dict[str, Any]] = []
    for c in calls:
        entry: dict[str, Any] = {"tool_name": c.name, "tool_input": c.input}
        if c.call_id is not None:
            entry["id"] = c.call_id
        if c.provider_data is not None:
            entry["provider_data"] = dict(c.provider_data)
        if c.kind != "function":
            entry["kind"] = c.kind
        if c.sent is not None:
            entry["sent"] = sent_json(c.sent)
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
            if c.parts:
                res["parts"] = parts_to_json(c.parts)
            out.append(res)
    return out


__all__ = [
    "RESULT",
    "ToolCall",
    "normalize_tool_uses",
    "pair_tool_uses",
    "shown",
    "tool_uses_to_entries",
]

"""The file form of a reply's steps and of parts (a user message's or an answer's), read and written.

Inside a message of the history file (also the value of the store's ``steps`` and ``parts`` columns)::

    "steps": [{"said": [{"kind": "reasoning", "text": "...", "data": {"anthropic": {...}}},
                        {"kind": "text", "text": "Let me look."}],
               "calls": 1, "issuer": {"wire": "anthropic", "host": "api.anthropic.com", "model": "..."}}]
    "parts": [{"kind": "image", "media_type": "image/png", "data": "iVBORw0..."},
              {"kind": "text", "text": "What is on this receipt?", "sent": {"anthropic": {...}}}]

The values are :mod:`toolreplay.model`'s; this module only reads and writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.errors import HistoryError
from toolreplay.model import (
    PART_KINDS,
    Issuer,
    Part,
    PartKind,
    Piece,
    Reasoning,
    Sent,
    ServerTool,
    Step,
    Text,
)


def _issuer_from(raw: Any, where: str) -> Issuer | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise HistoryError(
            f"must be an object with wire, host and model, not {type(raw).__name__}", field=where
        )
    d = cast(Mapping[str, Any], raw)
    vals = [d.get(k, "") for k in ("wire", "host", "model")]
    if not all(isinstance(v, str) for v in vals) or not vals[0]:
        raise HistoryError("wire, host and model must be strings (wire not empty)", field=where)
    return Issuer(vals[0], vals[1], vals[2])


def data_from(raw: Any, where: str) -> Mapping[str, Any] | None:
    """An optional object of the file form (null or absent: None)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise HistoryError(f"must be an object, not {type(raw).__name__}", field=where)
    return cast(Mapping[str, Any], raw)


def sent_from(raw: Any, where: str) -> Sent | None:
    """A ``sent`` field: an object of objects, one per wire (null or absent: None)."""
    d = data_from(raw, where)
    if d is None:
        return None
    for wire, v in d.items():
        if not isinstance(v, Mapping):
            raise HistoryError(f"must be an object per wire, not {type(v).__name__}", field=f"{where}.{wire}")
    return cast(Sent, d)


def sent_json(sent: Sent | None) -> dict[str, Any] | None:
    """The file form of a ``sent`` field (None when there is none)."""
    return None if sent is None else {w: dict(v) for w, v in sent.items()}


def _piece_from(raw: Any, where: str) -> Piece:
    if not isinstance(raw, Mapping):
        raise HistoryError(f"not an object ({type(raw).__name__})", field=where)
    d = cast(Mapping[str, Any], raw)
    text = d.get("text", "")
    if not isinstance(text, str):
        raise HistoryError(f"must be a string, not {type(text).__name__}", field=f"{where}.text")
    data = data_from(d.get("data"), f"{where}.data")
    kind = d.get("kind")
    if kind == "reasoning":
        return Reasoning(text, data)
    if kind == "text":
        return Text(text, data)
    if kind == "server_tool":
        return ServerTool(text, data)
    raise HistoryError(f"kind {kind!r} is not 'reasoning', 'text' or 'server_tool'", field=f"{where}.kind")


def file_objects(raw: Any, where: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The entries of a file-form list (null or absent: none), each an object, with its field path."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise HistoryError(f"must be a list, not {type(raw).__name__}", field=where)
    out: list[tuple[str, Mapping[str, Any]]] = []
    for i, x in enumerate(raw):
        if not isinstance(x, Mapping):
            raise HistoryError(f"not an object ({type(x).__name__})", field=f"{where}[{i}]")
        out.append((f"{where}[{i}]", cast(Mapping[str, Any], x)))
    return out


def steps_from(raw: Any, n_calls: int, where: str = "steps") -> tuple[Step, ...]:
    """A reply's steps from the file form, checked against its number of calls."""
    out: list[Step] = []
    for at, d in file_objects(raw, where):
        calls = d.get("calls", 0)
        if not isinstance(calls, int) or isinstance(calls, bool) or calls < 0:
            raise HistoryError("must be a count of calls (0 or more)", field=f"{at}.calls")
        said = d.get("said", [])
        if not isinstance(said, list):
            raise HistoryError("must be a list", field=f"{at}.said")
        pieces = tuple(_piece_from(p, f"{at}.said[{k}]") for k, p in enumerate(said))
        out.append(Step(pieces, calls, _issuer_from(d.get("issuer"), f"{at}.issuer")))
    problem = steps_problem(out, n_calls)
    if problem is not None:
        raise HistoryError(problem, field=where)
    return tuple(out)


def steps_problem(steps: Sequence[Step], n_calls: int) -> str | None:
    """Why ``steps`` cannot be the record of a reply with ``n_calls`` calls, or None."""
    if not steps:
        return None
    total = sum(s.calls for s in steps)
    if total != n_calls:
        return f"the steps hold {total} calls, the reply {n_calls}"
    for s in steps[:-1]:
        if s.calls == 0:
            return "only the last step may have no calls (the one before the final words)"
    return None


def _piece_json(p: Piece) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": p.kind}
    if p.text or p.kind == "text":
        out["text"] = p.text
    if p.data is not None:
        out["data"] = dict(p.data)
    return out


def steps_to_json(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """The file form of a reply's steps (also the stored column's value)."""
    out: list[dict[str, Any]] = []
    for s in steps:
        d: dict[str, Any] = {}
        if s.said:
            d["said"] = [_piece_json(p) for p in s.said]
        d["calls"] = s.calls
        if s.issuer is not None:
            d["issuer"] = s.issuer.as_json()
        out.append(d)
    return out


def parts_from(raw: Any, where: str = "parts") -> tuple[Part, ...]:
    """Parts from the file form (``[{"kind": "image", "media_type": ..., "data": ...}]``)."""
    out: list[Part] = []
    for at, d in file_objects(raw, where):
        kind = d.get("kind")
        if kind not in PART_KINDS:
            raise HistoryError(f"kind {kind!r} is not text, image or document", field=f"{at}.kind")
        vals = {k: d.get(k, "") for k in ("text", "media_type", "data", "url", "name")}
        for k, v in vals.items():
            if not isinstance(v, str):
                raise HistoryError(f"must be a string, not {type(v).__name__}", field=f"{at}.{k}")
        sent = sent_from(d.get("sent"), f"{at}.sent")
        out.append(Part(cast(PartKind, kind), **cast(dict[str, str], vals), sent=sent))
    return tuple(out)


def parts_to_json(parts: Sequence[Part]) -> list[dict[str, Any]]:
    return [p.as_json() for p in parts]


__all__ = [
    "data_from",
    "file_objects",
    "parts_from",
    "parts_to_json",
    "sent_from",
    "sent_json",
    "steps_from",
    "steps_problem",
    "steps_to_json",
]

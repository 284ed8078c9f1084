"""The wire formats: what people keep of their requests, read with each wire's own ``parse_request``.

Every registered wire with an import form (:class:`~toolreplay.wires.contract.ImportForm`) is a format,
under the wire's name. A file holds one of: a request body (``{"messages": ...}``, ``{"input": ...}``,
``{"contents": ...}``), just the message list (a JSON array), JSON Lines of conversations (each line a
body or a message list, optionally with an ``id``), or JSON Lines of messages (one conversation, one
message per line).

For ``--from auto`` a request body (the first record, holding a wire's list key) is the wire its
evidence proves (:func:`toolreplay.wires.sniff_wire`, the audit's own detection, so the two always
agree; a body two wires fit equally is neither's). A bare list has no body fields to go by: each wire
looks for its own marks in it (its ``detect.marks``), the wires tried from the highest import rank down,
so a plain-text chat list (the same in several wires) reads as ``openai-chat``, the lowest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from toolreplay._errors import ImportFormatError, WireError
from toolreplay._history import History
from toolreplay._importers._source import Document, Format, Reading, Record, broken_warnings, pick
from toolreplay.wires import all_wires, get_wire, sniff_wire
from toolreplay.wires.contract import ImportForm, Wire

# Keys that carry a message's content in some format. A message holding one its wire does not read
# would lose it: ``auto`` refuses the wire, a named wire reads the file with a warning.
_CONTENT_KEYS = ("content", "parts", "text", "tool_uses")


def _form(wire: Wire) -> ImportForm:
    if wire.importing is None:
        raise ImportFormatError(f"wire {wire.name} has no import form")
    return wire.importing


def units(doc: Document, wire: str) -> tuple[list[tuple[Record, Any]], bool]:
    """The bodies in ``doc`` with their records, and whether the file holds many conversations."""
    w = get_wire(wire)
    recs = doc.records
    if (
        doc.kind == "jsonl"
        and recs
        and _form(w).is_element(recs[0].value)
        and w.list_key not in recs[0].value
    ):
        return [(recs[0], [r.value for r in recs])], False
    return [(r, r.value) for r in recs], doc.kind == "jsonl"


def _elements(body: Any, wire: Wire) -> Sequence[Any] | None:
    form = _form(wire)
    if form.elements is not None:
        return form.elements(body)
    if isinstance(body, list):
        return body
    if isinstance(body, Mapping):
        inner = cast(Mapping[str, Any], body).get(wire.list_key)
        if isinstance(inner, list):
            return inner
    return None


def _foreign_keys(wire: Wire, els: Sequence[Any]) -> list[tuple[int, str]]:
    """(index, key) for each element key that carries content in some format but not in ``wire``."""
    own = _form(wire).content_key
    return [
        (i, k)
        for i, m in enumerate(els)
        if isinstance(m, Mapping)
        for k in _CONTENT_KEYS
        if k != own and k in m
    ]


def _lost(wire: Wire, els: Sequence[Any]) -> str | None:
    found = _foreign_keys(wire, els)
    if not found:
        return None
    i, k = found[0]
    return f"messages[{i}] has {k!r}, which {wire.name} does not read (it would be lost)"


def _not_marked(wire: Wire, body: Any, els: Sequence[Any]) -> str | None:
    """Why ``body`` is not ``wire``'s by its marks: a body is the wire its evidence proves (design 27); a
    bare list is judged by the wire's own marks."""
    found = sniff_wire(cast(Mapping[str, Any], body)) if isinstance(body, Mapping) else None
    if found is None or not found.left:
        return _form(wire).marks(body, els)
    if found.ambiguous:
        return found.why()
    if found.wire == wire.name:
        return None
    return f"the body reads as {found.wire} (its marks prove more)"


def _sniffer(wire: str, marks: bool) -> Callable[[Document], str | None]:
    def sniff(doc: Document) -> str | None:
        if doc.not_json is not None:
            return doc.not_json
        w = get_wire(wire)
        found, _ = units(doc, wire)
        rec, body = found[0]
        where = f"line {rec.line}: " if rec.line is not None else ""
        els = _elements(body, w)
        if els is None:
            return f"{where}no {w.list_key!r} list (and not a list of them)"
        why = (_not_marked(w, body, els) or _lost(w, els)) if marks else None
        if why is None:
            try:
                w.parse_request(body) if w.parse_request is not None else None
            except WireError as exc:
                why = str(exc).split(": ", 1)[-1]
        return f"{where}{why}" if why else None

    return sniff


def _reader(wire: str) -> Callable[[Document, str | None], Reading]:
    def read(doc: Document, conversation: str | None) -> Reading:
        w = get_wire(wire)
        found, many = units(doc, wire)
        out: list[History] = []
        for rec, body in found:
            cid = body.get("id", body.get("conversation_id")) if isinstance(body, Mapping) else None
            if not isinstance(cid, str) or not cid:
                cid = f"{doc.path.stem}-{rec.line}" if many else doc.path.stem
            try:
                h = _parse(w, body)
            except WireError as exc:
                raise ImportFormatError(f"{doc.at(rec)}: {exc}") from None
            els = _elements(body, w) or ()
            lost = [f"messages[{i}].{k}: {wire} does not read it; not kept" for i, k in _foreign_keys(w, els)]
            warns = tuple(f"{doc.at(rec)}: {x}" for x in (*lost, *h.warnings))
            out.append(replace(h, id=cid, warnings=warns))
        return Reading(pick(doc, out, conversation, many=many), tuple(broken_warnings(doc)))

    return read


def _parse(wire: Wire, body: Any) -> History:
    if wire.parse_request is None:
        raise WireError(f"{wire.name} cannot read request bodies back")
    return wire.parse_request(body)


def wire_formats() -> list[Format]:
    """A format per registered wire with an import form, the most specific (highest rank) first."""
    wires = sorted((w for w in all_wires() if w.importing is not None), key=lambda w: -_form(w).rank)
    return [
        Format(w.name, _form(w).description, _sniffer(w.name, True), _reader(w.name), _sniffer(w.name, False))
        for w in wires
    ]


__all__ = ["units", "wire_formats"]

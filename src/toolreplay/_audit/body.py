"""Reading a dumped request: find the body inside whatever file holds it, and say which wire it speaks.

A request file may be the bare body (what ``toolreplay render`` prints), a dump the transport wrote with
``--dump-requests`` (the body under ``request``/``body`` beside the vessel, wire or URL), or a debug dump of
another tool: LiteLLM logs the body under ``additional_args.complete_input_dict``, agent frameworks under
``request``, ``json``, ``payload`` or ``kwargs``; some keep the body as a JSON string. :func:`find_body`
looks for the first object that holds a wire's message list (``messages``, ``input``, ``contents``, or a
claude-prompt ``prompt``: any registered wire's ``holds``), breadth first, a few levels deep.

:func:`detect_wire` asks every registered wire what the body proves about being its own (see each
wire's ``detect.py``: a ``contents`` list is Gemini's, ``input`` Responses', a string ``prompt``
claude-prompt's; among ``messages`` bodies Anthropic's own marks rule out Ollama's and Chat's, Ollama's
rule out Chat's, a mark proves more than a habit, and any list fits Chat); the strongest proof wins, and
a body two wires fit equally is an error naming both (design 27).

A wire named by the dump (``wire``, a known ``vessel``, or the request URL) wins over the shape; for a
transport dump ``NNNN-<vessel>-request.json`` the sibling ``NNNN-<vessel>-meta.json`` names it.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError, WireError

#: Where other tools keep the body inside a log or dump record, in the order they are searched.
WRAPPER_KEYS: tuple[str, ...] = (
    "request",
    "body",
    "request_body",
    "json",
    "payload",
    "data",
    "additional_args",
    "complete_input_dict",
    "kwargs",
    "params",
    "raw_request",
    "content",
)


@dataclass(frozen=True, slots=True)
class RequestBody:
    """A request body found in a file, the wire it speaks, and where both came from.

    ``wire_from`` says how the wire was known: ``given`` (the caller said), ``dump`` (the dump's own
    ``wire``/``vessel``/``url``), or ``shape`` (read from the body).
    """

    body: Mapping[str, Any]
    wire: str
    source: str
    wire_from: str = "shape"
    vessel: str | None = None
    raw: bytes | None = None


def _is_body(obj: Mapping[str, Any]) -> bool:
    from toolreplay.wires import all_wires

    return any(w.holds_body(obj) for w in all_wires())


def _list_keys() -> str:
    """The wires' list keys, for people: ``messages, input, contents or prompt``."""
    from toolreplay.wires import all_wires

    keys = list(dict.fromkeys(w.list_key for w in all_wires()))
    return ", ".join(keys[:-1]) + f" or {keys[-1]}" if len(keys) > 1 else keys[0]


def _is_history(data: Any) -> bool:
    """A toolreplay history file (its messages carry ``text``/``tool_uses``, no wire's ``content``)."""
    msgs = data.get("messages") if isinstance(data, Mapping) else data
    if not isinstance(msgs, list) or not msgs:
        return False
    entries = [m for m in msgs if isinstance(m, Mapping)]
    return any("text" in m or "tool_uses" in m for m in entries) and not any(
        "content" in m or "parts" in m for m in entries
    )


def _as_json(value: Any) -> Any:
    if isinstance(value, (bytes, str)):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if text.lstrip().startswith("{"):
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return None
    return value


def find_body(obj: Any, *, max_depth: int = 4) -> tuple[Mapping[str, Any], list[Mapping[str, Any]]] | None:
    """The first body inside ``obj`` and the wrapper objects on the way to it (outermost first)."""
    queue: deque[tuple[Any, list[Mapping[str, Any]], int]] = deque([(_as_json(obj), [], 0)])
    while queue:
        cur, path, depth = queue.popleft()
        if not isinstance(cur, Mapping):
            continue
        node = cast(Mapping[str, Any], cur)
        if _is_body(node):
            return node, path
        if depth >= max_depth:
            continue
        for key in WRAPPER_KEYS:
            if key in node:
                queue.append((_as_json(node[key]), [*path, node], depth + 1))
    return None


def _wire_from_dump(wrappers: list[Mapping[str, Any]]) -> tuple[str | None, str | None]:
    """``(wire, vessel)`` named by the dump records around the body, innermost first."""
    from toolreplay._vessels import load_vessels
    from toolreplay.wires import all_wires, wire_names

    vessel: str | None = None
    for w in reversed(wrappers):
        wire = w.get("wire")
        name = w.get("vessel")
        if isinstance(name, str) and vessel is None:
            vessel = name
        if isinstance(wire, str) and wire in wire_names():
            return wire, vessel
        if isinstance(name, str):
            known = load_vessels().get(name)
            if known is not None:
                return known.wire, vessel
        url = w.get("url")
        if isinstance(url, str):
            lowered = url.lower().split("?")[0]
            for known_wire in all_wires():
                if lowered.endswith(known_wire.url_endings):
                    return known_wire.name, vessel
    return None, vessel


def detect_wire(body: Mapping[str, Any]) -> str:
    """The wire ``body`` speaks, by what it proves (design 27); an ambiguous body is an error naming the
    wires it fits."""
    from toolreplay.wires import sniff_wire

    found = sniff_wire(body)
    if found.ambiguous:
        raise WireError(f"{found.why()} (--wire)")
    if found.wire is None:
        raise WireError(f"not a request body: no {_list_keys()}")
    return found.wire


_DUMP_NAME = re.compile(r"^(\d{4,}-.+)-request\.json$")


def _dump_meta(path: Path) -> Mapping[str, Any] | None:
    """The ``NNNN-<vessel>-meta.json`` beside a transport dump's ``NNNN-<vessel>-request.json``."""
    m = _DUMP_NAME.match(path.name)
    meta = path.with_name(f"{m.group(1)}-meta.json") if m else None
    if meta is None or not meta.is_file():
        return None
    try:
        data = jsonenc.loads(meta.read_bytes())
    except (OSError, json.JSONDecodeError, ValueError):
        return None
    return cast(Mapping[str, Any], data) if isinstance(data, Mapping) else None


def _read(source: str | Path | Mapping[str, Any], label: str | None) -> tuple[str, bytes | None, Any]:
    """(name for messages, the file's bytes or None, the parsed JSON) of a path or a parsed object."""
    if not isinstance(source, (str, Path)):
        return label or "<request>", None, source
    path = Path(source)
    name = label or str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{name}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{name}: cannot be read ({exc.strerror})") from None
    try:
        return name, raw, jsonenc.loads(raw)
    except (json.JSONDecodeError, ValueError) as exc:
        raise WireError(f"{name}: not JSON ({exc})") from None


def load_request(
    source: str | Path | Mapping[str, Any], *, wire: str | None = None, label: str | None = None
) -> RequestBody:
    """The request body in ``source`` (a path, or an already parsed object) and its wire.

    ``wire`` forces the wire (e.g. ``--wire ollama`` for a words-only Ollama body).
    """
    from toolreplay.wires import get_wire

    name, raw, data = _read(source, label)
    if _is_history(data):
        # a stored history is what a request is rendered from, not a request: every call would read as
        # "not carried" (the audit said "openai-chat, 7 messages, 0 calls" and exited 0)
        raise WireError(
            f"{name}: a toolreplay history (messages with 'text'/'tool_uses'), not a request body; "
            f"render it first: toolreplay render {name} --vessel NAME > request.json, then audit request.json"
        )
    found = find_body(data)
    meta = _dump_meta(Path(source)) if isinstance(source, (str, Path)) else None
    if found is not None and meta is not None:
        found = (found[0], [meta, *found[1]])
    if found is None:
        raise WireError(
            f"{name}: no request body found (looked for {_list_keys()}, "
            f"also under {', '.join(WRAPPER_KEYS[:6])}, ...)"
        )
    body, wrappers = found
    # The file's own bytes are the body's only when the body is the whole file (a bare body, or a
    # transport dump whose meta sits beside it).
    own = raw if raw is not None and body is data else None
    if wire is not None:
        get_wire(wire)  # an unknown wire: the registry's error, listing the known ones
        _, vessel = _wire_from_dump(wrappers)
        return RequestBody(body, wire, name, "given", vessel, own)
    dumped, vessel = _wire_from_dump(wrappers)
    if dumped is not None:
        return RequestBody(body, dumped, name, "dump", vessel, own)
    try:
        detected = detect_wire(body)
    except WireError as exc:
        raise WireError(f"{name}: {exc}") from None
    return RequestBody(body, detected, name, "shape", vessel, own)


__all__ = ["RequestBody", "detect_wire", "find_body", "load_request"]

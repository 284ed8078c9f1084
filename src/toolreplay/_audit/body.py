"""Reading a dumped request: find the body inside whatever file holds it, and say which wire it speaks.

A request file may be the bare body (what ``toolreplay render`` prints), a dump the transport wrote with
``--dump-requests`` (the body under ``request``/``body`` beside the vessel, wire or URL), or a debug dump of
another tool: LiteLLM logs the body under ``additional_args.complete_input_dict``, agent frameworks under
``request``, ``json``, ``payload`` or ``kwargs``; some keep the body as a JSON string. :func:`find_body`
looks for the first object that holds a wire's message list (``messages``, ``input``, ``contents``, or a
claude-prompt ``prompt``), breadth first, a few levels deep.

:func:`detect_wire` reads the body's own shape (most telling sign first):

* ``contents`` -> ``gemini``; ``input`` -> ``openai-responses``; a string ``prompt`` -> ``claude-prompt``;
* ``messages`` with ``tool_use``/``tool_result``/``text`` blocks, tools with ``input_schema``, or a
  top-level ``system`` -> ``anthropic``;
* ``messages`` with object ``arguments``, ``tool_name`` on tool messages, or Ollama's own fields
  (``options``, ``keep_alive``, ``think``, ``format``), or ``"stream": false`` with none of Chat's own
  top-level fields (Ollama streams unless told not to) -> ``ollama``;
* any other ``messages`` -> ``openai-chat`` (a words-only Ollama body reads the same way).

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
#: URL endings -> wire, for dumps that record where the request went.
URL_WIRES: tuple[tuple[str, str], ...] = (
    ("/chat/completions", "openai-chat"),
    ("/responses", "openai-responses"),
    ("/messages", "anthropic"),
    (":generatecontent", "gemini"),
    (":streamgeneratecontent", "gemini"),
    ("/api/chat", "ollama"),
)
_OLLAMA_FIELDS = ("options", "keep_alive", "think", "format")
#: Top-level fields of a Chat body that an Ollama body keeps under ``options`` or lacks.
_CHAT_FIELDS = (
    "temperature", "top_p", "max_tokens", "max_completion_tokens", "n", "stop", "stream_options",
    "tool_choice", "response_format", "presence_penalty", "frequency_penalty", "seed", "user",
)  # fmt: skip


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
    if isinstance(obj.get("messages"), list) or isinstance(obj.get("contents"), list):
        return True
    if isinstance(obj.get("input"), (list, str)) and ("model" in obj or "instructions" in obj):
        return True
    return isinstance(obj.get("prompt"), str)


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
    from toolreplay.wires import PACKAGES

    vessel: str | None = None
    for w in reversed(wrappers):
        wire = w.get("wire")
        name = w.get("vessel")
        if isinstance(name, str) and vessel is None:
            vessel = name
        if isinstance(wire, str) and wire in PACKAGES:
            return wire, vessel
        if isinstance(name, str):
            known = load_vessels().get(name)
            if known is not None:
                return known.wire, vessel
        url = w.get("url")
        if isinstance(url, str):
            lowered = url.lower().split("?")[0]
            for ending, wire_name in URL_WIRES:
                if lowered.endswith(ending):
                    return wire_name, vessel
    return None, vessel


def _inner(messages: list[Any], key: str) -> list[Mapping[str, Any]]:
    """The objects in each message's ``key`` list (``content`` blocks, ``tool_calls``)."""
    out: list[Mapping[str, Any]] = []
    for m in messages:
        if isinstance(m, Mapping) and isinstance(m.get(key), list):
            out.extend(x for x in m[key] if isinstance(x, Mapping))
    return out


def detect_wire(body: Mapping[str, Any]) -> str:
    """The wire ``body`` speaks, read from its shape (see the module docstring for the signs)."""
    if isinstance(body.get("contents"), list):
        return "gemini"
    if "input" in body and not isinstance(body.get("messages"), list):
        return "openai-responses"
    if isinstance(body.get("prompt"), str) and not isinstance(body.get("messages"), list):
        return "claude-prompt"
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise WireError("not a request body: no messages, input, contents or prompt")
    msgs: list[Any] = messages
    kinds = {b.get("type") for b in _inner(msgs, "content")}
    tools = body.get("tools")
    tool_list: list[Any] = tools if isinstance(tools, list) else []
    if kinds & {"tool_use", "tool_result", "thinking", "redacted_thinking"}:
        return "anthropic"
    if any(isinstance(t, Mapping) and "input_schema" in t for t in tool_list) or "system" in body:
        return "anthropic"
    calls = _inner(msgs, "tool_calls")
    fns = [c.get("function") for c in calls]
    if any(isinstance(f, Mapping) and isinstance(f.get("arguments"), Mapping) for f in fns):
        return "ollama"
    if any(isinstance(m, Mapping) and "tool_name" in m for m in msgs):
        return "ollama"
    if any(k in body for k in _OLLAMA_FIELDS):
        return "ollama"
    if body.get("stream") is False and not any(k in body for k in _CHAT_FIELDS):
        # Ollama streams unless told not to, so its bodies say "stream": false; Chat clients rarely do
        # and then usually send sampling fields Ollama keeps under "options".
        return "ollama"
    has_tool_messages = any(isinstance(m, Mapping) and m.get("role") == "tool" for m in msgs)
    if kinds & {"text", "image"} and not has_tool_messages and not calls:
        # Chat also allows content parts ({"type": "text"}); a block list with no tool messages and no
        # calls is read as Anthropic's (the two read the same way for the audit then).
        return "anthropic"
    return "openai-chat"


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


def load_request(
    source: str | Path | Mapping[str, Any], *, wire: str | None = None, label: str | None = None
) -> RequestBody:
    """The request body in ``source`` (a path, or an already parsed object) and its wire.

    ``wire`` forces the wire (e.g. ``--wire ollama`` for a words-only Ollama body).
    """
    from toolreplay.wires import PACKAGES

    raw: bytes | None = None
    if isinstance(source, (str, Path)):
        path = Path(source)
        name = label or str(path)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise ConfigError(f"{name}: no such file") from None
        except OSError as exc:
            raise ConfigError(f"{name}: cannot be read ({exc.strerror})") from None
        try:
            data: Any = jsonenc.loads(raw)
        except (json.JSONDecodeError, ValueError) as exc:
            raise WireError(f"{name}: not JSON ({exc})") from None
    else:
        name = label or "<request>"
        data = source
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
            f"{name}: no request body found (looked for messages, input, contents or prompt, "
            f"also under {', '.join(WRAPPER_KEYS[:6])}, ...)"
        )
    body, wrappers = found
    # The file's own bytes are the body's only when the body is the whole file (a bare body, or a
    # transport dump whose meta sits beside it).
    own = raw if raw is not None and body is data else None
    if wire is not None:
        if wire not in PACKAGES:
            raise ConfigError(f"unknown wire {wire!r}; known wires: {', '.join(PACKAGES)}")
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

"""Small readers every wire's request parser uses: an answer's text, a call's arguments, a tool
definition, a JSON value's kind for messages. Pure; no turn rules here (those are
:func:`toolreplay.wires.turns.assemble`'s)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import ToolSpec


def answer_text(content: Any, joiner: str = "\n") -> tuple[str, list[str]]:
    """An answer's text and what could not be represented: strings as they are, text blocks joined,
    anything else as compact JSON. Non-text blocks (images, files) are named in the second value."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if isinstance(content, list):
        texts: list[str] = []
        lost: list[str] = []
        for block in content:
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                texts.append(str(block["text"]))
            elif isinstance(block, Mapping):
                lost.append(str(block.get("type", "block")))
            else:
                return jsonenc.dumps(content), []
        return joiner.join(texts), lost
    return jsonenc.dumps(content), []


def arguments_input(raw: Any) -> tuple[Any, str | None]:
    """A call's stored input from wire arguments, and a problem when they are not a JSON object.

    A JSON string holding an object becomes that object (key order kept); an object stays as it is; an
    empty string is ``{}`` (some servers send it for calls without arguments). Anything else is kept as
    the text it was (the replay sends it as an ``input_excerpt``) with a problem to report.
    """
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, Mapping):
        return _unexcerpt(dict(raw))
    if isinstance(raw, str):
        try:
            value = jsonenc.loads(raw)
        except ValueError as exc:
            return raw, f"arguments are not JSON ({exc}); kept as text"
        if isinstance(value, dict):
            return _unexcerpt(value)
        return raw, f"arguments are JSON {type(value).__name__}, not an object; kept as text"
    return jsonenc.dumps(raw), f"arguments are a JSON {type(raw).__name__}, not an object; kept as text"


def _unexcerpt(value: dict[str, Any]) -> tuple[Any, str | None]:
    """A replay excerpt (``{"input_excerpt": text}``, see the replay's ``replay_input``) read
    back as the cut text it holds, so it replays as the same excerpt instead of an excerpt of an excerpt.
    Text that is itself a JSON object stays wrapped (the replay would send such text as that object)."""
    text = value.get("input_excerpt")
    if len(value) != 1 or not isinstance(text, str):
        return value, None
    try:
        inner = jsonenc.loads(text)
    except ValueError:
        inner = None
    if isinstance(inner, dict):
        return value, None
    return text, "the input is a replay excerpt (input_excerpt): stored as the cut text it holds"


def tool_spec(name: Any, description: Any, parameters: Any) -> ToolSpec | None:
    """A tool definition read from a body, or None when it has no name."""
    if not isinstance(name, str) or not name:
        return None
    params = parameters if isinstance(parameters, Mapping) else {"type": "object", "properties": {}}
    return ToolSpec(name=name, description=description if isinstance(description, str) else "",
                    parameters=dict(params))  # fmt: skip


def kind_of(value: Any) -> str:
    """A JSON value's kind, for messages (``an object``, ``a list``, ``a string``...)."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


__all__ = ["answer_text", "arguments_input", "kind_of", "tool_spec"]

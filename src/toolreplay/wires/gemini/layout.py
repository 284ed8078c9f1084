"""How a Gemini body's elements stood beyond what the neutral model holds (design 37): read by
``request.py`` into ``sent["gemini"]``, given back by ``as_sent.py``. One owner for these keys.

A content's ``sent`` (a model content's on its reply, ``Message.sent[...]["messages"]``, one mapping per
content in order; a user content's on its message; a content of answers on its first answer's
``ToolCall.sent[...]["result"]["content"]``):

* ``"content"``: how the content object stood: ``"no_role": true`` where it had no ``role`` (Gemini
  reads it as user), ``"role"`` where it said ``function`` (the legacy answers role), ``"extra"`` its
  keys besides ``role`` and ``parts``;
* ``"parts"``: one mapping per part, in order: ``"k"`` its kind (``text``, ``thought``, ``call``,
  ``server``, ``media``), ``"text"`` its words where the neutral model holds them elsewhere (the words of
  a reply's closing content, joined there; an empty text part), ``"signed"`` when a signature rides on
  the words, ``"extra"`` the part's keys the model does not read (``partMetadata``...), ``"snake"`` the
  keys it wrote in snake_case, camelCase named (``functionCall`` for ``function_call``...), ``"part"``
  a part kept nowhere else, verbatim;
* ``"separator": true`` on a model content the body led with ``(continued)`` (our own renderer's role
  rule), so it comes back.

A call's ``sent``: ``"args"`` its ``args`` as sent where they are not the object of its input (absent:
``"no_args"``), ``"fc_extra"`` the ``functionCall`` keys besides name, args and id, ``"signature"`` a
dummy signature the replay would put back itself (read, not stored as the call's signature).
Its answer's (``"result"``): ``"response"`` the ``response`` verbatim where ``{"output": answer}``
(``{"error": ...}``) is not it, ``"id"`` / ``"no_id"`` and ``"name"`` / ``"no_name"`` where they differ
from the call's, ``"fr_extra"`` the ``functionResponse`` keys besides those and ``parts``, ``"part"``
the part's own layout, ``"at"`` where it stood (``[content index, part index]``: answers given out of
their calls' order go back in it), ``"opens"`` with ``"content"`` on the first answer of each user
content.
A media part's (``Part.sent``): ``"snake"``, ``"extra"``, ``"inner"`` (keys of its ``inlineData`` /
``fileData`` besides the ones read).
The system instruction: one system message per part, the first carrying ``"key"``
(``system_instruction`` where snake_case), ``"string": true`` (an instruction sent as a bare string) and
``"content"``; each its ``"part"`` layout. A tool declaration: ``ToolSpec.sent[...]["tool"]`` whole, with
``"entry"`` (its index in ``tools``) and ``"key"`` (``function_declarations`` where snake_case).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.model import Sent

WIRE = "gemini"
#: camelCase -> snake_case of the structural keys this wire writes (design 9).
SNAKE = {
    "functionCall": "function_call",
    "functionResponse": "function_response",
    "thoughtSignature": "thought_signature",
    "inlineData": "inline_data",
    "fileData": "file_data",
    "mimeType": "mime_type",
    "fileUri": "file_uri",
    "displayName": "display_name",
}
CAMEL = {v: k for k, v in SNAKE.items()}


def layout_of(sent: Sent | None, key: str = "") -> Mapping[str, Any]:
    """This wire's layout in ``sent`` (under ``key`` when given), or an empty one."""
    got: Any = sent.get(WIRE) if sent else None
    if isinstance(got, Mapping) and key:
        got = cast(Mapping[str, Any], got).get(key)
    return cast(Mapping[str, Any], got) if isinstance(got, Mapping) else {}


def sent_of(layout: Mapping[str, Any]) -> Sent | None:
    """A layout as a ``sent`` value (None when there is nothing to keep)."""
    return {WIRE: dict(layout)} if layout else None


def snake_keys(obj: Mapping[str, Any]) -> list[str]:
    """The structural keys ``obj`` spells in snake_case (with those of its media object), camelCase
    named, sorted."""
    found = {CAMEL[k] for k in obj if k in CAMEL}
    for k in ("inline_data", "file_data", "inlineData", "fileData"):
        inner = obj.get(k)
        if isinstance(inner, Mapping):
            found.update(CAMEL[kk] for kk in cast(Mapping[str, Any], inner) if kk in CAMEL)
    return sorted(found)


def part_layout(p: Mapping[str, Any], kind: str, read: frozenset[str]) -> dict[str, Any]:
    """A part's layout: its kind, its keys besides ``read`` (either case), snake_case written."""
    out: dict[str, Any] = {"k": kind}
    extra = {k: v for k, v in p.items() if k not in read and CAMEL.get(k, k) not in read}
    if extra:
        out["extra"] = extra
    spelled = snake_keys(p)
    if spelled:
        out["snake"] = spelled
    return out


def content_layout(c: Mapping[str, Any]) -> dict[str, Any]:
    """How a content object stood besides its parts (see the module docstring)."""
    out: dict[str, Any] = {}
    if "role" not in c:
        out["no_role"] = True
    elif c["role"] == "function":
        out["role"] = "function"
    extra = {k: v for k, v in c.items() if k not in ("role", "parts")}
    if extra:
        out["extra"] = extra
    return out


def content(role: str, parts: list[dict[str, Any]], layout: Mapping[str, Any]) -> dict[str, Any]:
    """A content object laid out as it was sent."""
    out: dict[str, Any] = {"parts": parts}
    if not layout.get("no_role"):
        out["role"] = layout.get("role", role)
    extra = layout.get("extra")
    if isinstance(extra, Mapping):
        out.update(cast(Mapping[str, Any], extra))
    return out


def snake(obj: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """``obj`` with the structural ``keys`` (camelCase named; those of its media object too) in
    snake_case."""
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if k in ("inlineData", "fileData") and isinstance(v, dict):
            v = {(SNAKE[kk] if kk in keys else kk): vv for kk, vv in cast(dict[str, Any], v).items()}
        out[SNAKE[k] if k in keys else k] = v
    return out


def laid_out(part: dict[str, Any], layout: Mapping[str, Any]) -> dict[str, Any]:
    """A rendered part with its extra keys and its spelling as it was sent."""
    extra = layout.get("extra")
    if isinstance(extra, Mapping):
        part.update(cast(Mapping[str, Any], extra))
    keys = layout.get("snake")
    return snake(part, cast(list[str], keys)) if isinstance(keys, list) else part


__all__ = [
    "CAMEL",
    "SNAKE",
    "WIRE",
    "content",
    "content_layout",
    "laid_out",
    "layout_of",
    "part_layout",
    "sent_of",
    "snake",
    "snake_keys",
]

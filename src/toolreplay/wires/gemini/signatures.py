"""What only the Gemini wire knows of thought signatures and of its two spellings of every key.

Google's documented dummy signature (for calls Gemini did not make), a stored signature read back in
either case (design 9), the test that a stored value can be one at all (base64), and the render's
warning for one that cannot. The shared render code asks for that warning through the wire contract
(``Wire.render_notes``), never by the wire's name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.wires.replayed import ReplayCall, TurnMessage

#: The dummy thought signature Google documents for calls Gemini did not make (Vertex accepts only this one).
DUMMY_SIGNATURE = "skip_thought_signature_validator"
#: Google's documented stand-ins for a signature Gemini never made (its thought-signature guide).
DUMMY_SIGNATURES = frozenset({DUMMY_SIGNATURE, "context_engineering_is_the_way_to_go"})

_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]*={0,2}\Z")


def either_case(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    """A Gemini field read in camelCase or snake_case (both are valid protobuf JSON and other tools send
    snake_case, design 9): the camelCase value unless it is absent or null."""
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def camel(name: str) -> str:
    """A snake_case key in camelCase (``max_output_tokens`` -> ``maxOutputTokens``)."""
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


#: The settings whose own keys a normal render writes in camelCase (design 9); the values under any other
#: key (a ``responseSchema``'s property names) are the caller's and stay as they are.
_CAMEL_INSIDE = frozenset({"generationConfig", "thinkingConfig", "toolConfig", "functionCallingConfig"})


def camel_settings(value: Any, key: str = "") -> Any:
    """Request settings with their structural keys in camelCase (the top level, ``generationConfig``,
    ``thinkingConfig``, ``toolConfig``...), what every render but the as-sent one writes."""
    if not isinstance(value, Mapping) or (key and key not in _CAMEL_INSIDE):
        return value
    out: dict[str, Any] = {}
    for k, v in cast(Mapping[str, Any], value).items():
        out[camel(k)] = camel_settings(v, camel(k))
    return out


def stored_signature(call: ReplayCall) -> str | None:
    """The signature stored with ``call`` (camelCase or snake_case), whatever it holds."""
    data = call.provider_data
    g = data.get("gemini") if data else None
    if not isinstance(g, Mapping):
        return None
    sig = g.get("thoughtSignature", g.get("thought_signature"))
    return sig if isinstance(sig, str) and sig else None


def is_base64(text: str) -> bool:
    """``text`` can be protobuf JSON bytes: standard or URL-safe base64, padded or not (a length of 4k+1
    characters, padding aside, cannot encode anything)."""
    return bool(_BASE64.match(text)) and len(text.rstrip("=")) % 4 != 1


def gemini_signature(call: ReplayCall) -> str | None:
    """The thought signature Gemini gave ``call`` (stored camelCase or snake_case, design 9), if any.

    A stored value that is not base64 cannot be a signature Gemini made (the API rejects it: "Base64
    decoding failed"), so it counts as none; :func:`render_notes` reports it.
    """
    sig = stored_signature(call)
    return sig if sig is not None and is_base64(sig) else None


def render_notes(turns: Sequence[TurnMessage]) -> list[str]:
    """One warning per stored thought signature that is not base64 and so is not replayed."""
    out: list[str] = []
    for t in turns:
        for c in t.calls:
            sig = stored_signature(c)
            if sig is not None and not is_base64(sig):
                out.append(
                    f"message {t.message_id}: call {c.call_id}: stored thoughtSignature is not base64, "
                    "not replayed"
                )
    return out


__all__ = [
    "DUMMY_SIGNATURE",
    "DUMMY_SIGNATURES",
    "camel",
    "camel_settings",
    "either_case",
    "gemini_signature",
    "is_base64",
    "render_notes",
    "stored_signature",
]

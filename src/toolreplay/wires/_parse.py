"""What every wire's response parser shares: reading fields, decoding call arguments, stream errors.

Pure functions. A parser raises :class:`~toolreplay._errors.ResponseFormatError` for a body that is not
its wire's shape (naming the wire and the field), never for a model's broken call arguments: those become
a :class:`~toolreplay.wires.reply.ParsedCall` whose ``input`` is the raw text and whose ``input_error``
says what is wrong, so the turn loop can store the call as made and answer it with an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, cast

from toolreplay import jsonenc
from toolreplay.errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionFault,
    ProviderError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    shown,
)
from toolreplay.wires.reply import ParsedCall


def fail(wire: str, problem: str) -> NoReturn:
    """Raise the one-line error for a body that is not ``wire``'s shape."""
    # One line whatever the body holds (a key with a line break in it, say).
    raise ResponseFormatError(f"{wire} response: {shown(problem)}")


def missing(wire: str, key: str, body: Mapping[str, Any]) -> NoReturn:
    """Raise the error for a body without its wire's ``key``, naming the keys it has instead."""
    fail(wire, f"no '{key}' (keys: {', '.join(sorted(body)) or 'none'})")


def ended_early(wire: str, final: str) -> ConnectionFault:
    """The error for a stream that stopped before its final event (``final`` says what was missing)."""
    return ConnectionFault(f"{wire}: stream ended before the final event (no {final})")


def mapping(value: Any, wire: str, where: str) -> Mapping[str, Any]:
    """``value`` as a JSON object, or a ResponseFormatError naming ``where``."""
    if not isinstance(value, Mapping):
        fail(wire, f"{where} is {kind(value)}, not an object")
    return cast(Mapping[str, Any], value)


def items(value: Any, wire: str, where: str) -> Sequence[Any]:
    """``value`` as a JSON array (None counts as empty), or a ResponseFormatError naming ``where``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        fail(wire, f"{where} is {kind(value)}, not an array")
    return value


def text_of(value: Any, wire: str, where: str) -> str:
    """A string field (None counts as empty)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        fail(wire, f"{where} is {kind(value)}, not a string")
    return value


def string(value: Any) -> str | None:
    """A string field (a finish reason, a model name), or None when it is absent or not a string."""
    return value if isinstance(value, str) else None


def count(value: Any) -> int | None:
    """A token count when it is a non-negative integer, else None (providers omit or null them)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def detail_count(usage: Mapping[str, Any], details: str, key: str = "cached_tokens") -> int | None:
    """A count inside a usage object's ``details`` object (``prompt_tokens_details.cached_tokens``)."""
    inner = usage.get(details)
    return count(inner.get(key)) if isinstance(inner, Mapping) else None


def add_counts(*values: int | None) -> int | None:
    """The sum of the counts that are present (None when none is)."""
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def kind(value: Any) -> str:
    """A JSON kind for messages: ``a string``, ``an array``, ``null``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


#: Python reads ``1e999`` as infinity and accepts ``NaN``; stored or sent, such a number becomes ``null``,
#: so the input run would differ from the input stored and from what the model wrote.
NOT_FINITE = "arguments hold a number JSON cannot represent (NaN, Infinity, or one as large as 1e999)"


def decode_arguments(raw: Any) -> tuple[Any, str | None]:
    """A call's arguments as ``(input, input_error)``.

    An object stays an object; JSON text of an object is decoded; empty text or null means no arguments
    (``{}``: some servers send ``""`` for a tool without parameters). Anything else is kept as raw text
    with ``input_error`` saying what is wrong, so a model's broken JSON never raises; so are arguments
    holding a number JSON cannot represent (:data:`NOT_FINITE`): run or stored as read, it would be null.
    """
    if isinstance(raw, Mapping):
        value = dict(cast(Mapping[str, Any], raw))
        if not jsonenc.finite(value):  # an object in the body: its own text is gone, NaN/Infinity spell it
            return jsonenc.loose_text(value), NOT_FINITE
        return value, None
    if raw is None:
        return {}, None
    if isinstance(raw, str):
        if not raw.strip():
            return {}, None
        try:
            value = jsonenc.loads(raw)
        except ValueError as exc:
            return raw, f"arguments are not valid JSON ({_first_line(str(exc))})"
        if not jsonenc.finite(value):
            return raw, NOT_FINITE  # the model's own text, as it sent it
        if isinstance(value, dict):
            return value, None
        return raw, f"arguments are {kind(value)} in JSON, not an object"
    return jsonenc.dumps(raw), f"arguments are {kind(raw)}, not an object"


def parsed_call(
    wire: str,
    name: Any,
    arguments: Any,
    call_id: Any,
    where: str,
    provider_data: dict[str, Any] | None = None,
) -> ParsedCall:
    """A call the model made: ``name`` must be a non-empty string (``where`` names its field); broken
    arguments are kept as text with an ``input_error`` (see :func:`decode_arguments`); an empty or
    missing id is None."""
    text = text_of(name, wire, where)
    if not text:
        fail(wire, f"{where} is empty")
    value, error = decode_arguments(arguments)
    return ParsedCall(
        name=text,
        input=value,
        call_id=call_id if isinstance(call_id, str) and call_id else None,
        provider_data=provider_data,
        input_error=error,
    )


def function_calls(wire: str, message: Mapping[str, Any]) -> tuple[ParsedCall, ...]:
    """An answer message's OpenAI-style ``tool_calls`` (``id``, ``function.name``,
    ``function.arguments``), as Chat and Ollama send them."""
    out: list[ParsedCall] = []
    for i, raw in enumerate(items(message.get("tool_calls"), wire, "message.tool_calls")):
        at = f"message.tool_calls[{i}]"
        tc = mapping(raw, wire, at)
        fn = mapping(tc.get("function"), wire, f"{at}.function")
        out.append(
            parsed_call(wire, fn.get("name"), fn.get("arguments"), tc.get("id"), f"{at}.function.name")
        )
    return tuple(out)


def provider_data(wire: str, fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """Message-level provider data under ``wire``: the fields that hold something (None when none does)."""
    kept = {k: v for k, v in fields.items() if v}
    return {wire: kept} if kept else None


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else text


def join_runs(runs: Sequence[str]) -> str:
    """Text pieces that stood apart (separated by calls) joined with a blank line (design 10)."""
    return "\n\n".join(r for r in runs if r)


def stream_error(wire: str, payload: Any) -> ProviderError:
    """The error for an error event inside a stream (after a 200), by the provider's error type or code.

    Rate limits and overload are retryable; an invalid request or a refused key are not; an error of no
    known type counts as a server error (the provider failed part-way).
    """
    message, hint = _error_parts(payload)
    text = f"{wire} stream error: {message}"
    if any(k in hint for k in ("rate_limit", "rate-limit", "resource_exhausted", "too_many")):
        return RateLimitError(text, status=429)
    if any(k in hint for k in ("invalid_request", "bad_request", "invalid_argument", "invalid_prompt")):
        return BadRequestError(text, status=400)
    if any(k in hint for k in ("authentication", "permission", "unauthorized", "unauthenticated")):
        return AuthenticationError(text, status=401)
    return ServerError(text)


def _error_parts(payload: Any) -> tuple[str, str]:
    err: Any = payload
    if isinstance(payload, Mapping) and "error" in payload:
        err = payload["error"]
    if isinstance(payload, Mapping) and payload.get("type") == "response.failed":
        err = (payload.get("response") or {}).get("error") or err
    if isinstance(err, str):
        return err, err.lower()
    if isinstance(err, Mapping):
        msg = err.get("message") or err.get("msg") or jsonenc.dumps(err)
        hint = " ".join(str(err.get(k, "")) for k in ("type", "code", "status")).lower()
        return str(msg), hint
    return jsonenc.dumps(payload), ""


__all__ = [
    "add_counts",
    "count",
    "decode_arguments",
    "detail_count",
    "ended_early",
    "fail",
    "function_calls",
    "items",
    "join_runs",
    "kind",
    "mapping",
    "missing",
    "parsed_call",
    "provider_data",
    "stream_error",
    "string",
    "text_of",
]

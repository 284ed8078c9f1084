"""What the wires' request parsers share besides the turn rules of :mod:`toolreplay.wires.turns`.

The pieces here read shapes that several wires write alike: the body's message list beside the rest of
the body, the entries of that list, tool definitions, a call's name/arguments/id, OpenAI-style
``tool_calls``, and a user message that carries answers and words. What differs per wire (the list's key,
where a definition keeps its schema, which error to raise) is passed in; each wire's own rules stay in its
``request.py``.

``fail`` is the wire's error maker: it turns a problem naming the body field into the exception to raise
(:class:`~toolreplay.errors.WireError` for the wires, ImportFormatError for an importer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

from toolreplay.model import Part, ToolSpec, with_words
from toolreplay.wires.turns import Answers, Call, Event, Result, UserText, arguments_input, tool_spec

Fail = Callable[[str], Exception]


def nonempty(value: Any) -> str | None:
    """An id field as the body gives it, or None when it is absent, not a string, or empty."""
    return value if isinstance(value, str) and value else None


def string(value: Any) -> str | None:
    """A string field (a name an answer gives), or None when it is absent or not a string."""
    return value if isinstance(value, str) else None


def listed(value: Any) -> list[Any]:
    """A field that should be a list, or an empty list when it is anything else."""
    return value if isinstance(value, list) else []


def split_list(body: Any, key: str, noun: str, fail: Fail) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The body's list under ``key`` and the rest of the body (empty when given just the list).

    ``noun`` names what the list holds, for the error about a body that is neither.
    """
    if isinstance(body, list):
        return body, {}
    if isinstance(body, Mapping):
        b = cast(Mapping[str, Any], body)
        found = b.get(key)
        if not isinstance(found, list):
            raise fail(f"no '{key}' list in the body")
        return found, b
    raise fail(f"the body is {type(body).__name__}, not an object or a list of {noun}")


def objects(entries: Sequence[Any], key: str, fail: Fail) -> Iterator[tuple[int, str, Mapping[str, Any]]]:
    """Each entry of the body's ``key`` list with its index and field name (``messages[3]``).

    An entry that is not an object is an error naming it.
    """
    for i, raw in enumerate(entries):
        where = f"{key}[{i}]"
        if not isinstance(raw, Mapping):
            raise fail(f"{where} is {type(raw).__name__}, not an object")
        yield i, where, cast(Mapping[str, Any], raw)


def _parameters(definition: Mapping[str, Any]) -> Any:
    return definition.get("parameters")


def read_tools(
    definitions: Iterable[Any], schema: Callable[[Mapping[str, Any]], Any] = _parameters
) -> tuple[ToolSpec, ...]:
    """Tool definitions (objects with ``name``, ``description`` and the schema ``schema`` reads).

    The wire picks which entries are definitions of client tools; entries that are not objects, or have
    no name, are skipped.
    """
    out: list[ToolSpec] = []
    for d in definitions:
        if isinstance(d, Mapping):
            dd = cast(Mapping[str, Any], d)
            spec = tool_spec(dd.get("name"), dd.get("description"), schema(dd))
            if spec is not None:
                out.append(spec)
    return tuple(out)


def read_call(
    name: Any,
    arguments: Any,
    call_id: Any,
    at: str,
    name_field: str,
    warnings: list[str],
    fail: Fail,
    provider_data: dict[str, Any] | None = None,
) -> Call:
    """A call from its body fields: a name (a non-empty string, else ``fail`` names ``at.name_field``),
    arguments (not a JSON object: kept as text, with a warning at ``at``) and an optional id."""
    if not isinstance(name, str) or not name:
        raise fail(f"{at}.{name_field} is missing or not a string")
    value, problem = arguments_input(arguments)
    if problem:
        warnings.append(f"{at}: {problem}")
    return Call(name, value, nonempty(call_id), provider_data)


def function_calls(raw: Any, where: str, warnings: list[str], fail: Fail) -> list[Call]:
    """An assistant message's OpenAI-style ``tool_calls`` (``id``, ``function.name``,
    ``function.arguments``), as Chat and Ollama write them."""
    if raw is not None and not isinstance(raw, list):
        raise fail(f"{where}.tool_calls is {type(raw).__name__}, not a list")
    out: list[Call] = []
    for k, tc in enumerate(listed(raw)):
        at = f"{where}.tool_calls[{k}]"
        if not isinstance(tc, Mapping):
            raise fail(f"{at} is {type(tc).__name__}, not an object")
        t = cast(Mapping[str, Any], tc)
        fn = t.get("function")
        if not isinstance(fn, Mapping):
            raise fail(f"{at}.function is missing or not an object")
        f = cast(Mapping[str, Any], fn)
        out.append(
            read_call(f.get("name"), f.get("arguments"), t.get("id"), at, "function.name", warnings, fail)
        )
    return out


def user_events(
    results: list[Result],
    texts: list[str],
    joiner: str,
    where: str,
    created_at: str | None = None,
    parts: Sequence[Part] = (),
) -> list[Event]:
    """A user message of answers and words: the answers first (they close the agent's turn), then the
    words joined by ``joiner``, when there are any or when there are no answers (an empty message).

    ``parts``: the message's content in order (text parts included) when it holds an image or a
    document; its words are then the text parts' (:func:`~toolreplay.model.with_words`)."""
    events: list[Event] = []
    if results:
        events.append(Answers(results, where))
    if any(p.kind != "text" for p in parts):
        text, kept = with_words("", parts)
        events.append(UserText(text, where, created_at, parts=kept))
    elif texts or not results:
        events.append(UserText(joiner.join(texts), where, created_at))
    return events


__all__ = [
    "Fail",
    "function_calls",
    "listed",
    "nonempty",
    "objects",
    "read_call",
    "read_tools",
    "split_list",
    "string",
    "user_events",
]

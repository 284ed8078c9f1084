"""Each wire's request body read by hand: the calls and the answers it carries, element by element.

Independent of toolreplay's parsers on purpose (a test that checks a render against the wire's own
``parse_request`` would agree with a parser that drops a call): the tests that ask "does this body carry
its calls as calls?" (the turn loop's, the handoff's, the agents' double) read it here, one reader per
wire, instead of each keeping its own switch over wire names. What is a wire fact and not a reading
(the list key) comes from the wire's contract.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolreplay.wires import get_wire, wire_names


@dataclass(frozen=True, slots=True)
class Piece:
    """One call or one answer, in the element (message, item, content) ``at`` of the body's list."""

    at: int
    kind: str  # "call" or "result"
    name: str = ""
    input: Any = None
    call_id: str | None = None
    answer: Any = None


def _dicts(value: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(value, list):
        yield from (v for v in value if isinstance(v, Mapping))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in _dicts(content))


def _chat(at: int, m: Mapping[str, Any]) -> list[Piece]:
    """Chat's (and Ollama's) messages: an assistant's ``tool_calls``, a ``tool`` message's answer."""
    if m.get("role") == "tool":
        return [Piece(at, "result", call_id=m.get("tool_call_id"), answer=m.get("content"))]
    out = []
    for tc in _dicts(m.get("tool_calls")):
        fn = tc.get("function") or {}
        args = fn.get("arguments")
        out.append(Piece(at, "call", str(fn.get("name")), json.loads(args) if isinstance(args, str) else args,
                         tc.get("id")))  # fmt: skip
    return out


def _ollama(at: int, m: Mapping[str, Any]) -> list[Piece]:
    pieces = _chat(at, m)
    # Ollama's arguments are objects, never strings; its tool messages name no call id (paired in order)
    assert all(isinstance(p.input, dict) for p in pieces if p.kind == "call"), m
    return [Piece(p.at, p.kind, p.name, p.input, None, p.answer) for p in pieces]


_CALLS = {"function_call": "arguments", "custom_tool_call": "input"}
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def _responses(at: int, item: Mapping[str, Any]) -> list[Piece]:
    """Responses' items: a function (or free-form) call and its output, paired by ``call_id``."""
    kind = item.get("type")
    if kind in _CALLS:
        raw = item.get(_CALLS[kind])
        value = json.loads(raw) if kind == "function_call" and isinstance(raw, str) else raw
        return [Piece(at, "call", str(item.get("name")), value, item.get("call_id"))]
    if kind in _OUTPUTS:
        return [Piece(at, "result", call_id=item.get("call_id"), answer=item.get("output"))]
    return []


def _anthropic(at: int, m: Mapping[str, Any]) -> list[Piece]:
    """Anthropic's content blocks: ``tool_use`` and ``tool_result``, paired by id."""
    out = []
    for b in _dicts(m.get("content")):
        if b.get("type") == "tool_use":
            out.append(Piece(at, "call", str(b.get("name")), b.get("input"), b.get("id")))
        elif b.get("type") == "tool_result":
            out.append(Piece(at, "result", call_id=b.get("tool_use_id"), answer=_text(b.get("content"))))
    return out


def _gemini(at: int, c: Mapping[str, Any]) -> list[Piece]:
    """Gemini's parts: ``functionCall`` and ``functionResponse`` (no ids: paired in order)."""
    out = []
    for p in _dicts(c.get("parts")):
        if "functionCall" in p:
            call = p["functionCall"]
            out.append(Piece(at, "call", str(call.get("name")), call.get("args")))
        elif "functionResponse" in p:
            out.append(
                Piece(at, "result", answer=(p["functionResponse"].get("response") or {}).get("output"))
            )
    return out


#: The reader of one element of each wire's list (claude-prompt has none: its calls are inside the
#: prompt's transcript text).
READERS: dict[str, Callable[[int, Mapping[str, Any]], list[Piece]]] = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "ollama": _ollama,
}


def elements(wire: str, body: Mapping[str, Any]) -> list[Any]:
    """The body's list (``wire``'s list key), a bare list as it is."""
    listed = body if isinstance(body, list) else body.get(get_wire(wire).list_key)
    return list(listed) if isinstance(listed, list) else []


def pieces(wire: str, body: Mapping[str, Any] | Sequence[Any]) -> list[Piece] | None:
    """Every call and answer of ``body`` (or of its list), in order, each in its element; None for a wire
    with no reader here."""
    read = READERS.get(wire)
    if read is None:
        return None
    listed = list(body) if isinstance(body, Sequence) else elements(wire, body)
    return [p for at, el in enumerate(listed) if isinstance(el, Mapping) for p in read(at, el)]


def _read(wire: str, body: Mapping[str, Any]) -> list[Piece] | None:
    """:func:`pieces`, or for a wire with no reader here (a new one) what its own ``parse_request`` reads
    meanwhile: its calls and answers in order, each answer right after its call; None for a wire whose
    calls live in its text (claude-prompt)."""
    found = pieces(wire, body)
    if found is not None or wire not in wire_names():
        return found
    w = get_wire(wire)
    if w.parse_request is None or w.http is None:
        return None
    out: list[Piece] = []
    for at, m in enumerate(w.parse_request(body).messages):
        for c in m.tool_uses:
            out.append(Piece(at, "call", c.name, c.input))
            if c.answer is not None:
                out.append(Piece(at, "result", answer=c.answer))
    return out


def calls_in(wire: str, body: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """Every call the body carries *as a call*, with its answer: (name, input, answer). By id where the
    wire's calls carry ids, else in order (every call must be answered)."""
    found = _read(wire, body) or []
    calls = [p for p in found if p.kind == "call"]
    results = [p for p in found if p.kind == "result"]
    if all(p.call_id for p in found):
        answers = {p.call_id: p.answer for p in results}
        return [(c.name, c.input, answers[c.call_id]) for c in calls]
    return [(c.name, c.input, r.answer) for c, r in zip(calls, results, strict=True)]


def counts(wire: str, body: Mapping[str, Any]) -> tuple[int, int] | None:
    """(calls, answers) the body carries as such; None for a wire whose calls live in its text."""
    found = _read(wire, body)
    if found is None:
        return None
    return sum(p.kind == "call" for p in found), sum(p.kind == "result" for p in found)


def ends_with_results(wire: str, listed: Sequence[Any]) -> bool:
    """The list's last element holds answers and nothing else."""
    assert wire in READERS, f"{wire}: no reader of its elements in helpers_shapes"
    last = pieces(wire, listed[-1:]) or []
    return bool(last) and all(p.kind == "result" for p in last)


def call_runs(wire: str, listed: Sequence[Any]) -> list[int]:
    """How many calls each run of calls holds, in order (a run: calls with no other element or answer
    between them; one assistant message's calls, or Responses' call items in a row)."""
    assert wire in READERS, f"{wire}: no reader of its elements in helpers_shapes"
    by_at: dict[int, list[Piece]] = {}
    for p in pieces(wire, listed) or []:
        by_at.setdefault(p.at, []).append(p)
    runs: list[int] = []
    run = 0
    for at in range(len(listed)):
        held = by_at.get(at, [])
        if held and all(p.kind == "call" for p in held):
            run += len(held)
        elif run:
            runs.append(run)
            run = 0
    return runs + ([run] if run else [])


def first_call_at(wire: str, listed: Sequence[Any]) -> int:
    """The index of the first element of the list that holds a call."""
    assert wire in READERS, f"{wire}: no reader of its elements in helpers_shapes"
    return next(p.at for p in pieces(wire, listed) or [] if p.kind == "call")


def _chat_tool(tool: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | None]:
    fn = tool.get("function") or {}
    return {str(fn.get("name")): fn.get("parameters") or {}}


def _gemini_tool(tool: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | None]:
    return {
        str(d.get("name")): d.get("parametersJsonSchema") or d.get("parameters") or {}
        for d in _dicts(tool.get("functionDeclarations"))
    }


def _named_tool(tool: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | None]:
    """Anthropic's and Responses' tools: a name and its schema; a free-form (custom) tool has none."""
    if "name" not in tool:
        return {}
    if tool.get("type") == "custom":
        return {str(tool["name"]): None}
    return {str(tool["name"]): tool.get("input_schema") or tool.get("parameters") or {}}


#: How each wire declares a tool (the body's ``tools`` elements).
TOOL_READERS: dict[str, Callable[[Mapping[str, Any]], dict[str, Mapping[str, Any] | None]]] = {
    "openai-chat": _chat_tool,
    "ollama": _chat_tool,
    "openai-responses": _named_tool,
    "anthropic": _named_tool,
    "gemini": _gemini_tool,
}


def tools_in(wire: str, body: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | None]:
    """The tools the body declares, by name, each with its input schema (None: a free-form tool)."""
    read = TOOL_READERS.get(wire, _named_tool)
    return {name: schema for tool in _dicts(body.get("tools")) for name, schema in read(tool).items()}

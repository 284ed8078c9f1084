"""Ollama native chat (``/api/chat``). (Ollama's ``/v1`` endpoint is OpenAI Chat: use that wire there.)

A replayed reply becomes an assistant message with ``tool_calls`` (``arguments`` a JSON **object**), one
``tool`` message per call right after it (``tool_name`` and ``tool_call_id``), then an assistant message
with the reply's text. A user message that holds images sends them base64 in its ``images`` (Ollama has
no place for an image by URL or a document: those travel as their names in its ``content``).

Rules this module keeps (the shape of the Go type ``api.Message``, which the bundled openapi.yaml lacks):
* ``arguments`` is an object (a string does not decode into ``api.ToolCallFunctionArguments``);
* the answer names its tool with ``tool_name`` (a ``name`` key is silently dropped);
* ``stream`` is sent explicitly: Ollama streams unless told ``false``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolreplay.model import Part
from toolreplay.wires.common import (
    IdMapper,
    RenderOptions,
    function_tools,
    plain_dict,
    sampling,
    user_words,
    wire_tool_name,
)
from toolreplay.wires.contract import TurnPiece
from toolreplay.wires.replayed import ReplayStep, TurnMessage, split_system, turn_steps

WIRE = "ollama"
#: The body key that holds the history (written here only; the wire's other modules import it).
LIST_KEY = "messages"
#: The answer parts this wire carries; any other part travels as its name in the answer's text.
PART_KINDS: frozenset[str] = frozenset({"text", "image"})


#: ``tools``: every given tool plus every tool the replayed calls use.
render_tools = function_tools


def carries(p: Part) -> bool:
    """Inline images only (``images`` holds base64; nothing takes a URL or a document)."""
    return p.kind == "image" and bool(p.data) and not p.url


def _user_message(t: TurnMessage) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": t.role, "content": user_words(t, carries)}
    images = [p.data for p in t.parts if p.kind != "text" and carries(p)]
    if images:
        msg["images"] = images
    return msg


def _step_messages(step: ReplayStep, ids: IdMapper) -> list[dict[str, Any]]:
    """One step: the assistant message (words, its issuer's ``thinking``, ``tool_calls``), then one tool
    message per call (``images``: the answer's images as base64)."""
    wire_ids = [ids(c) for c in step.calls]
    names = [wire_tool_name(c.name) for c in step.calls]
    msg: dict[str, Any] = {"role": "assistant", "content": step.words}
    for d in step.reasoning(WIRE) if step.said else ():
        msg.update(d)
    msg["tool_calls"] = [
        {"id": wid, "function": {"index": i, "name": name, "arguments": plain_dict(c.input)}}
        for i, (wid, name, c) in enumerate(zip(wire_ids, names, step.calls, strict=True))
    ]
    out = [msg]
    for wid, name, c in zip(wire_ids, names, step.calls, strict=True):
        answer: dict[str, Any] = {"role": "tool", "tool_name": name, "tool_call_id": wid, "content": c.answer}
        images = [p.data for p in c.parts if p.kind == "image" and p.data]
        if images:
            answer["images"] = images
        out.append(answer)
    return out


def render_turn(t: TurnMessage, ids: IdMapper) -> list[dict[str, Any]]:
    """The messages of one turn message: each step (calls, their answers), then the text."""
    if t.parts:
        return [_user_message(t)]
    if not t.calls and not t.steps:
        return [{"role": t.role, "content": t.text}]
    out: list[dict[str, Any]] = []
    for step in turn_steps(t):
        if step.calls:
            out.extend(_step_messages(step, ids))
    if t.text:
        out.append({"role": "assistant", "content": t.text})
    return out


def call_ids(opts: RenderOptions) -> IdMapper:
    """The id policy hook: the vessel's policy."""
    return IdMapper(opts)


def turn_renderer(opts: RenderOptions, ids: IdMapper | None) -> TurnPiece:
    """The per-turn renderer (the incremental renderer and :func:`render_messages` both run it)."""
    mapper = ids if ids is not None else call_ids(opts)
    return lambda t, items: render_turn(t, mapper)


def render_messages(turns: Sequence[TurnMessage], opts: RenderOptions) -> list[dict[str, Any]]:
    """The ``messages`` list (no system message)."""
    piece = turn_renderer(opts, None)
    out: list[dict[str, Any]] = []
    for t in turns:
        out.extend(piece(t, out))
    return out


def render(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The request body for ``/api/chat``."""
    system, rest = split_system(turns, opts.system)
    messages = render_messages(rest, opts)
    if system:
        messages.insert(0, {"role": "system", "content": system})
    body: dict[str, Any] = {"model": opts.model, LIST_KEY: messages}
    tools = render_tools(opts, rest)
    if tools:
        body["tools"] = tools
    body["stream"] = opts.stream
    options = sampling(opts, "num_predict")
    if options:
        body["options"] = options
    return body

"""OpenAI Responses (``/v1/responses``): OpenAI, Codex (ChatGPT backend) and xAI Grok.

A replayed reply becomes, step by step, the step's ``reasoning`` items (verbatim, with their
``encrypted_content``, only to the model that issued them: design 17), the words it wrote before its calls
(``{"role": "assistant", "content": words}``), ``function_call`` items (``call_id``, ``name``,
``arguments`` string) and one ``function_call_output`` item per call (content items when the answer has
images or files); then ``{"role": "assistant", "content": text}``.

Rules this module keeps (the errors they avoid):
* no item ``id`` on replayed calls: an ``fc_...`` id demands its paired reasoning item ("provided without
  its required 'reasoning' item"), and with ``store: false`` nothing server-side may be referenced;
* ``call_id`` at most 64 characters (the spec's limit; Codex enforces it);
* each output follows the call with its ``call_id`` in the same input;
* the system prompt goes in ``instructions``; ``store: false`` when the vessel has flag ``store_false``
  (Codex requires it);
* tools carry ``"strict": false`` (the spec requires the field; our schemas are not strict-ready,
  design 8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay._replay import ReplayCall, ReplayStep, TurnMessage, split_system, turn_steps
from toolreplay._steps import Text
from toolreplay.wires.common import (
    IdMapper,
    RenderOptions,
    declared_tools,
    sampling,
    tool_map,
    wire_tool_name,
)
from toolreplay.wires.contract import TurnPiece

WIRE = "openai-responses"
#: The body key that holds the history (written here only; the wire's other modules import it).
LIST_KEY = "input"
#: The answer parts this wire carries; any other part travels as its name in the answer's text.
PART_KINDS: frozenset[str] = frozenset({"text", "image", "document"})
#: ``call_id`` maxLength in the OpenAPI spec (FunctionCallOutputItemParam).
MAX_CALL_ID = 64


def render_tools(opts: RenderOptions, turns: Sequence[TurnMessage]) -> list[dict[str, Any]]:
    """``tools``: every given tool plus every tool the replayed calls use, as function tools."""
    return [
        {"type": "function", "name": name, "description": desc, "parameters": dict(params), "strict": False}
        for name, desc, params in tool_map(declared_tools(turns, opts.tools))
    ]


def _output(c: ReplayCall) -> Any:
    """A call's ``output``: its answer, or content items when it has parts (images, files)."""
    if not c.parts:
        return c.answer
    out: list[dict[str, Any]] = []
    for p in c.parts:
        if p.kind == "text":
            out.append({"type": "input_text", "text": p.text})
        elif p.kind == "image":
            url = p.url or f"data:{p.media_type};base64,{p.data}"
            out.append({"type": "input_image", "image_url": url})
        else:
            item: dict[str, Any] = {"type": "input_file"}
            if p.url:
                item["file_url"] = p.url
            else:
                item["file_data"] = f"data:{p.media_type};base64,{p.data}"
            item["filename"] = p.name or "document"
            out.append(item)
    return out


def _step_items(step: ReplayStep, ids: IdMapper) -> list[dict[str, Any]]:
    """One step: its reasoning items (verbatim, to their issuer only), its words, its calls, then their
    outputs."""
    out: list[dict[str, Any]] = []
    for p in step.said:  # in the order the model produced them
        if isinstance(p, Text):
            if p.text:
                out.append({"role": "assistant", "content": p.text})
        elif p.data and isinstance(d := p.data.get(WIRE), Mapping):
            out.append(dict(d))
    wire_ids = [ids(c) for c in step.calls]
    out.extend(
        {"type": "function_call", "call_id": wid, "name": wire_tool_name(c.name), "arguments": c.arguments}
        for wid, c in zip(wire_ids, step.calls, strict=True)
    )
    out.extend(
        {"type": "function_call_output", "call_id": wid, "output": _output(c)}
        for wid, c in zip(wire_ids, step.calls, strict=True)
    )
    return out


def render_turn(t: TurnMessage, ids: IdMapper) -> list[dict[str, Any]]:
    """The input items of one turn message: each step (reasoning, words, calls, outputs), then the text."""
    if not t.calls and not t.steps:
        return [{"role": t.role, "content": t.text}]
    out: list[dict[str, Any]] = []
    for step in turn_steps(t):
        if step.calls:
            out.extend(_step_items(step, ids))
        elif step.said:  # the closing step: the reasoning that led to the final words
            out.extend(dict(d) for d in step.made(WIRE))
    if t.text:
        out.append({"role": "assistant", "content": t.text})
    return out


def call_ids(opts: RenderOptions) -> IdMapper:
    """The id policy hook: ids of at most :data:`MAX_CALL_ID` characters."""
    return IdMapper(opts, max_len=MAX_CALL_ID)


def turn_renderer(opts: RenderOptions, ids: IdMapper | None) -> TurnPiece:
    """The per-turn renderer (the incremental renderer and :func:`render_input` both run it)."""
    mapper = ids if ids is not None else call_ids(opts)
    return lambda t, items: render_turn(t, mapper)


def render_input(turns: Sequence[TurnMessage], opts: RenderOptions) -> list[dict[str, Any]]:
    """The ``input`` list (system messages excluded: they go in ``instructions``)."""
    piece = turn_renderer(opts, None)
    out: list[dict[str, Any]] = []
    for t in turns:
        out.extend(piece(t, out))
    return out


def render(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The request body for ``/responses``."""
    system, rest = split_system(turns, opts.system)
    body: dict[str, Any] = {"model": opts.model}
    if system:
        body["instructions"] = system
    body[LIST_KEY] = render_input(rest, opts)
    tools = render_tools(opts, rest)
    if tools:
        body["tools"] = tools
        if opts.tool_choice:
            body["tool_choice"] = opts.tool_choice
    if "store_false" in opts.flags:
        body["store"] = False
    if opts.include:
        body["include"] = list(opts.include)
    body.update(sampling(opts, "max_output_tokens"))
    if opts.stream:
        body["stream"] = True
    return body

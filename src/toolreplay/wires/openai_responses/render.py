"""OpenAI Responses (``/v1/responses``): OpenAI, Codex (ChatGPT backend) and xAI Grok.

A replayed reply becomes, step by step, the step's ``reasoning`` items (verbatim, with their
``encrypted_content``, only to the model that issued them: design 17), the words it wrote before its calls
(``{"role": "assistant", "content": words}``), ``function_call`` items (``call_id``, ``name``,
``arguments`` string; a free-form call: ``custom_tool_call`` with its ``input`` text) and one output item
per call (``function_call_output`` / ``custom_tool_call_output``, content items when the answer has
images or files); then ``{"role": "assistant", "content": text}``. A system message stands where it was
(a ``developer`` message stays one); the leading ones go in ``instructions`` unless they were sent as
input items. Tools: function tools, free-form tools and OpenAI's own tools as declared.

Rules this module keeps (the errors they avoid):
* a replayed call carries its own item ``id`` (``fc_...``) only to its issuer and only beside the
  reasoning items of its step: the server pairs the two ("Item 'fc_...' of type 'function_call' was
  provided without its required 'reasoning' item", and a reasoning item without the item it produced:
  "... was provided without its required following item"). Every other call goes without an item id
  (derived ``call_id`` only), as does every call for another vessel. With ``store: false`` (Codex, the
  ``openai-responses`` vessel) nothing is kept server-side: a reasoning item travels whole with its
  ``encrypted_content`` (the vessel asks for it with ``include``; without it the server answers "Item with
  id 'rs_...' not found. Items are not persisted when `store` is set to false": such a step goes
  without its reasoning, design 17), and the calls carry their
  item ids only when every reasoning item of their step has its encrypted content;
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

from toolreplay.model import Part, Reasoning, Text
from toolreplay.wires.common import (
    IdMapper,
    RenderOptions,
    declared_tools,
    sampling,
    tool_map,
    wire_tool_name,
)
from toolreplay.wires.contract import TurnPiece
from toolreplay.wires.media import data_url
from toolreplay.wires.replayed import (
    ReplayCall,
    ReplayStep,
    TurnMessage,
    leading_system,
    split_system,
    turn_steps,
)

WIRE = "openai-responses"
#: The body key that holds the history (written here only; the wire's other modules import it).
LIST_KEY = "input"
#: The answer parts this wire carries; any other part travels as its name in the answer's text.
PART_KINDS: frozenset[str] = frozenset({"text", "image", "document"})
#: ``call_id`` maxLength in the OpenAPI spec (FunctionCallOutputItemParam).
MAX_CALL_ID = 64


def render_tools(opts: RenderOptions, turns: Sequence[TurnMessage]) -> list[dict[str, Any]]:
    """``tools``: every given tool plus every tool the replayed calls use: function tools, free-form
    (``custom``) tools as declared (grammar and all), tools OpenAI runs itself as declared to this wire
    (another wire's are left out, :func:`~toolreplay.wires.render_warnings.tool_kind_warnings` names them)."""
    out: list[dict[str, Any]] = []
    for t in declared_tools(turns, opts.tools):
        kept = t.sent.get(WIRE) if t.sent else None
        decl = kept.get("tool") if isinstance(kept, Mapping) else None
        if t.kind == "function":
            name, desc, params = tool_map((t,))[0]
            out.append({"type": "function", "name": name, "description": desc, "parameters": dict(params),
                        "strict": False})  # fmt: skip
        elif isinstance(decl, Mapping):
            out.append(dict(decl))
        elif t.kind == "custom":
            out.append({"type": "custom", "name": wire_tool_name(t.name), "description": t.description})
    return out


def carries(p: Part) -> bool:
    """Images and files, inline (a ``data:`` URL) or by URL: every part of a user message."""
    return p.kind in PART_KINDS


def content_part(p: Part) -> dict[str, Any]:
    """One content part: ``input_text``, ``input_image`` or ``input_file``."""
    if p.kind == "text":
        return {"type": "input_text", "text": p.text}
    if p.kind == "image":
        return {"type": "input_image", "image_url": p.url or data_url(p)}
    item: dict[str, Any] = {"type": "input_file"}
    if p.url:
        item["file_url"] = p.url
    else:
        item["file_data"] = data_url(p)
    item["filename"] = p.name or "document"
    return item


def _output(c: ReplayCall) -> Any:
    """A call's ``output``: its answer, or content items when it has parts (images, files)."""
    if not c.parts:
        return c.answer
    return [content_part(p) for p in c.parts]


def _user_message(t: TurnMessage) -> dict[str, Any]:
    content = [content_part(p) for p in t.parts]
    for part in content:
        if part["type"] == "input_image":
            part["detail"] = "auto"  # required on a message's input_image (InputImageContent)
    return {"role": "user", "content": content}


def _item_id(c: ReplayCall) -> str | None:
    """The call item's own id (``fc_...``) as the provider gave it, when the replay passed it on (only to
    the call's issuer: design 17)."""
    d = c.provider_data.get(WIRE) if c.provider_data else None
    fc = d.get("item_id") if isinstance(d, Mapping) else None
    return fc if isinstance(fc, str) and fc else None


def _paired(reasoning: list[Mapping[str, Any]], stateless: bool) -> bool:
    """Whether a step's calls carry their own item ids: when its ``reasoning`` items go back with them
    (the server pairs the two), each with its ``encrypted_content`` on a ``store: false`` vessel (nothing
    is kept server-side to resolve an id by)."""
    return bool(reasoning) and not (stateless and not all(r.get("encrypted_content") for r in reasoning))


def _step_items(step: ReplayStep, ids: IdMapper, stateless: bool) -> list[dict[str, Any]]:
    """One step: its reasoning items (verbatim, to their issuer only), its words, its calls (with their
    own item ids beside their reasoning, :func:`_paired`), then their outputs."""
    out: list[dict[str, Any]] = []
    reasoning: list[Mapping[str, Any]] = []
    for p in step.said:  # in the order the model produced them
        if type(p) is Text:
            if p.text:
                out.append({"role": "assistant", "content": p.text})
        elif p.data and isinstance(d := p.data.get(WIRE), Mapping):
            out.append(dict(d))
            if type(p) is Reasoning:
                reasoning.append(d)
    paired = _paired(reasoning, stateless)
    outputs: list[dict[str, Any]] = []
    for c in step.calls:  # one pass: each call's id mapped once, for the call and its output
        wid = ids(c)
        fc = _item_id(c) if paired else None
        name = wire_tool_name(c.name)
        output = _output(c) if c.parts else c.answer
        if c.kind == "custom":  # a free-form call: its text as it was, and the ctc_ id beside it
            item: dict[str, Any] = {"type": "custom_tool_call", "call_id": wid, "name": name, "input": c.text}
            outputs.append({"type": "custom_tool_call_output", "call_id": wid, "output": output})
        else:
            item = {"type": "function_call", "call_id": wid, "name": name, "arguments": c.arguments}
            outputs.append({"type": "function_call_output", "call_id": wid, "output": output})
        out.append(item if fc is None else {"type": item["type"], "id": fc, **item})
    out += outputs
    return out


def render_turn(t: TurnMessage, ids: IdMapper, stateless: bool = False) -> list[dict[str, Any]]:
    """The input items of one turn message: each step (reasoning, words, calls, outputs), then the text."""
    if t.role == "system":  # in place, as sent (a developer message) or as a system message
        role = _sent_role(t)
        return [{"role": role or "system", "content": t.text}]
    if t.parts:
        return [_user_message(t)]
    if not t.calls and not t.steps:
        return [{"role": t.role, "content": t.text}]
    out: list[dict[str, Any]] = []
    for step in turn_steps(t):
        if step.calls:
            out.extend(_step_items(step, ids, stateless))
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
    stateless = "store_false" in opts.flags
    return lambda t, items: render_turn(t, mapper, stateless)


def render_input(turns: Sequence[TurnMessage], opts: RenderOptions) -> list[dict[str, Any]]:
    """The ``input`` list (system messages excluded: they go in ``instructions``)."""
    piece = turn_renderer(opts, None)
    out: list[dict[str, Any]] = []
    for t in turns:
        out.extend(piece(t, out))
    return out


def _sent_role(t: TurnMessage) -> str | None:
    """The role a system turn was sent with as an input item of this wire (``developer``), or None."""
    kept = t.sent.get(WIRE) if t.sent else None
    role = kept.get("role") if isinstance(kept, Mapping) else None
    return role if isinstance(role, str) else None


def _split(turns: Sequence[TurnMessage], system: str | None) -> tuple[str | None, list[TurnMessage]]:
    """The ``instructions`` and the turns of ``input``: a system message sent as an input item
    (Codex's developer messages) stays one where it stood; a later one stays in place too."""
    lead = leading_system(turns)
    head = [t for t in turns[:lead] if _sent_role(t) is None]
    if len(head) == lead:
        return split_system(turns, system, in_place=True)
    prompt, _ = split_system(head, system)
    return prompt, [t for t in turns[:lead] if _sent_role(t) is not None] + list(turns[lead:])


def render(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The request body for ``/responses``."""
    system, rest = _split(turns, opts.system)
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

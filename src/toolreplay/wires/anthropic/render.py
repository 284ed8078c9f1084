"""Anthropic Messages (``/v1/messages``): the Claude API and Anthropic-compatible endpoints (GLM at Z.ai).

A replayed reply becomes, step by step, an assistant message of the step's ``thinking`` /
``redacted_thinking`` blocks (verbatim with their signatures, only to the model that issued them: design
17; with thinking on, Anthropic refuses a continuation whose last assistant message does not start with
its thinking block), a text block of the words before the calls, and ``tool_use`` blocks; then a user
message of the matching ``tool_result`` blocks (same ids, same order; image and document blocks when the
answer has them). Then an assistant message with the reply's text. A user message that holds images or
documents sends them as ``image`` / ``document`` blocks (base64 or url source) where the user put them.

Rules this module keeps (the errors they avoid):
* a body holding ``tool_use`` blocks defines tools (400 "Requests which include `tool_use` or
  `tool_result` blocks must define tools"): every tool the history uses is declared;
* ``input`` is always a JSON object (GLM answered an array there with a 500);
* ids match ``^[a-zA-Z0-9_-]+$`` (Kimi-style ``functions.x:0`` ids are rejected);
* all results of one assistant message sit in the one next user message, ``tool_result`` blocks first;
* no empty or blank text block (400 "text content blocks must be non-empty", "... must contain
  non-whitespace text"): a message whose text is blank is left out;
* the first message is a user message (400 'messages: first message must use the "user" role'): a
  history that opens with a reply (tau2 transcripts open with the agent's greeting) gets a user message
  with the text :data:`~toolreplay.wires.common.SEPARATOR` first;
* ``max_tokens`` is required: :data:`DEFAULT_MAX_TOKENS` when the caller gives none.

Role alternation: a reply whose calls have no text after them (in progress, interrupted) is followed by
the next user message as a message of its own, not merged into the ``tool_result`` message. Anthropic
combines consecutive same-role turns server-side (so the results stay first), and keeping each stored
message's rendering independent of what follows keeps the message list an element-wise prefix when a
turn is appended (byte stability, prompt caching).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.model import Part, RequestSettings, Text
from toolreplay.wires.common import (
    SEPARATOR,
    IdMapper,
    RenderOptions,
    declared_tools,
    plain_dict,
    same_wire_settings,
    tool_map,
    user_parts,
    wire_tool_name,
)
from toolreplay.wires.contract import TurnPiece
from toolreplay.wires.replayed import ReplayCall, ReplayStep, TurnMessage, split_system, turn_steps

WIRE = "anthropic"
#: The body key that holds the history (written here only; the wire's other modules import it).
LIST_KEY = "messages"
#: The answer parts this wire carries; any other part travels as its name in the answer's text.
PART_KINDS: frozenset[str] = frozenset({"text", "image", "document"})
DEFAULT_MAX_TOKENS = 4096
#: Our neutral tool_choice words -> Anthropic's objects.
TOOL_CHOICE = {"auto": "auto", "none": "none", "required": "any", "any": "any"}


def render_tools(opts: RenderOptions, turns: Sequence[TurnMessage]) -> list[dict[str, Any]]:
    """``tools``: every given tool plus every tool the replayed calls use; a tool Anthropic runs itself
    (``web_search_20250305``, ``bash_20250124``...) as it was declared to this wire (its server-tool
    blocks go back to their issuer, and Anthropic wants the tool declared); another wire's is left out
    (the render's warnings name it)."""
    out = [
        {"name": name, "description": desc, "input_schema": dict(params)}
        for name, desc, params in tool_map(declared_tools(turns, opts.tools))
    ]
    for t in opts.tools:
        whole = t.sent.get(WIRE, {}).get("tool") if t.kind == "hosted" and t.sent else None
        if isinstance(whole, Mapping):
            out.append(dict(whole))
    return out


#: The media types a base64 source may name (Anthropic's vision and PDF support pages): any other inline
#: part travels as its name.
MEDIA_TYPES = {
    "image": frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"}),
    "document": frozenset({"application/pdf"}),
}
#: Labels clients write for a type Anthropic names otherwise: ``image/jpg`` is common (and what some
#: importers read from a ``.jpg`` name) but Anthropic's ``media_type`` takes only ``image/jpeg``.
MEDIA_ALIASES = {"image/jpg": "image/jpeg"}


def _media_type(p: Part) -> str:
    return MEDIA_ALIASES.get(p.media_type, p.media_type)


def carries(p: Part) -> bool:
    """Images and documents by URL, or inline of a type Anthropic takes (JPEG, PNG, GIF, WebP; PDF)."""
    return p.kind in MEDIA_TYPES and (bool(p.url) or _media_type(p) in MEDIA_TYPES[p.kind])


def media_block(p: Part) -> dict[str, Any]:
    block: dict[str, Any] = {"type": p.kind, "source": _source(p)}
    if p.kind == "document" and p.name:
        block["title"] = p.name
    return block


def _user_message(t: TurnMessage) -> list[dict[str, Any]]:
    """A user message of parts: text, image and document blocks in the user's order (no blank text
    block: 400 "text content blocks must be non-empty")."""
    blocks = [
        {"type": "text", "text": p.text} if p.kind == "text" else media_block(p)
        for p in user_parts(t, carries)
        if p.kind != "text" or p.text.strip()
    ]
    return [{"role": "user", "content": blocks}] if blocks else []


def _text_message(role: str, text: str, blocks: bool = False) -> dict[str, Any]:
    """A message of words; a user's is a plain string unless ``blocks`` (cache breakpoints on: a marker
    needs a block, and a message keeps one form whether it carries the marker or not, design 36)."""
    if role == "assistant" or blocks:
        return {"role": role, "content": [{"type": "text", "text": text}]}
    return {"role": role, "content": text}


def _source(p: Part) -> dict[str, Any]:
    if p.url:
        return {"type": "url", "url": p.url}
    return {"type": "base64", "media_type": _media_type(p), "data": p.data}


def result_content(c: ReplayCall) -> Any:
    """A ``tool_result``'s content: the answer, or text, image and document blocks for an answer of parts."""
    if not c.parts:
        return c.answer
    out: list[dict[str, Any]] = []
    for p in c.parts:
        if p.kind == "text":
            if p.text.strip():  # no empty text block (400 "text content blocks must be non-empty")
                out.append({"type": "text", "text": p.text})
        else:
            out.append(media_block(p))
    return out


def _said_blocks(step: ReplayStep) -> list[dict[str, Any]]:
    """The step's blocks in the order the model produced them: thinking first (a thinking continuation
    must start with it), words, server-tool blocks (all verbatim, only to their issuer)."""
    out: list[dict[str, Any]] = []
    for p in step.said:
        if isinstance(p, Text):
            if p.text.strip():  # no blank text block (400 "text content blocks must be non-empty")
                out.append({"type": "text", "text": p.text})
        else:
            d = p.data.get(WIRE) if p.data else None
            if isinstance(d, Mapping):
                out.append(dict(d))
    return out


def _step_messages(step: ReplayStep, ids: IdMapper) -> list[dict[str, Any]]:
    """One step: an assistant message (thinking, words, tool_use blocks), then the user message of its
    tool_result blocks."""
    uses = _said_blocks(step)
    results: list[dict[str, Any]] = []
    for c in step.calls:  # one pass: each call's id is mapped once, for its tool_use and its tool_result
        wid = ids(c)
        value = c.input
        uses.append(
            {
                "type": "tool_use",
                "id": wid,
                "name": wire_tool_name(c.name),
                "input": value if type(value) is dict else plain_dict(value),
            }
        )
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": wid, "content": result_content(c)}
        if c.is_error:
            block["is_error"] = True
        results.append(block)
    return [{"role": "assistant", "content": uses}, {"role": "user", "content": results}]


def render_turn(t: TurnMessage, ids: IdMapper, blocks: bool = False) -> list[dict[str, Any]]:
    """The messages of one turn message: each step (tool_use blocks, the tool_result message), then the
    text (led by the closing step's thinking, when it has any); ``blocks``: see :func:`_text_message`."""
    if t.parts:
        return _user_message(t)
    if not t.calls and not t.steps:
        return [_text_message(t.role, t.text, blocks)] if t.text.strip() else []
    out: list[dict[str, Any]] = []
    closing: list[dict[str, Any]] = []
    for step in turn_steps(t):
        if step.calls:
            out.extend(_step_messages(step, ids))
        else:
            closing = [dict(d) for d in step.made(WIRE)]
    if t.text.strip():
        text = _text_message("assistant", t.text)
        text["content"] = closing + text["content"]
        out.append(text)
    return out


#: The settings a normal render takes over from an imported Anthropic request: those both the shipped
#: Messages schema and the SDK's create params define (``temperature``, ``top_p``, ``top_k``,
#: ``context_management``, ``output_config`` are refused by one of them; the model and the stream flag
#: are the render's own). The as-sent render sends every one.
CARRIED = ("container", "metadata", "service_tier", "stop_sequences", "thinking", "tool_choice")


def carry_settings(req: RequestSettings, opts: RenderOptions) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``Wire.carry_settings``: of an imported Anthropic request, the :data:`CARRIED` settings (the
    render's own fields win; ``thinking`` for the model that made the request only); the others are
    named. Another wire's settings are not this wire's."""
    kept, lost = _SETTINGS(req, opts)  # this wire's settings, sent with a value (none of another wire's)
    # thinking on asks every tool loop to open with its thinking block, which goes back to its issuer
    # only (design 17): for another model the blocks are left out, and so is thinking
    same_model = req.fields.get("model") == opts.model
    carried = {k: v for k, v in kept.items() if k in CARRIED and (k != "thinking" or same_model)}
    return carried, (*lost, *(k for k in kept if k not in carried))


#: Every setting of a request of this wire but those the render decides (model, stream), empty ones aside.
_SETTINGS = same_wire_settings(WIRE, ("messages", "system", "tools"))


def call_ids(opts: RenderOptions) -> IdMapper:
    """The id policy hook: ids made safe for ``^[a-zA-Z0-9_-]+$``."""
    return IdMapper(opts, id_safe=True)


def turn_renderer(opts: RenderOptions, ids: IdMapper | None) -> TurnPiece:
    """The per-turn renderer (the incremental renderer and :func:`render_messages` both run it)."""
    mapper = ids if ids is not None else call_ids(opts)
    blocks = opts.cache_breakpoints > 0
    return lambda t, items: render_turn(t, mapper, blocks)


def render_messages(turns: Sequence[TurnMessage], opts: RenderOptions) -> list[dict[str, Any]]:
    """The ``messages`` list (system messages excluded: they go in ``system``)."""
    piece = turn_renderer(opts, None)
    out: list[dict[str, Any]] = []
    for t in turns:
        out.extend(piece(t, out))
    if out and out[0]["role"] != "user":
        out.insert(0, _text_message("user", SEPARATOR, opts.cache_breakpoints > 0))
    return out


def render(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The request body for ``/v1/messages``, before its cache breakpoints (the wire's ``finish``,
    ``breakpoints.finish``, places them on the whole body)."""
    system, rest = split_system(turns, opts.system)
    body: dict[str, Any] = {
        "model": opts.model,
        "max_tokens": opts.max_tokens if opts.max_tokens is not None else DEFAULT_MAX_TOKENS,
    }
    if system:
        body["system"] = system
    tools = render_tools(opts, rest)
    if tools:
        body["tools"] = tools
        if opts.tool_choice:
            body["tool_choice"] = {"type": TOOL_CHOICE.get(opts.tool_choice, opts.tool_choice)}
    body[LIST_KEY] = render_messages(rest, opts)
    if opts.temperature is not None:
        body["temperature"] = opts.temperature
    if opts.stream:
        body["stream"] = True
    return body

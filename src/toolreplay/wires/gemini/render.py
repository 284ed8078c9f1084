"""Gemini ``generateContent`` (v1beta). The model goes in the URL (``models/<model>:generateContent``),
not in the body.

A replayed reply becomes, step by step, a ``model`` content of the step's thought parts (verbatim, only
to the model that issued them: design 17), its words and its ``functionCall`` parts, then a ``user``
content of ``functionResponse`` parts (same count, same order; images and documents in their ``parts``);
then a ``model`` content with the reply's text (led by the closing step's thought parts, and carrying the
``thoughtSignature`` Gemini put on the final text part, both to their issuer only). A user message that
holds images or documents sends them as ``inlineData`` (``mimeType``, base64 ``data``) or, given by URL,
``fileData`` (``fileUri``) parts in the user's order.

Rules this module keeps (the errors they avoid):
* the first ``functionCall`` part of each model content carries ``thoughtSignature`` beside
  ``functionCall`` (Gemini 3: 400 "Function call ... is missing a thought_signature"): the call's own
  stored signature when Gemini made it (replayed verbatim), else Google's documented dummy
  ``"skip_thought_signature_validator"`` (the only one Vertex accepts). Any later call Gemini signed
  keeps its own signature too;
* answers go in a ``user`` content (not ``function``), ``response`` is an object: ``{"output": answer}``,
  or ``{"error": answer}`` for a failed call;
* no call ids: Gemini pairs calls and responses by order (and ``id`` is not accepted everywhere);
* no empty text part ("empty text parameter"): a message whose text is blank is left out;
* a function-call turn follows a user turn or a function-response turn (400 "Please ensure that function
  call turn comes immediately after a user turn or after a function response turn"): when a reply's
  calls would follow a model content (two stored replies in a row, or a history that opens with a
  reply's calls), a user content with the text ``SEPARATOR`` (see :mod:`toolreplay.wires.common`)
  goes before them. It depends only on what came before, so appending a turn never changes the
  earlier contents;
* camelCase keys (design 9); tools as ``functionDeclarations`` with ``parametersJsonSchema``
  (a plain JSON schema, design 8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.model import Part, Text, ToolSpec
from toolreplay.wires.common import (
    SEPARATOR,
    IdMapper,
    RenderOptions,
    declared_tools,
    plain_dict,
    sampling,
    tool_map,
    wire_tool_name,
)
from toolreplay.wires.contract import TurnPiece
from toolreplay.wires.gemini.signatures import DUMMY_SIGNATURE, gemini_signature
from toolreplay.wires.media import url_type
from toolreplay.wires.replayed import ReplayCall, ReplayStep, TurnMessage, split_system, turn_steps

WIRE = "gemini"
#: The body key that holds the history (written here only; the wire's other modules import it).
LIST_KEY = "contents"
#: The answer parts this wire carries; any other part travels as its name in the answer's text.
PART_KINDS: frozenset[str] = frozenset({"text", "image", "document"})
#: Our neutral tool_choice words -> Gemini's functionCallingConfig modes.
TOOL_CHOICE = {"auto": "AUTO", "none": "NONE", "required": "ANY", "any": "ANY"}


def render_tools(opts: RenderOptions, turns: Sequence[TurnMessage]) -> list[dict[str, Any]]:
    """``tools``: one entry of ``functionDeclarations`` covering every tool offered or used, then one
    entry per tool Gemini runs itself that was declared on Gemini (``googleSearch``...), as declared."""
    decls = [
        {"name": name, "description": desc, "parametersJsonSchema": dict(params)}
        for name, desc, params in tool_map(declared_tools(turns, opts.tools))
    ]
    out = [{"functionDeclarations": decls}] if decls else []
    out.extend(dict(h) for h in map(hosted_declaration, opts.tools) if h is not None)
    return out


def hosted_declaration(t: ToolSpec) -> Mapping[str, Any] | None:
    """A hosted tool's Gemini entry (``{"googleSearch": {}}``), when it was declared on Gemini."""
    kept = t.sent.get(WIRE) if t.sent and t.kind == "hosted" else None
    entry = kept.get("tool") if isinstance(kept, Mapping) else None
    return cast(Mapping[str, Any], entry) if isinstance(entry, Mapping) else None


def _said_parts(step: ReplayStep) -> list[dict[str, Any]]:
    """The step's thought parts (verbatim, to their issuer only) and text parts in order; a signature
    Gemini put on a text part stays on it (``Text.data``, passed only to the same issuer)."""
    out: list[dict[str, Any]] = []
    for p in step.said:
        if type(p) is Text:
            if p.text.strip():
                part: dict[str, Any] = {"text": p.text}
                extra = p.data.get(WIRE) if p.data else None
                if isinstance(extra, Mapping):
                    part.update(extra)
                out.append(part)
        elif p.data and isinstance(d := p.data.get(WIRE), Mapping):
            out.append(dict(d))
    return out


def _response(c: ReplayCall, name: str) -> dict[str, Any]:
    key = "error" if c.is_error else "output"
    fr: dict[str, Any] = {"name": name, "response": {key: c.answer}}
    media = [p for p in c.parts if p.kind != "text" and (p.data or p.url)]
    if media:  # images and documents travel as the response's own parts (Gemini 3 multimodal answers)
        fr["parts"] = [_media_part(p) for p in media]
    return {"functionResponse": fr}


def carries(p: Part) -> bool:
    """Images and documents, inline or by URL: every part of a user message."""
    return p.kind in PART_KINDS


def _media_part(p: Part) -> dict[str, Any]:
    if p.url:
        mime = p.media_type or url_type(p.url)
        return {"fileData": {"mimeType": mime, "fileUri": p.url} if mime else {"fileUri": p.url}}
    return {"inlineData": {"mimeType": p.media_type, "data": p.data}}


def _user_content(t: TurnMessage) -> list[dict[str, Any]]:
    """A user message of parts: text, ``inlineData`` and ``fileData`` parts in the user's order (no blank
    text part: "empty text parameter")."""
    parts = [
        {"text": p.text} if p.kind == "text" else _media_part(p)
        for p in t.parts
        if p.kind != "text" or p.text.strip()
    ]
    return [{"role": "user", "parts": parts}] if parts else []


def _step_contents(step: ReplayStep) -> list[dict[str, Any]]:
    """One step: a model content (thoughts, words, functionCall parts), then the user content of as many
    functionResponse parts, same order."""
    calls = _said_parts(step) if step.said else []
    responses: list[dict[str, Any]] = []
    for i, c in enumerate(step.calls):
        name = wire_tool_name(c.name)
        value = c.input
        part: dict[str, Any] = {
            "functionCall": {"name": name, "args": value if type(value) is dict else plain_dict(value)}
        }
        sig = gemini_signature(c) if c.provider_data else None  # none stored: no signature to read
        if sig is None and i == 0:
            sig = DUMMY_SIGNATURE
        if sig is not None:
            part["thoughtSignature"] = sig
        calls.append(part)
        responses.append(_response(c, name))
    return [{"role": "model", "parts": calls}, {"role": "user", "parts": responses}]


def render_turn(t: TurnMessage, after_model: bool = False) -> list[dict[str, Any]]:
    """The contents of one turn message: each step (calls, their responses), then the text.

    ``after_model``: the content before this turn is a ``model`` content (or there is none), so a
    function-call turn needs a ``SEPARATOR`` user content first.
    """
    if t.parts:
        return _user_content(t)
    role = "model" if t.role == "assistant" else "user"
    if not t.calls and not t.steps:
        return [{"role": role, "parts": [{"text": t.text}]}] if t.text.strip() else []
    out: list[dict[str, Any]] = []
    if after_model and t.calls:
        out.append({"role": "user", "parts": [{"text": SEPARATOR}]})
    closing: list[dict[str, Any]] = []
    final: dict[str, Any] = {"text": t.text}
    for step in turn_steps(t):
        if step.calls:
            out.extend(_step_contents(step))
        else:
            closing, signed = _closing_parts(step)
            final.update(signed)
    if t.text.strip():
        out.append({"role": "model", "parts": [*closing, final]})
    return out


def _closing_parts(step: ReplayStep) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The closing step's thought and server-tool parts, and what Gemini put on the final text part (its
    ``thoughtSignature``, kept as a words-less text piece), which goes back on that same part."""
    parts: list[dict[str, Any]] = []
    signed: dict[str, Any] = {}
    for p in step.said:
        d = p.data.get(WIRE) if p.data else None
        if not isinstance(d, Mapping):
            continue
        if isinstance(p, Text):
            signed.update(cast(Mapping[str, Any], d))
        else:
            parts.append(dict(cast(Mapping[str, Any], d)))
    return parts, signed


def _piece(t: TurnMessage, items: list[Any]) -> list[Any]:
    # Gemini looks back one content: a call turn after a model content gets a separator first.
    return render_turn(t, not items or items[-1]["role"] == "model")


def turn_renderer(opts: RenderOptions | None = None, ids: IdMapper | None = None) -> TurnPiece:
    """The per-turn renderer (Gemini sends no call ids: ``ids`` is unused)."""
    return _piece


def render_contents(turns: Sequence[TurnMessage]) -> list[dict[str, Any]]:
    """The ``contents`` list (system messages excluded: they go in ``systemInstruction``)."""
    piece = turn_renderer()
    out: list[dict[str, Any]] = []
    for t in turns:
        out.extend(piece(t, out))
    return out


def render(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The request body for ``models/<opts.model>:generateContent`` (or ``:streamGenerateContent``)."""
    system, rest = split_system(turns, opts.system)
    body: dict[str, Any] = {LIST_KEY: render_contents(rest)}
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    tools = render_tools(opts, rest)
    if tools:
        body["tools"] = tools
        if opts.tool_choice:
            mode = TOOL_CHOICE.get(opts.tool_choice, opts.tool_choice.upper())
            body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    config = sampling(opts, "maxOutputTokens")
    if config:
        body["generationConfig"] = config
    return body

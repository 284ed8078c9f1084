"""OpenAI Chat Completions (``/v1/chat/completions``): OpenAI, Kimi and every OpenAI-compatible server.

A replayed reply becomes, step by step, an assistant message with ``tool_calls`` (``content``: the words
the model wrote before them, else null), one ``tool`` message per call right after it; then an assistant
message with the reply's text. A step's reasoning rides on its message as its issuer sent it
(``reasoning_content``; Kimi, DeepSeek and GLM thinking models require it on tool-call messages: 400
"thinking is enabled but reasoning_content is missing in assistant tool call message"), only for that
issuer and profiles with flag ``reasoning_content`` (the replay seam decides, design 17). A user message
that holds images or documents sends its content as parts in the user's order: ``text``, ``image_url``
(an address or a ``data:`` URL) and ``file`` (``filename`` and ``file_data``, a ``data:`` URL; a document
by address has no place there and travels as its name).

Rules this module keeps (the errors they avoid):
* every ``tool_calls`` id is answered by tool messages right after, before any other message
  ("An assistant message with 'tool_calls' must be followed by tool messages responding to each
  'tool_call_id'");
* ``content: null``, not ``""``, on a call-only message (some compatible servers turn ``""`` into an empty
  text part);
* ``arguments`` is the JSON **string** of the input (the text serialized once in the replay, reused);
* ids at most 40 characters on OpenAI's own server (the vessel's ``max_id_len``);
* Kimi: ``name`` on tool messages (flag ``tool_message_name``) and ``functions.<name>:<index>`` ids
  (id policy ``kimi``); flag ``no_message_name`` wins over it (GLM's OpenAI endpoint rejects ``name``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.model import Part, ToolSpec
from toolreplay.wires.common import (
    IdMapper,
    RenderOptions,
    function_tools,
    sampling,
    user_parts,
    wire_tool_name,
)
from toolreplay.wires.contract import TurnPiece
from toolreplay.wires.media import data_url
from toolreplay.wires.openai_chat.ids import KIMI, kimi_id
from toolreplay.wires.replayed import ReplayStep, TurnMessage, split_system, turn_steps

WIRE = "openai-chat"
#: The body key that holds the history (written here only; the wire's other modules import it).
LIST_KEY = "messages"
#: The answer parts this wire carries; any other part travels as its name in the answer's text.
PART_KINDS: frozenset[str] = frozenset({"text"})


def render_tools(opts: RenderOptions, turns: Sequence[TurnMessage]) -> list[dict[str, Any]]:
    """``tools``: every given tool plus every tool the replayed calls use; a Chat declaration imported
    whole (``sent``) goes as it was declared (``strict`` and every other field kept), when its name needs
    no mapping."""
    out = function_tools(opts, turns)
    kept = {t.name: d for t in opts.tools if t.kind == "function" and isinstance(d := _declared(t), dict)}
    if not kept:
        return out
    return [kept.get(fn["function"]["name"], fn) for fn in out]


def _declared(t: ToolSpec) -> dict[str, Any] | None:
    d: Any = (t.sent or {}).get(WIRE, {}).get("tool")
    if not isinstance(d, Mapping) or not isinstance(d.get("function"), Mapping):
        return None
    return dict(d) if d["function"].get("name") == t.name else None


#: The message fields Chat servers read reasoning back from (Kimi, DeepSeek, GLM; OpenRouter).
_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")


def carries(p: Part) -> bool:
    """Images (inline or by URL) and inline documents (a ``file`` part takes no URL)."""
    return p.kind == "image" or (p.kind == "document" and not p.url)


def content_part(p: Part) -> dict[str, Any]:
    if p.kind == "text":
        return {"type": "text", "text": p.text}
    if p.kind == "image":
        return {"type": "image_url", "image_url": {"url": p.url or data_url(p)}}
    return {"type": "file", "file": {"filename": p.name or "document", "file_data": data_url(p)}}


def _user_message(t: TurnMessage) -> dict[str, Any]:
    return {"role": t.role, "content": [content_part(p) for p in user_parts(t, carries)]}


def _reasoning_fields(made: list[Mapping[str, Any]]) -> dict[str, Any]:
    """``reasoning_content`` (or ``reasoning``, ``reasoning_details``) of a step's reasoning ``made``, as
    its issuer sent it."""
    out: dict[str, Any] = {}
    for d in made:
        out.update((k, v) for k, v in d.items() if k in _REASONING_FIELDS)
    return out


def _content(made: list[Mapping[str, Any]], words: str) -> Any:
    """The message's ``content``: the words, or (Mistral) the issuer's thinking parts before them."""
    parts = [dict(d["content_part"]) for d in made if isinstance(d.get("content_part"), Mapping)]
    if not parts:
        return words or None
    return [*parts, *([{"type": "text", "text": words}] if words else [])]


def with_reasoning(msg: dict[str, Any], step: ReplayStep, words: str) -> None:
    """``msg`` with the step's reasoning as its issuer sent it (without reasoning data the content is the
    words and no field is added)."""
    made = step.reasoning(WIRE) if step.said else None
    if made:
        msg["content"] = _content(made, words)
        msg.update(_reasoning_fields(made))


def _step_messages(step: ReplayStep, ids: IdMapper, named: bool) -> list[dict[str, Any]]:
    """One step: an assistant message (its words as ``content``, its reasoning, its ``tool_calls``), then
    one tool message per call (parts a tool message cannot carry are named in the answer's text)."""
    tool_calls: list[dict[str, Any]] = []
    words = step.words if step.said else ""
    msg: dict[str, Any] = {"role": "assistant", "content": words or None}
    with_reasoning(msg, step, words)
    msg["tool_calls"] = tool_calls
    out = [msg]
    for c in step.calls:  # one pass: each call's id and name mapped once, for the call and its answer
        wid = ids(c)
        name = wire_tool_name(c.name)
        tool_calls.append(
            {"id": wid, "type": "function", "function": {"name": name, "arguments": c.arguments}}
        )
        answer: dict[str, Any] = {"role": "tool", "tool_call_id": wid}
        if named:
            answer["name"] = name
        answer["content"] = c.answer
        out.append(answer)
    return out


def render_turn(t: TurnMessage, ids: IdMapper, named: bool) -> list[dict[str, Any]]:
    """The Chat messages of one turn message: each step (its calls, their answers), then the text."""
    if t.parts:
        return [_user_message(t)]
    if not t.calls and not t.steps:
        return [{"role": t.role, "content": t.text}]
    out: list[dict[str, Any]] = []
    closing: ReplayStep | None = None
    for step in turn_steps(t):
        if step.calls:
            out.extend(_step_messages(step, ids, named))
        else:
            closing = step
    if t.text:
        final: dict[str, Any] = {"role": "assistant", "content": t.text}
        if closing is not None:
            with_reasoning(final, closing, t.text)
        out.append(final)
    return out


def call_ids(opts: RenderOptions) -> IdMapper:
    """The id policy hook: the vessel's policy (``kimi``: Kimi's ``functions.<name>:<index>``) and length
    limit (OpenAI's own server: 40)."""
    return IdMapper(opts, named=kimi_id if opts.id_policy == KIMI else None)


def named_tool_messages(opts: RenderOptions) -> bool:
    """Tool messages carry the tool's ``name`` (Kimi); ``no_message_name`` wins (GLM rejects it)."""
    return "tool_message_name" in opts.flags and "no_message_name" not in opts.flags


def turn_renderer(opts: RenderOptions, ids: IdMapper | None) -> TurnPiece:
    """The per-turn renderer (the incremental renderer and :func:`render_messages` both run it)."""
    mapper = ids if ids is not None else call_ids(opts)
    named = named_tool_messages(opts)
    return lambda t, items: render_turn(t, mapper, named)


def render_messages(turns: Sequence[TurnMessage], opts: RenderOptions) -> list[dict[str, Any]]:
    """The ``messages`` list (no system message)."""
    piece = turn_renderer(opts, None)
    out: list[dict[str, Any]] = []
    for t in turns:
        out.extend(piece(t, out))
    return out


def render(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The request body for ``/chat/completions``."""
    # Chat takes system and developer messages anywhere: a later one stays where it stood
    system, rest = split_system(turns, opts.system, in_place=True)
    messages = render_messages(rest, opts)
    if system:
        messages.insert(0, {"role": "system", "content": system})
    body: dict[str, Any] = {"model": opts.model, LIST_KEY: messages}
    tools = render_tools(opts, rest)
    if tools:
        body["tools"] = tools
        if opts.tool_choice:
            body["tool_choice"] = opts.tool_choice
    body.update(sampling(opts, "max_completion_tokens"))
    if opts.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body

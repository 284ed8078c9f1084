"""OpenAI Chat Completions (``/v1/chat/completions``): OpenAI, Kimi and every OpenAI-compatible server.

A replayed reply becomes an assistant message with ``tool_calls`` and ``content: null``, one ``tool``
message per call right after it, then an assistant message with the reply's text.

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

from collections.abc import Sequence
from typing import Any

from toolreplay._replay import TurnMessage, split_system
from toolreplay.wires.common import IdMapper, RenderOptions, function_tools, sampling, wire_tool_name
from toolreplay.wires.contract import TurnPiece

WIRE = "openai-chat"
#: The body key that holds the history (written here only; the wire's other modules import it).
LIST_KEY = "messages"


#: ``tools``: every given tool plus every tool the replayed calls use.
render_tools = function_tools


def render_turn(t: TurnMessage, ids: IdMapper, named: bool) -> list[dict[str, Any]]:
    """The Chat messages of one turn message: calls, their answers, then the text."""
    if not t.calls:
        return [{"role": t.role, "content": t.text}]
    tool_calls: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = [{"role": "assistant", "content": None, "tool_calls": tool_calls}]
    for c in t.calls:  # one pass: each call's id and name mapped once, for the call and its answer
        wid = ids(c)
        name = wire_tool_name(c.name)
        tool_calls.append(
            {"id": wid, "type": "function", "function": {"name": name, "arguments": c.arguments}}
        )
        msg: dict[str, Any] = {"role": "tool", "tool_call_id": wid}
        if named:
            msg["name"] = name
        msg["content"] = c.answer
        out.append(msg)
    if t.text:
        out.append({"role": "assistant", "content": t.text})
    return out


def call_ids(opts: RenderOptions) -> IdMapper:
    """The id policy hook: the vessel's policy and length limit (OpenAI's own server: 40)."""
    return IdMapper(opts)


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
    system, rest = split_system(turns, opts.system)
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

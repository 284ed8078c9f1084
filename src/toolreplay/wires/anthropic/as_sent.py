"""The Anthropic body as its agent sent it (design 38), from the layout :mod:`.layout` describes.

The top-level ``system`` as a string or as its blocks with their keys (``cache_control``); system
messages inside ``messages`` where they stood; each reply as the body messages it was read from, their
blocks in their order (thinking and server-tool blocks verbatim, words, ``tool_use`` blocks under their
own ids), each step's ``tool_result`` blocks in the next user message with their content as sent
(string, none, or blocks; ``is_error`` as written), the user's words after them in that same message;
user messages as a string or as their blocks, apart; every tool declaration whole. No derived ids, no
name mapping, no markers of our own. The request's settings are added by the caller.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from toolreplay.model import Part, Piece, Text
from toolreplay.wires.anthropic import render
from toolreplay.wires.anthropic.layout import layout_of, split_texts, text_blocks
from toolreplay.wires.common import RenderOptions
from toolreplay.wires.replayed import ReplayCall, TurnMessage, turn_steps

WIRE = render.WIRE
_NOT_KEYS = frozenset({"k", "len", "raw"})


def _keys(entry: Any) -> dict[str, Any]:
    """A layout entry's block keys (its own bookkeeping left out)."""
    return {k: v for k, v in cast(Mapping[str, Any], entry).items() if k not in _NOT_KEYS} if entry else {}


def render_as_sent(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """``system``, ``messages`` and ``tools`` as the body held them (see the module docstring)."""
    system: list[Any] = []
    messages: list[dict[str, Any]] = []
    for t in turns:
        lay = layout_of(t.sent)
        if t.role == "system" and (lay.get("system") or (not lay and not messages)):
            system.append(t.text if lay.get("system") != "block" else {"type": "text", "text": t.text,
                                                                        **lay.get("extra", {})})  # fmt: skip
        elif t.role == "system":
            messages.append(_message("system", t.text, lay, "\n\n"))
        elif t.role == "user":
            _add_user(messages, t, lay)
        else:
            messages.extend(_reply(t))
    body: dict[str, Any] = {}
    if system:
        body["system"] = "\n\n".join(system) if all(isinstance(s, str) for s in system) else system
    body[render.LIST_KEY] = messages
    tools = [_tool_declaration(s) for s in opts.tools]
    if any(tools):
        body["tools"] = [d for d in tools if d]
    return body


def _tool_declaration(spec: Any) -> dict[str, Any]:
    whole = layout_of(spec.sent).get("tool")
    if isinstance(whole, Mapping):
        return dict(cast(Mapping[str, Any], whole))
    if spec.kind == "hosted":
        return {}  # another wire's hosted tool has no declaration here
    return {"name": spec.name, "description": spec.description, "input_schema": dict(spec.parameters)}


def _message(role: str, text: str, lay: Mapping[str, Any], joiner: str) -> dict[str, Any]:
    """A message of words (a system message in ``messages``): a string, or its text blocks cut apart."""
    form = lay.get("content")
    content: Any = text_blocks(text, form, joiner) if isinstance(form, list) and form else text
    if form == []:
        content = []
    return {"role": role, "content": content, **lay.get("extra", {})}


def _part_block(p: Part) -> dict[str, Any]:
    return {"type": "text", "text": p.text} if p.kind == "text" else render.media_block(p)


def _add_user(messages: list[dict[str, Any]], t: TurnMessage, lay: Mapping[str, Any]) -> None:
    """A user message; its blocks join the ``tool_result`` message before it when they stood there."""
    form = lay.get("content")
    if not lay:
        messages.extend(render.render_turn(t, render.call_ids(RenderOptions(model=""))))
        return
    if form == "string":
        content: Any = t.text
    else:
        entries: list[Any] = form if isinstance(form, list) else []
        parts = t.parts or ((Part("text", text=t.text),) if entries else ())
        padded = [*entries, *([{}] * (len(parts) - len(entries)))][: len(parts)]
        content = [{**_part_block(p), **_keys(e)} for p, e in zip(parts, padded, strict=True)]
    prev = messages[-1] if messages else None
    if (
        lay.get("joined")
        and prev is not None
        and prev["role"] == "user"
        and isinstance(prev["content"], list)
    ):
        prev["content"].extend(content if isinstance(content, list) else [{"type": "text", "text": content}])
        prev.update(lay.get("extra", {}))
        return
    messages.append({"role": "user", "content": content, **lay.get("extra", {})})


def _reply(t: TurnMessage) -> list[dict[str, Any]]:
    """A reply as its body messages: one per step (then its results), then the closing one."""
    lays = [cast(Mapping[str, Any], m) for m in layout_of(t.sent).get("messages") or []]
    out: list[dict[str, Any]] = []
    closing: tuple[Piece, ...] = ()
    k = 0
    for step in turn_steps(t):
        if not step.calls:
            closing = step.said
            continue
        out.append(_assistant(step.said, step.calls, "", lays[k] if k < len(lays) else {}))
        k += 1
        results = [b for b in map(_result_block, step.calls) if b is not None]
        if results:
            out.append({"role": "user", "content": results})
    if t.text or closing or k < len(lays):
        out.append(_assistant(closing, (), t.text, lays[k] if k < len(lays) else {}))
    return out


def _assistant(
    said: Sequence[Piece], calls: Sequence[ReplayCall], text: str, lay: Mapping[str, Any]
) -> dict[str, Any]:
    form = lay.get("content")
    extra = lay.get("extra", {})
    if form == "string":
        return {"role": "assistant", "content": text, **extra}
    entries: Sequence[Mapping[str, Any]] = (
        [cast(Mapping[str, Any], e) for e in form] if isinstance(form, list) else []
    )
    if not entries:  # no layout: the pieces, the calls, the words, in that order
        entries = [*[{"k": "p"}] * len(said), *[{"k": "c"}] * len(calls), *([{"k": "t"}] if text else [])]
    pieces, uses = iter(said), iter(calls)
    texts = iter(text_blocks(text, [e for e in entries if e.get("k") == "t"], "\n\n") if text else [])
    blocks: list[dict[str, Any]] = []
    for e in entries:
        block = _block(e.get("k"), pieces, uses, texts)
        if block is not None:
            blocks.append({**block, **_keys(e)} if e.get("k") in ("p", "e") else block)
    blocks.extend(b for p in pieces if (b := _piece_block(p)) is not None)
    blocks.extend(_use_block(c) for c in uses)
    return {"role": "assistant", "content": blocks, **extra}


def _block(
    k: Any, pieces: Iterator[Piece], uses: Iterator[ReplayCall], texts: Iterator[dict[str, Any]]
) -> dict[str, Any] | None:
    if k == "p":
        p = next(pieces, None)
        return _piece_block(p) if p is not None else None
    if k == "c":
        c = next(uses, None)
        return _use_block(c) if c is not None else None
    if k == "t":
        return next(texts, None)
    return {"type": "text", "text": ""} if k == "e" else None


def _piece_block(p: Piece) -> dict[str, Any] | None:
    if isinstance(p, Text):
        return {"type": "text", "text": p.text}
    d = p.data.get(WIRE) if p.data else None
    return dict(cast(Mapping[str, Any], d)) if isinstance(d, Mapping) else None


def _use_block(c: ReplayCall) -> dict[str, Any]:
    use = layout_of(c.sent).get("use", {})
    return {"type": "tool_use", "id": c.call_id, "name": c.name, "input": dict(c.input), **use}


def _result_block(c: ReplayCall) -> dict[str, Any] | None:
    """The call's ``tool_result`` as sent; None for a call the body did not answer."""
    lay = layout_of(c.sent).get("result")
    if not isinstance(lay, Mapping):
        if "no_answer" in c.patches:
            return None
        block = {"type": "tool_result", "tool_use_id": c.call_id, "content": render.result_content(c)}
        return {**block, "is_error": True} if c.is_error else block
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": c.call_id}
    form = lay.get("content")
    if form == "string":
        out["content"] = c.answer
    elif isinstance(form, list):
        out["content"] = _result_list(c, [cast(Mapping[str, Any], e) for e in form])
    if "is_error" in lay:
        out["is_error"] = lay["is_error"]
    out.update(lay.get("extra", {}))
    return out


def _result_list(c: ReplayCall, entries: Sequence[Mapping[str, Any]]) -> list[Any]:
    """A ``tool_result``'s blocks: its parts (or its text cut apart by length) and the blocks kept raw."""
    if c.parts:
        parts = iter(c.parts)
        return [e["raw"] if e.get("k") == "r" else {**_part_block(next(parts)), **_keys(e)} for e in entries]
    lens = [int(e.get("len", 0)) for e in entries if e.get("k") == "t"]
    cut = split_texts(c.answer, lens, "\n", skip_empty=False) or [c.answer]
    texts = iter(cut)
    return [
        e["raw"] if e.get("k") == "r" else {"type": "text", "text": next(texts, ""), **_keys(e)}
        for e in entries
    ]


__all__ = ["render_as_sent"]

"""A Chat request body rendered back as its agent sent it (design 38): the turns of an as-sent replay
(every call whole under its own id), laid out as :mod:`.layout` recorded them.

Each stored message gives back its body messages in order: a system or user message one (a developer
role, a list content as its parts, extra keys); a reply one assistant message per body message it was
read from (its steps, then its final words; an empty one where the agent sent one), each step followed
by its tool messages, and every element with its recorded layout. Names are not mapped and ids not
derived; tools are declared as they were (``tools`` and legacy ``functions`` entries kept whole).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from toolreplay.model import Part, ToolSpec
from toolreplay.wires.common import RenderOptions
from toolreplay.wires.openai_chat.layout import WIRE, laid_out, layout_of
from toolreplay.wires.openai_chat.render import LIST_KEY, content_part, with_reasoning
from toolreplay.wires.replayed import ReplayCall, ReplayStep, TurnMessage, turn_steps


def _part(p: Part) -> dict[str, Any]:
    layout = layout_of(p.sent)
    out = content_part(p)
    if "type" in layout:
        out["type"] = layout["type"]
    inner = layout.get("inner")
    key = "image_url" if p.kind == "image" else "file" if p.kind == "document" else ""
    if key and isinstance(inner, Mapping):
        out[key] = {**out[key], **cast(Mapping[str, Any], inner)}
    extra = layout.get("extra")
    if isinstance(extra, Mapping):
        out.update(cast(Mapping[str, Any], extra))
    return out


def _arguments(c: ReplayCall) -> Any:
    return layout_of(c.sent).get("arguments", c.arguments)


def _step(step: ReplayStep, layout: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One step's assistant message and the tool (or legacy function) messages of its calls."""
    msg: dict[str, Any] = {"role": "assistant", "content": step.words or None}
    with_reasoning(msg, step, step.words)
    legacy = [c for c in step.calls if layout_of(c.sent).get("legacy")]
    calls = [c for c in step.calls if not layout_of(c.sent).get("legacy")]
    if calls:
        msg["tool_calls"] = [
            {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": _arguments(c)}}
            for c in calls
        ]
    for c in legacy:
        msg["function_call"] = {"name": c.name, "arguments": _arguments(c)}
    out = [laid_out(msg, layout)]
    for c in step.calls:
        if "no_answer" in c.patches:
            continue
        answer: dict[str, Any] = (
            {"role": "function", "name": c.name, "content": c.answer}
            if c in legacy
            else {"role": "tool", "tool_call_id": c.call_id, "content": c.answer}
        )
        out.append(laid_out(answer, layout_of(c.sent, "result")))
    return out


def _reply(t: TurnMessage) -> list[dict[str, Any]]:
    steps = turn_steps(t)
    with_calls: Iterator[ReplayStep] = iter([s for s in steps if s.calls])
    closing = next((s for s in steps if not s.calls), None)
    entries = layout_of(t.sent).get("messages")
    out: list[dict[str, Any]] = []
    final_done = False
    for layout in cast(Sequence[Mapping[str, Any]], entries if isinstance(entries, list) else []):
        if layout.get("empty"):
            out.append(laid_out({"role": "assistant", "content": None}, layout))
            continue
        step = next(with_calls, None)
        if step is not None:
            out.extend(_step(step, layout))
        elif not final_done:
            out.append(_final(t, closing, layout))
            final_done = True
    for step in with_calls:  # steps no layout was recorded for
        out.extend(_step(step, {}))
    if not final_done and t.text:
        out.append(_final(t, closing, {}))
    return out


def _final(t: TurnMessage, closing: ReplayStep | None, layout: Mapping[str, Any]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": t.text}
    if closing is not None:
        with_reasoning(msg, closing, t.text)
    return laid_out(msg, layout)


def _message(t: TurnMessage) -> list[dict[str, Any]]:
    if t.role == "assistant":
        return _reply(t)
    content: Any = [_part(p) for p in t.parts] if t.parts else t.text
    return [laid_out({"role": t.role, "content": content}, layout_of(t.sent))]


def declarations(tools: Sequence[ToolSpec]) -> tuple[list[Any], list[Any]]:
    """``tools`` and legacy ``functions`` as declared (a tool stored without its declaration in the
    function shape)."""
    listed: list[Any] = []
    legacy: list[Any] = []
    for s in tools:
        d = layout_of(s.sent)
        if "function" in d:
            legacy.append(d["function"])
        elif "tool" in d:
            listed.append(d["tool"])
        else:
            fn = {"name": s.name, "description": s.description, "parameters": dict(s.parameters)}
            listed.append({"type": "function", "function": fn})
    return listed, legacy


def render_as_sent(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The body's conversation and tools as sent (its settings come from the request, design 38)."""
    messages = [m for t in turns for m in _message(t)]
    body: dict[str, Any] = {"model": opts.model, LIST_KEY: messages}
    listed, legacy = declarations(opts.tools)
    if listed:
        body["tools"] = listed
    if legacy:
        body["functions"] = legacy
    return body


__all__ = ["WIRE", "declarations", "render_as_sent"]

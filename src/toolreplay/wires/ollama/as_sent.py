"""An Ollama ``/api/chat`` body rendered back as its agent sent it (design 38): the turns of an as-sent
replay laid out as ``request.py`` recorded them in ``sent["ollama"]`` (extra keys such as a tool
message's ``tool_name`` and ``tool_call_id``, a call's ``index`` or missing ``id``, an empty assistant
message), names not mapped, ids not derived, tools declared as they were.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from toolreplay.model import Sent, ToolSpec
from toolreplay.wires.common import RenderOptions, plain_dict, user_words
from toolreplay.wires.ollama.render import LIST_KEY, WIRE, carries
from toolreplay.wires.replayed import ReplayCall, ReplayStep, TurnMessage, turn_steps


def _layout(sent: Sent | None, key: str | None = None) -> Mapping[str, Any]:
    d: Any = sent.get(WIRE) if sent else None
    if key is not None and isinstance(d, Mapping):
        d = d.get(key)
    return cast(Mapping[str, Any], d) if isinstance(d, Mapping) else {}


def _laid_out(msg: dict[str, Any], layout: Mapping[str, Any]) -> dict[str, Any]:
    if layout.get("no_content"):
        msg.pop("content", None)
    extra = layout.get("extra")
    if isinstance(extra, Mapping):
        msg.update(cast(Mapping[str, Any], extra))
    return msg


def _call(c: ReplayCall) -> dict[str, Any]:
    shape = _layout(c.sent)
    args = shape["arguments"] if "arguments" in shape else plain_dict(c.input)
    fn = {"name": c.name, "arguments": args, **cast(Mapping[str, Any], shape.get("function") or {})}
    out: dict[str, Any] = {} if shape.get("no_id") else {"id": c.call_id}
    out.update(cast(Mapping[str, Any], shape.get("call") or {}))
    out["function"] = fn
    return out


def _step(step: ReplayStep, layout: Mapping[str, Any]) -> list[dict[str, Any]]:
    msg: dict[str, Any] = {"role": "assistant", "content": step.words}
    for d in step.reasoning(WIRE) if step.said else ():
        msg.update(d)
    msg["tool_calls"] = [_call(c) for c in step.calls]
    out = [_laid_out(msg, layout)]
    for c in step.calls:
        if "no_answer" not in c.patches:
            out.append(_laid_out({"role": "tool", "content": c.answer}, _layout(c.sent, "result")))
    return out


def _reply(t: TurnMessage) -> list[dict[str, Any]]:
    steps = turn_steps(t)
    with_calls: Iterator[ReplayStep] = iter([s for s in steps if s.calls])
    closing = next((s for s in steps if not s.calls), None)
    entries = _layout(t.sent).get("messages")
    out: list[dict[str, Any]] = []
    final_done = False
    for layout in cast(Sequence[Mapping[str, Any]], entries if isinstance(entries, list) else []):
        step = None if layout.get("empty") else next(with_calls, None)
        if layout.get("empty"):
            out.append(_laid_out({"role": "assistant", "content": ""}, layout))
        elif step is not None:
            out.extend(_step(step, layout))
        elif not final_done:
            out.append(_final(t, closing, layout))
            final_done = True
    for step in with_calls:
        out.extend(_step(step, {}))
    if not final_done and t.text:
        out.append(_final(t, closing, {}))
    return out


def _final(t: TurnMessage, closing: ReplayStep | None, layout: Mapping[str, Any]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": t.text}
    for d in closing.reasoning(WIRE) if closing is not None and closing.said else ():
        msg.update(d)
    return _laid_out(msg, layout)


def _message(t: TurnMessage) -> list[dict[str, Any]]:
    if t.role == "assistant":
        return _reply(t)
    msg: dict[str, Any] = {"role": t.role, "content": user_words(t, carries)}
    images = [p.data for p in t.parts if p.kind != "text" and carries(p)]
    if images:
        msg["images"] = images
    return [_laid_out(msg, _layout(t.sent))]


def _function(s: ToolSpec) -> dict[str, Any]:
    fn = {"name": s.name, "description": s.description, "parameters": dict(s.parameters)}
    return {"type": "function", "function": fn}


def render_as_sent(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The body's conversation and tools as sent (its settings come from the request, design 38)."""
    body: dict[str, Any] = {"model": opts.model, LIST_KEY: [m for t in turns for m in _message(t)]}
    tools = [_layout(s.sent).get("tool") or _function(s) for s in opts.tools]
    if tools:
        body["tools"] = tools
    return body


__all__ = ["render_as_sent"]

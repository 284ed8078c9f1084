"""The Responses body as its agent sent it (design 38): the turns of an as-sent replay laid out again from
the ``sent`` this wire keeps (:mod:`.layout`): ``instructions`` where they were, system and developer
messages in place with their item ids, content parts apart, reasoning and hosted-tool items verbatim,
``function_call`` and ``custom_tool_call`` items with their own ``call_id`` and item ids, their outputs
with theirs, and every tool declaration as declared. The request's settings are added by the caller.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from toolreplay.model import Part, Piece, Text, ToolSpec
from toolreplay.wires.common import RenderOptions
from toolreplay.wires.openai_responses.layout import WIRE, content_parts, layout_of
from toolreplay.wires.openai_responses.render import LIST_KEY, call_ids, content_part, render_turn
from toolreplay.wires.openai_responses.request import media_fields
from toolreplay.wires.replayed import ReplayCall, ReplayStep, TurnMessage, turn_steps


def _content(text: str, parts: Sequence[Part], layout: Mapping[str, Any]) -> Any:
    content = layout.get("content", "string")
    if content in ("none", "null"):
        return None
    if content == "parts":
        return [_part(p) for p in parts]
    if isinstance(content, list):
        return content_parts(text, cast(list[Mapping[str, Any]], content))
    return text


def _part(p: Part) -> dict[str, Any]:
    """A user message's part as sent: its type, what carries it (the raw URL when kept), its keys."""
    lay = layout_of(p.sent)
    if p.kind == "text":
        out: dict[str, Any] = {"type": lay.get("type", "input_text"), "text": p.text}
    else:
        out = {"type": lay.get("type", content_part(p)["type"])}
        raw = lay.get("raw")
        out.update(cast(Mapping[str, Any], raw) if isinstance(raw, Mapping) else media_fields(p))
    out.update(cast(Mapping[str, Any], lay.get("extra") or {}))
    return out


def _message(role: str, text: str, parts: Sequence[Part], layout: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(cast(Mapping[str, Any], layout.get("item") or {}))
    out["role"] = role
    if layout.get("content") != "none":  # absent stays absent; null stays null
        out["content"] = _content(text, parts, layout)
    return out


def _call(c: ReplayCall) -> dict[str, Any]:
    lay = layout_of(c.sent)
    data = c.provider_data.get(WIRE) if c.provider_data else None
    item_id = data.get("item_id") if isinstance(data, Mapping) else None
    out: dict[str, Any] = {"type": "custom_tool_call" if c.kind == "custom" else "function_call"}
    if isinstance(item_id, str):
        out["id"] = item_id
    out["call_id"] = c.call_id
    out["name"] = c.name
    if c.kind == "custom":
        out["input"] = c.text
    else:
        out["arguments"] = lay.get("arguments", c.arguments)
    out.update(cast(Mapping[str, Any], lay.get("call") or {}))
    return out


def _output(c: ReplayCall) -> dict[str, Any] | None:
    """The call's output item as sent; None for a call the body did not answer."""
    lay = layout_of(c.sent)
    if "output" not in lay:
        return None
    out: dict[str, Any] = dict(cast(Mapping[str, Any], lay["output"]))
    out["type"] = "custom_tool_call_output" if c.kind == "custom" else "function_call_output"
    out["call_id"] = c.call_id
    content = lay.get("output_content")
    out["output"] = content_parts(c.answer, content) if isinstance(content, list) else c.answer
    return out


class _Reply:
    """The items of one reply: each run of model items its body carried, from the reply's steps."""

    def __init__(self, t: TurnMessage) -> None:
        steps = turn_steps(t)
        self.steps: Iterator[ReplayStep] = iter([s for s in steps if s.calls])
        self.closing: Iterator[Piece] = iter(next((s.said for s in steps if not s.calls), ()))
        self.text = t.text
        self.pos = 0

    def _final(self, n: int) -> str:
        """The next ``n`` characters of the reply's final words (its messages are a blank line apart)."""
        got = self.text[self.pos : self.pos + n]
        self.pos += n
        if self.text.startswith("\n\n", self.pos):
            self.pos += 2
        return got

    def run(self, slots: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        calls_here = any(s.get("kind") == "call" for s in slots)
        step = next(self.steps, None) if calls_here else None
        said = iter(step.said) if step is not None else self.closing
        calls = iter(step.calls if step is not None else ())
        out: list[dict[str, Any]] = []
        for slot in slots:
            kind = slot.get("kind")
            if kind == "call":
                c = next(calls, None)
                out.extend([_call(c)] if c is not None else [])
            elif kind == "said":
                p = next((x for x in said if type(x) is not Text), None)
                d = p.data.get(WIRE) if p is not None and p.data else None
                out.extend([dict(d)] if isinstance(d, Mapping) else [])
            else:
                out.append(self._text(slot, said, step is not None))
        if step is not None:
            out.extend(o for o in map(_output, step.calls) if o is not None)
        return out

    def _text(self, slot: Mapping[str, Any], said: Iterator[Piece], in_step: bool) -> dict[str, Any]:
        n = int(slot.get("len", 0))
        if not n:
            text = ""
        elif in_step:
            text = next((x.text for x in said if type(x) is Text and x.text), "")
        else:
            text = self._final(n)
        if slot.get("easy"):
            return {"role": "assistant", "content": text}
        return _message("assistant", text, (), slot)


def _reply_items(t: TurnMessage) -> list[dict[str, Any]]:
    runs = layout_of(t.sent).get("messages")
    if not isinstance(runs, list):  # stored without a layout: the reply as this wire renders it
        return render_turn(t, call_ids(RenderOptions(model="")))
    reply = _Reply(t)
    out: list[dict[str, Any]] = []
    for run in runs:
        slots = run.get("items") if isinstance(run, Mapping) else None
        out.extend(reply.run(slots if isinstance(slots, list) else []))
    return out


def tool(spec: ToolSpec) -> dict[str, Any]:
    """A declaration as declared (a tool stored without one: a function tool of its fields)."""
    kept = layout_of(spec.sent).get("tool")
    if isinstance(kept, Mapping):
        return dict(cast(Mapping[str, Any], kept))
    return {"type": "function", "name": spec.name, "description": spec.description,
            "parameters": dict(spec.parameters), "strict": False}  # fmt: skip


def render_as_sent(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The body's ``instructions``, ``input`` and ``tools`` as its agent sent them."""
    body: dict[str, Any] = {}
    items: list[dict[str, Any]] = []
    for t in turns:
        lay = layout_of(t.sent)
        if t.role == "system" and "role" not in lay:  # the instructions (or a prompt stored as one)
            body["instructions"] = f"{body['instructions']}\n\n{t.text}" if "instructions" in body else t.text
        elif lay.get("input") == "string":
            body[LIST_KEY] = t.text
        elif t.role == "assistant":
            items.extend(_reply_items(t))
        else:
            items.append(_message(str(lay.get("role", t.role)), t.text, t.parts, lay))
    body.setdefault(LIST_KEY, items)
    if opts.tools:
        body["tools"] = [tool(s) for s in opts.tools]
    return body


__all__ = ["render_as_sent", "tool"]

"""A Gemini request body rendered back as its agent sent it (design 38): the turns of an as-sent replay
(every call whole under its own id), laid out as :mod:`.layout` recorded them.

Each stored message gives back its contents in order: the leading system messages the
``systemInstruction`` (one part each, its role and spelling as sent); a user message one content (its
text and media parts apart); a reply one model content per content it was read from, each part where it
stood (thought parts, words, ``functionCall`` parts with their ids and signatures, server-tool parts),
each step followed by the user content(s) of its ``functionResponse`` parts (their ids, responses and own
parts as sent). Names are not mapped and ids not derived; tools are declared as they were (function
declarations whole, hosted tools by their key, in their ``tools`` entries).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from toolreplay.model import Part, Piece, ToolSpec
from toolreplay.wires.common import SEPARATOR, RenderOptions
from toolreplay.wires.gemini.layout import WIRE, content, laid_out, layout_of
from toolreplay.wires.gemini.render import LIST_KEY, render_turn
from toolreplay.wires.gemini.signatures import stored_signature
from toolreplay.wires.replayed import ReplayCall, ReplayStep, TurnMessage, leading_system, turn_steps


def _media(p: Part) -> dict[str, Any]:
    lay = layout_of(p.sent)
    inner: dict[str, Any] = {} if lay.get("no_mime") else {"mimeType": p.media_type}
    if p.url:
        inner["fileUri"] = p.url
    else:
        inner["data"] = p.data
    extra = lay.get("inner")
    if isinstance(extra, Mapping):
        inner.update(cast(Mapping[str, Any], extra))
    return laid_out({"fileData" if p.url else "inlineData": inner}, lay)


def _parts_layout(sent: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    got = sent.get("parts")
    return cast(list[Mapping[str, Any]], got) if isinstance(got, list) else []


def _user(t: TurnMessage, before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A user message's content; one that shared its content with answers (``functionResponse`` parts
    first, then words) takes back the content of those answers, ``before``'s last, parts in order."""
    lay = layout_of(t.sent)
    layouts = _parts_layout(lay)
    if not layouts:  # not read from a Gemini body: the wire's own form
        return render_turn(t)
    given = deque(t.parts or (Part("text", text=t.text),))
    texts = deque(p for p in given if p.kind == "text")
    media = deque(p for p in given if p.kind != "text")
    answers: deque[dict[str, Any]] = deque()
    if any(pl.get("k") == "response" for pl in layouts) and before and before[-1].get("role") == "user":
        answers.extend(before.pop().get("parts", []))
    parts: list[dict[str, Any]] = []
    for pl in layouts:
        if pl.get("k") == "response" and answers:
            parts.append(answers.popleft())
        elif pl.get("k") == "text" and texts:
            parts.append(laid_out({"text": texts.popleft().text}, pl))
        elif pl.get("k") == "media" and media:
            parts.append(_media(media.popleft()))
        elif "part" in pl:
            parts.append(dict(pl["part"]))
    return [_content("user", parts, lay)]


def _content(role: str, parts: list[dict[str, Any]], lay: Mapping[str, Any]) -> dict[str, Any]:
    c = layout_of({WIRE: lay}, "content")
    out = content(role, parts, c)
    if lay.get("no_parts") and not parts:
        del out["parts"]
    return out


def _call(c: ReplayCall, pl: Mapping[str, Any]) -> dict[str, Any]:
    cl = layout_of(c.sent)
    fc: dict[str, Any] = {"name": c.name}
    if not cl.get("no_args"):
        fc["args"] = cl["args"] if "args" in cl else dict(c.input)
    if c.provider_call_id is not None:
        fc["id"] = c.call_id
    extra = cl.get("fc_extra")
    if isinstance(extra, Mapping):
        fc.update(cast(Mapping[str, Any], extra))
    part: dict[str, Any] = {"functionCall": fc}
    sig = stored_signature(c) or cl.get("signature")
    if sig:
        part["thoughtSignature"] = sig
    return laid_out(part, pl)


def _said(piece: Piece | None, pl: Mapping[str, Any]) -> dict[str, Any]:
    data = piece.data.get(WIRE) if piece is not None and piece.data else None
    if pl.get("k") != "text":  # a thought or a server-tool part, kept whole
        return dict(cast(Mapping[str, Any], data)) if isinstance(data, Mapping) else {}
    text = pl["text"] if "text" in pl else getattr(piece, "text", "")
    part: dict[str, Any] = {"text": text}
    if isinstance(data, Mapping):
        part.update(cast(Mapping[str, Any], data))
    return laid_out(part, pl)


def _model(lay: Mapping[str, Any], said: deque[Piece], calls: deque[ReplayCall]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for pl in _parts_layout(lay):
        k = pl.get("k")
        if k == "call" and calls:
            parts.append(_call(calls.popleft(), pl))
        elif k == "other":
            parts.append(dict(pl["part"]))
        elif k in ("thought", "server") or pl.get("signed") or (k == "text" and "text" not in pl):
            parts.append(_said(said.popleft() if said else None, pl))
        else:
            parts.append(_said(None, pl))
    return _content("model", parts, lay)


def _response(c: ReplayCall) -> dict[str, Any]:
    rl = layout_of(c.sent, "result")
    fr: dict[str, Any] = {}
    if not rl.get("no_name"):
        fr["name"] = rl.get("name", c.name)
    if "id" in rl:
        fr["id"] = rl["id"]
    elif c.provider_call_id is not None and not rl.get("no_id"):
        fr["id"] = c.call_id
    if not rl.get("no_response"):
        fr["response"] = rl.get("response", {"error" if c.is_error else "output": c.answer})
    if "fr_parts" in rl:
        fr["parts"] = rl["fr_parts"]
    elif c.parts:
        fr["parts"] = [_media(p) for p in c.parts if p.kind != "text"]
    extra = rl.get("fr_extra")
    if isinstance(extra, Mapping):
        fr.update(cast(Mapping[str, Any], extra))
    return laid_out({"functionResponse": fr}, layout_of({WIRE: rl}, "part"))


def _at(c: ReplayCall) -> tuple[int, int]:
    at = layout_of(c.sent, "result").get("at")
    return (int(at[0]), int(at[1])) if isinstance(at, list) and len(at) == 2 else (-1, -1)


def _answers(step: ReplayStep) -> list[dict[str, Any]]:
    """The user content(s) of a step's answers, each answer in the content and place it stood (by id,
    Gemini CLI may answer parallel calls in any order); answers read from elsewhere follow in order."""
    answered = [c for c in step.calls if "no_answer" not in c.patches]
    placed = sorted((c for c in answered if _at(c)[0] >= 0), key=_at)
    groups: dict[int, dict[str, Any]] = {}
    for c in [*placed, *(c for c in answered if _at(c)[0] < 0)]:
        rl = layout_of(c.sent, "result")
        key = _at(c)[0] if _at(c)[0] >= 0 else (max(groups) if groups else -1)
        if key not in groups:
            lay = rl.get("content")
            groups[key] = _content(
                "user", [], cast(Mapping[str, Any], lay) if isinstance(lay, Mapping) else {}
            )
        groups[key].setdefault("parts", []).append(_response(c))
    return list(groups.values())


def _reply(t: TurnMessage) -> list[dict[str, Any]]:
    entries = layout_of(t.sent).get("messages")
    if not isinstance(entries, list) or not entries:
        return render_turn(t)
    steps = turn_steps(t)
    with_calls: Iterator[ReplayStep] = iter([s for s in steps if s.calls])
    closing = next((s for s in steps if not s.calls), None)
    tail: deque[Piece] = deque(closing.said if closing else ())
    out: list[dict[str, Any]] = []
    for lay in cast(list[Mapping[str, Any]], entries):
        if lay.get("separator"):
            out.append({"role": "user", "parts": [{"text": SEPARATOR}]})
        if any(pl.get("k") == "call" for pl in _parts_layout(lay)):
            step = next(with_calls, None)
            if step is None:
                continue
            out.append(_model(lay, deque(step.said), deque(step.calls)))
            out.extend(_answers(step))
        else:
            out.append(_model(lay, tail, deque()))
    return out


def _system(turns: Sequence[TurnMessage]) -> tuple[str, Any]:
    """The ``systemInstruction`` (or ``system_instruction``) of the leading system messages."""
    first = layout_of(turns[0].sent)
    key = str(first.get("key", "systemInstruction"))
    if first.get("string"):
        return key, turns[0].text
    parts = [laid_out({"text": t.text}, layout_of(t.sent, "part")) for t in turns]
    c = layout_of(turns[0].sent, "content")
    out: dict[str, Any] = {"parts": parts}
    if "role" in c:
        out["role"] = c["role"]
    extra = c.get("extra")
    if isinstance(extra, Mapping):
        out.update(cast(Mapping[str, Any], extra))
    return key, out


def declarations(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``tools`` as declared: each entry's function declarations and hosted tools, in order."""
    entries: dict[int, dict[str, Any]] = {}
    for s in tools:
        lay = layout_of(s.sent)
        spec = lay.get("tool")
        at = lay.get("entry")
        if not isinstance(spec, Mapping) or not isinstance(at, int):
            decl = {"name": s.name, "description": s.description, "parametersJsonSchema": dict(s.parameters)}
            entries.setdefault(len(tools) + 1, {}).setdefault("functionDeclarations", []).append(decl)
        elif s.kind == "hosted":
            entries.setdefault(at, {}).update(cast(Mapping[str, Any], spec))
        else:
            key = str(lay.get("key", "functionDeclarations"))
            entries.setdefault(at, {}).setdefault(key, []).append(dict(cast(Mapping[str, Any], spec)))
    return [entries[i] for i in sorted(entries)]


def render_as_sent(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The body's conversation, system instruction and tools as sent (its settings come from the
    request, design 38)."""
    lead = leading_system(turns)
    contents: list[dict[str, Any]] = []
    for t in turns[lead:]:
        if t.role == "assistant":
            contents.extend(_reply(t))
        elif t.role == "system":  # Gemini has no system message in the middle: as it was read, a user's
            contents.append({"role": "user", "parts": [{"text": t.text}]})
        else:
            contents.extend(_user(t, contents))
    body: dict[str, Any] = {LIST_KEY: contents}
    if lead:
        key, value = _system(turns[:lead])
        body[key] = value
    tools = declarations(opts.tools)
    if tools:
        body["tools"] = tools
    return body


__all__ = ["declarations", "render_as_sent"]

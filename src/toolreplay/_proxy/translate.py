"""Request translation (design 48): an agent's request on one wire, rendered for a vessel on another.

:func:`read_inbound` reads the agent's body into the neutral history, nothing dropped.
:func:`translate_request` merges it with the stored conversation it continues (the store is the memory
of what the agent's wire cannot carry, :mod:`.translate_merge`), renders it for the vessel's wire with
native calls and no replay bounds (the proxy never shortens an agent's context: its full inputs and
answers go on), reasoning only to its issuer (design 17), each call under an id the upstream takes
(design 49, :mod:`.translate_ids`), the agent's settings in the upstream's fields
(:mod:`.translate_settings`, each wire's ``Wire.translation``), and names in ``notes`` everything it could not
carry. It also gives what the answer's writer needs (:class:`~toolreplay.wires.bridge.Outbound`'s ids,
the token that stands for a piece of reasoning, design 50).

Everything here is pure: the same request and stored conversation give the same bytes on every run and
machine, so a real provider's prompt cache hits on the second run.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any

import orjson

from toolreplay._proxy.bodies import Sliced, items
from toolreplay._proxy.continued import LAYOUTS, Layout
from toolreplay._proxy.translate_ids import agent_call_ids, answer_id, history_digest, upstream_ids
from toolreplay._proxy.translate_merge import merge
from toolreplay._proxy.translate_renders import Renders
from toolreplay._proxy.translate_settings import merged_into, settled
from toolreplay._replay import prepare_turn_messages
from toolreplay._transport.request import Prepared, prepare
from toolreplay._vessels import Vessel
from toolreplay.errors import ConfigError
from toolreplay.jsonenc import Spliced
from toolreplay.model import History, Issuer, Message, Reasoning, ToolSpec
from toolreplay.wires import get_wire, render_wire
from toolreplay.wires.bounded import ByIdentity
from toolreplay.wires.bridge import seal
from toolreplay.wires.common import RenderOptions, declared_tools, wire_tool_name
from toolreplay.wires.contract import Refused, Wire
from toolreplay.wires.read_memo import READ_MEMO
from toolreplay.wires.render_warnings import render_warnings
from toolreplay.wires.replayed import TurnMessage, turn_steps
from toolreplay.wires.reply import ParsedCall, Reply
from toolreplay.wires.translation import Asked, Fields


@dataclass(frozen=True, slots=True, kw_only=True)
class Translated:
    """An agent's request translated for one upstream, and what the answer's writer needs."""

    body: dict[str, Any]
    """The upstream's request body, rendered for the vessel's wire."""
    stream: bool
    """The agent asked for a stream (the upstream is asked the same, see :attr:`upstream_stream`)."""
    history: History
    """The agent's request merged with the stored conversation: what gets recorded."""
    thinking: bool
    """The agent asked to see reasoning (``Outbound.thinking``)."""
    answer_id: str
    """The answer's own id in the agent's wire, a pure function of the history."""
    call_id: Callable[[int, str | None, str], str]
    """(the answer's call index, the upstream's id or None, the call's name) -> the id the agent sees."""
    seal: Callable[[Reasoning], str]
    """The opaque token that stands for a piece of the upstream's reasoning on the agent's side."""
    notes: tuple[str, ...]
    """What could not be carried (a setting, a hosted tool, a part, reasoning left out)."""
    upstream_stream: bool = False
    """The upstream is asked for a stream: the agent's ask, or always for a vessel that only streams."""
    tool_names: Mapping[str, str] = field(default_factory=lambda: {})
    """The upstream's name of a tool -> the agent's, for every name the upstream wire could not take as
    it is (sent under :func:`~toolreplay.wires.common.wire_tool_name`): an answer's calls go back under
    the agent's names."""
    free_form: frozenset[str] = frozenset()
    """The agent's free-form tools (Responses ``custom``) sent to a wire without them as functions of one
    string ``input``: a call of one comes back as ``{"input": text}`` and goes to the agent as free-form."""
    upstream_wire: str = ""
    """The vessel's wire (whose provider data keeps the upstream's own call ids)."""
    sent: dict[str, Any] | None = None
    """:attr:`body` with its list as its JSON (:class:`~toolreplay.jsonenc.Spliced`, kept by the render
    cache) and its other lists as theirs (design 60): encoded to send it, the same bytes for a fraction
    of the encoding. None: the body itself is encoded."""

    def agent_call(self, index: int, call: ParsedCall) -> ParsedCall:
        """Call ``index`` of the upstream's answer as the agent sees it and the store keeps it (design
        49): under :attr:`call_id`'s id and the agent's tool name, a free-form tool's call as free-form
        text again; the upstream's own id, when it differs, in ``provider_data[upstream wire]["id"]``."""
        name = self.tool_names.get(call.name, call.name)
        cid = self.call_id(index, call.call_id, name)
        data = call.provider_data
        if call.call_id and call.call_id != cid:
            own = data.get(self.upstream_wire) if data else None
            mine = {**(own if isinstance(own, Mapping) else {}), "id": call.call_id}
            data = {**(data or {}), self.upstream_wire: mine}
        out = replace(call, name=name, call_id=cid, provider_data=data)
        text = call.input.get("input") if isinstance(call.input, dict) else None
        if name in self.free_form and call.kind == "function" and isinstance(text, str):
            out = replace(out, input=text, kind="custom")
        return out

    def agent_reply(self, reply: Reply) -> Reply:
        """The upstream's whole answer as the agent sees it and the store keeps it: each call as
        :meth:`agent_call` has it."""
        if not reply.calls:
            return reply
        return replace(reply, calls=tuple(self.agent_call(i, c) for i, c in enumerate(reply.calls)))


@dataclass(frozen=True, slots=True)
class Unsliced:
    """A body read from its top-level slices (:class:`~toolreplay._proxy.bodies.Sliced`): the body, and
    the exact bytes its memoized values were read from (empty: none)."""

    body: dict[str, Any]
    raws: Mapping[str, Any] = field(default_factory=lambda: {})


def unsliced(inbound: Wire, body: Mapping[str, Any]) -> Unsliced:
    """The whole body (as :func:`~toolreplay._proxy.bodies.json_value` reads it): a body message whose
    bytes the memo holds at its index is the value read from them before, the system prompt and the tool
    list likewise; a body already read is itself."""
    if not isinstance(body, Sliced):
        return Unsliced(dict(body))
    memoized = inbound.translation.memoized if inbound.translation else None
    key = inbound.list_key
    layout = body.layout if body.layout is not None and body.layout.key == key else None
    listed = body.raws.get(key) if memoized is not None else None
    entries = layout.entries if layout is not None else items(listed) if listed is not None else None
    if memoized is None or entries is None:
        return Unsliced(body.whole())
    whole = memoized.whole
    try:
        values, slices = READ_MEMO.loaded_items(entries, orjson.loads)
        out = {k: values if k == key else _value(k, raw, whole) for k, raw in body.raws.items()}
    except orjson.JSONDecodeError:
        return Unsliced(body.exact())
    # the next request of it is sliced from this one (design 57), its entries as the memo holds them
    LAYOUTS.keep(
        layout.kept_as(slices.raws) if layout is not None else Layout(body.plain, body.raws, key, slices.raws)
    )
    raws = {k: body.raws[k] for k in whole if k in body.raws}
    return Unsliced(out, {**raws, key: slices})


def _value(key: str, raw: bytes, kept: tuple[str, ...]) -> Any:
    return READ_MEMO.loaded(key, raw, orjson.loads) if key in kept else orjson.loads(raw)


def read_inbound(
    inbound: Wire,
    body: Mapping[str, Any],
    *,
    path_model: str | None = None,
    raws: Mapping[str, Any] | None = None,
) -> History:
    """The agent's request as the neutral history (``inbound.parse_request``), nothing dropped.
    ``path_model``: the model the request's path names (Gemini's URL), recorded as the issuer's model of
    what the agent's replies carry when the body names none. ``raws``: the bytes the body's values were
    read from (:func:`unsliced`), which key the read memo."""
    if inbound.parse_request is None:
        raise ConfigError(f"wire {inbound.name} cannot read request bodies: it cannot be translated")
    memoized = inbound.translation.memoized if inbound.translation else None
    if memoized is not None:
        h = memoized.parse(dict(body), memo=READ_MEMO, raws=raws)
    else:
        h = inbound.parse_request(dict(body))
    if not path_model or isinstance(body.get("model"), str):
        return h
    return replace(h, messages=tuple(_with_model(m, path_model) for m in h.messages))


def _with_model(m: Message, model: str) -> Message:
    if not any(s.issuer is not None and not s.issuer.model for s in m.steps):
        return m
    steps = tuple(
        replace(s, issuer=replace(s.issuer, model=model))
        if s.issuer is not None and not s.issuer.model
        else s
        for s in m.steps
    )
    return replace(m, steps=steps)


#: Settings that only make sense beside declared tools (a provider refuses them without).
_TOOL_SETTINGS = ("tool_choice", "toolConfig", "parallel_tool_calls")


def _body(body: dict[str, Any], opts: RenderOptions, f: Fields) -> dict[str, Any]:
    extra = f.body
    if not body.get("tools"):
        extra = {k: v for k, v in extra.items() if k not in _TOOL_SETTINGS}
    return merged_into(body, extra)


def _refusal(target: Wire, vessel: Vessel, body: Mapping[str, Any]) -> str | None:
    """The provider's refusal of ``body`` for its thinking setting: the wire's own rule for it where it
    has one (a walk of the tool loop), else the first refusal of all its rules."""
    hook = target.translation.thinking_refusal if target.translation is not None else None
    if hook is not None:
        return hook(vessel, body)
    problems: list[str] = []
    target.rules(vessel, body, problems)
    return next((p.provider for p in problems if isinstance(p, Refused)), None)


def _reasoned(turns: list[TurnMessage], wire: str) -> bool:
    """Whether every step with calls goes with reasoning of the upstream wire's own (then no thinking
    rule can refuse the request, and the rules need not be asked)."""
    return all(step.reasoning(wire) for t in turns for step in turn_steps(t) if step.calls)


def _thinking_kept(
    target: Wire, vessel: Vessel, body: dict[str, Any], f: Fields, notes: list[str], reasoned: bool
) -> dict[str, Any]:
    """``body``, or it with thinking off where the upstream would refuse it with thinking on (a tool loop
    whose earlier steps another model made: Anthropic wants the loop to open with its own thinking block,
    Moonshot every tool-call message with its own ``reasoning_content``)."""
    if f.thinking_off is None or reasoned:
        return body
    why = _refusal(target, vessel, body)
    if why is None:
        return body
    key, off = f.thinking_off
    out = merged_into(body, {key: off}) if off is not None else {k: v for k, v in body.items() if k != key}
    if _refusal(target, vessel, out) is None:
        notes.append(f"thinking turned off for this request: with it on, {vessel.wire} refuses it ({why})")
        return out
    return body


_PER_STEP = re.compile(r"^message (\S+): step (\d+): (.+)$", re.S)


def compact(notes: list[str]) -> tuple[str, ...]:
    """The notes, each once, a note said of many steps (reasoning left out of each step of a long
    conversation) said once for them all, where the first of them stood."""
    groups: dict[str, list[str]] = {}
    for n in notes:
        m = _PER_STEP.match(n)
        if m is not None:
            groups.setdefault(m.group(3), []).append(m.group(1))
    out: list[str] = []
    for n in dict.fromkeys(notes):
        m = _PER_STEP.match(n)
        if m is None:
            out.append(n)
            continue
        where = groups.pop(m.group(3), None)
        if where is None:
            continue  # said with the first
        if len(where) == 1:
            out.append(n)
        else:
            out.append(f"{len(where)} steps (messages {where[0]} to {where[-1]}): {m.group(3)}")
    return tuple(out)


def _names(tools: tuple[ToolSpec, ...], h: History) -> tuple[dict[str, str], frozenset[str]]:
    calls = chain.from_iterable(map(_TOOL_USES, h.messages))  # at C speed: hundreds in a long conversation
    names = dict.fromkeys(chain(map(_NAME, tools), map(_NAME, calls)))
    mapped = {sent: n for n in names if (sent := wire_tool_name(n)) != n}
    free = frozenset(t.name for t in tools if t.kind == "custom")
    return mapped, free


_NAME = operator.attrgetter("name")
_TOOL_USES = operator.attrgetter("tool_uses")


@dataclass(frozen=True, slots=True, kw_only=True)
class Rendered:
    """An agent's request rendered for one upstream: what goes on the wire, and what the answer's side of
    the translation is worked out from (:func:`answering`: its ids, its tool names, its notes). The proxy
    sends the body first and works the answer's side out while the upstream works on the request."""

    body: dict[str, Any]
    sent: dict[str, Any] | None
    upstream_stream: bool
    asked: Asked
    merged: History
    turns: list[TurnMessage]
    tools: tuple[ToolSpec, ...]
    notes: list[str]
    inbound: str
    issuer: Issuer
    wire: str
    """The vessel's wire."""


def rendered_request(
    inbound: Wire,
    history: History,
    stored: History | None,
    vessel: Vessel,
    *,
    issuer: Issuer,
    path_stream: bool = False,
    renders: Renders | None = None,
) -> Rendered:
    """The body side of :func:`translate_request`: the upstream's request and what the rest needs."""
    notes = list(history.warnings)
    merged = merge(history, stored, issuer, notes)
    req = history.last_request
    tools = history.tools or ()
    got = settled(inbound.name, req.fields if req else {}, vessel, issuer, tools, path_stream=path_stream)
    fields, opts, upstream_stream = got.fields, got.opts, got.upstream_stream
    notes.extend(fields.notes)
    sent = upstream_ids(merged, vessel.wire)
    target = get_wire(vessel.wire)
    listed: Any | None = None
    if renders is None:
        turns = prepare_turn_messages(sent, "native", settings=got.replay)
        body = render_wire(vessel.wire, turns, opts)
    else:
        body, turns, listed = renders.render(sent.messages, vessel.wire, opts, got.replay)
    rendered = body.get(target.list_key)
    body = _body(body, opts, fields)
    body = _thinking_kept(target, vessel, body, fields, notes, _reasoned(turns, vessel.wire))
    return Rendered(
        body=body, upstream_stream=upstream_stream, asked=got.asked, merged=merged, turns=turns, tools=tools,
        notes=notes, inbound=inbound.name, issuer=issuer, wire=vessel.wire,
        # the settings set top-level fields only: a list still the render's is sent as its kept JSON
        sent=_kept_json(body, target.list_key, listed) if listed and body.get(target.list_key) is rendered
        else None,
    )  # fmt: skip


#: Each top-level list of a rendered body (the tools, mostly) as its JSON, by the list: the render cache
#: gives the same objects again while the conversation's tools stay the same (design 60).
_LISTS_JSON: ByIdentity[Spliced | None] = ByIdentity(64)


def _kept_json(body: dict[str, Any], key: str, listed: Any) -> dict[str, Any]:
    """``body`` with its ``key`` list as ``listed`` (the render's kept JSON of it) and each other list as
    its JSON encoded once (design 60): encoding the tools again costs more than the kept messages do,
    as the objects walked are not in the processor's caches any more when the next request comes."""
    out = {**body, key: listed}
    for k, v in body.items():
        if k != key and type(v) is list and v:
            kept = _LISTS_JSON.get(v, functools.partial(_as_json, v))
            if kept is not None:
                out[k] = kept
    return out


def _as_json(value: list[Any]) -> Spliced | None:
    try:
        return Spliced([orjson.dumps(value)])
    except (TypeError, orjson.JSONEncodeError):
        return None  # the plain encoder's reading of what orjson refuses: encoded with the body


@dataclass(frozen=True, slots=True)
class AnswerIds:
    """What the answer's first event needs of the answer's side: its ids (a pure function of the
    history) and how the upstream's reasoning is shown."""

    answer_id: str
    call_id: Callable[[int, str | None, str], str]
    thinking: bool
    seal: Callable[[Reasoning], str]


def answer_ids(r: Rendered) -> AnswerIds:
    """The answer's ids for :func:`answering` (the writer starts with them)."""
    digest = history_digest(r.merged)
    return AnswerIds(
        answer_id(r.inbound, digest), agent_call_ids(r.inbound, digest), r.asked.show,
        functools.partial(seal, r.issuer),
    )  # fmt: skip


def answer_names(r: Rendered) -> tuple[dict[str, str], frozenset[str]]:
    """The tool names the answer's calls go back under, and the agent's free-form tools sent as functions
    (:attr:`Translated.tool_names`, :attr:`Translated.free_form`): asked at the answer's first call."""
    names, free = _names(r.tools, r.merged)
    return names, free if "custom" not in get_wire(r.wire).tool_kinds else frozenset()


def answering(
    r: Rendered, ids: AnswerIds | None = None, names: tuple[dict[str, str], frozenset[str]] | None = None
) -> Translated:
    """The answer's side of :func:`translate_request` (nothing of it goes upstream): the answer's ids, a
    pure function of the history; the tool names it goes back under; every note. ``ids``, ``names``:
    :func:`answer_ids` and :func:`answer_names` when they were asked for first."""
    ids = ids or answer_ids(r)
    tool_names, free = names or answer_names(r)
    notes = [*r.notes, *render_warnings(r.turns, declared_tools(r.turns, r.tools), r.wire)]
    return Translated(
        body=r.body,
        stream=r.asked.stream,
        history=r.merged,
        thinking=ids.thinking,
        answer_id=ids.answer_id,
        call_id=ids.call_id,
        seal=ids.seal,
        notes=compact(notes),
        upstream_stream=r.upstream_stream,
        tool_names=tool_names,
        free_form=free,
        upstream_wire=r.wire,
        sent=r.sent,
    )


def translate_request(
    inbound: Wire,
    history: History,
    stored: History | None,
    vessel: Vessel,
    *,
    issuer: Issuer,
    path_stream: bool = False,
    renders: Renders | None = None,
) -> Translated:
    """The agent's request ``history`` (on ``inbound``), continuing ``stored`` (None: a new
    conversation), translated for ``vessel``; ``issuer`` is the upstream's (wire, host, model), which
    gets its own reasoning back and seals what it produces. ``path_stream``: the request's path asked
    for a stream (Gemini's ``streamGenerateContent``). ``renders``: the conversation rendered
    incrementally (the proxy's, design 53); the body is the same with or without."""
    return answering(
        rendered_request(
            inbound, history, stored, vessel, issuer=issuer, path_stream=path_stream, renders=renders
        )
    )


def prepared_request(vessel: Vessel, done: Translated | Rendered) -> Prepared:
    """The vessel's request for ``done``: its body encoded with the render's kept JSON of its list where
    it has it (the same bytes), else whole."""
    if done.sent is not None:
        try:
            return prepare(vessel, done.sent, model=vessel.model, stream=done.upstream_stream)
        except TypeError:
            pass  # a value only the plain encoder writes, which cannot take the kept JSON: encoded whole
    return prepare(vessel, done.body, model=vessel.model, stream=done.upstream_stream)


__all__ = [
    "Rendered",
    "Translated",
    "answering",
    "prepared_request",
    "read_inbound",
    "rendered_request",
    "translate_request",
]

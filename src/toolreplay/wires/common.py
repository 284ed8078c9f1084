"""What every wire shares: render options, tool declarations, tool-name and call-id mapping.

Pure functions only. A wire module imports from here, :mod:`toolreplay.model` and
:mod:`toolreplay.wires.replayed`, never from another wire.
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from toolreplay.model import FREE_FORM_PARAMETERS, Issuer, Part, RequestSettings, Sent, ToolSpec
from toolreplay.wires.replayed import ReplayCall, TurnMessage, every_call

#: Tool names every wire accepts: OpenAI's and Anthropic's ``^[a-zA-Z0-9_-]{1,64}$`` intersected with
#: Gemini's rule that a name starts with a letter or an underscore.
# \Z, not $: $ also matches before a trailing newline, which let "coop\n" through as a valid name.
_TOOL_NAME_OK = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}\Z")
_TOOL_NAME_BAD = re.compile(r"[^A-Za-z0-9_-]")
#: Call ids Anthropic accepts (``tool_use.id``); derived ids always match it.
ID_SAFE = re.compile(r"^[A-Za-z0-9_-]+\Z")
_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")
#: The user text a wire puts where its role rules need a user turn the history does not have (Anthropic:
#: before a history that opens with a reply; Gemini: before a function-call turn that follows a model
#: turn). Deterministic and placed by looking back only, so earlier messages never change on append.
SEPARATOR = "(continued)"


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """Everything a wire needs besides the turn messages. Built from a vessel plus the caller's options.

    ``id_policy``: ``derived`` uses the replay's ids (``replay_<stem>_<n>``); another policy is a wire's
    own way of naming calls, which its id policy hook gives the :class:`IdMapper` (``kimi``: the Chat
    wire's ``functions.<name>:<index>``, :mod:`toolreplay.wires.openai_chat.ids`).
    ``max_id_len``: the longest call id the server takes (OpenAI Chat: 40); longer ids are shortened
    deterministically. ``flags``: the vessel's quirk flags (see :mod:`toolreplay._vessels`).
    """

    model: str
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = False
    id_policy: str = "derived"
    max_id_len: int | None = None
    flags: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    tool_choice: str | None = None
    include: tuple[str, ...] = ()
    """Responses ``include`` (the turn loop asks a stateless vessel for ``reasoning.encrypted_content``)."""
    cache_breakpoints: int = 0
    """Prompt-cache breakpoints a wire that takes them places (Anthropic ``cache_control``, design 36);
    0: none. From the vessel's profile unless the caller says otherwise."""
    as_sent: bool = False
    """Render the request as its agent sent it (design 38): the stored ids, layout, markers and tool
    declarations (``sent``), no name mapping, no derived ids, no markers of our own; ``request`` holds
    its settings. ``Wire.render_as_sent`` is called with it set; a wire without one gets its ``render``
    with it set (the best that wire does)."""
    request: RequestSettings | None = None
    """An as-sent render's request settings (the history's latest recorded request), for a wire whose
    body shape depends on them; the render path sends them beside what the wire renders."""


def body_issuer(wire: str, host: str, model: Any) -> Issuer:
    """The issuer of what an imported body carries (design 17): its wire, the wire's public host (the
    importer's ``--issuer-url`` replaces it), its model as the body names it ("" when none: Gemini keeps
    the model in the URL)."""
    return Issuer(wire, host, model if isinstance(model, str) else "")


#: Request settings every render decides for itself (the vessel's model, whether it streams): a normal
#: render never carries them and never names them as lost.
RENDER_DECIDES = ("model", "stream", "stream_options")

CarrySettings = Callable[[RequestSettings, RenderOptions], tuple[dict[str, Any], tuple[str, ...]]]


def same_wire_settings(wire: str, conversation_keys: Sequence[str]) -> CarrySettings:
    """``Wire.carry_settings`` of a wire that carries every setting of a request of its own (but those
    :data:`RENDER_DECIDES`) and none of another wire's."""
    skip = frozenset((*RENDER_DECIDES, *conversation_keys))

    def carry(req: RequestSettings, opts: RenderOptions) -> tuple[dict[str, Any], tuple[str, ...]]:
        # a setting sent empty (null, [], {}) says nothing: only an as-sent render gives it back (OpenAI's
        # schema refuses "stop": [] and "response_format": null, which some clients send)
        names = [k for k in req.fields if k not in skip and req.fields[k] not in (None, [], {}, "")]
        if req.wire != wire:
            return {}, tuple(names)
        return {k: req.fields[k] for k in names}, ()

    return carry


def request_settings(wire: str, body: Any, conversation_keys: Sequence[str]) -> RequestSettings | None:
    """A request body's settings as sent: every top-level field but the conversation, its system prompt
    and its tools (``conversation_keys``); None for a bare message list (no body, no settings)."""
    if not isinstance(body, Mapping):
        return None
    return RequestSettings(wire, {k: v for k, v in body.items() if k not in conversation_keys})


# Not memoised: a memo bought 0.98x-1.16x on a whole render (bench/RESULTS.md, "What each cache buys").
def wire_tool_name(name: str) -> str:
    """A tool name every wire accepts, mapped deterministically (the same for calls and definitions).

    Names that already fit ``^[A-Za-z_][A-Za-z0-9_-]{0,63}$`` are kept (every wire takes them: OpenAI
    and Anthropic allow ``[A-Za-z0-9_-]{1,64}``, Gemini also wants a letter or ``_`` first). Any other
    name becomes: each forbidden character replaced by ``_``, ``t_`` put in front when it does not start
    with a letter or ``_``, cut to 55 characters, then ``_`` and 8 hex digits of SHA-256 of the original
    name, so two different names practically never map to one (``my.tool`` -> ``my_tool_<hash>``).
    """
    if _TOOL_NAME_OK.match(name):
        return name
    cleaned = _TOOL_NAME_BAD.sub("_", name)
    if not cleaned or not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "t_" + cleaned
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned[:55]}_{digest}"


def renamed_for_wire(names: Iterable[str]) -> dict[str, str]:
    """The names that :func:`wire_tool_name` changes, old -> new (for warnings and the audit)."""
    return {n: w for n in names if (w := wire_tool_name(n)) != n}


def fit_id(call_id: str, max_len: int | None) -> str:
    """A call id shortened deterministically to ``max_len`` (prefix plus a hash of the whole id)."""
    if max_len is None or len(call_id) <= max_len:
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8")).hexdigest()[:12]
    return f"{call_id[: max_len - 13]}_{digest}"


def safe_id(call_id: str) -> str:
    """``call_id`` if it fits Anthropic's ``^[a-zA-Z0-9_-]+$``, else a cleaned form plus a hash of it."""
    if ID_SAFE.match(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8")).hexdigest()[:12]
    return f"{_ID_BAD.sub('_', call_id)}_{digest}"


def _min_len(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


#: A wire's own way of naming calls: (the tool's wire name, the call's running index in the request) -> id.
NamedId = Callable[[str, int], str]


class IdMapper:
    """Maps replayed call ids to a wire's id rules, in request order, the same way for call and answer.

    Call it once per call, in request order; use the returned id for the call and for its answer.
    ``max_len`` is the wire's own limit (Responses: 64), combined with the vessel's ``max_id_len``;
    ``id_safe`` forces Anthropic's id pattern; ``named``, the wire's own naming for the vessel's id
    policy (its ``call_ids`` hook passes it), replaces the derived ids. The derived ids are unique in a
    request by construction (see :mod:`toolreplay.ids`); named ones through their running index.
    """

    __slots__ = ("_index", "_max_len", "_named", "_safe")

    def __init__(
        self,
        opts: RenderOptions,
        *,
        max_len: int | None = None,
        id_safe: bool = False,
        named: NamedId | None = None,
    ) -> None:
        self._named = named
        self._max_len = _min_len(opts.max_id_len, max_len)
        self._safe = id_safe
        self._index = 0

    @property
    def index(self) -> int:
        """How many calls were mapped so far (Kimi's running index of the next call)."""
        return self._index

    def resume(self, index: int) -> None:
        """Continue as if ``index`` calls had been mapped (a render resumed part-way: the calls before it
        keep the ids they had; only Kimi's running index depends on how many there were)."""
        self._index = index

    def __call__(self, call: ReplayCall) -> str:
        if self._named is not None:
            out = self._named(wire_tool_name(call.name), self._index)
            if self._safe:
                out = safe_id(out)
            # design 7: a wire's named ids (Kimi's) go in full, whatever their length
        else:
            out = call.call_id
            if self._safe and ID_SAFE.match(out) is None:  # safe_id's own test, without the call
                out = safe_id(out)
            if self._max_len is not None and len(out) > self._max_len:
                out = fit_id(out, self._max_len)
        self._index += 1
        return out


def placeholder(p: Part) -> Part:
    """The text part a part travels as where the wire cannot carry it: its name in brackets."""
    return Part("text", text=f"[{p.label()}]")


def user_parts(t: TurnMessage, carries: Callable[[Part], bool]) -> list[Part]:
    """A user message's parts as a wire sends them (design 34): each part it carries, in order, and in
    place of any other its name (:func:`placeholder`;
    :func:`~toolreplay.wires.render_warnings.user_part_warnings` says so)."""
    return [p if p.kind == "text" or carries(p) else placeholder(p) for p in t.parts]


def user_words(t: TurnMessage, carries: Callable[[Part], bool] = lambda p: False) -> str:
    """A user message's text on a wire that sends its words apart from the parts it carries (Ollama's
    ``images``, a prompt of text alone): the words and the names of the parts it does not carry, in
    order, a blank line apart."""
    if not t.parts:
        return t.text
    return "\n\n".join(p.text for p in user_parts(t, carries) if p.kind == "text" and p.text)


_NAME = operator.attrgetter("name")


def name_warnings(turns: Sequence[TurnMessage], tools: Sequence[ToolSpec]) -> list[str]:
    """One warning per tool name the wires cannot express, saying what it is sent as."""
    names = dict.fromkeys(chain(map(_NAME, tools), map(_NAME, every_call(turns))))  # in order, once each
    seen = {n: wire_tool_name(n) for n in names}
    return [
        f"tool name {old!r} is not valid on every wire (^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$): sent as {new!r}"
        for old, new in seen.items()
        if old != new
    ]


def function_tools(opts: RenderOptions, turns: Sequence[TurnMessage]) -> list[dict[str, Any]]:
    """``tools`` in OpenAI's function shape (Chat, Ollama): every given tool plus every tool the
    replayed calls use."""
    return [
        {"type": "function", "function": {"name": name, "description": desc, "parameters": dict(params)}}
        for name, desc, params in tool_map(declared_tools(turns, opts.tools))
    ]


def sampling(opts: RenderOptions, max_tokens_key: str) -> dict[str, Any]:
    """The caller's ``temperature`` and output limit, each only when given; the limit under the wire's
    own name for it (``max_completion_tokens``, ``max_output_tokens``, ``num_predict``...)."""
    out: dict[str, Any] = {}
    if opts.temperature is not None:
        out["temperature"] = opts.temperature
    if opts.max_tokens is not None:
        out[max_tokens_key] = opts.max_tokens
    return out


def tool_map(tools: Sequence[ToolSpec]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """``(wire name, description, schema)`` for each declared function tool, the wire name mapped once: a
    free-form (custom) tool as a function of one string ``input``; a tool a provider runs itself
    (``hosted``) is declared by its own wire alone
    (:func:`~toolreplay.wires.render_warnings.tool_kind_warnings` names it elsewhere)."""
    return [
        (wire_tool_name(t.name), t.description, FREE_FORM_PARAMETERS if t.kind == "custom" else t.parameters)
        for t in tools
        if t.kind != "hosted"
    ]


def plain_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` as a dict (reused as is when it already is one: bodies are built, never mutated)."""
    return value if isinstance(value, dict) else dict(value)


def infer_schema(inputs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A minimal JSON schema covering the inputs seen in the history (property names and JSON types)."""
    props: dict[str, Any] = {}
    for value in inputs:
        for key, v in value.items():
            if key in props:
                continue
            props[key] = {"type": _json_type(v)}
    return {"type": "object", "properties": props}


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if v is None:
        return "null"
    return "object"


def declared_tools(turns: Sequence[TurnMessage], tools: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
    """The given tools, plus a minimal inferred definition for every tool the replayed calls use.

    Anthropic rejects a request that holds ``tool_use`` blocks but defines no tools ("Requests which
    include `tool_use` or `tool_result` blocks must define tools"), so every body declares every tool
    its history uses. Order: the given tools, then inferred ones in order of first use.
    """
    known = {t.name for t in tools}
    if known.issuperset(map(_NAME, every_call(turns))):  # every tool used is given (the common case)
        return tuple(tools)
    # Inferred from a tool's first call only, so the definition stays the same bytes as the history
    # grows (Anthropic's cache prefix starts with the tools: a changed definition invalidates it all).
    seen: dict[str, ReplayCall] = {}
    for c in every_call(turns):
        if c.name not in known and c.name not in seen:
            seen[c.name] = c
    if not seen:
        return tuple(tools)
    extra = tuple(
        ToolSpec(name, INFERRED, FREE_FORM_PARAMETERS, kind="custom")
        if first.kind == "custom"  # a free-form tool: declared as one where the wire has them
        else ToolSpec(name, INFERRED, infer_schema([first.input]))
        for name, first in seen.items()
    )
    return tuple(tools) + extra


#: The description of a tool declared only because the replayed calls use it.
INFERRED = "Inferred from earlier calls in this conversation."


def merge_data(a: dict[str, Any] | None, b: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Namespaced provider data merged: ``b``'s namespaces added to ``a``'s (lists extended)."""
    if not b:
        return a
    out = dict(a or {})
    for ns, value in b.items():
        old = out.get(ns)
        if isinstance(old, dict) and isinstance(value, Mapping):
            merged = dict(old)
            for k, v in value.items():
                prev = merged.get(k)
                merged[k] = prev + list(v) if isinstance(prev, list) and isinstance(v, list) else v
            out[ns] = merged
        else:
            out[ns] = dict(value) if isinstance(value, Mapping) else value
    return out


def messages_sent(sents: Sequence[Sent | None]) -> Sent | None:
    """The ``sent`` of a reply made of several body messages: per wire, one mapping per message."""
    wires = list(dict.fromkeys(w for s in sents if s for w in s))
    if not wires:
        return None
    return {w: {"messages": [dict(s.get(w, {})) if s else {} for s in sents]} for w in wires}


def merge_sent(a: Sent | None, b: Sent | None) -> Sent | None:
    """Two ``sent`` values merged per wire (``b``'s keys win)."""
    if not b:
        return a
    out = {w: dict(v) for w, v in (a or {}).items()}
    for w, v in b.items():
        out[w] = {**out.get(w, {}), **v}
    return out

"""The ``Wire`` contract: everything one wire knows, as one typed value.

Each wire package ``toolreplay.wires.<pkg>`` exports one :class:`Wire` named ``WIRE``; the registry
(:mod:`toolreplay.wires`) maps wire names to them and is the only place the rest of toolreplay asks. A
wire is a bundle of pure functions and facts, like httpx's ``BaseTransport`` or pydantic-ai's ``Model``:

* what a body looks like: ``list_key`` (the body key that holds the history), ``render`` (turn messages
  -> body), ``render_turn`` with ``call_ids`` (one turn message -> its list elements, for the
  incremental renderer; ``call_ids`` is the id policy hook), ``assemble`` when the list is not a list;
* how it travels: :class:`Http` (endpoint path, auth headers, the body's stream flag, SSE or NDJSON), or
  None for a wire driven another way (the Claude Code CLI);
* how it reads back: ``parse_request`` (body -> history, its settings and layout kept, design 38),
  ``parse_response`` (answer -> reply), ``stream_parser`` (events -> reply);
* how it renders back as sent: ``render_as_sent`` (the body as its agent sent it),
  ``conversation_keys`` (every other top-level key is a request setting), ``carry_settings`` (what a
  normal render takes over from an imported request), ``mid_system``, ``tool_kinds`` (the tool
  declarations it has: free-form, hosted);
* how it is recognised: ``sniff`` (a body -> the :class:`~toolreplay.wires.evidence.Evidence` it gives
  this wire: how much it proves, its marks, the wires they rule out; one rule decides), ``url_endings`` (a
  dump that recorded the URL), :class:`ImportForm` (files of its bodies or messages for ``import``);
* its provider rules: ``rules`` (what the provider refuses, read from the body; the validator,
  ``check --offline`` and the doubles all run these), ``specs`` (the provider's own definitions), and
  ``double`` (the loopback double's answer shapes and the checks only a server makes).

The values a wire takes and returns are public: :mod:`toolreplay.model` (the stored conversation),
:mod:`toolreplay.wires.replayed` (what ``render`` takes), :mod:`toolreplay.wires.reply` (what the parsers
return), :class:`~toolreplay.wires.common.RenderOptions`; a wire imports no private toolreplay module.
Nothing here imports a wire: a wire imports this module, never the other way round.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from toolreplay.wires.bridge import Bridge
from toolreplay.wires.evidence import Evidence
from toolreplay.wires.reply import Reply
from toolreplay.wires.translation import Translation
from toolreplay.wires.vessel import VesselProfile

if TYPE_CHECKING:
    from toolreplay.model import History, Issuer, Part, Reasoning, RequestSettings, Usage
    from toolreplay.wires.common import IdMapper, RenderOptions
    from toolreplay.wires.doubles import Answer, Event, PromptCacheRule, Splitter
    from toolreplay.wires.doubles import Rules as DoubleRules
    from toolreplay.wires.replayed import TurnMessage
    from toolreplay.wires.turns import Event as TurnEvent


#: How a stream is framed: SSE events, NDJSON lines, or one JSON array of the events (Gemini's REST
#: streaming without ``alt=sse``).
Framing = Literal["sse", "ndjson", "json-array"]
#: One turn message -> the list elements it renders into, given the elements rendered before it.
TurnPiece = Callable[["TurnMessage", list[Any]], list[Any]]
#: The rules of a wire: (vessel, body, problems) -> appends one line per problem, naming the place; a
#: problem the provider itself refuses the request for is a :class:`Refused` line.
RuleCheck = Callable[["VesselProfile", Mapping[str, Any], list[str]], None]
#: The provider definitions: (vessel, body, specs directory, problems, unchecked).
SpecCheck = Callable[["VesselProfile", Mapping[str, Any], "Path | None", list[str], list[str]], None]


class Refused(str):
    """A rule problem the provider itself refuses the request for (its HTTP 400): the line people read, and
    ``provider``, the provider's own error text. The rules are stricter than the providers (they also
    hold what toolreplay's replay promises); the loopback doubles answer only these lines, with the
    provider's text, so a double takes what the real server takes (design 30)."""

    provider: str

    def __new__(cls, line: str, provider: str) -> Refused:
        self = super().__new__(cls, line)
        self.provider = provider
        return self


def first_refusal(problems: Sequence[str]) -> str | None:
    """The provider's text of the first :class:`Refused` line among a rule check's problems, or None."""
    return next((p.provider for p in problems if isinstance(p, Refused)), None)


class StreamParser(Protocol):
    """Fed a stream's decoded events (SSE ``data`` payloads or NDJSON lines) one by one."""

    def feed(self, event: Mapping[str, Any]) -> str:
        """Take one event; return the text it added (for live display), possibly empty."""
        ...

    def mark_done(self) -> None:
        """The stream's own end marker (``data: [DONE]``) arrived."""
        ...

    def finish(self) -> Reply:
        """The whole reply; raises when the stream ended before the wire's final event."""
        ...


def stream_key(body: dict[str, Any], stream: bool) -> None:
    """``"stream": true`` when streamed, no key otherwise (the providers' default is a whole answer)."""
    if stream:
        body["stream"] = True
    else:
        body.pop("stream", None)


def stream_asked(body: Any, streamed: bool) -> bool:
    """The double's reading of :func:`stream_key`: the body says ``"stream": true``."""
    return isinstance(body, Mapping) and body.get("stream") is True


def stream_by_url(body: dict[str, Any], stream: bool) -> None:
    """A wire that streams by its URL (Gemini's ``streamGenerateContent``) has no body flag."""


@dataclass(frozen=True, slots=True)
class Insertion:
    """A repair as the smallest edit (design 46): ``data`` goes in right after the opening ``{`` of
    element ``index`` of the body's list (or of element ``at`` of that element's list ``within``); ``note``
    says what was put back, for the console and the log. ``how`` says what else an edit may be:
    ``"before"``, ``data`` is a new element of that list, put before the element named (at the list's
    end when the position is its length), its comma added; ``"remove"``, the element named is taken out
    with its comma (``data`` unused)."""

    index: int
    data: bytes
    note: str
    #: Inside the element: the list ``within`` (``parts``), its element ``at``, when the insertion goes there.
    within: str = ""
    at: int = 0
    how: Literal["open", "before", "remove"] = "open"


#: What a repair answers a call the request sends without its answer (an agent interrupted, a translation
#: that lost it), where the provider refuses an unanswered call.
NO_ANSWER = "no answer was recorded"

#: (the body's list elements, the stored conversation, the issuer the upstream is) -> the insertions.
Repair = Callable[[Sequence[Any], "History", "Issuer"], list[Insertion]]
#: A repair that also reads the body's other fields (Responses' ``store``): (body, its list elements, the
#: stored conversation, the issuer) -> the insertions.
BodyRepair = Callable[[Mapping[str, Any], Sequence[Any], "History", "Issuer"], list[Insertion]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Http:
    """How a wire's request travels over HTTP."""

    #: (base URL without its trailing slash, model, streamed) -> the URL.
    endpoint: Callable[[str, str, bool], str]
    #: (vessel, key or None) -> the headers that carry the key and the wire's version headers.
    auth_headers: Callable[[VesselProfile, str | None], dict[str, str]]
    #: (body copy, streamed) -> sets or removes the body's own stream flag, in place.
    stream_flag: Callable[[dict[str, Any], bool], None] = stream_key
    #: SSE (``text/event-stream``) or NDJSON lines.
    framing: Framing = "sse"
    #: (the request's query) -> how an answer streamed to it is framed, where the query decides (Gemini:
    #: SSE with ``alt=sse``, else one JSON array). None: always :attr:`framing`.
    framing_of: Callable[[str], Framing] | None = None
    #: The body carries the model (Gemini's is in the URL).
    model_in_body: bool = True
    # What a server of this wire serves (``toolreplay proxy`` answers agents at the provider's own paths).
    #: The provider's request path from the server root, matched whole: named groups ``model`` (the model
    #: in the URL) and ``stream`` (set when the path itself asks for a stream). None: not served.
    path: re.Pattern[str] | None = None
    #: What the wire's base URL adds after the server root (``/v1``): a path maps onto a base URL by it.
    base_suffix: str = ""
    #: The provider's other paths an agent calls on this wire (token counts, model lists): passed through
    #: as they are, not recorded.
    side_paths: tuple[re.Pattern[str], ...] = ()
    #: Headers only this wire's clients send (a version header, the key header): a path several wires
    #: share (``/v1/models``) goes to the wire whose marks the request carries.
    marks: tuple[str, ...] = ()
    #: (status, message) -> the provider's error body.
    error_body: Callable[[int, str], dict[str, Any]] | None = None
    #: (message, the stream's last bytes sent) -> the provider's error event inside a stream, sent when the
    #: upstream's stream breaks off (Responses numbers it after the events sent before it).
    stream_error: Callable[[str, bytes], tuple[str | None, dict[str, Any]]] | None = None
    #: (the stream's last bytes) -> whether they hold the stream's final event (or the provider's own
    #: error event): a stream that ends without it was broken off. None: not known.
    stream_end: Callable[[bytes], bool] | None = None
    #: What ``toolreplay proxy --repair`` puts back on this wire's bodies, from the store (design 46).
    repairs: tuple[Repair, ...] = ()
    #: Repairs that read more of the body than its list (design 46).
    body_repairs: tuple[BodyRepair, ...] = ()
    #: The body field an agent names its session by (``prompt_cache_key``), "" for none.
    session_field: str = ""
    #: The provider's token-count path, one of ``side_paths`` (named group ``model`` when the URL names the
    #: model), and its answer for a count: the proxy answers a routed model's count itself (design 47).
    count_path: re.Pattern[str] | None = None
    count_answer: Callable[[int], dict[str, Any]] | None = None
    #: (the agent's request headers) -> those that go on with a routed request to an upstream of this
    #: same wire (the flags its body's fields need, never a key), and what of them is left out, named
    #: (design 56). None: nothing the agent sends goes on.
    carried_headers: Callable[[Mapping[str, str]], tuple[dict[str, str], tuple[str, ...]]] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportForm:
    """Files of this wire's bodies or messages, for ``toolreplay import --from <wire>`` and ``auto``."""

    description: str
    #: ``--from auto`` tries wire forms from the highest rank down: a wire whose marks others share
    #: (a plain Chat list) ranks lowest.
    rank: int
    #: Is this value one element of the wire's list (a JSON Lines file of messages)?
    is_element: Callable[[Any], bool]
    #: (body or list, its elements) -> why this is not the wire's (None: it carries the wire's marks).
    marks: Callable[[Any, Sequence[Any]], str | None]
    #: The element key that carries content in this wire (a message with another one would lose it).
    content_key: str = "content"
    #: (a body or a bare list) -> its elements, or None; default: the list itself or ``list_key``'s list.
    elements: Callable[[Any], Sequence[Any] | None] | None = None
    #: (one message of the wire's list, where it stands, warnings, its time or None) -> its events, for an
    #: importer whose records hold the messages one at a time (Claude Code's transcripts: Anthropic's).
    message_events: Callable[[Mapping[str, Any], str, list[str], str | None], list[TurnEvent]] | None = None
    #: A reasoning block of the wire as a piece kept whole (its signature in it), for an importer that
    #: finds such blocks beside another wire's messages (tau2's LiteLLM records keep Anthropic's).
    reasoning_piece: Callable[[Mapping[str, Any]], Reasoning] | None = None


class AnswerEvents(Protocol):
    """An answer's stream events, its texts cut by ``cut`` (tests pass any cut)."""

    def __call__(self, a: Answer, cut: Splitter = ..., /) -> list[Event]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Double:
    """The loopback provider double's side of a wire (see :mod:`toolreplay.testing`)."""

    #: The request path (after an optional ``/vessel/<name>`` prefix); named groups ``model`` (the
    #: model in the URL) and ``stream`` (set when the path itself asks for a stream) are read.
    route: re.Pattern[str]
    #: What the wire's base URL adds after the server root (``/v1``).
    base_suffix: str
    body: Callable[[Answer], dict[str, Any]]
    events: AnswerEvents
    #: (status, message) -> the wire's error body.
    error_body: Callable[[int, str], dict[str, Any]]
    #: (kind, message) -> an error event inside a stream (kinds: :data:`testing.answers.ERROR_KINDS`).
    error_event: Callable[[str, str], Event]
    #: (body, vessel rules) -> the provider's error text when it refuses the request, or None: what only
    #: a server sees (the model, stream settings, a vessel's demands); the double then answers the first
    #: :class:`Refused` line of the wire's own :attr:`Wire.rules`.
    check: Callable[[Mapping[str, Any], DoubleRules], str | None]
    #: (answer number, call index) -> the call id the provider makes up (None: the wire has none).
    call_id: Callable[[int, int], str | None]
    #: (parsed body or None, path asks for a stream) -> the request streams.
    wants_stream: Callable[[Any, bool], bool] = stream_asked
    #: (path asks for a stream, query string) -> why the double refuses the URL, or None.
    refuse_url: Callable[[bool, str], str | None] = lambda stream, query: None
    #: (the request's headers by lower-case name, its body) -> the provider's error text when the body
    #: needs a header the request lacks (Anthropic: a beta body field without its ``anthropic-beta``
    #: flag), or None.
    refuse_headers: Callable[[Mapping[str, str], Mapping[str, Any]], str | None] = lambda headers, body: None
    #: The Chat id limit applied when a request names no vessel (OpenAI's own server: 40).
    default_max_id_len: int | None = None
    #: (vessel or None, model, body) -> whether the model answering thinks, so its answer carries the
    #: scripted reasoning (Chat: only the thinking models and the profiles that say so; design 32).
    thinks: Callable[[Any, str, Mapping[str, Any]], bool] = lambda vessel, model, body: True
    #: Makes the simulated prompt cache of a provider that caches by rules of its own (Anthropic: only up
    #: to a marked block, design 36); None: the longest common prefix (``testing.prefix_cache``).
    prompt_cache: Callable[[], PromptCacheRule] | None = None


def lazy_double(module: str) -> Callable[[], Double]:
    """``Wire.double`` for a wire whose ``DOUBLE`` lives in ``module``: imported on first use, so the
    doubles' answer shapes load only for a test or ``toolreplay double``, never to render."""

    def load() -> Double:
        double = importlib.import_module(module).DOUBLE
        if not isinstance(double, Double):
            raise TypeError(f"{module}.DOUBLE is not a Double")
        return double

    return load


def lazy_bridge(module: str) -> Callable[[], Bridge]:
    """``Wire.bridge`` for a wire whose ``BRIDGE`` lives in ``module``: imported on first use, so only a
    proxy that translates loads the answer writers."""

    def load() -> Bridge:
        bridge = importlib.import_module(module).BRIDGE
        if not isinstance(bridge, Bridge):
            raise TypeError(f"{module}.BRIDGE is not a Bridge")
        return bridge

    return load


def list_elements(body: Mapping[str, Any], key: str) -> list[Any]:
    """The elements of ``body[key]`` (a string is one element: Responses takes a plain string input)."""
    value = body.get(key)
    if isinstance(value, str):
        return [value]
    return list(value) if isinstance(value, list) else []


@dataclass(frozen=True, slots=True, kw_only=True)
class Wire:
    """One wire: see the module docstring. Every field is data or a pure function."""

    name: str
    #: The body key that holds the history (``messages``, ``input``, ``contents``, ``prompt``).
    list_key: str
    render: Callable[[Sequence[TurnMessage], RenderOptions], dict[str, Any]]
    #: (options, call-id mapper or None) -> the per-turn renderer the incremental renderer runs.
    render_turn: Callable[[RenderOptions, IdMapper | None], TurnPiece]
    parse_response: Callable[[Mapping[str, Any]], Reply]
    stream_parser: Callable[[], StreamParser]
    #: A request body -> what it proves about being this wire's (None: nothing, not this wire's); every
    #: wire's evidence goes to :func:`~toolreplay.wires.evidence.choose` (design 27).
    sniff: Callable[[Mapping[str, Any]], Evidence | None]
    rules: RuleCheck
    #: How the list key is named to people (claude-prompt: ``prompt transcript``).
    list_label: str = ""
    #: The id policy hook: options -> the call-id mapper this wire's calls are named by (None: no ids).
    call_ids: Callable[[RenderOptions], IdMapper] | None = None
    #: (body rendered from a skeleton, every turn message, the cached elements) -> the body; None when
    #: the list is a plain list under ``list_key`` (the default splice).
    assemble: Callable[[dict[str, Any], Sequence[TurnMessage], list[Any]], dict[str, Any] | None] | None = (
        None
    )
    #: (whole body, options) -> the body sent: a last touch that depends on the whole list (Anthropic's
    #: cache breakpoints, design 36), applied after ``render`` and after the incremental renderer's
    #: splice alike; it copies what it changes, so cached elements stay as rendered. None: nothing.
    finish: Callable[[dict[str, Any], RenderOptions], dict[str, Any]] | None = None
    #: Does this object hold a body of this wire (a dump's wrapper search)? Default: a list under
    #: ``list_key``.
    holds: Callable[[Mapping[str, Any]], bool] | None = None
    #: The elements of a body's history (what ``cache-diff`` compares); default: ``list_key``'s list.
    elements: Callable[[Mapping[str, Any]], list[Any]] | None = None
    parse_request: Callable[[Any], History] | None = None
    #: (an answer's ``usage`` object) -> its token counts (the Claude Code CLI's result event carries
    #: Anthropic's, read through the anthropic wire); None: read only inside ``parse_response``.
    parse_usage: Callable[[Any], Usage] | None = None
    http: Http | None = None
    #: For a wire not sent over HTTP: what drives it (``Claude Code CLI``), and where a request goes, for
    #: people (a format string of ``base_url``).
    driver: str = ""
    invocation: str = "{base_url}"
    url_endings: tuple[str, ...] = ()
    importing: ImportForm | None = None
    specs: SpecCheck | None = None
    double: Callable[[], Double] | None = None
    #: How this wire's answers are read into deltas and written from them (the proxy's translation,
    #: design 51): loaded on first use (:func:`lazy_bridge`); None for a wire without an answer shape.
    bridge: Callable[[], Bridge] | None = None
    #: How this wire's requests say their settings, how it writes them, what call ids its agents take (the
    #: proxy's request translation, design 48-49); None: not translated to or from.
    translation: Translation | None = None
    #: Chat templates (vLLM, llama.cpp, transformers) render this wire's bodies.
    chat_template: bool = False
    #: (body) -> {call number in body order: what the replay patched on it}, read from the body alone.
    call_notes: Callable[[Mapping[str, Any]], dict[int, str]] | None = None
    #: A note the audit prints for every body of this wire.
    audit_note: str = ""
    #: What a replayed reply becomes on this wire, for people: the calls, their answers, then the text
    #: (``scripts/vessel_docs.py`` writes it into the vessel pages and the README's table; a built-in wire
    #: says it here so that adding one edits no page by hand).
    replayed_as: str = ""
    #: The answer parts this wire carries in a tool result (design 16); any other part travels as its
    #: name in the answer's text, with a warning.
    part_kinds: frozenset[str] = frozenset({"text"})
    #: (a part of a user message) -> whether this wire carries it (an image, a document, inline or by
    #: URL); any other part travels as its name in the message's text, with a warning. None: text only.
    carries: Callable[[Part], bool] | None = None
    #: The vessel flag without which a vessel of this wire gets no reasoning back, even its own (Chat has
    #: no standard place for it: only profiles that say so get ``reasoning_content``); "" for none.
    reasoning_flag: str = ""
    #: Whether a body of this wire has a place for provider data on calls and text (Gemini's thought
    #: signatures); Chat and Ollama carry reasoning only, so losing such data is no news there.
    carries_data: bool = True
    #: (an HTTP client, a local server's origin, a request body, the model) -> why that server's chat
    #: template drops the body's tools, or None (kept, or not known): the lab asks before its first trial
    #: (``toolreplay.wires.capabilities``); None: this wire's servers are not asked.
    dropped_tools: Callable[[Any, str, Mapping[str, Any], str], str | None] | None = None
    #: (vessel flag, data field): on a vessel with the flag the provider keeps nothing between requests, so
    #: a step's reasoning goes back only when every piece carries the field (Responses with ``store:
    #: false``: ``encrypted_content``; a bare ``rs_`` id is answered 404 "Item ... not found"); ("", ""):
    #: no such rule.
    sealed_reasoning: tuple[str, str] = ("", "")
    #: The host of the wire's public API: the issuer recorded on an imported body's replies (design 17).
    public_host: str = ""
    #: The most prompt-cache breakpoints a body of this wire may carry (``RenderOptions.cache_breakpoints``,
    #: placed by ``finish``: Anthropic's 4, design 36); 0: the wire places none.
    max_breakpoints: int = 0
    #: The top-level body keys that hold the conversation, its system prompt and its tools; every other
    #: top-level key is a request setting, kept as sent (:class:`~toolreplay.model.RequestSettings`).
    conversation_keys: tuple[str, ...] = ()
    #: The kinds of tool declaration (``ToolSpec.kind``) the wire renders natively; elsewhere a custom tool
    #: is declared as a function of one string ``input`` and a hosted one is left out, with a warning.
    tool_kinds: frozenset[str] = frozenset({"function"})
    #: The wire takes system messages in the middle of a conversation where they stood (Chat's system and
    #: developer messages); elsewhere such a message travels as a user message, with a warning.
    mid_system: bool = False
    #: The as-sent render (design 38): the turns of an as-sent replay (every call whole, under its own
    #: id) -> the body's conversation and tools as its agent sent them, laid out from the stored ``sent``
    #: (the request's settings are added by the caller). None: ``render`` with ``RenderOptions.as_sent``
    #: set, the best the wire does, with a warning.
    render_as_sent: Callable[[Sequence[TurnMessage], RenderOptions], dict[str, Any]] | None = None
    #: The turns of a render -> the wire's own warnings about them, after the shared ones (Gemini: a
    #: stored thought signature that cannot be one, not replayed). None: none.
    render_notes: Callable[[Sequence[TurnMessage]], list[str]] | None = None
    #: (the history's latest request settings, options) -> (the fields a normal render of this wire
    #: carries, the names it cannot carry). None: it carries none, and names them all.
    carry_settings: (
        Callable[[RequestSettings, RenderOptions], tuple[dict[str, Any], tuple[str, ...]]] | None
    ) = None

    @property
    def label(self) -> str:
        return self.list_label or self.list_key

    def holds_body(self, obj: Mapping[str, Any]) -> bool:
        """``obj`` holds this wire's history (a request body, not a wrapper around one)."""
        if self.holds is not None:
            return self.holds(obj)
        return isinstance(obj.get(self.list_key), list)

    def body_elements(self, body: Mapping[str, Any]) -> list[Any]:
        """The elements of ``body``'s history (its message list, or what stands for it)."""
        if self.elements is not None:
            return self.elements(body)
        return list_elements(body, self.list_key)


__all__ = [
    "NO_ANSWER",
    "AnswerEvents",
    "BodyRepair",
    "Double",
    "Framing",
    "Http",
    "ImportForm",
    "Insertion",
    "Refused",
    "Repair",
    "RuleCheck",
    "SpecCheck",
    "StreamParser",
    "TurnPiece",
    "VesselProfile",
    "Wire",
    "first_refusal",
    "lazy_bridge",
    "lazy_double",
    "list_elements",
    "stream_asked",
    "stream_by_url",
    "stream_key",
]

"""The neutral model: what a conversation is, in values every wire renders from and every reader produces.

Read this module to know what toolreplay stores. No provider's wire shape is the model; each wire package
reads its bodies into these values and renders them back. Everything is a frozen value.

::

    History(id, messages, tools, requests)
    ├── Message(role="system" | "user" | "assistant", text, parts, tool_uses, steps, sent, ...)
    │   ├── Part(kind="text" | "image" | "document", ...)      a user message's content in order
    │   ├── ToolCall(name, input, answer, call_id, kind, parts, provider_data, sent)
    │   └── Step(said=(Reasoning | Text | ServerTool, ...), calls, issuer)
    ├── ToolSpec(name, description, parameters, kind="function" | "custom" | "hosted", sent)
    └── RequestSettings(wire, fields, after)    every other top-level field of a request, as sent

**Steps** (design 16). A reply keeps what the model produced in order: each step is the reasoning and
words before a group of calls, then how many of the reply's calls (``Message.tool_uses``, in order, each
paired with its answer) it made; only the last step may have none (what led to the final words, which
are ``Message.text``). A reply stored before steps existed has none and reads as one step of its calls.

**The issuer** (design 17) of a step is who produced it: (wire, host, model). What a provider made
(reasoning, signatures, server-tool pieces, a call's ``provider_data``) goes back only to its issuer.

**Three places for what is not neutral**, each namespaced by wire (``{"anthropic": {...}}``) and never
mixed into the neutral fields:

* ``provider_data`` (calls, messages) and a piece's ``data``: what a provider must get back from its own
  output (a thought signature, ``encrypted_content``, a thinking block), replayed only to its issuer;
* ``sent`` (messages, parts, calls, tool declarations): how the element stood in the body it was read
  from, beyond what the neutral fields say (a ``cache_control`` marker, an item id, ``"is_error":
  false`` written out, ``content: ""`` rather than null, a developer role); each wire documents its own
  keys in its ``request.py``. The as-sent render of that wire gives it back (design 38); every other
  render may ignore it;
* :class:`RequestSettings`: the top-level fields of a request body that are not its conversation, its
  system prompt or its tools (model, limits, sampling, ``tool_choice``, ``stream``...), kept as sent.

**Ids as sent** (design 39): a call keeps the provider's id in ``call_id`` (Gemini's ``functionCall.id``
too); item ids (Responses ``fc_``/``msg_`` ids) live in ``sent`` or ``provider_data`` of their wire. A
normal render derives its own ids (design 2); only the as-sent render sends these.

The file form of these values is :func:`toolreplay.history_to_dict` / :func:`toolreplay.load_history`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolreplay import jsonenc
from toolreplay.errors import HistoryError

Role = Literal["system", "user", "assistant"]
Status = Literal["complete", "interrupted", "in_progress"]
ROLES: frozenset[str] = frozenset({"system", "user", "assistant"})
STATUSES: frozenset[str] = frozenset({"complete", "interrupted", "in_progress"})
PartKind = Literal["text", "image", "document"]
PART_KINDS: frozenset[str] = frozenset({"text", "image", "document"})
#: ``function``: a JSON-object input; ``custom``: a free-form tool's raw text input (Responses ``custom``).
CallKind = Literal["function", "custom"]
CALL_KINDS: frozenset[str] = frozenset({"function", "custom"})
#: ``hosted``: a tool the provider runs itself (web search, code execution, an MCP server), declared by kind.
ToolKind = Literal["function", "custom", "hosted"]
TOOL_KINDS: frozenset[str] = frozenset({"function", "custom", "hosted"})
#: How an element stood in its body beyond the neutral fields, per wire: ``{wire: {field: value}}``.
Sent = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Issuer:
    """Who produced a piece of reasoning or a signature: (wire, host, model), design 17."""

    wire: str
    host: str
    model: str

    def as_json(self) -> dict[str, str]:
        return {"wire": self.wire, "host": self.host, "model": self.model}

    def describe(self) -> str:
        return f"{self.wire} {self.host or '(no host)'} {self.model}"


@dataclass(frozen=True, slots=True)
class Reasoning:
    """A piece of reasoning the model produced, kept verbatim.

    ``text`` is its readable text (empty when the provider sent only opaque data). ``data`` is what the
    provider must get back, namespaced by wire and kept byte for byte: ``{"anthropic": {"type":
    "thinking", "thinking": "...", "signature": "..."}}``, ``{"openai-responses": {"type": "reasoning",
    "id": "rs_1", "encrypted_content": "..."}}``, ``{"openai-chat": {"reasoning_content": "..."}}``.
    """

    text: str = ""
    data: Mapping[str, Any] | None = None
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class Text:
    """Words the model wrote; ``data`` holds what the provider put on that text part (a Gemini
    ``thoughtSignature``), namespaced by wire."""

    text: str
    data: Mapping[str, Any] | None = None
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ServerTool:
    """A tool the provider ran itself, with its result, as the body or answer carried it: an Anthropic
    ``server_tool_use`` / ``mcp_tool_use`` block and its ``*_tool_result``, a Responses hosted-tool item
    (``web_search_call``...), a Gemini ``executableCode`` / ``codeExecutionResult`` part. Kept verbatim in
    ``data`` (namespaced by wire) and replayed only to its issuer: it is not a call of ours to answer.
    ``text`` names it for people (its type)."""

    text: str = ""
    data: Mapping[str, Any] | None = None
    kind: Literal["server_tool"] = "server_tool"


Piece = Reasoning | Text | ServerTool


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a reply: what the model produced before its calls (in order), and how many calls."""

    said: tuple[Piece, ...] = ()
    calls: int = 0
    issuer: Issuer | None = None
    kind: Literal["step"] = "step"

    def issued_by(self, issuer: Issuer | None) -> Step:
        """This step with ``issuer`` (``dataclasses.replace`` costs several times more, and a long turn's
        steps are all made again on every request of the turn)."""
        return Step(self.said, self.calls, issuer, self.kind)

    @property
    def reasoning(self) -> tuple[Reasoning, ...]:
        return tuple([p for p in self.said if isinstance(p, Reasoning)])

    @property
    def server_tools(self) -> tuple[ServerTool, ...]:
        return tuple(p for p in self.said if isinstance(p, ServerTool))

    @property
    def words(self) -> str:
        """The step's words before its calls, joined with a blank line."""
        return "\n\n".join(p.text for p in self.said if isinstance(p, Text) and p.text)


def closing_pieces(said: Sequence[Piece]) -> tuple[Piece, ...]:
    """What of a closing answer's pieces its closing step keeps: reasoning and server-tool pieces, and the
    data a provider put on its words (a Gemini ``thoughtSignature`` on the final text part) as a
    :class:`Text` without words; the words themselves are the reply's text (design 16-17)."""
    out: list[Piece] = []
    for p in said:
        if isinstance(p, Text):
            if p.data:
                out.append(Text("", p.data))
        else:
            out.append(p)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a user message or an answer: text, or an image or document given inline (base64
    ``data``) or by ``url``. ``media_type`` names the content (``image/png``); ``name`` a document's
    title; ``sent`` how the part stood in its body (see the module docstring)."""

    kind: PartKind
    text: str = ""
    media_type: str = ""
    data: str = ""
    url: str = ""
    name: str = ""
    sent: Sent | None = None

    def label(self) -> str:
        """How the part is named where it cannot travel: ``image (image/png, 1,234 characters...)``."""
        what = self.media_type or "unknown type"
        size = f", {len(self.data):,} characters of base64" if self.data else ""
        where = f", {self.url}" if self.url else ""
        return f"{self.kind} ({what}{size}{where})"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for k in ("text", "media_type", "data", "url", "name"):
            v = getattr(self, k)
            if v:
                out[k] = v
        if self.sent is not None:
            out["sent"] = {w: dict(v) for w, v in self.sent.items()}
        return out


def answer_text(parts: Sequence[Part]) -> str:
    """The text an answer of parts reads as on a wire that takes text only: text parts joined by a line
    break, every other part named in brackets where it stood."""
    return "\n".join(p.text if p.kind == "text" else f"[{p.label()}]" for p in parts)


def words_of(parts: Sequence[Part]) -> str:
    """The words of a user message given as parts: its text parts, a blank line apart."""
    return "\n\n".join(p.text for p in parts if p.kind == "text" and p.text)


def with_words(text: str, parts: Sequence[Part]) -> tuple[str, tuple[Part, ...]]:
    """A user message's ``text`` and ``parts`` made to agree: no parts, the text alone; parts without a
    text part, the text after them (where Anthropic's vision guide puts the question); parts with words,
    their words as the text (it stands for them where people read it)."""
    if not parts:
        return text, ()
    if any(p.kind == "text" for p in parts):
        return words_of(parts), tuple(parts)
    return text, (*parts, Part("text", text=text)) if text else tuple(parts)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call a reply made, paired with its answer.

    ``input`` is the stored input: a JSON object for a ``function`` call (a string when the store kept
    raw text: a cut-short JSON input); the raw text for a ``custom`` (free-form) call, which is its whole
    input, not an excerpt. ``answer`` is None when no answer was recorded. ``call_id`` is the provider's
    own id when known (design 20: a normal render derives its own, the as-sent render sends this one).
    ``provider_data`` holds what must be echoed back to the provider that made the call, namespaced by
    wire; ``sent`` how the call and its answer stood in their body (keys of the wire's choosing).
    ``parts`` is the answer as parts when it was more than text; ``answer`` is then its text form.
    ``input_text`` is the input's JSON text (a custom call's raw text), serialized once, reused by every
    render.
    """

    name: str
    input: Any
    answer: str | None = None
    call_id: str | None = None
    is_error: bool = False
    provider_data: Mapping[str, Any] | None = None
    input_text: str = field(default="", compare=False, repr=False)
    parts: tuple[Part, ...] = ()
    kind: CallKind = "function"
    sent: Sent | None = None

    def __post_init__(self) -> None:
        if not self.input_text:
            text = self.input if isinstance(self.input, str) else jsonenc.dumps(self.input)
            object.__setattr__(self, "input_text", text)
        if self.parts and self.answer is None:
            object.__setattr__(self, "answer", answer_text(self.parts))


#: The input schema of a free-form (``custom``) tool where a wire has none: one string, its whole text
#: (a custom call travels there as a function call of ``{"input": text}``).
FREE_FORM_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The tool's whole input, as free-form text."}},
    "required": ["input"],
}


def _empty_schema() -> Mapping[str, Any]:
    return {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool declaration: name, description and a JSON schema for its input (a ``function`` tool).

    ``kind`` ``custom``: a free-form tool whose input is text (its grammar or format in ``sent``);
    ``hosted``: a tool the provider runs itself (Responses ``web_search``, Anthropic
    ``web_search_20250305``, Gemini ``googleSearch``), named by its kind, its declaration kept whole in
    ``sent`` of its wire. ``sent`` also keeps a function tool's fields beyond these (``strict``,
    ``cache_control``). A wire that cannot declare a tool of this kind names it in its warnings.
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=_empty_schema)
    kind: ToolKind = "function"
    sent: Sent | None = None


@dataclass(frozen=True, slots=True)
class RequestSettings:
    """The settings of one request as its agent sent them: every top-level field of the body that is not
    the conversation, its system prompt or its tools (``model``, ``max_tokens``, sampling, ``stop``,
    ``tool_choice``, ``stream``, ``reasoning``, ``thinking``, ``generationConfig``, provider extras),
    verbatim, on the request's own ``wire``. ``after``: the id of the last message the request carried
    (None: the conversation's last), so a conversation keeps the settings of each of its requests."""

    wire: str
    fields: Mapping[str, Any] = field(default_factory=lambda: {})
    after: str | None = None

    def __hash__(self) -> int:  # render options hold one, and they key the render cache
        return hash((self.wire, jsonenc.dumps(self.fields), self.after))

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"wire": self.wire, "fields": dict(self.fields)}
        if self.after is not None:
            out["after"] = self.after
        return out


@dataclass(frozen=True, slots=True, weakref_slot=True)  # the memos keep values by it, not it (bounded.py)
class Message:
    """One stored message. Only assistant messages carry ``tool_uses`` and ``steps``.

    ``status`` is ``complete`` for finished messages; ``in_progress`` while a reply is being made,
    ``interrupted`` when a turn failed part-way (its executed calls are kept). ``meta`` holds annotations
    that are not sent. ``text`` is a reply's final words, after its last step. A system message stands
    where it was sent: first (the system prompt, one message per block), or later in the conversation.

    ``parts`` is a user message's content in order when it holds more than one block of words or more
    than words (an image, a document); ``text`` is then its words joined (what people read, and what a
    wire that carries no parts is sent). Empty for a message of one text.
    """

    id: str
    role: Role
    text: str = ""
    tool_uses: tuple[ToolCall, ...] = ()
    created_at: str | None = None
    vessel: str | None = None
    provider_data: Mapping[str, Any] | None = None
    status: Status = "complete"
    meta: Mapping[str, Any] | None = None
    steps: tuple[Step, ...] = ()
    parts: tuple[Part, ...] = ()
    sent: Sent | None = None

    def step_calls(self) -> list[tuple[Step, tuple[ToolCall, ...]]]:
        """Each step with its calls; a reply without a step record is one step of all its calls."""
        if not self.steps:
            return [(Step((), len(self.tool_uses)), self.tool_uses)] if self.tool_uses else []
        out: list[tuple[Step, tuple[ToolCall, ...]]] = []
        pos = 0
        for s in self.steps:
            out.append((s, self.tool_uses[pos : pos + s.calls]))
            pos += s.calls
        return out


@dataclass(frozen=True, slots=True)
class History:
    """A conversation: an id and its messages in stored order; ``tools`` when the declarations are known
    (None: unknown; empty: the body declared none); ``requests`` the settings of each request recorded
    for it, oldest first (the last is what an as-sent render sends)."""

    id: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] | None = None
    warnings: tuple[str, ...] = field(default=(), compare=False)
    requests: tuple[RequestSettings, ...] = ()

    def index_of(self, message_id: str) -> int:
        for i, m in enumerate(self.messages):
            if m.id == message_id:
                return i
        raise HistoryError(f"no message with id {message_id!r} in conversation {self.id!r}")

    @property
    def last_request(self) -> RequestSettings | None:
        """The settings of the latest recorded request, or None."""
        return self.requests[-1] if self.requests else None


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts where the provider reports them.

    ``input_tokens`` is the whole prompt (cached or not); ``cached_tokens`` the part read from the
    provider's prompt cache (OpenAI ``cached_tokens``, Anthropic ``cache_read_input_tokens``, Gemini
    ``cachedContentTokenCount``); ``cache_write_tokens`` the part written to it (Anthropic
    ``cache_creation_input_tokens``).
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None


__all__ = [
    "CALL_KINDS",
    "FREE_FORM_PARAMETERS",
    "PART_KINDS",
    "ROLES",
    "STATUSES",
    "TOOL_KINDS",
    "CallKind",
    "History",
    "Issuer",
    "Message",
    "Part",
    "PartKind",
    "Piece",
    "Reasoning",
    "RequestSettings",
    "Role",
    "Sent",
    "ServerTool",
    "Status",
    "Step",
    "Text",
    "ToolCall",
    "ToolKind",
    "ToolSpec",
    "Usage",
    "answer_text",
    "closing_pieces",
    "with_words",
    "words_of",
]

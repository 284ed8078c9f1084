"""What a reply holds besides its calls: its steps, their reasoning and words, the issuer, answer parts.

A reply is an ordered record of what the model produced (design 16). Its calls stay in
:attr:`~toolreplay._history.Message.tool_uses` (in order, each paired with its answer); its steps say how
they were grouped and what came before each group::

    Step(said=(Reasoning(...), Text("Let me look the order up first.")), calls=1, issuer=...)
    Step(said=(Reasoning(...),), calls=1, issuer=...)
    Step(said=(Reasoning(...),), calls=0, issuer=...)   # the closing step: what led to the final words

A step's ``calls`` counts the reply's calls it made, in order; only the last step may have none (the
reasoning that led to the reply's final words, which stay in ``Message.text``). A reply stored before
steps existed has none: it reads as one step holding all its calls, its text after them.

The **issuer** of a step (design 17) is who produced it: the wire, the host of the base URL the request
went to, and the model string as the provider reported it. Everything provider-made in the step (its
reasoning, a signature on a text part, the calls' ``provider_data``) is replayed only to that same issuer.

An answer may hold **parts** (text, image, document) instead of only a string: :class:`Part`. So may a
user message: its content in order, when it holds more than words (``Message.parts``).

File form (inside a message of the history file)::

    "steps": [{"said": [{"kind": "reasoning", "text": "...", "data": {"anthropic": {...}}},
                        {"kind": "text", "text": "Let me look."}],
               "calls": 1, "issuer": {"wire": "anthropic", "host": "api.anthropic.com", "model": "..."}}]
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from toolreplay._errors import HistoryError


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


#: A release date a provider appends to the model name it reports (``-2025-08-07``, ``-20250929``).
_DATED = re.compile(r"^(.+)-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


def same_model(a: str, b: str) -> bool:
    """Whether two model names are the same model: equal, or one is the other's dated snapshot (a body
    names ``gpt-5``, the provider reports ``gpt-5-2025-08-07`` as the model that answered). Two different
    snapshots are different models."""
    if a == b:
        return True
    da, db = _DATED.match(a), _DATED.match(b)
    return (da is not None and db is None and da.group(1) == b) or (
        db is not None and da is None and db.group(1) == a
    )


@dataclass(frozen=True, slots=True)
class Audience:
    """The vessel a replay is for, as an issuer would be recorded on it, and the model names its profile
    says share signatures (none by default). Only what its own triple issued goes back to it (design 17).
    """

    wire: str
    host: str
    model: str
    shared_models: frozenset[str] = frozenset()
    takes_reasoning: bool = True
    """False where the wire has no place the profile allows for reasoning (Chat without
    ``reasoning_content``): signatures and data on text still go back, reasoning pieces do not."""
    sealed: str = ""
    """The field of its wire's data every reasoning piece of a step must carry for the step's reasoning to
    go back ("": none): the vessel keeps nothing between requests (:attr:`Wire.sealed_reasoning`)."""

    def unsealed(self, pieces: Sequence[Reasoning]) -> int:
        """How many of a step's reasoning pieces lack the field :attr:`sealed` names."""
        if not self.sealed:
            return 0
        wire, key = self.wire, self.sealed
        n = 0
        for p in pieces:  # a loop, not sum() over a generator: every reasoning step of a render asks
            if not _carries(p.data, wire, key):
                n += 1
        return n

    def accepts(self, issuer: Issuer | None) -> bool:
        if issuer is None or issuer.wire != self.wire or issuer.host != self.host:
            return False
        if same_model(issuer.model, self.model) or not issuer.model:
            # no model recorded: the body that carried it named none (Gemini keeps the model in the URL);
            # the same wire and host is all that is known of its issuer
            return True
        return issuer.model in self.shared_models and self.model in self.shared_models

    def issuer(self) -> Issuer:
        """The issuer this vessel records on what it produces."""
        return Issuer(self.wire, self.host, self.model)


@dataclass(frozen=True, slots=True)
class Reasoning:
    """A piece of reasoning the model produced, kept verbatim.

    ``text`` is its readable text (a thinking block's text, a summary; empty when the provider sent only
    opaque data). ``data`` is what the provider must get back, namespaced by wire and kept byte for byte:
    ``{"anthropic": {"type": "thinking", "thinking": "...", "signature": "..."}}``,
    ``{"openai-responses": {"type": "reasoning", "id": "rs_1", "encrypted_content": "..."}}``,
    ``{"openai-chat": {"reasoning_content": "..."}}``, ``{"gemini": {"text": "...", "thought": true,
    "thoughtSignature": "..."}}``.
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
    """A tool the provider ran itself, as the model's answer carried it: an Anthropic ``server_tool_use``
    block and its ``*_tool_result`` block, a Responses hosted-tool item (``web_search_call``,
    ``code_interpreter_call``...), a Gemini ``executableCode`` / ``codeExecutionResult`` part. Kept
    verbatim in ``data`` (namespaced by wire) and replayed only to its issuer (design 17): no other
    provider can read it, and it is not a call of ours. ``text`` names it for people (its type)."""

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


PartKind = Literal["text", "image", "document"]
PART_KINDS: frozenset[str] = frozenset({"text", "image", "document"})


@dataclass(frozen=True, slots=True)
class Part:
    """One part of an answer: text, or an image or document given inline (base64 ``data``) or by ``url``.

    ``media_type`` names the content (``image/png``, ``application/pdf``); ``name`` a document's title.
    """

    kind: PartKind
    text: str = ""
    media_type: str = ""
    data: str = ""
    url: str = ""
    name: str = ""

    def label(self) -> str:
        """How the part is named where it cannot travel: ``image (image/png, 1,234 bytes of base64)``."""
        what = self.media_type or "unknown type"
        size = f", {len(self.data):,} characters of base64" if self.data else ""
        where = f", {self.url}" if self.url else ""
        return f"{self.kind} ({what}{size}{where})"

    def as_json(self) -> dict[str, str]:
        out: dict[str, str] = {"kind": self.kind}
        for k in ("text", "media_type", "data", "url", "name"):
            v = getattr(self, k)
            if v:
                out[k] = v
        return out


def data_url(p: Part) -> str:
    """An inline part as a ``data:`` URL (Chat and Responses carry inline images and files that way)."""
    return f"data:{p.media_type or 'application/octet-stream'};base64,{p.data}"


_DATA_URL = re.compile(r"^data:([^;,]*)(?:;[^;,]*)*;base64,", re.IGNORECASE)


def from_data_url(kind: PartKind, url: str, name: str = "") -> Part:
    """A part given as a URL: inline (``data:<type>;base64,<data>``: its type and data kept apart, so any
    wire can carry it) or by address."""
    m = _DATA_URL.match(url)
    if m is None:
        return Part(kind, url=url, name=name)
    return Part(kind, media_type=m.group(1), data=url[m.end() :], name=name)


#: The first characters of the base64 of each image format's signature (PNG, JPEG, GIF, WebP).
_IMAGE_MAGIC = (("iVBORw0KGgo", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif"),
                ("UklGR", "image/webp"))  # fmt: skip


def image_type(data: str) -> str:
    """The media type of a base64 image read from its first bytes (a wire that sends images without one,
    Ollama's ``images``); "" when it is none of the common formats."""
    found = next((t for head, t in _IMAGE_MAGIC if data.startswith(head)), "")
    # WebP is a RIFF container, as WAV and AVI are: only the form type at bytes 8-11 (base64 characters
    # 0-15, whole groups of four, so just those are decoded) tells them apart
    return "" if found == "image/webp" and not _riff_webp(data[:16]) else found


def _riff_webp(head: str) -> bool:
    try:
        return base64.b64decode(head, validate=True)[8:12] == b"WEBP"
    except ValueError:  # binascii.Error: not base64 after all
        return False


#: Media types by a URL's file extension, for a wire that needs one beside a URL (Gemini ``fileData``).
_EXTENSIONS = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
               "webp": "image/webp", "pdf": "application/pdf", "txt": "text/plain"}  # fmt: skip


def url_type(url: str) -> str:
    """The media type a URL's file extension names (``.../cat.jpg`` -> ``image/jpeg``); "" when none."""
    path = urlsplit(url).path if "://" in url else url
    return _EXTENSIONS.get(path.rpartition(".")[2].lower(), "") if "." in path else ""


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


def answer_text(parts: Sequence[Part]) -> str:
    """The text an answer of parts reads as on a wire that takes text only: text parts joined by a line
    break, every other part named in brackets where it stood."""
    return "\n".join(p.text if p.kind == "text" else f"[{p.label()}]" for p in parts)


def host_of(base_url: str) -> str:
    """The host of a base URL, lowercased (``https://API.x.ai/v1`` -> ``api.x.ai``); "" when it has none."""
    try:
        return (urlsplit(base_url).hostname or "").lower()
    except ValueError:
        return ""


# --------------------------------------------------------------------------------------------------
# the file form


def _issuer_from(raw: Any, where: str) -> Issuer | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise HistoryError(
            f"must be an object with wire, host and model, not {type(raw).__name__}", field=where
        )
    d = cast(Mapping[str, Any], raw)
    vals = [d.get(k, "") for k in ("wire", "host", "model")]
    if not all(isinstance(v, str) for v in vals) or not vals[0]:
        raise HistoryError("wire, host and model must be strings (wire not empty)", field=where)
    return Issuer(vals[0], vals[1], vals[2])


def _data_from(raw: Any, where: str) -> Mapping[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise HistoryError(f"must be an object, not {type(raw).__name__}", field=where)
    return cast(Mapping[str, Any], raw)


def _piece_from(raw: Any, where: str) -> Piece:
    if not isinstance(raw, Mapping):
        raise HistoryError(f"not an object ({type(raw).__name__})", field=where)
    d = cast(Mapping[str, Any], raw)
    text = d.get("text", "")
    if not isinstance(text, str):
        raise HistoryError(f"must be a string, not {type(text).__name__}", field=f"{where}.text")
    data = _data_from(d.get("data"), f"{where}.data")
    kind = d.get("kind")
    if kind == "reasoning":
        return Reasoning(text, data)
    if kind == "text":
        return Text(text, data)
    if kind == "server_tool":
        return ServerTool(text, data)
    raise HistoryError(f"kind {kind!r} is not 'reasoning', 'text' or 'server_tool'", field=f"{where}.kind")


def _file_objects(raw: Any, where: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The entries of a file-form list (null or absent: none), each an object, with its field path."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise HistoryError(f"must be a list, not {type(raw).__name__}", field=where)
    out: list[tuple[str, Mapping[str, Any]]] = []
    for i, x in enumerate(raw):
        if not isinstance(x, Mapping):
            raise HistoryError(f"not an object ({type(x).__name__})", field=f"{where}[{i}]")
        out.append((f"{where}[{i}]", cast(Mapping[str, Any], x)))
    return out


def steps_from(raw: Any, n_calls: int, where: str = "steps") -> tuple[Step, ...]:
    """A reply's steps from the file form, checked against its number of calls."""
    out: list[Step] = []
    for at, d in _file_objects(raw, where):
        calls = d.get("calls", 0)
        if not isinstance(calls, int) or isinstance(calls, bool) or calls < 0:
            raise HistoryError("must be a count of calls (0 or more)", field=f"{at}.calls")
        said = d.get("said", [])
        if not isinstance(said, list):
            raise HistoryError("must be a list", field=f"{at}.said")
        pieces = tuple(_piece_from(p, f"{at}.said[{k}]") for k, p in enumerate(said))
        out.append(Step(pieces, calls, _issuer_from(d.get("issuer"), f"{at}.issuer")))
    problem = steps_problem(out, n_calls)
    if problem is not None:
        raise HistoryError(problem, field=where)
    return tuple(out)


def steps_problem(steps: Sequence[Step], n_calls: int) -> str | None:
    """Why ``steps`` cannot be the record of a reply with ``n_calls`` calls, or None."""
    if not steps:
        return None
    total = sum(s.calls for s in steps)
    if total != n_calls:
        return f"the steps hold {total} calls, the reply {n_calls}"
    for s in steps[:-1]:
        if s.calls == 0:
            return "only the last step may have no calls (the one before the final words)"
    return None


def _piece_json(p: Piece) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": p.kind}
    if p.text or p.kind == "text":
        out["text"] = p.text
    if p.data is not None:
        out["data"] = dict(p.data)
    return out


def steps_to_json(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """The file form of a reply's steps (also the stored column's value)."""
    out: list[dict[str, Any]] = []
    for s in steps:
        d: dict[str, Any] = {}
        if s.said:
            d["said"] = [_piece_json(p) for p in s.said]
        d["calls"] = s.calls
        if s.issuer is not None:
            d["issuer"] = s.issuer.as_json()
        out.append(d)
    return out


def parts_from(raw: Any, where: str = "parts") -> tuple[Part, ...]:
    """An answer's parts from the file form (``[{"kind": "image", "media_type": ..., "data": ...}]``)."""
    out: list[Part] = []
    for at, d in _file_objects(raw, where):
        kind = d.get("kind")
        if kind not in PART_KINDS:
            raise HistoryError(f"kind {kind!r} is not text, image or document", field=f"{at}.kind")
        vals = {k: d.get(k, "") for k in ("text", "media_type", "data", "url", "name")}
        for k, v in vals.items():
            if not isinstance(v, str):
                raise HistoryError(f"must be a string, not {type(v).__name__}", field=f"{at}.{k}")
        out.append(Part(cast(PartKind, kind), **cast(dict[str, str], vals)))
    return tuple(out)


def parts_to_json(parts: Sequence[Part]) -> list[dict[str, str]]:
    return [p.as_json() for p in parts]


__all__ = [
    "Audience",
    "Issuer",
    "Part",
    "Piece",
    "Reasoning",
    "ServerTool",
    "Step",
    "Text",
    "answer_text",
    "closing_pieces",
    "data_url",
    "from_data_url",
    "host_of",
    "image_type",
    "parts_from",
    "parts_to_json",
    "same_model",
    "steps_from",
    "steps_problem",
    "steps_to_json",
    "url_type",
    "with_words",
    "words_of",
]


def _carries(data: Mapping[str, Any] | None, wire: str, key: str) -> bool:
    d = data.get(wire) if data else None
    return isinstance(d, Mapping) and bool(d.get(key))

"""The token estimate the context budget and the doubles' prefix cache count with (design 33).

One rule everywhere: **the estimate of a piece is counted on its JSON text**, as it stands in the encoded
body (strings escaped and quoted), so an estimate is never below what the body's own bytes say.

* The default (no library needed, the same on every machine): one token per :data:`BYTES_PER_TOKEN`
  bytes of UTF-8, rounded up. English prose and code run about four bytes a token with the common
  tokenizers and CJK text about three bytes a character and one token, so three bytes is a safety
  margin for the first and about right for the second.
* A real tokenizer where its library is installed and its vocabulary is at hand: ``tiktoken`` for
  OpenAI models, a Hugging Face tokenizer (``transformers``, local files only: nothing is downloaded
  behind the caller's back) for open models named by their repository (``Qwen/Qwen3-8B``). Its count
  gets :data:`TOKENIZER_MARGIN` on top (chat templates add tokens around each message).

:func:`planning_size` is the stored planning size of a message, split into what every vessel gets and
what only a step's issuer gets (the store keeps both per message, with running sums, so the budget can
choose a window without loading the conversation). It is an upper bound of what the replay sends on
every wire and in every mode (a test checks it).

**Images and documents** (design 34) are not counted by their base64: a provider scales an image down
before it counts it and reads a document page by page, so a 4 MB photo is not a million tokens. The
body estimate takes each inline part's data out of the encoded text and counts the part as
:func:`part_tokens` instead (a part by URL: its URL's bytes and the same figure); a user message's parts
are planned the same way. (An answer's parts are still planned by their bytes: an upper bound.)
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._history import Message
from toolreplay.estimate import BYTES_PER_TOKEN, bytes_to_tokens
from toolreplay.model import Issuer, Part, Step, Text

#: What a real tokenizer's count gets on top, as a fraction.
TOKENIZER_MARGIN = 0.10
#: Bytes a message's frame adds at most on any wire (role, keys, separators), counted in planning.
MESSAGE_FRAME_BYTES = 64
#: Bytes each replayed call adds at most on any wire (its id twice, keys, the answer's frame).
CALL_FRAME_BYTES = 256
#: Bytes each piece of a step (reasoning, words, a server-tool piece) adds at most on any wire.
PIECE_FRAME_BYTES = 64
#: Bytes each part of an answer (text, image, document) adds at most on any wire.
PART_FRAME_BYTES = 64
#: The default replay bounds: the one definition, the defaults of ``ReplaySettings`` (which checks them)
#: and what the stored planning size assumes. Changing one changes both; sizes already stored keep the
#: old bound until a migration recomputes them (see ``_store.schema``).
PLAN_MAX_CALLS = 12
PLAN_MAX_CHARS = 500

#: Tokens an image counts as, whatever its size: providers scale an image down before they count it, to
#: about 1,600 tokens at most on Anthropic (1.15 megapixels), 765 for a 1024x1024 image on OpenAI's high
#: detail, 258 a tile on Gemini. The largest of these, never its megabytes of base64.
IMAGE_TOKENS = 1600
#: Tokens a page of a document counts as: Anthropic reads each PDF page as its text and as an image
#: (1,500 to 3,000 tokens a page by its PDF guide); the high end.
PAGE_TOKENS = 3000
#: Pages a document counts as when they cannot be counted (given by URL).
UNKNOWN_PAGES = 10
#: Inline data shorter than this stays counted by its bytes (too short to be worth finding in the body).
MEDIA_MIN_CHARS = 256
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")

Counter = Callable[[str], int]
"""Tokens in a piece of JSON text."""


@lru_cache(maxsize=128)  # a render counts the same parts at every start it tries
def part_tokens(p: Part) -> int:
    """The tokens an image or a document counts as: :data:`IMAGE_TOKENS` an image; a document its pages
    (the page objects of an inline PDF, at least one a started 100 KB when they are packed out of
    sight; :data:`UNKNOWN_PAGES` by URL) times :data:`PAGE_TOKENS`; an inline text document its text."""
    if p.kind == "image":
        return IMAGE_TOKENS
    if p.kind != "document":
        return bytes_to_tokens(len(p.text.encode("utf-8", "surrogatepass")))
    if not p.data:
        return UNKNOWN_PAGES * PAGE_TOKENS
    try:
        raw = base64.b64decode(p.data, validate=False)
    except (binascii.Error, ValueError):
        raw = p.data.encode("ascii", "replace")
    if p.media_type.startswith("text/"):
        return bytes_to_tokens(len(raw))
    pages = len(_PDF_PAGE.findall(raw)) or -(-len(raw) // 100_000)
    return max(1, pages) * PAGE_TOKENS


def media_of(messages: Iterable[Message]) -> list[Part]:
    """The images and documents ``messages`` hold: the user's parts and the answers' parts."""
    out: list[Part] = []
    for m in messages:
        out.extend(p for p in m.parts if p.kind != "text")
        for c in m.tool_uses:
            out.extend(p for p in c.parts if p.kind != "text")
    return out


def _found(encoded: bytes, needle: bytes) -> list[int]:
    """Where ``needle`` (megabytes of base64) stands in ``encoded``: found by its first bytes, checked
    whole in place (a search for the whole needle costs far more)."""
    head, out = needle[:64], []
    at = encoded.find(head)
    while at >= 0:
        if encoded.startswith(needle, at):
            out.append(at)
            at = encoded.find(head, at + len(needle))
        else:
            at = encoded.find(head, at + 1)
    return out


def estimate(encoded: bytes, media: Sequence[Part], counter: Counter) -> int:
    """Tokens of an encoded body, each image or document in it counted as :func:`part_tokens`: inline
    data found in the body is taken out of the text counted, a URL found there stays counted as text."""
    extra = 0
    cuts: list[tuple[int, int]] = []
    inline = {p.data: p for p in media if len(p.data) >= MEDIA_MIN_CHARS}  # one search per image
    for data, p in inline.items():
        needle = data.encode("ascii", "replace")
        spans = _found(encoded, needle)
        cuts.extend((at, at + len(needle)) for at in spans)
        extra += len(spans) * part_tokens(p)
    for p in dict.fromkeys(p for p in media if p.url and not p.data):
        extra += encoded.count(p.url.encode("utf-8", "surrogatepass")) * part_tokens(p)
    kept, pos = [], 0
    for a, b in sorted(cuts):
        if a >= pos:  # one image's data inside another's is taken out once
            kept.append(encoded[pos:a])
            pos = b
    kept.append(encoded[pos:])
    if counter is byte_count:
        return bytes_to_tokens(sum(map(len, kept))) + extra
    return counter(b"".join(kept).decode("utf-8", "surrogatepass")) + extra


def byte_count(text: str) -> int:
    """The default estimate: ``ceil(utf8_bytes / BYTES_PER_TOKEN)``."""
    n = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return -(-n // BYTES_PER_TOKEN)


def _with_margin(encode: Callable[[str], Any]) -> Counter:
    def count(text: str) -> int:
        return math.ceil(len(encode(text)) * (1 + TOKENIZER_MARGIN))

    return count


def _tiktoken(model: str) -> Counter | None:
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        try:
            enc = tiktoken.encoding_for_model(model)
        except KeyError:
            enc = tiktoken.get_encoding("o200k_base")
        enc.encode("probe")
    except (OSError, ValueError):  # a vocabulary that cannot be fetched (offline): the default
        return None
    return _with_margin(lambda t: enc.encode(t, disallowed_special=()))


def _hugging_face(model: str) -> Counter | None:
    try:
        from transformers import AutoTokenizer
    except ImportError:
        return None
    try:
        tok = AutoTokenizer.from_pretrained(model, local_files_only=True)
    except (OSError, ValueError):  # not in the local cache, or not a repository id: the default
        return None
    return _with_margin(lambda t: tok.encode(t, add_special_tokens=False))


_OPENAI_PREFIXES = ("gpt-", "o1", "o3", "o4", "chatgpt", "codex")


@lru_cache(maxsize=32)
def counter_for(wire: str, model: str) -> Counter:
    """The estimate for ``model`` on ``wire``: a real tokenizer when one is installed and at hand,
    else :func:`byte_count`. Looked up once per process and model. The model's name decides which
    tokenizer (an OpenAI model's encoding is its own whichever wire carries it)."""
    if model.lower().startswith(_OPENAI_PREFIXES):
        found = _tiktoken(model)
        if found is not None:
            return found
    if "/" in model:
        found = _hugging_face(model)
        if found is not None:
            return found
    return byte_count


def _text_bytes(text: str) -> int:
    """Bytes of ``text`` as a JSON string (quotes and escapes: at most six bytes a character)."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return len(text) + 2
    return len(jsonenc.dumps(text).encode("utf-8", "surrogatepass"))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


def _data_bytes(data: Mapping[str, Any] | None) -> int:
    return len(jsonenc.encode(dict(data))) if data else 0


def _parts_bytes(parts: Sequence[Part]) -> int:
    """An answer's parts: each part's frame, its text up to the bound, its inline data and URL whole."""
    n = 0
    for p in parts:
        n += PART_FRAME_BYTES + _text_bytes(_cut(p.text, PLAN_MAX_CHARS)) + len(p.data) + len(p.url)
        n += len(p.media_type) + len(p.name)
    return n


def _user_bytes(parts: Sequence[Part]) -> int:
    """A user message's parts (its words are counted in its text): each part's frame, and an image or a
    document as the bytes of its estimated tokens (:func:`part_tokens`), its URL, type and name, and the
    name it travels as where a wire cannot carry it."""
    n = 0
    for p in parts:
        n += PART_FRAME_BYTES
        if p.kind != "text":
            n += part_tokens(p) * BYTES_PER_TOKEN + PART_FRAME_BYTES + 2 * len(p.url) + len(p.media_type)
            n += len(p.name)
    return n


def _step_bytes(step: Step) -> tuple[int, int]:
    """A step's planning bytes: (what every vessel gets: its words; what only its issuer gets: its
    reasoning, server-tool pieces and the data on its words), each piece with its frame."""
    common = issued = 0
    for p in step.said:
        if isinstance(p, Text):
            common += PIECE_FRAME_BYTES + _text_bytes(p.text)
            issued += _data_bytes(p.data)
        else:  # reasoning and server-tool pieces go back only to their issuer (design 17)
            issued += PIECE_FRAME_BYTES + _text_bytes(p.text) + _data_bytes(p.data)
    return common, issued


def planning_size(m: Message) -> tuple[int, tuple[tuple[Issuer, int], ...]]:
    """The planning size of a stored message, split by who gets it: the bytes of the JSON text of what
    its replay sends every vessel under the default bounds (its text; each of its last
    :data:`PLAN_MAX_CALLS` calls' name, input text as a JSON string, answer up to :data:`PLAN_MAX_CHARS`
    characters and answer parts; the words of its steps;
    its provider data), and the bytes only a step's issuer gets (reasoning, server-tool pieces,
    signatures on words), per issuer. Frames of :data:`MESSAGE_FRAME_BYTES`, :data:`CALL_FRAME_BYTES`
    and :data:`PIECE_FRAME_BYTES` included. An upper bound on every wire and in every mode (design 33):
    a step cut by the call window still counts whole, call provider data counts for everyone."""
    n = MESSAGE_FRAME_BYTES + _text_bytes(m.text) + _data_bytes(m.provider_data) + _user_bytes(m.parts)
    for c in m.tool_uses[-PLAN_MAX_CALLS:]:
        n += CALL_FRAME_BYTES + _text_bytes(c.name)
        # an input replayed as an object is one level of JSON (Anthropic, Gemini) or a JSON string
        # (Chat, Responses arguments): the string form is the longer, so it is the one counted
        n += _text_bytes(_cut(c.input_text, PLAN_MAX_CHARS + 40))
        n += _text_bytes(_cut(c.answer or "", PLAN_MAX_CHARS)) + _data_bytes(c.provider_data)
        if c.parts:
            n += _parts_bytes(c.parts)
    issued: dict[Issuer, int] = {}
    for step in m.steps:
        common, only = _step_bytes(step)
        n += common
        if only and step.issuer is not None:  # without an issuer it goes back to no one
            issued[step.issuer] = issued.get(step.issuer, 0) + only
    return n, tuple(issued.items())


def replay_size(m: Message) -> int:
    """The planning bytes every vessel gets of ``m`` (see :func:`planning_size`)."""
    return planning_size(m)[0]


def size_for(m: Message, accepts: Callable[[Issuer | None], bool] | None) -> int:
    """The planning bytes of ``m`` for a vessel that takes back what ``accepts`` says it issued (None:
    no reasoning is replayed, as in the plain and prose modes)."""
    common, issued = planning_size(m)
    if accepts is not None:
        common += sum(n for who, n in issued if accepts(who))
    return common


__all__ = [
    "BYTES_PER_TOKEN",
    "Counter",
    "byte_count",
    "bytes_to_tokens",
    "counter_for",
    "estimate",
    "media_of",
    "part_tokens",
    "planning_size",
    "replay_size",
    "size_for",
]

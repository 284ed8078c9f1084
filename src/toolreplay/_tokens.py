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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._history import Message
from toolreplay._steps import Issuer, Part, Step, Text

#: Bytes of UTF-8 JSON text per estimated token (rounded up per piece).
BYTES_PER_TOKEN = 3
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
#: The default replay bounds (``ReplaySettings``) the stored planning size assumes.
PLAN_MAX_CALLS = 12
PLAN_MAX_CHARS = 500

Counter = Callable[[str], int]
"""Tokens in a piece of JSON text."""


def byte_count(text: str) -> int:
    """The default estimate: ``ceil(utf8_bytes / BYTES_PER_TOKEN)``."""
    n = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return -(-n // BYTES_PER_TOKEN)


def bytes_to_tokens(n: int) -> int:
    """The default estimate of ``n`` bytes of JSON text."""
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
    its replay sends every vessel under the default bounds (its text; each of its last 12 calls' name,
    input text as a JSON string, answer up to 500 characters and answer parts; the words of its steps;
    its provider data), and the bytes only a step's issuer gets (reasoning, server-tool pieces,
    signatures on words), per issuer. Frames of :data:`MESSAGE_FRAME_BYTES`, :data:`CALL_FRAME_BYTES`
    and :data:`PIECE_FRAME_BYTES` included. An upper bound on every wire and in every mode (design 33):
    a step cut by the call window still counts whole, call provider data counts for everyone."""
    n = MESSAGE_FRAME_BYTES + _text_bytes(m.text) + _data_bytes(m.provider_data)
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
    "planning_size",
    "replay_size",
    "size_for",
]

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

:func:`replay_size` is the stored planning size of a message (the store keeps it per message, so the
budget can choose a window without loading the conversation).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._history import Message

#: Bytes of UTF-8 JSON text per estimated token (rounded up per piece).
BYTES_PER_TOKEN = 3
#: What a real tokenizer's count gets on top, as a fraction.
TOKENIZER_MARGIN = 0.10
#: Bytes a message's frame adds at most on any wire (role, keys, separators), counted in planning.
MESSAGE_FRAME_BYTES = 64
#: Bytes each replayed call adds at most on any wire (its id twice, keys, the answer's frame).
CALL_FRAME_BYTES = 256
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


def replay_size(m: Message) -> int:
    """The planning size of a stored message: bytes of the JSON text of what its replay sends under the
    default bounds (its text; each of its last 12 calls' name, input text as a JSON string, and answer
    up to 500 characters; its provider data), plus the frames of :data:`MESSAGE_FRAME_BYTES` and
    :data:`CALL_FRAME_BYTES`. A system message counts too (it is always kept)."""
    n = MESSAGE_FRAME_BYTES + _text_bytes(m.text)
    if m.provider_data:
        n += len(jsonenc.encode(dict(m.provider_data)))
    calls = m.tool_uses[-PLAN_MAX_CALLS:]
    for c in calls:
        n += CALL_FRAME_BYTES + _text_bytes(c.name)
        # an input replayed as an object is one level of JSON (Anthropic, Gemini) or a JSON string
        # (Chat, Responses arguments): the string form is the longer, so it is the one counted
        n += _text_bytes(_cut(c.input_text, PLAN_MAX_CHARS + 40))
        n += _text_bytes(_cut(c.answer or "", PLAN_MAX_CHARS))
        if c.provider_data:
            n += len(jsonenc.encode(dict(c.provider_data)))
    return n


__all__ = ["BYTES_PER_TOKEN", "Counter", "byte_count", "bytes_to_tokens", "counter_for", "replay_size"]

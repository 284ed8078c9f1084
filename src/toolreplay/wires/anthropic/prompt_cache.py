"""The Anthropic double's prompt cache: Anthropic's documented caching rules, simulated (design 36).

The other doubles count the longest prefix a request shares with an earlier one (``testing/prefix_cache``:
what a provider with automatic prefix caching could reuse). Anthropic caches only what a request marks,
so this double counts as Anthropic documents it:

* the prompt is ``tools``, ``system``, ``messages`` in that order, block by block (a tool definition, a
  system block, a content block; string content is its one text block); the cache key of a position is
  the model and everything up to and including that block, ``cache_control`` markers taken out (the
  marker says where to write and look, it is not content);
* a request without a marker reads and writes nothing;
* each marker looks for an entry an earlier request wrote, at its own position or at one of the
  :data:`LOOKBACK` - 1 blocks before it, nearest first; the furthest hit is read;
* each marker whose prefix reaches the model's minimum (:func:`minimum_tokens`) writes its prefix; a
  shorter one is processed without caching, and without an error;
* the usage: ``cache_read_input_tokens`` up to the read position, ``cache_creation_input_tokens`` from
  there to the furthest marker written, ``input_tokens`` the rest (after the last marker).

Tokens are the documented estimate (bytes of the encoded pieces / 3, rounded down for the cached parts,
up for the whole), as the other doubles count. The cache's five-minute lifetime is not simulated (a test
runs well within it); a bounded number of entries per model are kept.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from toolreplay import jsonenc
from toolreplay.estimate import BYTES_PER_TOKEN, bytes_to_tokens
from toolreplay.wires.anthropic.breakpoints import MARKER_KEY
from toolreplay.wires.doubles import PromptCount

#: How many blocks a marker's look for an earlier entry covers, itself included (Anthropic: "about 20").
LOOKBACK = 20
#: The smallest prefix, in tokens, Anthropic caches for a model (its documented table: 4,096 for Claude
#: Opus 4.5 and 4.6 and Haiku 4.5, 2,048 for Haiku 3 and 3.5); :data:`DEFAULT_MINIMUM` for the others
#: (Sonnet 4.5, Sonnet 4, Opus 4.1, Opus 4, Sonnet 3.7).
MINIMUM_TOKENS: tuple[tuple[str, int], ...] = (
    ("opus-4-6", 4096),
    ("opus-4-5", 4096),
    ("haiku-4-5", 4096),
    ("3-5-haiku", 2048),
    ("3-haiku", 2048),
)
DEFAULT_MINIMUM = 1024
#: Entries kept per model (the oldest written are forgotten first).
KEEP = 4096
#: Request fields that are neither the prompt's blocks nor part of any key (they are counted as prompt).
_BLOCK_FIELDS = ("tools", "system", "messages")
#: Request fields that change what the messages' entries mean (Anthropic: changing them invalidates the
#: messages' cache, not that of the tools and the system prompt).
_MESSAGE_SETTINGS = ("tool_choice", "thinking")


def minimum_tokens(model: str) -> int:
    """The smallest prefix Anthropic caches for ``model``, in tokens."""
    return next((n for name, n in MINIMUM_TOKENS if name in model), DEFAULT_MINIMUM)


def _bare(block: Any) -> Any:
    if isinstance(block, Mapping) and MARKER_KEY in block:
        return {k: v for k, v in block.items() if k != MARKER_KEY}
    return block


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else [content]


def _pieces(body: Mapping[str, Any]) -> Iterator[tuple[bytes, bool]]:
    """The prompt's blocks in order, each as (the bytes its key adds, it carries a marker). Where the
    messages start, and where each message starts, the key also takes the settings and the role."""
    tools, messages = body.get("tools"), body.get("messages")
    for tool in tools if isinstance(tools, list) else ():
        yield jsonenc.encode(_bare(tool)), isinstance(tool, Mapping) and MARKER_KEY in tool
    system = body.get("system")
    for block in _blocks(system) if system is not None else ():
        yield jsonenc.encode(_bare(block)), isinstance(block, Mapping) and MARKER_KEY in block
    settings = jsonenc.encode({k: body[k] for k in _MESSAGE_SETTINGS if k in body})
    for m in messages if isinstance(messages, list) else ():
        head = settings + jsonenc.encode({"role": m.get("role")}) if isinstance(m, Mapping) else settings
        settings = b""
        for block in _blocks(m.get("content") if isinstance(m, Mapping) else m):
            yield head + jsonenc.encode(_bare(block)), isinstance(block, Mapping) and MARKER_KEY in block
            head = b""


class AnthropicPromptCache:
    """The simulated cache of one double (thread-safe: the double answers on many threads)."""

    def __init__(self, keep: int = KEEP) -> None:
        self._written: dict[str, OrderedDict[bytes, None]] = {}
        self._keep = keep
        self._lock = threading.Lock()

    def count(self, model: str, body: Mapping[str, Any]) -> PromptCount:
        """Count ``body``'s prompt, what it read from the cache and what it wrote, then remember what it
        wrote."""
        rest = {k: v for k, v in body.items() if k not in _BLOCK_FIELDS}
        ends: list[int] = []  # the bytes up to and including each block (the request's other fields first)
        keys: list[bytes] = []
        marks: list[int] = []
        size = len(jsonenc.encode(rest))
        digest = hashlib.sha256(model.encode())
        for piece, marked in _pieces(body):
            digest.update(piece)
            size += len(piece)
            if marked:
                marks.append(len(keys))
            keys.append(digest.copy().digest())
            ends.append(size)
        total = bytes_to_tokens(size)
        if not marks:
            return PromptCount(total, 0, 0)
        with self._lock:
            written = self._written.setdefault(model, OrderedDict())
            read = max((self._hit(written, keys, b) for b in marks), default=-1)
            least = minimum_tokens(model) * BYTES_PER_TOKEN
            wrote = [b for b in marks if ends[b] >= least]
            for b in wrote:
                written[keys[b]] = None
                written.move_to_end(keys[b])
            while len(written) > self._keep:
                written.popitem(last=False)
        cached = ends[read] // BYTES_PER_TOKEN if read >= 0 else 0
        furthest = max(wrote, default=-1)
        created = ends[furthest] // BYTES_PER_TOKEN - cached if furthest > read else 0
        return PromptCount(total, cached, created)

    @staticmethod
    def _hit(written: Mapping[bytes, None], keys: list[bytes], mark: int) -> int:
        """The position an entry written earlier is read at for the marker at ``mark`` (-1: none)."""
        for p in range(mark, max(-1, mark - LOOKBACK), -1):
            if keys[p] in written:
                return p
        return -1

    def clear(self) -> None:
        with self._lock:
            self._written.clear()


__all__ = ["DEFAULT_MINIMUM", "LOOKBACK", "MINIMUM_TOKENS", "AnthropicPromptCache", "minimum_tokens"]

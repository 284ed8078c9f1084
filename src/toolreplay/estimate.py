"""The default token estimate of JSON text: bytes per token, public so a wire package (the Anthropic
prompt-cache simulation) and the doubles count with the very numbers the context budget uses.

A real tokenizer, where one is installed, is the context budget's business (:mod:`toolreplay._tokens`);
these two names are the estimate every part of toolreplay falls back to.
"""

from __future__ import annotations

#: Bytes of UTF-8 JSON text per estimated token (rounded up per piece).
BYTES_PER_TOKEN = 3


def bytes_to_tokens(n: int) -> int:
    """The default estimate of ``n`` bytes of JSON text."""
    return -(-n // BYTES_PER_TOKEN)


__all__ = ["BYTES_PER_TOKEN", "bytes_to_tokens"]

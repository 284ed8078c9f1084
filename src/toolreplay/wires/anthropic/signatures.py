"""Thinking signatures no provider made, which Anthropic refuses ("Invalid `signature` in `thinking`
block"): the double's rule (``rules.foreign_thinking``) and ``toolreplay proxy --repair`` read them alike."""

from __future__ import annotations

#: What routers stamp on thinking blocks in place of a signature (claude-code-router's ``Date.now()``
#: digits, LiteLLM's ``lllm-rsenc-v1:`` wrapping): Anthropic verifies every signature, and refuses these.
_PLACEHOLDER_PREFIXES = ("lllm-rsenc-v1:",)


def placeholder_signature(signature: str) -> bool:
    """Whether a thinking block's signature is one no provider made: blank, digits only, or a router's."""
    s = signature.strip()
    return not s or s.isdigit() or s.startswith(_PLACEHOLDER_PREFIXES)


__all__ = ["placeholder_signature"]

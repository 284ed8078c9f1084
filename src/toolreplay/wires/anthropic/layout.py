"""How an Anthropic body's elements stood, beyond the neutral model: the ``sent`` keys this wire keeps.

Everything lives under ``sent["anthropic"]``; :mod:`.request` writes it, :mod:`.as_sent` reads it back
(design 38). The neutral fields keep the meaning (words, calls, answers, parts); these keys keep only
the layout, so a normal render may ignore them.

A system message (``Message.sent``):
  ``system``: ``"string"`` (the top-level ``system`` was a string: this message is all of it) or
  ``"block"`` (one text block of a top-level ``system`` list; ``extra`` its other keys, e.g.
  ``cache_control``). Without it, a system message stood in ``messages`` (Claude takes them
  mid-conversation) and is laid out as a body message (below).
A body message (a user or system message's ``Message.sent``; a reply's body messages one mapping each in
``Message.sent["anthropic"]["messages"]``):
  ``content``: ``"string"`` (string content), else one mapping per content block, in order: the block's
  keys beyond what the neutral fields give (``cache_control``, ``citations``), with ``len`` for a text
  block whose words were joined with others into one text (how to cut them apart again). In a reply's
  body message each block also names where it comes from: ``k`` ``p`` (the step's next piece: thinking,
  server tool, words), ``c`` (the step's next call), ``t`` (a text block of the reply's final words),
  ``e`` (an empty text block);
  ``extra``: the message's keys beyond ``role`` and ``content``;
  ``joined``: a user message whose blocks followed ``tool_result`` blocks in one body message.
A call (``ToolCall.sent``):
  ``use``: the ``tool_use`` block's keys beyond ``type``, ``id``, ``name``, ``input``;
  ``result``: how its ``tool_result`` stood: ``content`` (``"string"``, ``"none"`` when the block had
  none, else one mapping per block as above, ``len`` for text blocks joined into the answer),
  ``is_error`` when written out (``false`` included), ``extra`` the block's other keys.
A tool declaration (``ToolSpec.sent``): ``tool``, the declaration whole (a server tool such as
``web_search_20250305`` is a ``hosted`` tool named by its ``name``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.model import Sent

WIRE = "anthropic"
#: A layout entry's own keys (where its block comes from, how long its text is), not the block's.
_BOOKKEEPING = frozenset({"k", "len"})
#: The keys of a text block the neutral model holds.
TEXT_KEYS = frozenset({"type", "text"})


def layout_of(sent: Sent | None) -> Mapping[str, Any]:
    """This wire's layout of an element ({} when it has none)."""
    got = sent.get(WIRE) if sent else None
    return got if isinstance(got, Mapping) else {}


def extras(block: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    """The keys of ``block`` beyond ``known``."""
    return {k: v for k, v in block.items() if k not in known}


def text_layout(blocks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The layout of text blocks joined into one text: each block's length and its other keys."""
    out: list[dict[str, Any]] = []
    for b in blocks:
        text = b.get("text")
        out.append({"len": len(text) if isinstance(text, str) else 0, **extras(b, TEXT_KEYS)})
    return out


def split_texts(text: str, lens: Sequence[int], joiner: str, skip_empty: bool) -> list[str] | None:
    """The texts of the blocks ``text`` was joined from (``joiner`` between them; ``skip_empty``: empty
    ones were left out of the join), or None when ``text`` is not such a join (it changed since)."""
    out: list[str] = []
    pos, joined = 0, False
    for n in lens:
        if n == 0 and skip_empty:
            out.append("")
            continue
        if joined:
            if text[pos : pos + len(joiner)] != joiner:
                return None
            pos += len(joiner)
        out.append(text[pos : pos + n])
        pos, joined = pos + n, True
    return out if pos == len(text) else None


def text_blocks(text: str, layout: Any, joiner: str, skip_empty: bool = False) -> list[dict[str, Any]]:
    """Text blocks as sent: ``text`` cut by the ``len`` of each laid-out block, each with its keys; one
    block of the whole text when the layout does not fit it."""
    entries = [cast(Mapping[str, Any], e) for e in layout] if isinstance(layout, list) else []
    lens = [e.get("len") for e in entries]
    ok = all(isinstance(n, int) for n in lens)
    texts = split_texts(text, cast(list[int], lens), joiner, skip_empty) if ok else None
    if texts is None:
        first = {k: v for k, v in entries[0].items() if k not in _BOOKKEEPING} if entries else {}
        return [{"type": "text", "text": text, **first}]
    return [
        {"type": "text", "text": t, **{k: v for k, v in e.items() if k not in _BOOKKEEPING}}
        for t, e in zip(texts, entries, strict=True)
    ]


__all__ = ["TEXT_KEYS", "WIRE", "extras", "layout_of", "split_texts", "text_blocks", "text_layout"]

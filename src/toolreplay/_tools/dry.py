"""Dry-run answers: the call is recorded as made, nothing runs, the answer says so plainly.

The text is canned and deterministic (no clock, no randomness), so a dry-run experiment replays the same
bytes every time, and it starts with ``[dry run]`` so no reader (model or person) can take it for a real
result: ``[dry run] coop close 12: not executed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from toolreplay import _jsonenc as jsonenc

MARK = "[dry run]"
_SUMMARY_CHARS = 120


def _summary(input: Any) -> str:
    """A short, readable rendering of a call's input: ``close 12`` for coop, compact JSON otherwise."""
    if isinstance(input, Mapping):
        d = cast(Mapping[str, Any], input)
        action = d.get("action")
        if isinstance(action, str):
            rest = [str(d[k]) for k in ("id", "text") if k in d and d[k] not in (None, "")]
            text = " ".join([action, *rest])
        else:
            text = jsonenc.dumps(d)
    elif isinstance(input, str):
        text = input
    else:
        text = jsonenc.dumps(input)
    text = " ".join(text.split())
    if len(text) > _SUMMARY_CHARS:
        text = text[: _SUMMARY_CHARS - 1] + "…"
    return text


def dry_answer(name: str, input: Any) -> str:
    """The canned answer to a dry-run call, e.g. ``[dry run] coop close 12: not executed``."""
    summary = _summary(input)
    return f"{MARK} {name} {summary}: not executed" if summary else f"{MARK} {name}: not executed"


def is_dry_answer(answer: str | None) -> bool:
    """Whether a stored answer is a dry-run answer."""
    return bool(answer) and str(answer).startswith(MARK)

"""An answer in a named wire's shape: whole bodies, stream events and error bodies, through the wire's
double (``Wire.double``).

What the doubles' answers share (the answer before any wire shape, stream cuts, signatures, errors)
lives in :mod:`toolreplay.wires.doubles`, so the wires never import this package; it is re-exported
here for the double's server and for tests. A wire's own shapes are reached only through its contract
(``get_wire(name).double``), never inside the wire's package: OpenAI's error object is
``error_body("openai-chat", status, message)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolreplay.wires.doubles import (
    CHUNKINGS,
    ERROR_KINDS,
    Answer,
    AnswerCall,
    Event,
    Splitter,
    default_message,
    empty_first,
    pieces,
    seeded,
    signature_for,
    token_pieces,
    usage_counts,
    whole,
)

if TYPE_CHECKING:
    from toolreplay.wires.contract import Double


def _double(wire: str) -> Double:
    from toolreplay.wires import get_wire

    double = get_wire(wire).double
    if double is None:
        raise ValueError(f"wire {wire} has no provider double")
    return double()


def answer_body(wire: str, a: Answer) -> dict[str, Any]:
    """The whole answer body of ``a`` in ``wire``'s shape."""
    return _double(wire).body(a)


def answer_events(wire: str, a: Answer, cut: Splitter = token_pieces) -> list[Event]:
    """The stream events of ``a`` in ``wire``'s shape, texts cut by ``cut``."""
    return _double(wire).events(a, cut)


def error_event(wire: str, kind: str, message: str) -> Event:
    """An error event inside a stream, in ``wire``'s own shape."""
    return _double(wire).error_event(kind, message)


def error_body(wire: str, status: int, message: str) -> dict[str, Any]:
    """An error body in ``wire``'s own shape."""
    return _double(wire).error_body(status, message)


__all__ = [
    "CHUNKINGS",
    "ERROR_KINDS",
    "Answer",
    "AnswerCall",
    "Event",
    "Splitter",
    "answer_body",
    "answer_events",
    "default_message",
    "empty_first",
    "error_body",
    "error_event",
    "pieces",
    "seeded",
    "signature_for",
    "token_pieces",
    "usage_counts",
    "whole",
]

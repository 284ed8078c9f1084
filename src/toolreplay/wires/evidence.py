"""What a request body proves about its wire, and the one rule that decides by it (design 27).

Each wire's ``sniff`` (its ``detect.py``) returns the :class:`Evidence` a body gives it, or None: how much
the marks prove (:class:`Proof`), what they were (for people), and which wires they rule out (a
``tool_use`` block is in no Chat or Ollama message). :func:`choose` takes every wire's evidence and
decides: the strongest proof wins; among wires whose proof is equally strong, a wire ruled out by another
one's evidence drops; if more than one is left the body is ambiguous and the detection names them all.
Nothing depends on the order the wires were registered in: the evidence is read by name, sorted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum


class Proof(IntEnum):
    """How much a body's marks prove that it is one wire's, weakest first."""

    #: The body reads as this wire's and proves nothing more (any ``messages`` list reads as Chat).
    FITS = 1
    #: What this wire's clients do and the others' rarely do (Ollama's ``"stream": false``).
    HABIT = 2
    #: A mark of this wire's own, which the other wires of its list key lack (Anthropic's blocks).
    MARK = 3
    #: A list key no other wire's body has (``contents``, ``input``, a string ``prompt``).
    KEY = 4


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a body proves about one wire: how much, the marks it showed, the wires those marks rule out."""

    proof: Proof
    #: The marks seen, for people (``'contents' list``, ``a tool_use block``).
    marks: tuple[str, ...]
    #: Wires whose body cannot carry these marks; the rule drops them when their proof is no stronger.
    rules_out: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.marks:
            raise ValueError("Evidence names the marks it saw (marks=() proves nothing)")


@dataclass(frozen=True, slots=True)
class Detection:
    """What :func:`choose` decided: every wire's evidence (by name) and the wires the rule left."""

    evidence: tuple[tuple[str, Evidence], ...]
    #: One name: the body's wire. Several: the body is ambiguous between them. None: no wire fits.
    left: tuple[str, ...]

    @property
    def wire(self) -> str | None:
        """The body's wire, or None when no wire fits or the body is ambiguous."""
        return self.left[0] if len(self.left) == 1 else None

    @property
    def ambiguous(self) -> bool:
        return len(self.left) > 1

    def why(self) -> str:
        """The ambiguity, for an error: each wire left with the marks that made it fit."""
        seen = dict(self.evidence)
        each = [f"{name} ({', '.join(seen[name].marks)})" for name in self.left]
        return f"the body fits {' and '.join(each)} equally; name its wire"


def choose(evidence: Mapping[str, Evidence]) -> Detection:
    """The rule: the strongest proof; among equals, drop the ones another's evidence rules out; one left
    is the wire, several are ambiguous. The same evidence in any order gives the same detection."""
    found = tuple(sorted(evidence.items()))
    if not found:
        return Detection((), ())
    top = max(e.proof for _, e in found)
    tied = [(n, e) for n, e in found if e.proof == top]
    left = tuple(n for n, _ in tied if not any(n in e.rules_out for m, e in tied if m != n))
    return Detection(found, left or tuple(n for n, _ in tied))


__all__ = ["Detection", "Evidence", "Proof", "choose"]

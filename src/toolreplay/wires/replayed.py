"""What a wire renders from: the turn messages of the next request, the replayed steps and calls.

:func:`toolreplay.prepare_turn_messages` turns a stored :class:`~toolreplay.model.History` into these
values (bounded, renamed, id-stamped per the replay mode and settings); every wire's ``render`` and
``render_turn`` take them (the :class:`~toolreplay.wires.contract.Wire` contract). They are NamedTuples,
not frozen dataclasses: every render builds one per replayed message and call, and a NamedTuple is built
in about a third of the time (issue 7's render budget).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, NamedTuple, cast

from toolreplay.model import CallKind, Part, Piece, Reasoning, Role, Sent, ServerTool, Text


class ReplayCall(NamedTuple):
    """One earlier call as it is replayed: always a JSON-object input and an answer string.

    ``patches`` names what the replay changed, so nothing is changed silently: ``renamed``,
    ``input_excerpt`` (input not a JSON object, or cut), ``input_cut`` (a custom call's text cut),
    ``answer_cut``, ``no_answer``. ``call_id`` is the id the wire sends (derived, design 2; the provider's
    own in an as-sent render, design 39); ``provider_call_id`` the stored one.

    ``kind`` ``custom``: a free-form call; ``text`` is its raw input (``input`` is then ``{"input":
    text}``, what a wire without free-form tools sends as a function call's arguments). ``sent``: the
    stored call's ``sent`` (how it stood in its body, per wire).
    """

    call_id: str
    name: str
    input: Mapping[str, Any]
    arguments: str
    answer: str
    is_error: bool = False
    stored_name: str = ""
    provider_call_id: str | None = None
    provider_data: Mapping[str, Any] | None = None
    patches: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()
    """The answer's parts (images, documents) for wires that carry them; ``answer`` is its text form."""
    kind: CallKind = "function"
    text: str = ""
    sent: Sent | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.call_id,
            "name": self.name,
            "input": dict(self.input),
            "arguments": self.arguments,
            "answer": self.answer,
        }


class ReplayStep(NamedTuple):
    """One step of a replayed reply: what the model produced before its calls (reasoning only for its
    issuer; words), in order, then the calls (each with its answer). The closing step has no calls."""

    said: tuple[Piece, ...]
    calls: tuple[ReplayCall, ...]

    @property
    def words(self) -> str:
        """The step's words before its calls, a blank line apart."""
        texts = [p.text for p in self.said if type(p) is Text and p.text]
        return texts[0] if len(texts) == 1 else "\n\n".join(texts)

    def reasoning(self, wire: str) -> list[Mapping[str, Any]]:
        """The provider data of the step's reasoning pieces for ``wire``, in order, verbatim."""
        return self.made(wire, (Reasoning,))

    def made(self, wire: str, kinds: tuple[type, ...] = (Reasoning, ServerTool)) -> list[Mapping[str, Any]]:
        """The provider data for ``wire`` of the step's provider-made pieces (reasoning, server tools), in
        the order the model produced them, verbatim."""
        out: list[Mapping[str, Any]] = []
        for p in self.said:
            if type(p) is not Text and isinstance(p, kinds) and p.data:
                d = p.data.get(wire)
                if isinstance(d, Mapping):
                    out.append(cast(Mapping[str, Any], d))
        return out


class TurnMessage(NamedTuple):
    """One message of the next request, before any wire shape: role, words, and (native) the calls.

    ``calls`` holds every replayed call of the reply; ``steps`` groups them when the reply has a step
    record or anything provider-made to replay (empty: one step of all ``calls``, nothing said before
    them; see :func:`turn_steps`). ``text`` is the final words, after the last step. ``warnings`` names
    what the replay left out of this message besides the bounds. ``parts``: a user message's content in
    order when it holds more than words (every mode sends them, they are the user's input). ``sent``: the
    stored message's ``sent`` (how it stood in its body, per wire). A system message after the first
    message of another role is a mid-conversation one (:func:`split_system` keeps it in place).
    """

    role: Role
    message_id: str
    text: str
    calls: tuple[ReplayCall, ...] = ()
    vessel: str | None = None
    provider_data: Mapping[str, Any] | None = None
    steps: tuple[ReplayStep, ...] = ()
    warnings: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()
    sent: Sent | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "message_id": self.message_id,
            "text": self.text,
            "calls": [c.as_json() for c in self.calls],
        }


def turn_steps(t: TurnMessage) -> tuple[ReplayStep, ...]:
    """The steps a wire renders for ``t``: its own, or one step of all its calls (a reply without a step
    record renders exactly as before steps existed)."""
    if t.steps:
        return t.steps
    return (ReplayStep((), t.calls),) if t.calls else ()


_CALLS = operator.attrgetter("calls")


def every_call(turns: Sequence[TurnMessage]) -> Iterator[ReplayCall]:
    """The calls of every turn, in order (at C speed: a long conversation holds hundreds)."""
    return chain.from_iterable(map(_CALLS, turns))


def leading_system(turns: Sequence[TurnMessage]) -> int:
    """How many turns at the head of ``turns`` are system turns (the system prompt's blocks)."""
    n = 0
    while n < len(turns) and turns[n].role == "system":
        n += 1
    return n


def split_system(
    turns: Sequence[TurnMessage], system: str | None, *, in_place: bool = False
) -> tuple[str | None, list[TurnMessage]]:
    """The system prompt (the given one, then the leading system turns, a blank line apart) and the other
    turns. A system turn later in the conversation stays where it stood: as itself with ``in_place`` (a
    wire that takes system messages there, ``Wire.mid_system``), else as a user turn of its words (what
    an import stored before such messages had a place; the render's warnings say so)."""
    cut = leading_system(turns)
    parts = [system] if system else []
    parts.extend(t.text for t in turns[:cut] if t.text)
    rest = list(turns[cut:])
    if not in_place:
        rest = [t._replace(role="user") if t.role == "system" else t for t in rest]
    return ("\n\n".join(parts) if parts else None), rest


__all__ = [
    "ReplayCall", "ReplayStep", "TurnMessage", "every_call", "leading_system", "split_system", "turn_steps",
]  # fmt: skip

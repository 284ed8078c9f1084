"""The steps of a live reply as they happen: one per provider answer, with who issued it (design 16-17).

The turn loop feeds every answer to a :class:`StepLog`: an answer with calls becomes a step (its
reasoning, then its words, then how many calls it made), the answer without calls the reply's closing
step (the reasoning that led to the final words, which stay the reply's text, and the data the provider
put on those words, such as a Gemini signature on the final text part). Each step records its
issuer: the vessel's wire, the host of the base URL the request went to, and the model as the provider
reported it (the requested name while it has reported none).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from toolreplay._history import History
from toolreplay._steps import Audience, Issuer, Piece, Step, Text, closing_pieces, host_of
from toolreplay._vessels import Vessel
from toolreplay.wires.reply import Reply


def _reported_models(history: History, vessel: str) -> set[str]:
    """The models earlier replies on ``vessel`` were answered by (the loop keeps them in ``meta``)."""
    out: set[str] = set()
    for m in history.messages:
        model = m.meta.get("model") if m.vessel == vessel and isinstance(m.meta, Mapping) else None
        if isinstance(model, str) and model:
            out.add(model)
    return out


class StepLog:
    """What a live reply produced, step by step."""

    def __init__(self, vessel: Vessel, history: History) -> None:
        """``vessel``: the turn's resolved vessel (:func:`~toolreplay._vessels.resolve_vessel`)."""
        self.requested = vessel.model
        self.host = host_of(vessel.base_url)
        self.wire = vessel.wire
        self._base = vessel.audience()
        # A provider reports the model it ran (``gpt-5-2025-08-07`` for ``gpt-5``): the names it gave
        # for this vessel's earlier replies and this turn's answers are the requested model's own.
        self.reported = _reported_models(history, vessel.name)
        self.steps: list[Step] = []
        self.final = ""

    def took(self, reply: Reply) -> None:
        """Record one answer: a step when it called, else the reply's closing step and final words."""
        if reply.model:
            self.reported.add(reply.model)
        issuer = Issuer(self.wire, self.host, reply.model or self.requested)
        said: tuple[Piece, ...] = tuple(reply.said)
        if reply.text and not any(isinstance(p, Text) for p in said):
            said += (Text(reply.text),)
        if reply.calls:
            self.steps.append(Step(said, len(reply.calls), issuer))
            return
        self.final = reply.text
        closing = closing_pieces(said)
        # A reply without calls keeps a closing step only for data on its words (a Gemini signature on
        # its final text part, returned to Gemini with those words); its reasoning alone is not replayed.
        if closing and (self.steps or any(isinstance(p, Text) for p in closing)):
            self.steps.append(Step(closing, 0, issuer))

    def fitted(self, n_calls: int) -> tuple[Step, ...]:
        """The steps, their counts fitted to the ``n_calls`` calls really recorded (a call that crashed
        before it was recorded, a turn cut short): the last steps give up what was not recorded."""
        out: list[Step] = []
        left = n_calls
        for s in self.steps:
            if s.calls == 0:
                out.append(s)
                continue
            take = min(s.calls, left)
            if take == 0:
                break
            out.append(s if take == s.calls else replace(s, calls=take))
            left -= take
        if left:  # calls recorded without a step (none expected): one more step holds them
            out.append(Step((), left))
        if out and out[-1].calls == 0 and any(s.calls == 0 for s in out[:-1]):
            out = [s for s in out[:-1] if s.calls] + [out[-1]]
        signed = bool(out) and any(isinstance(p, Text) and p.data for p in out[-1].said)
        return tuple(out) if signed or any(s.calls for s in out) else ()

    def audience(self) -> Audience:
        """The vessel this turn's requests go to, accepting the models the provider reported for it."""
        names = {self.requested, *self.reported} if self.reported else set[str]()
        return replace(self._base, shared_models=self._base.shared_models | names)


class CallSteps:
    """The steps of a run whose model loop we only watch (the Claude Code CLI): a step is the words the
    model wrote and the calls it made until their answers came; words after the last step are the final
    words. Only a run of several steps, or with words before its calls, records steps (design 16)."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.words: list[str] = []
        self.calls = 0

    def wrote(self, text: str) -> None:
        self.words.append(text)

    def called(self) -> None:
        self.calls += 1

    def answered(self) -> None:
        """An answer came: the calls made so far are one step (the model reads them before going on)."""
        if self.calls:
            self.steps.append(Step(tuple(Text(w) for w in self.words), self.calls))
            self.words, self.calls = [], 0

    def finish(self) -> tuple[tuple[Step, ...], str]:
        """The steps and the final words; no steps for one batch of calls with nothing before it."""
        self.answered()  # calls left unanswered by the end of the run are a step of their own
        final = "\n\n".join(self.words)
        if not self.steps or (len(self.steps) == 1 and not self.steps[0].said):
            return (), final
        return tuple(self.steps), final


def words(steps: Iterable[Step], final: str) -> str:
    """All the words of a reply in order (each step's words, then the final text), a blank line apart."""
    return "\n\n".join(w for w in (*(s.words for s in steps), final) if w)

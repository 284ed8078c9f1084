"""A routed request ready to go (design 58): its body rendered for the vessel and prepared as the vessel's
request, and the answer's side of the translation (the answer's ids, the tool names it goes back under,
the notes), which nothing sent upstream needs. Each part is worked out once, when first asked: the ids the
answer starts with as soon as the request is written (the ``trace`` extension: the transport says when),
while the upstream works on the request; the tool names at the answer's first call; the notes when the
exchange is recorded."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from toolreplay._proxy.recent import Base
from toolreplay._proxy.translate import AnswerIds, Rendered, Translated, answer_ids, answer_names, answering
from toolreplay._proxy.upstream import WRITTEN
from toolreplay._steps import Issuer
from toolreplay._transport.request import Prepared
from toolreplay.wires.bridge import Outbound


class Ready:
    """A routed request ready to go: the rendered request, the vessel's request, the upstream's issuer,
    the stored conversation it was translated over (design 54), and the answer's side, each part made
    once, when first asked: the ids the writer starts with once the request is written, the tool names at
    the answer's first call, the notes when the exchange is recorded."""

    __slots__ = (
        "_ids",
        "_names",
        "_out",
        "_said",
        "_side",
        "base",
        "issuer",
        "model",
        "prepared",
        "rendered",
    )

    def __init__(
        self, rendered: Rendered, prepared: Prepared, issuer: Issuer, base: Base, said: tuple[str, ...],
        model: str,
    ) -> None:  # fmt: skip
        self.rendered, self.prepared, self.issuer, self.base = rendered, prepared, issuer, base
        #: the notes on the agent's headers (design 56), and the model the agent asked for
        self._said, self.model = said, model
        self._ids: AnswerIds | None = None
        self._names: tuple[dict[str, str], frozenset[str]] | None = None
        self._out: Outbound | None = None
        self._side: Translated | None = None

    def _answer_ids(self) -> AnswerIds:
        if self._ids is None:
            self._ids = answer_ids(self.rendered)
        return self._ids

    @property
    def outbound(self) -> Outbound:
        """What the agent's writer starts the answer with."""
        return self._outbound()

    def _outbound(self) -> Outbound:
        if self._out is None:
            ids = self._answer_ids()
            self._out = Outbound(
                model=self.model, answer_id=ids.answer_id, thinking=ids.thinking, seal=ids.seal,
                call_id=ids.call_id, created=int(time.time()),
            )  # fmt: skip
        return self._out

    @property
    def names(self) -> tuple[dict[str, str], frozenset[str]]:
        """The agent's names of the answer's tools, and its free-form tools (:func:`answer_names`)."""
        if self._names is None:
            self._names = answer_names(self.rendered)
        return self._names

    @property
    def translated(self) -> Translated:
        """The whole answer's side: what the exchange is recorded with."""
        if self._side is None:
            done = answering(self.rendered, self._answer_ids(), self.names)
            self._side = replace(done, notes=(*done.notes, *self._said))
        return self._side

    async def trace(self, event: str, info: Any) -> None:
        """The ``trace`` extension (httpx's convention; an async interface's is a coroutine): the writer's
        start is made once the request is written. Called soon, not here: the loop's write has woken the
        upstream, and it is made once the read waits for the answer. The rest of the answer's side waits
        until it is needed: on a loopback upstream the proxy and the upstream share the processor, and
        what runs while the upstream answers runs before its answer is read."""
        if event == WRITTEN:
            asyncio.get_running_loop().call_soon(self._outbound)


__all__ = ["Ready"]

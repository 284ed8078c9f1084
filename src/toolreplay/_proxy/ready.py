"""A routed request ready to go (design 58): its body rendered for the vessel and prepared as the vessel's
request, and the answer's side of the translation (the answer's ids, the tool names it goes back under,
the notes), which nothing sent upstream needs. That side is worked out once, when first asked: the proxy
asks as soon as the request is written (the ``trace`` extension: the transport says when), so it is worked out
while the upstream works on the request, not before the request goes."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from toolreplay._proxy.recent import Base
from toolreplay._proxy.translate import Rendered, Translated, answering
from toolreplay._proxy.upstream import WRITTEN
from toolreplay._steps import Issuer
from toolreplay._transport.request import Prepared
from toolreplay.wires.bridge import Outbound


class Ready:
    """A routed request ready to go: the rendered request, the vessel's request, the upstream's issuer,
    the stored conversation it was translated over (design 54), and the answer's side, made once."""

    __slots__ = ("_said", "_side", "base", "issuer", "model", "prepared", "rendered")

    def __init__(
        self, rendered: Rendered, prepared: Prepared, issuer: Issuer, base: Base, said: tuple[str, ...],
        model: str,
    ) -> None:  # fmt: skip
        self.rendered, self.prepared, self.issuer, self.base = rendered, prepared, issuer, base
        #: the notes on the agent's headers (design 56), and the model the agent asked for
        self._said, self.model = said, model
        self._side: tuple[Translated, Outbound] | None = None

    def _answer_side(self) -> tuple[Translated, Outbound]:
        if self._side is None:
            done = answering(self.rendered)
            done = replace(done, notes=(*done.notes, *self._said))
            out = Outbound(
                model=self.model, answer_id=done.answer_id, thinking=done.thinking, seal=done.seal,
                call_id=done.call_id, created=int(time.time()),
            )  # fmt: skip
            self._side = done, out
        return self._side

    @property
    def translated(self) -> Translated:
        return self._answer_side()[0]

    @property
    def outbound(self) -> Outbound:
        return self._answer_side()[1]

    async def trace(self, event: str, info: Any) -> None:
        """The ``trace`` extension (httpx's convention; an async interface's is a coroutine): the answer's
        side is made once the request is written. Called soon, not here: the loop's write has woken the
        upstream, and the side is made once the read waits for the answer."""
        if event == WRITTEN:
            asyncio.get_running_loop().call_soon(self._answer_side)


__all__ = ["Ready"]

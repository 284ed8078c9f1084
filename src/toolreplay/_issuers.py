"""The issuer policy (design 17): which vessel a piece of reasoning or a signature may go back to.

A piece goes back only to the (wire, host, model) that issued it, a model's dated snapshot counting as the
model, or to a model its vessel profile says shares signatures. :class:`Audience` is the vessel a replay
is for, as an issuer would be recorded on it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from toolreplay.model import Issuer, Reasoning

#: A release date a provider appends to the model name it reports (``-2025-08-07``, ``-20250929``).
_DATED = re.compile(r"^(.+)-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


def same_model(a: str, b: str) -> bool:
    """Whether two model names are the same model: equal, or one is the other's dated snapshot (a body
    names ``gpt-5``, the provider reports ``gpt-5-2025-08-07`` as the model that answered). Two different
    snapshots are different models."""
    if a == b:
        return True
    da, db = _DATED.match(a), _DATED.match(b)
    return (da is not None and db is None and da.group(1) == b) or (
        db is not None and da is None and db.group(1) == a
    )


def host_of(base_url: str) -> str:
    """The host of a base URL, lowercased (``https://API.x.ai/v1`` -> ``api.x.ai``); "" when it has none."""
    try:
        return (urlsplit(base_url).hostname or "").lower()
    except ValueError:
        return ""


def _carries(data: Mapping[str, Any] | None, wire: str, key: str) -> bool:
    d = data.get(wire) if data else None
    return isinstance(d, Mapping) and bool(d.get(key))


@dataclass(frozen=True, slots=True)
class Audience:
    """The vessel a replay is for, as an issuer would be recorded on it, and the model names its profile
    says share signatures (none by default). Only what its own triple issued goes back to it (design 17).
    """

    wire: str
    host: str
    model: str
    shared_models: frozenset[str] = frozenset()
    takes_reasoning: bool = True
    """False where the wire has no place the profile allows for reasoning (Chat without
    ``reasoning_content``): signatures and data on text still go back, reasoning pieces do not."""
    sealed: str = ""
    """The field of its wire's data every reasoning piece of a step must carry for the step's reasoning to
    go back ("": none): the vessel keeps nothing between requests (``Wire.sealed_reasoning``)."""
    takes_data: bool = True
    """False where the wire has no place for provider data on calls and text (Chat, Ollama): such data
    never goes to this vessel, whoever made it (``Wire.carries_data``)."""

    def unsealed(self, pieces: Sequence[Reasoning]) -> int:
        """How many of a step's reasoning pieces lack the field :attr:`sealed` names."""
        if not self.sealed:
            return 0
        wire, key = self.wire, self.sealed
        n = 0
        for p in pieces:  # a loop, not sum() over a generator: every reasoning step of a render asks
            if not _carries(p.data, wire, key):
                n += 1
        return n

    def accepts(self, issuer: Issuer | None) -> bool:
        if issuer is None or issuer.wire != self.wire or issuer.host != self.host:
            return False
        if same_model(issuer.model, self.model) or not issuer.model:
            # no model recorded: the body that carried it named none (Gemini keeps the model in the URL);
            # the same wire and host is all that is known of its issuer
            return True
        return issuer.model in self.shared_models and self.model in self.shared_models

    def issuer(self) -> Issuer:
        """The issuer this vessel records on what it produces."""
        return Issuer(self.wire, self.host, self.model)


__all__ = ["Audience", "host_of", "same_model"]

"""A routed model's token count (``count_tokens``, ``:countTokens``), answered here by the context
estimate: the provider of the agent's wire is not asked about a model it does not serve (design 47)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ToolreplayError
from toolreplay._vessels import Vessel
from toolreplay.wires.contract import Wire


def counted(inbound: Wire, vessel: Vessel, body: Mapping[str, Any]) -> Response:
    """``body``'s tokens for ``vessel``'s model, in ``inbound``'s count answer (its bytes counted when
    its messages cannot be read)."""
    from toolreplay._tokens import counter_for, estimate, media_of  # the estimate only when a count comes

    try:
        messages = inbound.parse_request(body).messages if inbound.parse_request else ()
    except (ToolreplayError, ValueError, TypeError, KeyError):
        messages = ()  # counted as its bytes
    tokens = estimate(jsonenc.encode(body), media_of(messages), counter_for(vessel.wire, vessel.model))
    http = inbound.http
    assert http is not None and http.count_answer is not None
    return Response(jsonenc.encode(http.count_answer(tokens)), 200, media_type="application/json")


__all__ = ["counted"]

"""The as-sent render (design 38): an imported request body rendered back on its own wire as it was sent.

The history's latest recorded request (:class:`~toolreplay.model.RequestSettings`) names the wire and
holds every top-level field that is not the conversation, its system prompt or its tools. The replay runs
with ``ReplaySettings(as_sent=True)``: every reply and call whole, the calls under their own ids (design
41), every step with what its issuer made. The wire renders those turns with ``RenderOptions.as_sent``
(its ids, layout, markers and declarations as stored in ``sent``: the wire's own knowledge, behind the
``Wire`` contract), and the body is the recorded settings plus the wire's conversation keys. No bounds,
no derived ids, no markers of our own, no vessel.
"""

from __future__ import annotations

from typing import Any

from toolreplay._replay import ReplaySettings, prepare_turn_messages
from toolreplay.errors import ConfigError
from toolreplay.model import History
from toolreplay.wires import get_wire
from toolreplay.wires.common import RenderOptions

#: The replay of an as-sent render: nothing bounded, nothing left out.
AS_SENT = ReplaySettings(as_sent=True, skip_textless=False)


def render_as_sent(h: History, warnings: list[str] | None = None) -> dict[str, Any]:
    """The last request of ``h`` as its agent sent it (see the module docstring)."""
    req = h.last_request
    if req is None:
        raise ConfigError(
            f"conversation {h.id!r} has no recorded request: --as-sent renders a request body that was "
            "imported (toolreplay import BODY.json), on its own wire"
        )
    wire = get_wire(req.wire)
    turns = prepare_turn_messages(h, "native", settings=AS_SENT)
    model = req.fields.get("model")
    opts = RenderOptions(
        model=model if isinstance(model, str) else "",
        tools=h.tools or (),
        stream=req.fields.get("stream") is True,
        as_sent=True,
        request=req,
    )
    if wire.render_as_sent is not None:
        body = wire.render_as_sent(turns, opts)
    else:  # the wire's own render, told what is asked: the best it does
        body = wire.render(turns, opts)
        body = body if wire.finish is None else wire.finish(body, opts)
    out: dict[str, Any] = dict(req.fields)
    for key in wire.conversation_keys:
        if key in body:
            out[key] = body[key]
    if warnings is not None:
        warnings.extend(h.warnings)
        if wire.render_as_sent is None:
            warnings.append(
                f"{wire.name} does not render as sent yet: this body may differ from the one imported "
                "(ids, layout, markers or tool declarations)"
            )
    return out


__all__ = ["AS_SENT", "render_as_sent"]

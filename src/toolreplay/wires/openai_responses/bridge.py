"""The Responses wire's side of the bridge (design 51): its streams read into neutral deltas
(:mod:`.bridge_reader`), deltas written as its stream (:mod:`.bridge_writer`), and a whole reply as its
``response`` object.

The whole object is what the stream's ``response.completed`` carries for the same reply: the reply is
turned into deltas and written, so a whole answer and a streamed one never disagree.
"""

from __future__ import annotations

from typing import Any

from toolreplay.model import ServerTool
from toolreplay.wires.bridge import Bridge, FinishReason, Outbound, reply_deltas
from toolreplay.wires.openai_responses.bridge_reader import ResponsesReader
from toolreplay.wires.openai_responses.bridge_writer import ResponsesWriter
from toolreplay.wires.reply import Reply

_FINAL = ("response.completed", "response.incomplete", "response.failed")

#: Each wire's own word for an answer cut short or refused (any wire's reply can be written here).
_REASONS: dict[str, FinishReason] = {
    **dict.fromkeys(
        ("length", "max_tokens", "MAX_TOKENS", "incomplete", "incomplete:max_output_tokens"), "length"
    ),
    **dict.fromkeys(
        (
            "refusal",
            "content_filter",
            "incomplete:content_filter",
            "SAFETY",
            "RECITATION",
            "PROHIBITED_CONTENT",
        ),
        "refusal",
    ),
    **dict.fromkeys(("error", "failed"), "error"),
}


def finish_reason(reply: Reply) -> FinishReason | None:
    """The neutral finish of a reply read from any wire (None: the default, by whether it made calls)."""
    return _REASONS.get(reply.finish_reason or "")


def body(reply: Reply, out: Outbound) -> tuple[dict[str, Any], list[str]]:
    """The whole ``response`` object for ``reply``, and what it could not carry."""
    writer = ResponsesWriter(out)
    events = [e for d in reply_deltas(reply, finish_reason(reply)) for e in writer.write(d)]
    events += writer.close()
    final = next(payload for name, payload in reversed(events) if name in _FINAL)
    hosted = [p.text or "unnamed" for p in reply.said if isinstance(p, ServerTool)]
    notes = [f"a hosted tool's run ({name}) is not carried" for name in hosted]
    return dict(final["response"]), [*writer.notes, *notes]


BRIDGE = Bridge(reader=ResponsesReader, writer=ResponsesWriter, body=body)

__all__ = ["BRIDGE", "body", "finish_reason"]

"""The Responses wire's side of the bridge (design 51): its streams read into neutral deltas
(:mod:`.bridge_reader`), deltas written as its stream (:mod:`.bridge_writer`), and a whole reply as its
``response`` object.

The whole object is what the stream's ``response.completed`` carries for the same reply: the reply is
turned into deltas and written, so a whole answer and a streamed one never disagree.
"""

from __future__ import annotations

from typing import Any

from toolreplay.model import ServerTool
from toolreplay.wires.bridge import FINISH_REASONS, Bridge, FinishReason, Outbound, reply_deltas
from toolreplay.wires.openai_responses.bridge_reader import ResponsesReader
from toolreplay.wires.openai_responses.bridge_writer import ResponsesWriter
from toolreplay.wires.reply import Reply

_FINAL = ("response.completed", "response.incomplete", "response.failed")


def finish_reason(raw: str | None, calls: bool) -> FinishReason:
    """The finish :func:`~.response.parse_response` leaves (the ``status``, or ``incomplete:<reason>``)
    in neutral words: ``content_filter`` is a refusal, any other cut is ``length``."""
    word = raw or ""
    if word == "incomplete:content_filter":
        return "refusal"
    if word.startswith("incomplete"):
        return "length"
    if word == "failed":
        return "error"
    return "tool_calls" if calls else "stop"


def body(reply: Reply, out: Outbound) -> tuple[dict[str, Any], list[str]]:
    """The whole ``response`` object for ``reply`` (its finish in neutral words: ``neutral_reply``), and
    what it could not carry."""
    writer = ResponsesWriter(out)
    reason = next((r for r in FINISH_REASONS if r == reply.finish_reason), None)
    events = [e for d in reply_deltas(reply, reason) for e in writer.write(d)]
    events += writer.close()
    final = next(payload for name, payload in reversed(events) if name in _FINAL)
    hosted = [p.text or "unnamed" for p in reply.said if isinstance(p, ServerTool)]
    notes = [f"a hosted tool's run ({name}) is not carried" for name in hosted]
    return dict(final["response"]), [*writer.notes, *notes]


BRIDGE = Bridge(reader=ResponsesReader, writer=ResponsesWriter, body=body, reason=finish_reason)

__all__ = ["BRIDGE", "body", "finish_reason"]

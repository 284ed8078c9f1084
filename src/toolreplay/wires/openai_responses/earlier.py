"""Responses' ``previous_response_id`` in the proxy's translation (design 55): a body that sends only its
new items and names the answer before them, whose earlier turns the server keeps.

The proxy keeps them in its store and rebuilds them; what this wire knows is how its body names the
earlier answer, how its reader is given the earlier answer's calls (as the ``function_call`` and
``custom_tool_call`` items they were, so the body's ``function_call_output`` items pair with them) and
how OpenAI refuses an id it does not know (400, ``previous_response_not_found``, in OpenAI's words), and
that the earlier request's ``instructions`` do not go on (OpenAI's rule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay import jsonenc
from toolreplay.model import Message, ToolCall
from toolreplay.wires.openai_responses.layout import layout_of
from toolreplay.wires.translation import Earlier

FIELD = "previous_response_id"


def named(body: Mapping[str, Any]) -> str | None:
    got = body.get(FIELD)
    return got if isinstance(got, str) and got else None


def _item(c: ToolCall) -> dict[str, Any]:
    if c.kind == "custom":
        text = c.input if isinstance(c.input, str) else jsonenc.dumps(c.input)
        return {"type": "custom_tool_call", "call_id": c.call_id, "name": c.name, "input": text}
    args = c.input if isinstance(c.input, str) else jsonenc.dumps(c.input)
    return {"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": args}


def opened(body: Mapping[str, Any], calls: Sequence[ToolCall]) -> dict[str, Any]:
    """``body`` without ``previous_response_id``, its ``input`` led by the items of ``calls``."""
    out = {k: v for k, v in body.items() if k != FIELD}
    given = body.get("input")
    items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
    out["input"] = [_item(c) for c in calls if c.call_id] + items
    return out


def unknown(answer_id: str, why: str) -> tuple[int, dict[str, Any]]:
    """OpenAI's refusal of an id it does not know (its message, type, param and code)."""
    message = f"Previous response with id '{answer_id}' not found." + (f" ({why})" if why else "")
    error = {"message": message, "type": "invalid_request_error", "param": FIELD}
    return 400, {"error": {**error, "code": "previous_response_not_found"}}


def carried(m: Message) -> bool:
    """Every earlier message but the earlier request's ``instructions`` (a system message not sent as an
    input item): "the instructions from a previous response will not be carried over"."""
    return m.role != "system" or "role" in layout_of(m.sent)


EARLIER = Earlier(named=named, opened=opened, unknown=unknown, carried=carried)

__all__ = ["EARLIER", "FIELD", "carried", "named", "opened", "unknown"]

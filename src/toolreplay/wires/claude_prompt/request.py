"""A claude-prompt body read back into a history (for the audit): its transcript lines are its messages.

The system prompt (when any) is the first message; each transcript line one message, its ``calls`` the
message's calls (``tool``, ``input``, ``answer``, ``error``), or its ``steps`` (each step's words before
its calls, and the calls) the message's steps; the text after the transcript the last user message. A line
that is not a JSON turn is kept as a user message of its own text, with a warning."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolreplay.errors import WireError
from toolreplay.model import History, Message, Step, Text, ToolCall
from toolreplay.wires.claude_prompt.render import CLOSE, LIST_KEY, WIRE, transcript_lines


def _steps(turn: Mapping[str, Any]) -> tuple[tuple[ToolCall, ...], tuple[Step, ...]]:
    """A line's calls, and its steps when it has ``steps`` (each with its words before its calls)."""
    raw = turn.get("steps")
    if not isinstance(raw, list):
        return _calls(turn), ()
    calls: list[ToolCall] = []
    steps: list[Step] = []
    for s in raw:
        if not isinstance(s, Mapping):
            continue
        made = _calls(s)
        text = s.get("text")
        if made:
            steps.append(Step((Text(text),) if isinstance(text, str) and text else (), len(made)))
            calls.extend(made)
    return tuple(calls), tuple(steps) if calls else ()


def _calls(turn: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    out: list[ToolCall] = []
    calls = turn.get("calls")
    for c in calls if isinstance(calls, list) else []:
        if isinstance(c, Mapping) and isinstance(c.get("tool"), str):
            answer = c.get("answer")
            out.append(
                ToolCall(
                    c["tool"],
                    c.get("input"),
                    answer if isinstance(answer, str) else None,
                    is_error=c.get("error") is True,
                )
            )
    return tuple(out)


def _line_message(n: int, line: str, warnings: list[str]) -> Message:
    try:
        turn = json.loads(line)
    except json.JSONDecodeError:
        turn = None
    if not isinstance(turn, Mapping) or turn.get("role") not in ("user", "assistant"):
        warnings.append(f"{WIRE} request: transcript line {n + 1} is not a JSON turn; kept as text")
        return Message(f"t{n}", "user", line)
    text = turn.get("text")
    calls, steps = _steps(turn)
    words = text if isinstance(text, str) else ""
    return Message(f"t{n}", turn["role"], words, calls, steps=steps if turn["role"] == "assistant" else ())


def parse_request(body: Any, *, conversation_id: str = "request") -> History:
    """The history a claude-prompt body carries (see the module docstring)."""
    if not isinstance(body, Mapping) or not isinstance(body.get(LIST_KEY), str):
        raise WireError(f"{WIRE} request: no {LIST_KEY!r} string")
    warnings: list[str] = []
    messages: list[Message] = []
    system = body.get("system")
    if isinstance(system, str):
        messages.append(Message("system", "system", system))
    lines = transcript_lines(dict(body))
    messages.extend(_line_message(n, line, warnings) for n, line in enumerate(lines))
    prompt = str(body[LIST_KEY])
    tail = prompt.rsplit(CLOSE, 1)[-1].strip() if lines else prompt
    messages.append(Message("prompt", "user", tail))
    return History(conversation_id, tuple(messages), None, tuple(warnings))


__all__ = ["parse_request"]

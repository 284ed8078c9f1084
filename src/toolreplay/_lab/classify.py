"""The lab's trial classes: did a trial call the expected tool, another one, only say it acted, or neither?
And the reason beside the class: cut off by the token limit, or a tool's answer the model wrote itself.

The "said without doing" heuristic itself lives below the lab and the turn loop, in
:mod:`toolreplay._claims`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal, get_args

from toolreplay._claims import (
    DEFAULT_TOOLS,
    AnyCall,
    ToolVerbs,
    call_action,
    call_input,
    call_name,
    said_without_doing,
)
from toolreplay._errors import ConfigError
from toolreplay._replay import replay_name

TrialClass = Literal["called", "other_tool", "said_without_doing", "neither"]
#: The trial classes, exactly as they are written to ``trials.jsonl`` (design 12).
TRIAL_CLASSES: tuple[TrialClass, ...] = get_args(TrialClass)


def parse_expect(spec: str) -> tuple[str, str | None]:
    """``"coop:close"`` -> ``("coop", "close")``; ``"coop"`` -> ``("coop", None)``."""
    tool, _, action = spec.strip().partition(":")
    tool, action = tool.strip(), action.strip()
    if not tool:
        raise ConfigError(f"--expect {spec!r}: name a tool, optionally with an action (coop or coop:close)")
    return tool, (action.lower() or None)


def classify_trial(
    reply_text: str,
    calls: Sequence[AnyCall],
    expect_tool: str,
    expect_action: str | None = None,
    *,
    tools: Sequence[ToolVerbs] = DEFAULT_TOOLS,
) -> TrialClass:
    """The class of one trial (design 12), from the first answer's text and calls.

    * ``called``: some call is ``expect_tool`` (after renaming), with ``expect_action`` when given;
    * ``other_tool``: calls were made, none of them the expected one (another tool, or another action);
    * ``said_without_doing``: no call, and the text claims a tool action (see :func:`said_without_doing`);
    * ``neither``: no call and no such claim (an answer, a question, an intention like "I'll close it").
    """
    expected = replay_name(expect_tool)
    field_name = next((t.action_field for t in tools if t.tool == expected), "action")
    wanted = expect_action.lower() if expect_action else None
    for c in calls:
        if call_name(c) != expected:
            continue
        if wanted is None or call_action(c, field_name or "action") == wanted:
            return "called"
    if calls:
        return "other_tool"
    if said_without_doing(reply_text, calls, tools=tools) is not None:
        return "said_without_doing"
    return "neither"


#: Each class's own reason, when nothing more particular happened (design 43).
PLAIN_REASONS: Mapping[str, str] = {
    "called": "called",
    "other_tool": "other tool",
    "said_without_doing": "claimed in words",
    "neither": "answered",
}
CUT_OFF = "cut off"
FAKED = "faked the tool's answer"
#: A tool's answer written by the model itself: the result markers of the chat templates and wires
#: (Hermes / Qwen ``<tool_response>``, Gemma 4 ``<|tool_response>``, DeepSeek's tool output, a
#: ``tool_result`` block written as text).
_FAKED = re.compile(
    r"<\|?tool_(?:response|result|output)\b|<｜tool▁output▁begin｜>|\{\s*\"type\"\s*:\s*\"tool_result\""
)
#: The finish reasons of an answer stopped by the token limit, per wire.
LENGTH = frozenset({"length", "max_tokens", "MAX_TOKENS", "max_output_tokens"})


def trial_reason(
    cls: TrialClass, reply_text: str, calls: Sequence[AnyCall], finish_reason: str | None
) -> str:
    """Why a trial fell in its class: ``cut off`` (stopped by the token limit, or a call whose arguments
    are not valid JSON), ``faked the tool's answer`` (no call, but the text writes a tool's result
    itself), else the class's plain reason (:data:`PLAIN_REASONS`)."""
    broken = any(not isinstance(call_input(c), Mapping) for c in calls)
    if broken or (finish_reason in LENGTH and cls != "called"):
        return CUT_OFF
    if not calls and _FAKED.search(reply_text or ""):
        return FAKED
    return PLAIN_REASONS[cls]


__all__ = [
    "CUT_OFF",
    "FAKED",
    "PLAIN_REASONS",
    "TRIAL_CLASSES",
    "TrialClass",
    "classify_trial",
    "parse_expect",
    "trial_reason",
]

"""The claude-prompt wire: a history for the Claude Code CLI (``claude -p``), which takes prior turns only
as text. Not sent over HTTP: the turn loop's CLI driver runs it.

``render.py`` the body (model, system, prompt with a transcript), ``request.py`` the body back into a
history, ``rules.py`` what the transcript must look like, ``detect.py`` how its bodies are recognised.
:data:`WIRE` holds them all.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.wires.claude_prompt import detect, render, request, rules
from toolreplay.wires.common import user_words
from toolreplay.wires.contract import Wire
from toolreplay.wires.replayed import TurnMessage
from toolreplay.wires.reply import Reply

_ROLE = operator.attrgetter("role")


def _assemble(body: dict[str, Any], turns: Sequence[TurnMessage], lines: list[Any]) -> dict[str, Any] | None:
    """The prompt from the cached transcript lines (``render_prompt``'s layout, one join: the prompt is
    megabytes long at 1,000 turns)."""
    roles = list(map(_ROLE, turns))  # at C speed: the prompt's turns are those that are not system turns
    if len(lines) != len(roles) - roles.count("system"):
        return None
    last = next((t for t in reversed(turns) if t.role != "system"), None)
    if last is not None and last.role == "user" and not last.calls:
        prior, message = lines[:-1], user_words(last)
    else:
        prior, message = lines, render.CONTINUE
    if prior:
        transcript = "\n".join(prior)
        top = render.head(transcript)
        message = f"{top}\n\n{render.OPEN}\n{transcript}\n{render.CLOSE}\n\n{message}"
    body[render.LIST_KEY] = message
    return body


def _elements(body: Mapping[str, Any]) -> list[Any]:
    return list(render.transcript_lines(dict(body)))


def _no_answers(body: Mapping[str, Any]) -> Reply:
    from toolreplay.errors import WireError

    raise WireError(f"{render.WIRE}: the Claude Code CLI's answers are read by its driver, not as a body")


class _NoStream:
    """The CLI's stream is read by its driver (``toolreplay._claude_cli``), not by a wire parser."""

    def feed(self, event: Mapping[str, Any]) -> str:
        return _no_answers(event).text

    def mark_done(self) -> None:
        """Nothing to mark: see the class docstring."""

    def finish(self) -> Reply:
        return _no_answers({})


WIRE = Wire(
    name=render.WIRE,
    replayed_as=(
        "a prompt holding the prior turns as JSON, each reply with a `calls` field, after a short replay head"
    ),
    list_key=render.LIST_KEY,
    part_kinds=render.PART_KINDS,
    list_label="prompt transcript",
    render=render.render,
    render_turn=render.turn_renderer,
    assemble=_assemble,
    elements=_elements,
    parse_request=request.parse_request,
    parse_response=_no_answers,
    stream_parser=_NoStream,
    driver="Claude Code CLI",
    invocation="{base_url} -p (Claude Code CLI, prompt on stdin)",
    sniff=detect.sniff,
    holds=detect.holds,
    rules=rules.rules,
    audit_note="claude-prompt carries calls as JSON in its transcript: the CLI takes history only as text",
)

__all__ = ["WIRE"]

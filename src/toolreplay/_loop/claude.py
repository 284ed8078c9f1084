"""The Claude Code driver: the ``claude`` vessel runs its own tool loop inside the CLI.

One turn is one CLI run (:mod:`~toolreplay._loop.claude_cli`) given the claude-prompt rendering of the
history; the driver records the calls the CLI reports in the same reply, through the same
:class:`~toolreplay._loop.recorder.Recorder` as the HTTP driver: each as it starts (no answer yet), its
answer filled in when it comes, so a run that dies mid-call keeps the call.
"""

from __future__ import annotations

from typing import Any

from toolreplay._history import History
from toolreplay._loop.claude_cli import (
    ClaudeCallAnswered,
    ClaudeCallStarted,
    ClaudeEvent,
    ClaudeRun,
    ClaudeText,
    run_claude,
)
from toolreplay._loop.events import Stopped, TextDelta
from toolreplay._loop.recorder import Recorder
from toolreplay._replay import prepare_turn_messages


def _body(rec: Recorder) -> dict[str, Any]:
    from toolreplay._render_options import render_options
    from toolreplay.wires import render_wire

    opts = render_options(rec.vessel, system=rec.options.system)  # the resolved vessel's model

    def render(h: History) -> dict[str, Any]:
        return render_wire(
            rec.vessel.wire, prepare_turn_messages(h, "native", settings=rec.options.replay), opts
        )

    body = rec.fitted(rec.history.messages, render)
    if rec.options.dump_requests is not None:
        from toolreplay import _jsonenc as jsonenc
        from toolreplay._transport.dump import RequestDump

        RequestDump(rec.options.dump_requests).request(rec.vessel.name, jsonenc.encode(body))
    return body


class _Watcher:
    """Records the CLI's events as they come (the store pairs a call and its answer by the provider's id)."""

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.started: dict[str, int] = {}

    def __call__(self, ev: ClaudeEvent) -> None:
        rec = self.rec
        if isinstance(ev, ClaudeText):
            rec.emit(TextDelta(ev.text))
            rec.streamed(ev.text)  # shown: kept if the turn breaks off (the outcome's text replaces it)
        elif isinstance(ev, ClaudeCallStarted):
            self.started[ev.tool_use_id] = rec.call_started(ev.name, ev.input, ev.tool_use_id)
        elif isinstance(ev, ClaudeCallAnswered):
            pos = self.started.pop(ev.call.call_id or "", None)
            dry = rec.options.dry_tools
            rec.call_answered(pos, ev.call, executed=not dry, dry=dry)


async def run_claude_turn(rec: Recorder) -> Stopped:
    """Run the turn in the Claude Code CLI; returns why it stopped."""
    run = ClaudeRun.from_body(
        _body(rec),
        tools=rec.registry.sources(),
        db=rec.store.url,
        dry_tools=rec.options.dry_tools,
        max_turns=rec.options.max_requests,
        # the CLI is pointed elsewhere only when the turn was given a --base-url (the profile's is a name)
        base_url=rec.vessel.base_url if rec.vessel.base_url != rec.vessel.home_url else None,
    )
    rec.requests = 1
    outcome = await run_claude(run, rec.registry.names, _Watcher(rec))
    rec.streaming.clear()
    if outcome.text:
        rec.texts.append(outcome.text)
    rec.given_steps = outcome.steps
    rec.usage = outcome.usage
    rec.model = outcome.model
    rec.store_usage(outcome.usage, outcome.model)
    rec.requests = outcome.num_turns or 1
    rec.extra_meta["claude"] = outcome.meta()
    return "request_limit" if outcome.subtype == "error_max_turns" else "answer"


__all__ = ["run_claude_turn"]

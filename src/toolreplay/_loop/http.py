"""The HTTP driver: the turn loop for every vessel toolreplay talks to over HTTP.

Each step renders the conversation plus the reply in progress, sends it, parses the answer, and runs each
call the model made (or dry-runs it), through the :class:`~toolreplay._loop.recorder.Recorder`, which
stores each call before it runs and again with its answer. The loop stops at an answer without calls, or
after ``max_requests`` requests.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._history import History, ToolCall
from toolreplay._loop.events import Retrying, Stopped, TextDelta
from toolreplay._loop.recorder import Recorder
from toolreplay._loop.step_log import StepLog
from toolreplay._tools import ToolOutcome
from toolreplay.wires.reply import ParsedCall, Reply

if TYPE_CHECKING:
    from toolreplay._errors import ProviderError
    from toolreplay._render_cache import RenderCache
    from toolreplay._replay import ReplaySettings
    from toolreplay._transport.client import Transport
    from toolreplay.wires.common import RenderOptions


async def run_call(rec: Recorder, pc: ParsedCall) -> None:
    """Answer one call (run, dry-run or refuse it): recorded before it runs, then with its answer."""
    pos = rec.call_started(pc.name, pc.input, pc.call_id, pc.provider_data, pc.kind)
    # A tool that raises leaves the call stored unanswered (its effect is unknown); the turn is interrupted.
    outcome: ToolOutcome = await rec.registry.call(
        pc.name, pc.input, dry=rec.options.dry_tools, input_error=pc.input_error, kind=pc.kind
    )
    answer = jsonenc.scrub(outcome.answer)  # a tool's lone surrogate could not be stored
    answered = ToolCall(pc.name, pc.input, answer, pc.call_id, outcome.is_error, pc.provider_data,
                        kind=pc.kind)  # fmt: skip
    rec.call_answered(pos, answered, executed=outcome.executed, dry=outcome.dry)


def _render_options(rec: Recorder) -> RenderOptions:
    from toolreplay._render_options import render_options

    o = rec.options
    opts = render_options(
        rec.vessel,
        system=o.system,
        tools=rec.tool_specs(),  # the model: the resolved vessel's (--model is in it)
        temperature=o.temperature,
        max_tokens=o.max_tokens,
        stream=o.stream,
    )
    if rec.vessel.has("encrypted_reasoning"):
        # stateless (store: false): the model's reasoning survives between steps only if it comes back
        opts = replace(opts, include=("reasoning.encrypted_content",))
    if not len(rec.registry):
        # No tool can run this turn, yet the body may declare some (the history's calls need their
        # definitions: Anthropic rejects tool_use blocks without tools): the model must not call them.
        opts = replace(opts, tool_choice="none")
    return opts


def _render(
    bodies: RenderCache, rec: Recorder, opts: RenderOptions, settings: ReplaySettings, h: History
) -> dict[str, Any]:
    """One request's body of ``h`` (the messages the context budget kept)."""
    return bodies.render_body(h.messages, rec.vessel.wire, opts, settings=settings)


async def run_http(rec: Recorder, transport: Transport) -> Stopped:
    """Run the turn's steps over HTTP; returns why it stopped."""
    from toolreplay._render_cache import RenderCache

    opts = _render_options(rec)
    log = rec.log = StepLog(rec.vessel, rec.history)  # the resolved vessel: --model and --base-url in it

    def on_retry(err: ProviderError, attempt: int, delay: float) -> None:
        rec.retried()
        rec.emit(Retrying(str(err), attempt, delay))

    streamed: list[str] = []
    # Each step renders the same history plus the reply in progress, which only grew: the cache
    # renders that reply again and reuses every earlier message's pieces (same bytes as a full render).
    bodies = RenderCache()

    def on_text(piece: str) -> None:
        streamed.append(piece)
        rec.emit(TextDelta(piece))
        rec.streamed(piece)  # after it is shown: what is stored was seen

    while rec.requests < rec.options.max_requests:
        rec.requests += 1
        messages = (*rec.history.messages, rec.in_progress())
        settings = replace(rec.options.replay, audience=log.audience())
        body = rec.fitted(messages, partial(_render, bodies, rec, opts, settings))
        streamed.clear()
        reply: Reply = await transport.send(
            rec.vessel,
            body,  # the resolved vessel's model and base URL, as rendered
            stream=rec.options.stream,  # Gemini's body has no stream flag: the URL says it
            on_text=on_text,
            on_retry=on_retry,
            send_key=rec.options.send_key,
        )
        if reply.text and not streamed:  # answered whole: the UI still gets the text
            rec.emit(TextDelta(reply.text))
        rec.take(reply)
        if not reply.calls:
            return "answer"
        for pc in reply.calls:
            await run_call(rec, pc)
    return "request_limit"


__all__ = ["run_call", "run_http"]

"""One live turn: store the user message, ask the vessel, run the tools, record every call, finish.

``run_turn("chief", "Close #12.", "kimi", build_registry(["coop"], store), store=store)`` does, in order:

1. stores the user message (``u<position>``) with the real time;
2. allocates the reply's id (``a<position>``) and stores it empty, ``in_progress``, **before** the first
   request, so every call made inside the turn has its final derived id (``replay_a7_0``) at once: the
   requests inside the turn and every later turn's requests share their bytes up to the newest call;
3. loops: render (the conversation up to and including its own user message, plus its own reply in
   progress: design 5), send, parse; runs each call the model made (or dry-runs it), recording it
   before it runs and again with its answer (each committed: nothing executed is lost if the process
   dies, even while a tool runs); stops at an answer without calls, or after ``max_requests`` requests;
4. finishes the reply (text, status, provider data, meta) in one transaction, after running the "said
   without doing" classifier on it: a flagged reply carries ``meta["said_without_doing"]``.

A turn that fails part-way (a provider error, a crashed tool, Ctrl-C) marks its reply ``interrupted``
with the calls it executed and the text it had, and re-raises; the next turn replays those calls. A turn
whose first request failed before the provider answered anything, with no call run, removes its user
message and reply instead, and the conversation if it made it (design 28).
Message ids are ``u<n>``/``a<n>`` with ``n`` the (1-based) position the message takes (the next free
one when an imported message already has that id): short, deterministic per conversation, stable once
stored.

The package: ``events`` (TurnOptions, the events a UI follows, TurnResult), ``recorder`` (every write
a turn makes), two drivers over it, ``http`` (render, send, parse, run the tools, repeat) and ``claude``
(the ``claude`` vessel runs its own tool loop inside the Claude Code CLI, ``claude_cli``; the turn
records the calls the CLI reports in the same reply, the same way), and ``turn`` (``run_turn``).
"""

from __future__ import annotations

from toolreplay._loop.events import (
    DEFAULT_MAX_REQUESTS,
    DEFAULT_MAX_STEPS,
    CallFinished,
    CallStarted,
    ContextTrimmed,
    EventCallback,
    Flagged,
    Retrying,
    Stopped,
    TextDelta,
    TurnEvent,
    TurnOptions,
    TurnResult,
)
from toolreplay._loop.recorder import Recorder, merge_provider_data, next_id, said_without_doing_flag
from toolreplay._loop.turn import run_turn, run_turn_async

__all__ = [
    "DEFAULT_MAX_REQUESTS",
    "DEFAULT_MAX_STEPS",
    "CallFinished",
    "CallStarted",
    "ContextTrimmed",
    "EventCallback",
    "Flagged",
    "Recorder",
    "Retrying",
    "Stopped",
    "TextDelta",
    "TurnEvent",
    "TurnOptions",
    "TurnResult",
    "merge_provider_data",
    "next_id",
    "run_turn",
    "run_turn_async",
    "said_without_doing_flag",
]

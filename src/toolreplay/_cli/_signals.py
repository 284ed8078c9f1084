"""SIGTERM handled as Ctrl-C: ``timeout``, container stops, systemd and CI cancellation send SIGTERM, and
a turn ended that way must leave its reply marked interrupted, with its calls and the words it showed,
as Ctrl-C does (the default action ends the process at once, leaving the reply in progress)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from types import FrameType
from typing import NoReturn

_terminated = False


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    global _terminated
    _terminated = True
    handler = signal.getsignal(signal.SIGINT)
    # asyncio.run's own SIGINT handler cancels the running turn, which then marks its reply interrupted
    if callable(handler) and handler is not _on_sigterm:
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt  # SIGINT ignored (a background job) or unset: SIGTERM still ends the command


def handle_sigterm() -> None:
    """Route SIGTERM to the SIGINT handler in force when it arrives (only the main thread may set one)."""
    if hasattr(signal, "SIGTERM") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)


def take_ctrl_c() -> None:
    """Give SIGINT Python's own handler when it came ignored: Ctrl-C is how a chat cancels a reply, and
    asyncio cancels the running turn only when SIGINT has that handler. A chat started as a background
    job of a shell without job control (``cmd &`` in a script, parallel test runs) inherits SIGINT
    ignored, and Ctrl-C would then do nothing while the turn went on."""
    if threading.current_thread() is not threading.main_thread():
        return  # only the main thread may set a handler (a chat run from a library's thread)
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def terminated() -> bool:
    """A SIGTERM arrived: the command ends (a chat does not go on), then the process by the signal."""
    return _terminated


def end_by_sigterm() -> NoReturn:
    """End the process by SIGTERM itself, now that its cleanup is done: its parent sees what it sent
    (a shell reports 143; systemd counts a SIGTERM death as a clean stop, an exit status 143 as a
    failure)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
    sys.exit(128 + signal.SIGTERM)  # only if the signal is blocked


__all__ = ["end_by_sigterm", "handle_sigterm", "take_ctrl_c", "terminated"]

"""SIGTERM handled as Ctrl-C: ``timeout``, container stops, systemd and CI cancellation send SIGTERM, and
a turn ended that way must leave its reply marked interrupted, with its calls and the words it showed,
as Ctrl-C does (the default action ends the process at once, leaving the reply in progress)."""

from __future__ import annotations

import signal
import threading
from types import FrameType

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


def terminated() -> bool:
    """A SIGTERM arrived: the command ends (a chat does not go on) with status 143."""
    return _terminated


#: The exit status of a command ended by SIGTERM (128 + the signal's number, as shells report it).
TERMINATED_STATUS = 128 + 15

__all__ = ["TERMINATED_STATUS", "handle_sigterm", "terminated"]

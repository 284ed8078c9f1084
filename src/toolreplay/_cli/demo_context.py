"""What every section of ``toolreplay demo`` is handed (:class:`DemoContext`) and how it names the
program, apart from :mod:`toolreplay._cli.demo` so the sections kept in their own modules (every
vessel's request, the audit) import this, and the demo imports them, without a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from toolreplay._history import History, Message
from toolreplay._replay import ReplaySettings, TurnMessage

if TYPE_CHECKING:
    from rich.console import Console

    from toolreplay._store import ImportResult


@dataclass
class DemoContext:
    """What every section sees: the console, the stored history and both replays of it."""

    console: Console
    history: History
    db: str
    imported: ImportResult
    settings: ReplaySettings = field(default_factory=ReplaySettings)
    plain: list[TurnMessage] = field(default_factory=list)
    native: list[TurnMessage] = field(default_factory=list)
    conflict: str | None = None
    """Why the bundled conversation was shown without being stored (the store holds a different one)."""

    def message(self, message_id: str) -> Message:
        return self.history.messages[self.history.index_of(message_id)]


Section = Callable[[DemoContext], None]


def program_name() -> str:
    """How to run toolreplay again from here: ``toolreplay`` when that name finds this program, else the
    path that ran it (``python3 scripts/dev.py demo`` runs ``.venv/bin/toolreplay``, not on PATH)."""
    import os
    import shutil
    import sys

    ran = sys.argv[0] if sys.argv else ""
    if os.path.basename(ran) != "toolreplay":
        return "toolreplay"
    found = shutil.which("toolreplay")
    if found and os.path.realpath(found) == os.path.realpath(ran):
        return "toolreplay"
    rel = os.path.relpath(ran)
    return ran if rel.startswith("..") else rel


__all__ = ["DemoContext", "Section", "program_name"]

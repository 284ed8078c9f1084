"""Who is running a turn on a conversation (design 40): the turn lock, and the writer of a reply in progress.

A turn holds its conversation's **turn lock** from before it stores the user message until its reply is
finished, so two turns on one conversation never interleave (each question is followed by its own
answer). The lock belongs to the database session or the open file, so the operating system or the
database server lets go of it when the process dies, however it dies (SIGKILL included):

* PostgreSQL: a session-level advisory lock (``pg_try_advisory_lock``) on a connection kept for the turn;
  machines that share the database see each other's locks in ``pg_locks``;
* SQLite: ``flock`` on one small file per conversation in a folder beside the database
  (``<db>-turns/``), which every process opening that file sees (without ``fcntl``, as on Windows, and
  for ``:memory:``: a lock inside this process only).

The reply in progress records its **writer** in its ``meta``: the host, the process id and start time,
and the lock's token. A reader treats a reply in progress whose token is not the token of the lock's
current holder as interrupted: its writer is gone (turns on one conversation take the lock in turn, so
a reply's writer that still runs still holds it). A process id alone would not do: ids are reused, and
another host's ids mean nothing here.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from toolreplay._history import History

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: The key of the writer's record in a reply's ``meta``.
WRITER = "writer"


class TurnLock(Protocol):
    """A conversation's turn lock, held (:meth:`~toolreplay._store.Store.try_lock_turn`)."""

    token: str
    """Names this holding: recorded with the reply in progress, compared by readers."""

    def release(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Writer:
    """The process writing a reply in progress, as recorded in its ``meta["writer"]``."""

    host: str
    pid: int
    started: str | None
    """When the process started, as the OS counts it (Linux: boot id and clock ticks); None elsewhere."""
    lock: str
    """The token of the turn lock it holds."""

    def as_json(self) -> dict[str, Any]:
        return {"host": self.host, "pid": self.pid, "started": self.started, "lock": self.lock}

    @staticmethod
    def of(meta: Mapping[str, Any] | None) -> Writer | None:
        """The writer recorded in a reply's ``meta``; None when there is none (a reply written before
        design 40, or by a caller of the store that holds no lock): such a reply is never judged."""
        w = meta.get(WRITER) if isinstance(meta, Mapping) else None
        if not isinstance(w, Mapping) or not isinstance(w.get("lock"), str):
            return None
        pid, started = w.get("pid"), w.get("started")
        return Writer(
            str(w.get("host", "")),
            pid if isinstance(pid, int) else 0,
            started if isinstance(started, str) else None,
            w["lock"],
        )

    def gone(self) -> str:
        """The note a reader leaves on the reply it reads as interrupted."""
        return f"its writer (process {self.pid} on {self.host}) ended without finishing it"


def process_started(pid: int) -> str | None:
    """When process ``pid`` started, as a string that changes when the id is reused: the boot id and
    the start time in clock ticks (Linux ``/proc``); None where that cannot be read."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # field 22 (starttime), counted after the command name, which is in parentheses and may hold spaces
    fields = stat.rpartition(")")[2].split()
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None


def writer(lock: TurnLock) -> Writer:
    """This process, holding ``lock``."""
    return Writer(socket.gethostname(), os.getpid(), process_started(os.getpid()), lock.token)


def new_token() -> str:
    """A token for one holding of a lock (stored, never sent: randomness is harmless here)."""
    return secrets.token_hex(8)


def lock_key(conversation_id: str) -> int:
    """A conversation's 31-bit lock number (PostgreSQL's advisory key; distinct conversations share one
    only by a 1-in-2-billion chance, and then only wait for each other)."""
    digest = hashlib.sha256(conversation_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def settled(
    history: History, holder: Callable[[], str | None], still_open: Callable[[list[str]], set[str]]
) -> History:
    """``history`` with each reply in progress whose writer is gone read as interrupted (design 40).

    ``holder`` gives the token of the lock's holder, now; ``still_open`` which of some reply ids are
    still in progress, read after that. A reply whose token is not the holder's may have been finished
    since it was read (a writer finishes, then lets go), so only one still in progress after the look
    at the lock is read as interrupted: its writer let go of the lock without finishing it."""
    judged = [
        (i, w)
        for i, m in enumerate(history.messages)
        if m.status == "in_progress" and (w := Writer.of(m.meta)) is not None
    ]
    if not judged:
        return history
    current = holder()
    suspects = [(i, w) for i, w in judged if w.lock != current]
    gone = still_open([history.messages[i].id for i, _ in suspects]) if suspects else set()
    if not gone:
        return history
    messages = list(history.messages)
    for i, w in suspects:
        m = messages[i]
        if m.id in gone:
            messages[i] = replace(m, status="interrupted", meta={**(m.meta or {}), "error": w.gone()})
    return replace(history, messages=tuple(messages))


# --------------------------------------------------------------------------------------------------
# SQLite: one file per conversation beside the database, held with flock


class _FileLock:
    def __init__(self, owner: FileTurnLocks, conversation_id: str, fd: int | None, token: str) -> None:
        self.owner, self.cid, self.fd, self.token = owner, conversation_id, fd, token

    def release(self) -> None:
        self.owner.release(self)


class FileTurnLocks:
    """The turn locks of one SQLite database: ``folder`` None (``:memory:``, or no ``fcntl``) keeps them
    inside this process."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder if fcntl is not None else None
        self._mutex = threading.Lock()
        self._held: dict[str, str] = {}  # conversation -> token, for the in-process locks

    def _path(self, conversation_id: str) -> Path:
        assert self.folder is not None
        name = hashlib.sha256(conversation_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.folder / f"{name}.lock"

    def try_lock(self, conversation_id: str) -> _FileLock | None:
        token = new_token()
        if self.folder is None:
            with self._mutex:
                if conversation_id in self._held:
                    return None
                self._held[conversation_id] = token
            return _FileLock(self, conversation_id, None, token)
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._path(conversation_id), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, token.encode(), 0)
        except BaseException:
            os.close(fd)  # closing lets go of the lock
            raise
        return _FileLock(self, conversation_id, fd, token)

    def release(self, lock: _FileLock) -> None:
        if lock.fd is None:
            with self._mutex:
                if self._held.get(lock.cid) == lock.token:
                    del self._held[lock.cid]
            return
        fd, lock.fd = lock.fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)  # a reader between here and the close sees a holder without a token
        os.close(fd)

    def holder(self, conversation_id: str) -> str | None:
        """The token of the conversation's lock holder ("" while it is being written); None when free."""
        if self.folder is None:
            with self._mutex:
                return self._held.get(conversation_id)
        try:
            fd = os.open(self._path(conversation_id), os.O_RDONLY)
        except OSError:
            return None  # never locked
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return os.pread(fd, 64, 0).decode("ascii", "replace")
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)


__all__ = [
    "WRITER",
    "FileTurnLocks",
    "TurnLock",
    "Writer",
    "lock_key",
    "new_token",
    "process_started",
    "settled",
    "writer",
]

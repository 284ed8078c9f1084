"""Rewriting a small settings file safely when several processes may do it at once.

:func:`locked` serialises the read-change-write of one file across processes (an advisory lock on a lock
file beside it, ``NAME.lock``, which is never removed: removing it would let two writers lock two different
files). :func:`replace_text` writes the new content to a temporary file of its own in the same folder, sets
its mode, syncs it to disk and renames it over the old file, so a reader sees the old file or the new one,
never a part of either, and a crash leaves the old file as it was.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path


def real_path(path: Path) -> Path:
    """``path`` with its symlinks followed: the rename must replace the file a link points to (a vessel
    file kept with the user's dotfiles), not the link."""
    return path.resolve() if path.is_symlink() else path


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for rewriting ``path`` (waits for another process holding it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _lock(fd)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for 10 s, then OSError

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def replace_text(path: Path, text: str, mode: int) -> None:
    """Make ``path`` hold ``text`` with permissions ``mode``, all at once (see the module docstring).

    The temporary file is created 0600 and given ``mode`` before anything is written to it, so a key never
    sits in a file others can read, even for a moment.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.chmod(tmp, mode)  # its own name: no other writer can have renamed it away
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())  # the content on disk before the name points at it
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_dir(path.parent)


def _sync_dir(folder: Path) -> None:
    """Make the rename itself durable (POSIX keeps it in the folder's entry, synced separately)."""
    if sys.platform == "win32":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["locked", "real_path", "replace_text"]

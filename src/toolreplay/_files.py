"""Rewriting a small settings file safely when several processes may do it at once.

:func:`locked` serialises the read-change-write of one file across processes (an advisory lock on a lock
file beside it, ``NAME.lock``, which is never removed: removing it would let two writers lock two different
files). :func:`replace_text` writes the new content to a temporary file of its own in the same folder, sets
its mode, syncs it to disk and renames it over the old file, so a reader sees the old file or the new one,
never a part of either, and a crash leaves the old file as it was.

:func:`read_toml` reads a settings file once per process and again only when it changed (its mtime, size,
inode or device differ): every command looks up its vessel, often several times, and the file is the same.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

_Signature = tuple[int, int, int, int]
_READ: dict[str, tuple[_Signature, dict[str, Any]]] = {}
_READ_LOCK = threading.Lock()
#: How old a file's mtime must be before its read is kept (coarse file-system clocks step by jiffies).
_RACY_NS = 2_000_000_000


def read_toml(path: Path) -> dict[str, Any] | None:
    """The TOML file at ``path`` parsed (None: no such file), from the last read while the file has not
    changed since. The value is shared: callers read it, never change it. ``OSError`` and
    ``tomllib.TOMLDecodeError`` pass to the caller (which names the file) and nothing is kept of them."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    # taken before the read: a file changed while it is read is read again next time, never kept stale
    sig = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)
    key = str(path)
    with _READ_LOCK:
        kept = _READ.get(key)
    if kept is not None and kept[0] == sig:
        return kept[1]
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    # A file changed within the file system's clock step keeps its mtime and may keep its size and inode
    # (an edit in place): it is kept only once its mtime is old enough that a later edit must move it.
    if time.time_ns() - st.st_mtime_ns > _RACY_NS:
        with _READ_LOCK:
            _READ[key] = (sig, data)
    return data


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

"""Reading an input file once, whatever it holds: a JSON document, JSON Lines, or an SQLite database.

A JSON Lines file whose last line was cut short (a log still being written, a copy interrupted) still
imports: the complete lines are records, each bad line (cut short, broken, not UTF-8, past a limit of
the reader such as 200 levels of nesting) is reported with its number and what is wrong with it. A file
that is neither is kept as ``text`` with the reason, so every format can say why it does not read it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ImportFormatError
from toolreplay._history import History
from toolreplay._tool_uses import _refuse_constant
from toolreplay.wires.turns import kind_of

SQLITE_MAGIC = b"SQLite format 3\x00"

Kind = Literal["json", "jsonl", "sqlite", "text"]


@dataclass(frozen=True, slots=True)
class Record:
    """One JSON value of the file: the whole document (``line`` None) or one JSON Lines line."""

    value: Any
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Document:
    """An input file, read once. ``broken`` lists JSON Lines lines that are not complete JSON."""

    path: Path
    kind: Kind
    records: tuple[Record, ...] = ()
    broken: tuple[tuple[int, str], ...] = ()
    error: str | None = None

    @property
    def source(self) -> str:
        return str(self.path)

    def at(self, rec: Record) -> str:
        """Where a record is, for messages: ``file line 7`` or ``file``."""
        return f"{self.source} line {rec.line}" if rec.line is not None else self.source

    def first(self) -> Record | None:
        return self.records[0] if self.records else None

    @property
    def not_json(self) -> str | None:
        """Why a sniffer that reads JSON records cannot read this document, or None when it can."""
        if self.kind in ("text", "sqlite"):
            return self.error or "an SQLite database, not JSON"
        return None


def _json_error(exc: json.JSONDecodeError) -> str:
    return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"


def read_document(path: str | Path) -> Document:
    """Read ``path`` into a :class:`Document` (raises ImportFormatError only when it cannot be read)."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            # The header alone says SQLite: such a file (gigabytes, maybe) is opened by its reader.
            if f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC:
                return Document(p, "sqlite")
            f.seek(0)
            data = f.read()
    except FileNotFoundError:
        raise ImportFormatError(f"{p}: no such file") from None
    except OSError as exc:
        raise ImportFormatError(f"{p}: cannot be read ({exc.strerror or exc})") from None
    if data.startswith(SQLITE_MAGIC):
        return Document(p, "sqlite")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # One line that is not UTF-8 (a stray byte in a log) costs that line, not the whole file.
        return _read_lines(p, _byte_lines(data), f"not UTF-8 text (byte {exc.start})")
    if not text.strip():
        return Document(p, "text", error="the file is empty")
    try:
        return Document(p, "json", (Record(jsonenc.parse(text, parse_constant=_refuse_constant)),))
    except json.JSONDecodeError as whole:
        return _read_lines(p, _text_lines(text), f"not JSON ({_json_error(whole)})")
    except ValueError as exc:  # NaN, nesting or digits beyond the reader's limits: maybe one line's
        return _read_lines(p, _text_lines(text), f"not JSON ({exc})")


#: A line's number and its text (None: the line is not UTF-8, the reason beside it).
_Line = tuple[int, str | None, str]


def _text_lines(text: str) -> list[_Line]:
    """The lines of ``text``, split at line feeds only: U+2028 and the other breaks ``str.splitlines``
    knows may stand inside a JSON string, and splitting there broke a good line in two."""
    return [(n, line.removesuffix("\r"), "") for n, line in enumerate(text.split("\n"), 1)]


def _byte_lines(data: bytes) -> list[_Line]:
    out: list[_Line] = []
    for n, raw in enumerate(data.split(b"\n"), 1):
        try:
            out.append((n, raw.removesuffix(b"\r").decode("utf-8-sig" if n == 1 else "utf-8"), ""))
        except UnicodeDecodeError as exc:
            out.append((n, None, f"not UTF-8 text (byte {exc.start})"))
    return out


def _parse_line(line: str) -> tuple[Any, str | None]:
    """One JSON Lines line's value, or None and why it is not a record."""
    try:
        value = jsonenc.parse(line, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(line.rstrip()):  # the text ran out: a line cut short (a log still written)
            return (
                None,
                f"not complete JSON (the line ends before its value does: {exc.msg} at column {exc.colno})",
            )
        return None, f"not complete JSON ({exc.msg} at column {exc.colno})"
    except ValueError as exc:  # NaN, nesting or digits beyond the reader's limits
        return None, str(exc)
    if not isinstance(value, (dict, list)):
        return None, f"a JSON {type(value).__name__}, not an object or a list"
    return value, None


def _read_lines(p: Path, lines: list[_Line], whole: str) -> Document:
    """``p`` as JSON Lines, each bad line kept with why; ``whole`` is why it is not one JSON document."""
    records: list[Record] = []
    broken: list[tuple[int, str]] = []
    for n, line, why in lines:
        if line is not None and not line.strip():
            continue
        value, problem = (None, why) if line is None else _parse_line(line)
        if problem is None:
            records.append(Record(value, n))
        else:
            broken.append((n, problem))
    # JSON Lines when the first line is a complete value; otherwise it is one JSON document that is broken
    if not records or (broken and broken[0][0] < (records[0].line or 0)):
        return Document(p, "text", error=whole)
    return Document(p, "jsonl", tuple(records), tuple(broken))


# --------------------------------------------------------------------------------------------------
# formats


@dataclass(frozen=True, slots=True)
class Reading:
    """What a format read from a document: the conversations, and file-level warnings (broken lines,
    skipped entries, calls left out), each one line naming the file."""

    conversations: tuple[History, ...]
    warnings: tuple[str, ...] = ()
    left_out: int = 0
    """Calls imported but not replayed as the agent's (a simulated user's calls, design 11)."""


@dataclass(frozen=True, slots=True)
class Format:
    """One import format: ``sniff`` says why a document is *not* in it (None: it is), ``read`` reads it.

    ``read(doc, conversation)`` returns a :class:`Reading` or raises ImportFormatError naming the record
    and field. ``conversation``: for a file of one conversation, the id to store it under; for a file of
    many, the one to import (see :func:`pick`).
    """

    name: str
    description: str
    sniff: Callable[[Document], str | None]
    read: Callable[[Document, str | None], Reading]
    check: Callable[[Document], str | None] | None = None
    """When the format is named (not detected): why ``doc`` cannot be read as it (default: ``sniff``).
    The wire formats check the shape only, without the marks ``auto`` needs to tell wires apart."""
    claims: Callable[[Document], bool] | None = None
    """Whether ``doc``'s shape is unmistakably this format's (an SQLite file for llm logs, messages with
    ``text``/``tool_uses`` for toolreplay's own). ``auto`` then judges the file by this format alone: its
    refusal is the error, never another format's reading that would lose content."""


def pick(
    doc: Document, found: Sequence[History], conversation: str | None, *, many: bool
) -> tuple[History, ...]:
    """Apply ``--conversation``: rename the one conversation of a single-conversation file, or select
    one conversation of a file of many (an id it does not hold names the ids it does)."""
    if conversation is None:
        return tuple(found)
    if not many:
        return tuple(replace(h, id=conversation) for h in found)
    chosen = tuple(h for h in found if h.id == conversation)
    if not chosen:
        ids = ", ".join(h.id for h in found[:10]) + (", ..." if len(found) > 10 else "")
        raise ImportFormatError(f"{doc.source}: no conversation {conversation!r}; it holds: {ids or 'none'}")
    return chosen


def broken_warnings(doc: Document) -> list[str]:
    """One warning per JSON Lines line that could not be read, naming it and why (the others were read)."""
    return [f"{doc.source} line {n}: {why}; skipped" for n, why in doc.broken]


__all__ = [
    "Document",
    "Format",
    "Reading",
    "Record",
    "broken_warnings",
    "kind_of",
    "pick",
    "read_document",
]

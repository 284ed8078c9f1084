"""``toolreplay --help`` without importing click (design 31): the same text click's group prints, built
from the same command table, summary and epilog (a test compares the two at every width). Importing click
and formatting with it costs more than the interpreter's own start, and ``--help`` is what a newcomer
runs first; every other help text (``toolreplay CMD --help``) is click's own."""

from __future__ import annotations

import os
import sys
import textwrap

from toolreplay._cli._commands import COMMANDS, EPILOG, SUMMARY, available

# click's own words for the two options of the group (``--version`` and ``-h/--help``)
OPTIONS = (("--version", "Show the version and exit."), ("-h, --help", "Show this message and exit."))


def width() -> int:
    """click's help width: the terminal's columns (``COLUMNS`` first, as :func:`shutil.get_terminal_size`
    reads them, 80 when there is no terminal), at most 80, minus 2, at least 50."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
        columns = columns or 80
    return max(min(columns, 80) - 2, 50)


def _wrap(text: str, size: int, indent: str = "") -> list[str]:
    wrapper = textwrap.TextWrapper(
        size, initial_indent=indent, subsequent_indent=indent, replace_whitespace=False
    )
    return wrapper.wrap(text)


def _section(name: str, rows: list[tuple[str, str]], size: int) -> list[str]:
    """A heading and a definition list, laid out as click's ``HelpFormatter.write_dl`` does."""
    first_col = min(max(len(term) for term, _ in rows), 30) + 2
    lines = [f"{name}:"]
    for term, text in rows:
        wrapped = _wrap(text, max(size - first_col - 2, 10)) or [""]
        if len(term) <= first_col - 2:
            lines.append(f"  {term}{' ' * (first_col - len(term))}{wrapped[0]}")
        else:
            lines += [f"  {term}", f"{' ' * (first_col + 2)}{wrapped[0]}"]
        lines += [f"{' ' * (first_col + 2)}{line}" for line in wrapped[1:]]
    return lines


def top_help(size: int | None = None) -> str:
    """The text of ``toolreplay --help`` at ``size`` columns (default: the terminal's, as click reads it)."""
    size = width() if size is None else size
    commands = [(name, COMMANDS[name][2]) for name in COMMANDS if available(name)]
    lines = ["Usage: toolreplay [OPTIONS] COMMAND [ARGS]...", "", *_wrap(SUMMARY, size, "  "), ""]
    lines += [*_section("Options", list(OPTIONS), size), "", *_section("Commands", commands, size)]
    lines += ["", *_wrap(EPILOG, size, "  ")]
    return "\n".join(lines) + "\n"

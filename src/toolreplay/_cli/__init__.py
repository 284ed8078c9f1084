"""The ``toolreplay`` command line: a thin layer over the library, one module per command group.

Command modules are imported only when their command runs, and ``toolreplay --help`` itself does not
import click (:mod:`toolreplay._cli._help` writes the same text click would), so it stays fast: it costs
little more than the interpreter's own start. The click group is :data:`cli` (from
:mod:`toolreplay._cli._group`, imported on first use).
"""

from __future__ import annotations

import sys

# the command table, read here and by the click group and the click-free top help
from toolreplay._cli._commands import COMMANDS as COMMANDS
from toolreplay._cli._commands import EPILOG as EPILOG
from toolreplay._cli._commands import SUMMARY as SUMMARY
from toolreplay._cli._commands import available as available

# Not `from typing import TYPE_CHECKING`: typing (and re, which it imports) would be most of what
# `import toolreplay` and `toolreplay --help` cost (design 31). Type checkers read this name as True.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from toolreplay._cli._group import LazyGroup


def main(argv: list[str] | None = None) -> Any:
    """The console entry point: library errors become one clear line and exit status 1."""
    args = sys.argv[1:] if argv is None else argv
    if args in (["--help"], ["-h"]):
        from toolreplay._cli._help import top_help

        sys.stdout.write(top_help())
        return 0
    import click

    from toolreplay._cli._group import cli
    from toolreplay._cli._signals import end_by_sigterm, handle_sigterm, terminated
    from toolreplay._errors import ToolreplayError

    handle_sigterm()
    try:
        return cli.main(args=argv, prog_name="toolreplay", standalone_mode=True)
    except ToolreplayError as exc:  # raised outside click's own handling (e.g. in result callbacks)
        click.echo(f"Error: {exc}", err=True)  # click's own style, as every command prints
        sys.exit(1)
    except SystemExit:
        if terminated():  # ended by SIGTERM, its cleanup done: end as a killed process would
            end_by_sigterm()
        raise


def __getattr__(name: str) -> LazyGroup:
    if name == "cli":
        from toolreplay._cli._group import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The click group behind ``toolreplay``: its subcommands are imported on first use (see
:mod:`toolreplay._cli`, which holds the command table and the entry point)."""

from __future__ import annotations

import importlib

import click

from toolreplay._cli._commands import COMMANDS, EPILOG, SUMMARY, available
from toolreplay._version import __version__


def _refuse_undecoded(args: list[str]) -> None:
    """A command-line argument holding bytes that are not UTF-8 (Python keeps them as lone surrogates)
    cannot be stored, printed or sent: refused in one line before any command runs. A path to an existing
    file may hold such bytes (file names are bytes on POSIX), so it passes."""
    for n, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            if _is_existing_path(arg):
                continue
            raise click.UsageError(
                f"argument {n} is not UTF-8 text (undecodable bytes from the shell); toolreplay keeps text "
                "as UTF-8"
            ) from None


def _is_existing_path(arg: str) -> bool:
    from pathlib import Path

    try:
        return Path(arg).exists()
    except (OSError, ValueError):
        return False


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if available(name)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None or not available(cmd_name):
            return None
        module, attr, _ = entry
        cmd: click.Command = getattr(importlib.import_module(module), attr)
        return cmd

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _refuse_undecoded(args)
        return super().parse_args(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(
    cls=LazyGroup, help=SUMMARY, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG
)
@click.version_option(__version__, prog_name="toolreplay")
def cli() -> None:
    pass


__all__ = ["LazyGroup", "cli"]

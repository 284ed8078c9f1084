"""The ``toolreplay`` command line: a thin layer over the library, one module per command group.

Command modules are imported only when their command runs, so ``toolreplay --help`` stays fast.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

from toolreplay import __version__

# command name -> (module, attribute, one-line help shown by --help without importing the module)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": ("toolreplay._cli.demo", "demo", "Show the bundled conversation replayed plain vs native."),
    "import": ("toolreplay._cli.import_cmd", "import_cmd", "Store a history file (any known format)."),
    "history": ("toolreplay._cli.history_cmd", "history", "List, show or remove stored conversations."),
    "replay": ("toolreplay._cli.replay_cmd", "replay", "Print the prepared turn messages as JSON."),
    "render": ("toolreplay._cli.render_cmd", "render_cmd", "Print the exact request body for a vessel."),
    "vessels": ("toolreplay._cli.render_cmd", "vessels_cmd", "List the vessels (providers) and their wires."),
    "turn": ("toolreplay._cli.turn_cmd", "turn", "Run one turn of a conversation on a vessel."),
    "chat": ("toolreplay._cli.chat_cmd", "chat", "Chat with a vessel; tool calls are stored and replayed."),
    "check": ("toolreplay._cli.check_cmd", "check", "Check that each vessel accepts replayed calls."),
    "coop": ("toolreplay._cli.coop_cmd", "coop", "The coop todo board, by hand."),
    "mcp": ("toolreplay._cli.coop_cmd", "mcp_cmd", "Serve the tools over MCP (stdio)."),
    "lab": ("toolreplay._cli.lab_cmd", "lab", "Run the next turn many times per replay mode; count calls."),
    "audit": ("toolreplay._cli.audit_cmd", "audit", "Say how a dumped request carries each earlier call."),
    "cache-diff": ("toolreplay._cli.audit_cmd", "cache_diff", "Compare two requests' shared prefix."),
    "default": ("toolreplay._cli.settings_cmd", "default", "Set or show the vessel used without --vessel."),
    "keys": ("toolreplay._cli.settings_cmd", "keys", "Store provider keys in a file only you can read."),
    "double": ("toolreplay._cli.double_cmd", "double", "Serve every wire's provider double on 127.0.0.1."),
}


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
        return [name for name in COMMANDS if self._available(name)]

    @staticmethod
    def _available(name: str) -> bool:
        module = COMMANDS[name][0]
        return importlib.util.find_spec(module) is not None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None or not self._available(cmd_name):
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


# The habits every command shares, named once where a newcomer looks first.
EPILOG = (
    "Short options, the same wherever they appear: -v vessel, -m model, -s system prompt, -T tools, -u base "
    "URL, -c continue the most recent conversation (--cid ID names one), -p the double's port. Without -v "
    "a command uses the conversation's last vessel, then `toolreplay default`. A turn reads its prompt from "
    "stdin when it is - or piped. No key? Start `toolreplay double` and pass -u its URL."
)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG)
@click.version_option(__version__, prog_name="toolreplay")
def cli() -> None:
    """Replay an agent's earlier tool calls as calls, in each provider's own wire shape."""


def main(argv: list[str] | None = None) -> Any:
    """The console entry point: library errors become one clear line and exit status 1."""
    from toolreplay._errors import ToolreplayError

    try:
        return cli.main(args=argv, prog_name="toolreplay", standalone_mode=True)
    except ToolreplayError as exc:  # raised outside click's own handling (e.g. in result callbacks)
        click.echo(f"Error: {exc}", err=True)  # click's own style, as every command prints
        sys.exit(1)

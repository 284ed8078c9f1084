"""``toolreplay chat``: an interactive loop over the turn.

Text streams as it arrives, each call is shown as it runs, a reply that claims an action it never called
is flagged on the spot. Ctrl-C while a reply is coming cancels that reply (stored interrupted, with the
calls already executed) and returns to the prompt; Ctrl-C twice at an empty prompt leaves.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolreplay._cli._common import db_option, friendly
from toolreplay._cli._sending import (
    EventPrinter,
    conversation_options,
    failed_turn,
    new_conversation_id,
    open_session,
    pick_conversation,
    pick_vessel,
    run_one,
    sending_options,
    stored_count,
    turn_options,
    turn_settings,
    vessel_option,
)
from toolreplay._cli._signals import take_ctrl_c, terminated

if TYPE_CHECKING:
    from toolreplay._loop import TurnOptions
    from toolreplay._steps import Part
    from toolreplay._store import Store
    from toolreplay._tools import ToolRegistry

CHAT_HELP = (
    "Commands: /vessel NAME [BASE_URL [--send-key]] to switch, /attach PATH (a file for the next message; "
    "/attach alone lists them), /detach, /history, /help, /exit."
)


def _read_line() -> str | None:
    line = sys.stdin.readline()
    return None if line == "" else line.rstrip("\n")


class _Chat:
    def __init__(
        self, store: Store, registry: ToolRegistry, *, conversation: str, vessel: str, options: TurnOptions
    ):
        self.store = store
        self.registry = registry
        self.conversation = conversation
        self.vessel = vessel
        self.options = options
        self.attached: list[tuple[Path, Part]] = []  # the files that go with the next message

    def command(self, line: str) -> bool:
        """Handle a ``/command``; False when the chat should end."""
        name, _, arg = line[1:].strip().partition(" ")
        if name in ("exit", "quit"):
            return False
        if name == "vessel":
            self.switch(arg.split())
        elif name == "history":
            self.history()
        elif name == "attach":
            self.attach(arg.strip())
        elif name == "detach":
            click.echo(f"(dropped {len(self.attached)} file(s))" if self.attached else "(no files attached)")
            self.attached.clear()
        elif name == "help":
            click.echo(CHAT_HELP)
        else:
            click.secho(f"unknown command /{name}. {CHAT_HELP}", fg="yellow")
        return True

    def switch(self, parts: list[str]) -> None:
        """``/vessel NAME [BASE_URL [--send-key]]``. The chat's base URL is kept unless a new one is given:
        started against a local server (``toolreplay double`` serves every wire), the chat stays there; a
        key still goes only to its own vessel's host (the key-host rule in the transport). The consent to
        send a key elsewhere (--send-key) was given for one vessel and URL: a switch drops it unless it is
        given again with the URL."""
        from toolreplay._errors import ToolreplayError
        from toolreplay._vessels import get_vessel

        if not parts:
            click.echo(f"vessel: {self.vessel}")
            return
        send_key = parts[-1] == "--send-key"
        parts = parts[:-1] if send_key else parts
        try:
            get_vessel(parts[0])
        except ToolreplayError as exc:
            click.secho(str(exc), fg="red")
            return
        self.vessel = parts[0]
        url = parts[1] if len(parts) > 1 else self.options.base_url
        self.options = replace(self.options, base_url=url, send_key=send_key and len(parts) > 1)
        click.echo(f"vessel: {self.vessel}" + (f" at {url}" if url else " at its own endpoint"))

    def attach(self, arg: str) -> None:
        """``/attach PATH``: the file read now, as ``turn --attach`` reads it (design 34), and sent with the
        next message; a file that cannot go is said in one line and the chat goes on. Alone, the list."""
        from toolreplay._cli._attach import read_attachment

        if arg:
            path = Path(arg).expanduser()
            try:
                self.attached.append((path, read_attachment(path)))
            except click.BadParameter as exc:
                click.secho(f"error: {exc.message}", fg="red")
                return
        if not self.attached:
            click.echo("(no files attached; /attach PATH adds one)")
            return
        files = ", ".join(f"{path.name} ({part.media_type})" for path, part in self.attached)
        click.echo(f"attached to your next message: {files}")

    def history(self) -> None:
        from rich.console import Console

        from toolreplay._cli.history_cmd import print_history

        if not self.store.exists(self.conversation):
            click.echo("(no messages yet)")
            return
        print_history(self.store.load(self.conversation), Console(highlight=False, soft_wrap=True))

    def say(self, text: str) -> None:
        from toolreplay._errors import ToolreplayError

        printer = EventPrinter(notices_to_stderr=False)
        click.secho(f"{self.vessel}> ", fg="magenta", nl=False)
        printer.at_line_start = False
        before = stored_count(self.store, self.conversation)
        parts = tuple(part for _, part in self.attached)
        try:
            run_one(self.store, self.registry, conversation=self.conversation, text=text, vessel=self.vessel,
                    options=self.options, printer=printer, parts=parts)  # fmt: skip
        except KeyboardInterrupt:  # Ctrl-C cancels this reply, not the chat; SIGTERM ends the chat too
            printer.end()
            left = failed_turn(self.store, self.conversation, before)
            click.secho(f"({'terminated' if terminated() else 'cancelled'}: {left})", fg="yellow")
            if terminated():
                raise
        except ToolreplayError as exc:  # the chat goes on: switch vessel, fix the key, try again
            printer.end()
            click.secho(f"error: {exc} ({failed_turn(self.store, self.conversation, before)})", fg="red")
        except Exception as exc:  # a crashed user tool (or a bug) must not end the session
            printer.end()
            left = failed_turn(self.store, self.conversation, before)
            click.secho(f"error: {type(exc).__name__}: {exc} {_where(exc)}({left})", fg="red")
        else:
            printer.end()
        if stored_count(self.store, self.conversation) > before:  # the files went with the message
            self.attached.clear()
        elif self.attached:  # nothing was stored: the files wait for the retry
            click.secho(f"({len(self.attached)} file(s) still attached; /detach drops them)", fg="yellow")


def _where(exc: BaseException) -> str:
    """``at qatools.py:5 `` (where the exception was raised: a chat keeps going, so no traceback)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    return f"at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno} "


def _loop(session: _Chat) -> None:
    """Prompt, read, answer until /exit, end of input, or Ctrl-C twice at an empty prompt."""
    armed = False  # a first Ctrl-C at the prompt was pressed
    while True:
        click.secho("you> ", fg="blue", nl=False)
        try:
            line = _read_line()
        except KeyboardInterrupt:
            click.echo("")
            if armed or terminated():
                return
            click.secho("(Ctrl-C again to leave, or /exit)", fg="yellow")
            armed = True
            continue
        armed = False
        if line is None:
            click.echo("")
            return
        if not line.strip():
            continue
        if line.startswith("/"):
            if not session.command(line):
                return
            continue
        session.say(line)


@click.command()
@vessel_option
@conversation_options
@turn_options
@sending_options
@db_option
@friendly
def chat(
    vessel: str | None,
    conversation: str | None,
    continue_: bool,
    tools: tuple[str, ...],
    dry_tools: bool,
    system: str | None,
    max_requests: int,
    max_context_tokens: int | None,
    cache_breakpoints: int | None,
    base_url: str | None,
    model: str | None,
    dump_requests: Path | None,
    send_key: bool,
    timeout: float,
    db: str | None,
) -> None:
    """Chat with a vessel: calls are run, stored and replayed; switch vessels with /vessel.

    In the chat: /vessel NAME [BASE_URL [--send-key]] to switch (the chat's base URL is kept),
    /attach PATH to send a file with the next message (as turn --attach; /attach alone lists them,
    /detach drops them), /history, /help, /exit (or Ctrl-D). Ctrl-C cancels the reply in progress;
    Ctrl-C twice at the prompt leaves.

    \b
    Examples:
      toolreplay chat -v gemini --cid chief -T coop
      toolreplay chat -c                        # the most recent conversation
    """
    from toolreplay._vessels import get_vessel

    settings = turn_settings(
        system=system,
        model=model,
        base_url=base_url,
        max_requests=max_requests,
        dry_tools=dry_tools,
        dump_requests=dump_requests,
        send_key=send_key,
        timeout=timeout,
        max_context_tokens=max_context_tokens,
        cache_breakpoints=cache_breakpoints,
    )
    take_ctrl_c()
    store, registry = open_session(db, tools)
    try:
        cid = pick_conversation(store, conversation, continue_) or new_conversation_id(store, "chat")
        name = pick_vessel(store, vessel, cid)
        get_vessel(name)
        session = _Chat(store, registry, conversation=cid, vessel=name, options=settings)
        tool_names = ", ".join(registry.names) or "none"
        click.echo(f"conversation {cid} on {name}; tools: {tool_names}. {CHAT_HELP}")
        _loop(session)
    finally:
        store.close()

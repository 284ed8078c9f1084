"""``toolreplay turn``, ``toolreplay chat`` and ``toolreplay check``: commands that send.

``turn`` runs one non-interactive turn and prints the reply (``--json``: the stored records). ``chat`` is
an interactive loop over the same turn: text streams as it arrives, each call is shown as it runs, a
reply that claims an action it never called is flagged on the spot. ``check`` sends a stored history
with replayed calls to each vessel and reports whether the provider accepted it (``--offline``: the
bodies are validated against the wire rules and specs instead, with no network).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolreplay._cli._common import SEND_KEY_HELP, db_option, friendly

if TYPE_CHECKING:
    from toolreplay._loop import TurnEvent, TurnOptions, TurnResult
    from toolreplay._store import Store
    from toolreplay._tools import ToolRegistry

F = Callable[..., Any]


def _sending_options(fn: F) -> F:
    """The options every command that sends shares."""
    for decorator in reversed(
        (
            click.option(
                "--base-url", metavar="URL", default=None, help="Send to this URL instead of the vessel's."
            ),
            click.option("--send-key", is_flag=True, help=SEND_KEY_HELP),
            click.option(
                "--model", metavar="NAME", default=None, help="Use this model instead of the vessel's."
            ),
            click.option(
                "--dump-requests",
                metavar="DIR",
                type=click.Path(file_okay=False, path_type=Path),
                default=None,
                help="Write every request body sent and its answer here (keys redacted).",
            ),
        )
    ):
        fn = decorator(fn)
    return fn


def _turn_options(fn: F) -> F:
    """The options of ``turn`` and ``chat``."""
    for decorator in reversed(
        (
            click.option(
                "--tools",
                "tools",
                multiple=True,
                metavar="coop|MODULE:ATTR",
                help="Tools the model may call, run by toolreplay: coop (the todo board), or MODULE:ATTR "
                "naming a Tool, a list of tools, a ToolRegistry or a function of no argument returning "
                "one (repeat or comma-separate); none by default.",
            ),
            click.option(
                "--dry-tools", is_flag=True, help="Record every call, execute none (canned answers)."
            ),
            click.option(
                "--system", metavar="TEXT|@FILE", default=None, help="System prompt, or @FILE to read it."
            ),
            click.option(
                "--max-steps",
                type=click.IntRange(min=1),
                default=8,
                show_default=True,
                help="Requests per turn at most.",
            ),
        )
    ):
        fn = decorator(fn)
    return fn


def _not_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse an empty TEXT or conversation id before anything is stored (a provider would answer an
    empty user message with a 400, and an empty id makes a conversation no command can name)."""
    if value is not None and not value.strip():
        raise click.BadParameter("must not be empty", ctx=ctx, param=param)
    return value


def _stored_count(store: Store, conversation: str) -> int:
    return len(store.load(conversation).messages) if store.exists(conversation) else 0


def _failed_turn(store: Store, conversation: str, before: int) -> str:
    """What a failed turn left in the store, said after its error (retrying adds a new user message)."""
    if _stored_count(store, conversation) == before:
        return "nothing was stored"
    last = store.load(conversation).messages[-1]
    return f"the reply {last.id} is stored as {last.status}"


def _system_text(value: str | None) -> str | None:
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise click.BadParameter(f"{path}: cannot be read ({exc.strerror})", param_hint="--system") from None


def _options(
    system: str | None,
    model: str | None,
    base_url: str | None,
    max_steps: int,
    dry_tools: bool,
    dump_requests: Path | None,
    send_key: bool = False,
) -> TurnOptions:
    from toolreplay._loop import TurnOptions

    return TurnOptions(
        system=_system_text(system),
        model=model,
        base_url=base_url,
        send_key=send_key,
        max_steps=max_steps,
        dry_tools=dry_tools,
        dump_requests=dump_requests,
    )


def _short(value: Any, limit: int = 160) -> str:
    from toolreplay import _jsonenc as jsonenc

    text = value if isinstance(value, str) else jsonenc.dumps(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class EventPrinter:
    """Prints a turn's events as they happen: text to stdout, calls and notices to ``notice``."""

    def __init__(self, *, stream_text: bool = True, notices_to_stderr: bool = True) -> None:
        self.stream_text = stream_text
        self.err = notices_to_stderr
        self.at_line_start = True

    def _notice(self, text: str, **style: Any) -> None:
        if not self.at_line_start:
            click.echo("", err=not self.stream_text)
            self.at_line_start = True
        click.secho(text, err=self.err, **style)

    def __call__(self, event: TurnEvent) -> None:
        from toolreplay._loop import CallFinished, CallStarted, Flagged, Retrying, TextDelta

        if isinstance(event, TextDelta):
            if self.stream_text:
                click.echo(event.text, nl=False)
                self.at_line_start = event.text.endswith("\n")
        elif isinstance(event, CallStarted):
            self._notice(f"  ⚙ {event.name} {_short(event.input)}", fg="cyan")
        elif isinstance(event, CallFinished):
            # The coop tool's errors already start with "error:"; don't print "error error: ...".
            said = event.answer.lstrip().lower().startswith("error")
            label = ("->" if said else "-> error:") if event.is_error else ("dry run" if event.dry else "->")
            self._notice(f"    {label} {_short(event.answer)}", fg="red" if event.is_error else "green")
        elif isinstance(event, Retrying):
            self._notice(f"  (retrying in {event.delay:.1f}s: {event.error})", fg="yellow")
        elif isinstance(event, Flagged):
            claim = event.claim
            self._notice(
                f"  ⚠ said without doing: {claim.get('sentence', '')!r} claims {claim.get('tool')} "
                f"{claim.get('action')}, but this turn made no such call",
                fg="red",
                bold=True,
            )

    def end(self) -> None:
        if self.stream_text and not self.at_line_start:
            click.echo("")
            self.at_line_start = True


def _open(db: str | None, tools: tuple[str, ...]) -> tuple[Store, ToolRegistry]:
    from toolreplay._store import open_store
    from toolreplay._tools import build_registry

    store = open_store(db)
    try:
        return store, build_registry(tools, store)
    except BaseException:
        store.close()
        raise


def _run(
    store: Store,
    registry: ToolRegistry,
    conversation: str,
    text: str,
    vessel: str,
    options: TurnOptions,
    printer: Callable[[TurnEvent], None],
) -> TurnResult:
    from toolreplay._loop import run_turn

    return run_turn(conversation, text, vessel, registry, store=store, options=options, on_event=printer)


# -- turn ----------------------------------------------------------------------------------------------


@click.command()
@click.argument("text", callback=_not_blank)
@click.option("--vessel", required=True, metavar="NAME", help="The vessel (provider) to ask.")
@click.option(
    "--conversation",
    "conversation",
    required=True,
    metavar="ID",
    callback=_not_blank,
    help="The conversation (created when new).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the stored user message and reply as JSON.")
@_turn_options
@_sending_options
@db_option
@friendly
def turn(
    text: str,
    vessel: str,
    conversation: str,
    as_json: bool,
    tools: tuple[str, ...],
    dry_tools: bool,
    system: str | None,
    max_steps: int,
    base_url: str | None,
    send_key: bool,
    model: str | None,
    dump_requests: Path | None,
    db: str | None,
) -> None:
    """Run one turn of conversation ID on a vessel and print the reply.

    TEXT is the user's message. It and the reply are stored; calls are run and recorded as they happen.
    A turn that fails after it was stored leaves its reply marked interrupted (the error says so).

    \b
    Example:
      toolreplay turn "Close #1." --vessel kimi --conversation chief --tools coop
    """
    from toolreplay._errors import ToolreplayError
    from toolreplay._history import message_to_dict

    options = _options(system, model, base_url, max_steps, dry_tools, dump_requests, send_key)
    store, registry = _open(db, tools)
    printer = EventPrinter(stream_text=not as_json)
    try:
        before = _stored_count(store, conversation)
        try:
            result = _run(store, registry, conversation, text, vessel, options, printer)
        except ToolreplayError as exc:
            printer.end()
            raise click.ClickException(f"{exc} ({_failed_turn(store, conversation, before)})") from None
        printer.end()
        if as_json:
            stored = {m.id: m for m in store.load(conversation).messages}
            record = {
                "id": conversation,
                "messages": [
                    message_to_dict(stored[result.user_message.id]),
                    message_to_dict(stored[result.reply.id]),
                ],
            }
            click.echo(json.dumps(record, ensure_ascii=False, indent=2))
    finally:
        printer.end()
        store.close()


# -- chat ----------------------------------------------------------------------------------------------

CHAT_HELP = "Commands: /vessel NAME [BASE_URL [--send-key]] to switch, /history, /help, /exit."


def _new_conversation_id() -> str:
    return "chat-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


def _read_line() -> str | None:
    line = sys.stdin.readline()
    return None if line == "" else line.rstrip("\n")


class _Chat:
    def __init__(
        self, store: Store, registry: ToolRegistry, conversation: str, vessel: str, options: TurnOptions
    ):
        self.store = store
        self.registry = registry
        self.conversation = conversation
        self.vessel = vessel
        self.options = options

    def command(self, line: str) -> bool:
        """Handle a ``/command``; False when the chat should end."""

        name, _, arg = line[1:].strip().partition(" ")
        if name in ("exit", "quit"):
            return False
        if name == "vessel":
            self.switch(arg.split())
            return True
        if name == "history":
            self.history()
            return True
        if name == "help":
            click.echo(CHAT_HELP)
            return True
        click.secho(f"unknown command /{name}. {CHAT_HELP}", fg="yellow")
        return True

    def switch(self, parts: list[str]) -> None:
        """``/vessel NAME [BASE_URL [--send-key]]``. The consent to send a key elsewhere (--send-key) was
        given for one vessel and URL: a switch drops it unless it is given again."""
        from dataclasses import replace

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
        # A base URL belongs to one vessel's server: switching drops it unless a new one is given.
        dropped = self.options.base_url if len(parts) == 1 else None
        url = parts[1] if len(parts) > 1 else None
        self.options = replace(self.options, base_url=url, send_key=send_key and url is not None)
        where = f" at {url}" if url else " at its own endpoint"
        if dropped:
            where += f" (not {dropped}: /vessel {self.vessel} URL to send there)"
        click.echo(f"vessel: {self.vessel}{where}")

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
        before = _stored_count(self.store, self.conversation)
        try:
            _run(self.store, self.registry, self.conversation, text, self.vessel, self.options, printer)
        except ToolreplayError as exc:  # the chat goes on: switch vessel, fix the key, try again
            printer.end()
            click.secho(f"error: {exc} ({_failed_turn(self.store, self.conversation, before)})", fg="red")
            return
        except Exception as exc:  # a crashed user tool (or a bug) must not end the session
            printer.end()
            left = _failed_turn(self.store, self.conversation, before)
            click.secho(f"error: {type(exc).__name__}: {exc} {_where(exc)}({left})", fg="red")
            return
        printer.end()


def _where(exc: BaseException) -> str:
    """``at qatools.py:5 `` (where the exception was raised: a chat keeps going, so no traceback)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    return f"at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno} "


@click.command()
@click.option("--vessel", required=True, metavar="NAME", help="The vessel to start with.")
@click.option(
    "--conversation",
    "conversation",
    default=None,
    metavar="ID",
    callback=_not_blank,
    help="Continue this conversation (default: a new one, chat-<date>-<time>).",
)
@_turn_options
@_sending_options
@db_option
@friendly
def chat(
    vessel: str,
    conversation: str | None,
    tools: tuple[str, ...],
    dry_tools: bool,
    system: str | None,
    max_steps: int,
    base_url: str | None,
    send_key: bool,
    model: str | None,
    dump_requests: Path | None,
    db: str | None,
) -> None:
    """Chat with a vessel: calls are run, stored and replayed; switch vessels with /vessel.

    \b
    In the chat: /vessel NAME [BASE_URL [--send-key]] to switch, /history, /help, /exit (or Ctrl-D).
    Example:
      toolreplay chat --vessel gemini --conversation chief --tools coop
    """
    from toolreplay._vessels import get_vessel

    get_vessel(vessel)
    options = _options(system, model, base_url, max_steps, dry_tools, dump_requests, send_key)
    store, registry = _open(db, tools)
    session = _Chat(store, registry, conversation or _new_conversation_id(), vessel, options)
    tool_names = ", ".join(registry.names) or "none"
    click.echo(f"conversation {session.conversation} on {vessel}; tools: {tool_names}. {CHAT_HELP}")
    try:
        while True:
            click.secho("you> ", fg="blue", nl=False)
            line = _read_line()
            if line is None:
                click.echo("")
                break
            if not line.strip():
                continue
            if line.startswith("/"):
                if not session.command(line):
                    break
                continue
            session.say(line)
    finally:
        store.close()


# -- check ---------------------------------------------------------------------------------------------


def _check_vessels(names: tuple[str, ...], offline: bool, base_url: str | None) -> list[Any]:
    import os

    from toolreplay._vessels import get_vessel, vessels

    wanted = [n.strip() for entry in names for n in entry.split(",") if n.strip()]
    if wanted:
        return [get_vessel(n) for n in dict.fromkeys(wanted)]
    if offline:
        return vessels()
    return [v for v in vessels() if v.key_env and os.environ.get(v.key_env, "").strip()]


def _check_offline(vessel: Any, body: dict[str, Any]) -> tuple[bool, str]:
    from toolreplay._audit.validate import check_body

    report = check_body(vessel, body)
    if report.problems:
        return False, "; ".join(report.problems[:5]) + (" …" if len(report.problems) > 5 else "")
    note = f" (not checked: {'; '.join(report.unchecked)})" if report.unchecked else ""
    return True, "valid" + note


def _check_send_key(send_key: bool, named: bool, targets: list[Any]) -> None:
    """``check --send-key`` sends the keys of the vessels the user named, all sharing one key: one
    vessel's key never goes to another vessel's URL, and keys are never sent elsewhere in bulk."""
    if not send_key:
        return
    from toolreplay._errors import ConfigError
    from toolreplay._transport.request import one_key_per_url

    if not named:
        raise click.UsageError("--send-key: name the vessel whose key may go to --base-url (--vessel NAME)")
    try:
        one_key_per_url(targets)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


async def _check_online(
    vessel: Any,
    body: dict[str, Any],
    transport: Any,
    base_url: str | None,
    named: bool = False,
    send_key: bool = False,
) -> tuple[bool, str]:
    """(ok, detail). A vessel that cannot be sent to is skipped when it was chosen for its key, and fails
    the check when the user named it (exit 0 would say a vessel passed that was never asked)."""
    from toolreplay._errors import ConfigError, ProviderError

    skipped = "cannot be checked" if named else "skipped"
    if vessel.wire == "claude-prompt":
        return not named, f"{skipped}: the claude vessel takes the history as text (check it with --offline)"
    try:
        reply = await transport.send(vessel, body, base_url=base_url, send_key=send_key)
    except ConfigError as exc:
        return not named, f"{skipped}: {exc}"
    except ProviderError as exc:
        return False, f"rejected: {exc}"
    said = " ".join(reply.text.split())[:80]
    calls = f", {len(reply.calls)} call(s)" if reply.calls else ""
    return True, f"accepted{calls}: {said!r}" if said else f"accepted{calls}"


@click.command()
@click.option(
    "--vessel",
    "vessel_names",
    multiple=True,
    metavar="NAME[,NAME...]",
    help="Vessels to check (repeat or comma-separate); a named vessel that cannot be checked fails the "
    "check. Default: every vessel whose key is set.",
)
@click.option(
    "--history", "history_source", default=None, metavar="FILE|ID", help="Default: the bundled demo."
)
@click.option(
    "--offline", is_flag=True, help="Validate each vessel's body against the rules and specs; send nothing."
)
@_sending_options
@db_option
@friendly
def check(
    vessel_names: tuple[str, ...],
    history_source: str | None,
    offline: bool,
    base_url: str | None,
    send_key: bool,
    model: str | None,
    dump_requests: Path | None,
    db: str | None,
) -> None:
    """Send a stored history with replayed calls to each vessel; report accepted or the provider's error."""
    import asyncio

    from toolreplay._api import render
    from toolreplay._cli._common import load_source
    from toolreplay._history import load_history

    if history_source is None:
        history = load_history(Path(__file__).resolve().parent.parent / "data" / "demo.json")
    else:
        history = load_source(history_source, db)
    targets = _check_vessels(vessel_names, offline, base_url)
    named = any(n.strip(", ") for n in vessel_names)
    _check_send_key(send_key, named, targets)
    if not targets:
        raise click.ClickException(
            "no vessel has its key set; set a key (see `toolreplay vessels`), name one with --vessel and "
            "--base-url for a local server, or use --offline"
        )
    click.echo(
        f"{history.id}: {sum(len(m.tool_uses) for m in history.messages)} stored calls, "
        f"{'validated offline' if offline else 'sent'} to {len(targets)} vessel(s)"
    )

    async def run_all() -> list[tuple[str, bool, str]]:
        from toolreplay._transport.client import Transport

        out: list[tuple[str, bool, str]] = []
        async with Transport(dump=dump_requests) as transport:
            for v in targets:
                body = render(history, v, "native", model=model, max_tokens=256)
                if offline:
                    ok, detail = _check_offline(v, body)
                else:
                    ok, detail = await _check_online(v, body, transport, base_url, named, send_key)
                out.append((v.name, ok, detail))
        return out

    results = asyncio.run(run_all())
    width = max(len(n) for n, _, _ in results)
    for name, ok, detail in results:
        click.secho(f"{name:<{width}}  {detail}", fg=None if ok else "red")
    if not all(ok for _, ok, _ in results):
        sys.exit(1)

"""What the commands that send (``turn``, ``chat``, ``check``, ``lab``) share: options, the event printer,
the choice of vessel and conversation.

Short options follow llm's where they exist: ``-v`` vessel (toolreplay has no verbose flag), ``-m`` model,
``-s`` system prompt, ``-T`` tools, ``-c`` continue the most recent conversation, ``--cid`` a conversation.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from toolreplay._cli._common import SEND_KEY_HELP
from toolreplay._limits import MAX_REQUESTS, TIMEOUT

if TYPE_CHECKING:
    from toolreplay._loop import TurnEvent, TurnOptions, TurnResult
    from toolreplay._steps import Part
    from toolreplay._store import Store
    from toolreplay._tools import ToolRegistry

F = Callable[..., Any]


def sending_options(fn: F) -> F:
    """The options every command that sends shares."""
    for decorator in reversed(
        (
            click.option(
                "-u",
                "--base-url",
                metavar="URL",
                default=None,
                help="Send to this URL instead of the vessel's (e.g. `toolreplay double`'s).",
            ),
            click.option(
                "-m", "--model", metavar="NAME", default=None, help="Use this model instead of the vessel's."
            ),
            click.option(
                "--dump-requests",
                metavar="DIR",
                type=click.Path(file_okay=False, path_type=Path),
                default=None,
                help="Write every request body sent and its answer here (keys redacted).",
            ),
            click.option("--send-key", is_flag=True, help=SEND_KEY_HELP),
            click.option(
                "--timeout",
                type=float,  # checked where it is held (TurnOptions, Transport): _limits.check_timeout
                default=TIMEOUT,
                show_default=True,
                metavar="SECONDS",
                help="Time limit of a turn (check: of each vessel's request), every request, retry and "
                "tool run included.",
            ),
        )
    ):
        fn = decorator(fn)
    return fn


CACHE_BREAKPOINTS_OPTION = click.option(
    "--cache-breakpoints",
    type=int,  # checked with the vessel it is folded into (_vessels.checked_breakpoints)
    default=None,
    metavar="N",
    help="Anthropic prompt-cache markers per request, 0 (none) to 4; default: the vessel's.",
)


MAX_CONTEXT_OPTION = click.option(
    "--max-context-tokens",
    type=int,  # checked by ContextBudget (_limits.check_context_tokens)
    default=None,
    metavar="N",
    help="Send the newest whole turns that fit N tokens (estimated); default: the vessel's context window.",
)


def turn_options(fn: F) -> F:
    """The options of ``turn`` and ``chat``."""
    for decorator in reversed(
        (
            click.option(
                "-T",
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
                "-s",
                "--system",
                metavar="TEXT|@FILE",
                default=None,
                help="System prompt, or @FILE to read it.",
            ),
            click.option(
                "--max-requests",
                "--max-steps",  # the old name
                "max_requests",
                type=int,  # checked by TurnOptions (_limits.check_max_requests)
                default=MAX_REQUESTS,
                show_default=True,
                help="Requests per turn at most.",
            ),
            MAX_CONTEXT_OPTION,
            CACHE_BREAKPOINTS_OPTION,
        )
    ):
        fn = decorator(fn)
    return fn


def not_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse an empty TEXT or conversation id before anything is stored (a provider would answer an
    empty user message with a 400, and an empty id makes a conversation no command can name)."""
    if value is not None and not value.strip():
        raise click.BadParameter("must not be empty", ctx=ctx, param=param)
    return value


def stored_count(store: Store, conversation: str) -> int:
    return store.counts(conversation)[0]  # counted, not read: fast at any length


def failed_turn(store: Store, conversation: str, before: int) -> str:
    """What a failed turn left in the store, said after its error (retrying adds a new user message)."""
    if stored_count(store, conversation) == before:
        return "nothing was stored"
    count = stored_count(store, conversation)
    last = store.load_range(conversation, count - 1, count).messages[-1]
    return f"the reply {last.id} is stored as {last.status}"


def _system_text(value: str | None) -> str | None:
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise click.BadParameter(f"{path}: cannot be read ({exc.strerror})", param_hint="--system") from None
    except UnicodeDecodeError as exc:
        raise click.BadParameter(
            f"{path}: not UTF-8 text (byte {exc.start})", param_hint="--system"
        ) from None


def turn_settings(
    *,
    system: str | None,
    model: str | None,
    base_url: str | None,
    max_requests: int,
    dry_tools: bool,
    dump_requests: Path | None,
    send_key: bool = False,
    timeout: float | None = TIMEOUT,
    max_context_tokens: int | None = None,
    cache_breakpoints: int | None = None,
) -> TurnOptions:
    """The CLI's options as the turn's, by name only: ``dry_tools`` and ``send_key`` (two flags) or
    ``--model`` and ``--base-url`` (two optional strings) must never be swapped by position."""
    from toolreplay._budget import ContextBudget
    from toolreplay._loop import TurnOptions

    return TurnOptions(
        system=_system_text(system),
        model=model,
        base_url=base_url,
        max_requests=max_requests,
        dry_tools=dry_tools,
        dump_requests=dump_requests,
        send_key=send_key,
        timeout=timeout,
        context=ContextBudget(max_tokens=max_context_tokens),
        cache_breakpoints=cache_breakpoints,
    )


def short(value: Any, limit: int = 160) -> str:
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
        from toolreplay._loop import CallFinished, CallStarted, ContextTrimmed, Flagged, Retrying, TextDelta

        if isinstance(event, TextDelta):
            if self.stream_text:
                click.echo(event.text, nl=False)
                self.at_line_start = event.text.endswith("\n")
        elif isinstance(event, CallStarted):
            self._notice(f"  ⚙ {event.name} {short(event.input)}", fg="cyan")
        elif isinstance(event, CallFinished):
            # The coop tool's errors already start with "error:"; don't print "error error: ...".
            said = event.answer.lstrip().lower().startswith("error")
            label = ("->" if said else "-> error:") if event.is_error else ("dry run" if event.dry else "->")
            self._notice(f"    {label} {short(event.answer)}", fg="red" if event.is_error else "green")
        elif isinstance(event, ContextTrimmed):
            for line in event.warnings:
                self._notice(f"  ({line})", fg="yellow")
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


def open_session(db: str | None, tools: tuple[str, ...]) -> tuple[Store, ToolRegistry]:
    from toolreplay._store import open_store
    from toolreplay._tools import build_registry

    store = open_store(db)
    try:
        return store, build_registry(tools, store)
    except BaseException:
        store.close()
        raise


def run_one(
    store: Store,
    registry: ToolRegistry,
    *,
    conversation: str,
    text: str,
    vessel: str,
    options: TurnOptions,
    printer: Callable[[TurnEvent], None],
    parts: Sequence[Part] = (),
) -> TurnResult:
    """One turn of ``turn`` or ``chat``, given by name: the conversation, the text and the vessel are
    three strings a positional call could swap unnoticed."""
    from toolreplay._loop import run_turn

    return run_turn(
        conversation=conversation,
        user_text=text,
        vessel=vessel,
        tools=registry,
        store=store,
        options=options,
        on_event=printer,
        parts=parts,
    )


# -- choosing the vessel, the conversation and the prompt --------------------------------------------

vessel_option = click.option(
    "-v",
    "--vessel",
    metavar="NAME",
    default=None,
    help="The vessel (provider) to ask (default: the conversation's last, else `toolreplay default`).",
)


def conversation_options(fn: F) -> F:
    """``--cid/--conversation ID`` and ``-c/--continue`` (the most recent conversation)."""
    for decorator in reversed(
        (
            click.option(
                "--cid",
                "--conversation",
                "conversation",
                default=None,
                metavar="ID",
                callback=not_blank,
                help="The conversation (created when new; default: a new one).",
            ),
            click.option(
                "-c",
                "--continue",
                "continue_",
                is_flag=True,
                help="Continue the most recent conversation.",
            ),
        )
    ):
        fn = decorator(fn)
    return fn


def latest_conversation(store: Store) -> str | None:
    """The conversation with the latest message (by its time; among equals, the last listed)."""
    rows = store.list_conversations()
    if not rows:
        return None
    return max(enumerate(rows), key=lambda ir: (ir[1].updated_at or "", ir[0]))[1].id


def new_conversation_id(store: Store, prefix: str) -> str:
    """``PREFIX-YYYYMMDD-HHMMSS``, with ``-2``, ``-3``... when that one exists already."""
    base = f"{prefix}-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    found, n = base, 1
    while store.exists(found):
        n += 1
        found = f"{base}-{n}"
    return found


def pick_conversation(store: Store, conversation: str | None, continue_: bool) -> str | None:
    """The conversation ``--cid`` names, or the most recent one with ``-c``; None: start a new one."""
    if conversation and continue_:
        raise click.UsageError("-c/--continue and --cid name the conversation twice: give one")
    if continue_:
        found = latest_conversation(store)
        if found is None:
            raise click.UsageError(f"-c/--continue: no conversation stored in {store.url} yet")
        return found
    return conversation


def pick_vessel(store: Store, vessel: str | None, conversation: str | None) -> str:
    """``--vessel``; else the vessel of the conversation's last reply; else the configured default."""
    if vessel:
        return vessel
    if conversation and store.exists(conversation):
        count = stored_count(store, conversation)
        for start in range(count, 0, -50):  # the newest messages first, a page at a time
            for m in reversed(store.load_range(conversation, max(0, start - 50), start).messages):
                if m.role == "assistant" and m.vessel:
                    return m.vessel
    from toolreplay._config import pick_vessel as configured

    return configured(None)


def prompt_text(text: str | None, *, attached: bool = False) -> str:
    """TEXT as given; from stdin when it is ``-``, or when it is left out and stdin is not a terminal.
    ``attached``: the turn carries files, so it may have no words (left out, or an empty stdin)."""
    if text == "-" or (text is None and not sys.stdin.isatty()):
        read = sys.stdin.read()
        if not read.strip() and not (attached and text is None):
            raise click.UsageError("the prompt read from stdin is empty")
        return read.rstrip("\n")
    if text is None:
        if attached:
            return ""
        raise click.UsageError("give the prompt as TEXT (or - to read it from stdin)")
    if not text.strip():
        raise click.BadParameter("must not be empty", param_hint="'TEXT'")
    return text

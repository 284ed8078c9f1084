"""``toolreplay turn``: one non-interactive turn; prints the reply (``--json``: the stored records)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolreplay._cli._attach import attach_option
from toolreplay._cli._common import db_option, friendly
from toolreplay._cli._sending import (
    EventPrinter,
    conversation_options,
    failed_turn,
    new_conversation_id,
    open_session,
    pick_conversation,
    pick_vessel,
    prompt_text,
    run_one,
    sending_options,
    stored_count,
    turn_options,
    turn_settings,
    vessel_option,
)
from toolreplay._errors import ToolreplayError

if TYPE_CHECKING:
    from toolreplay._loop import TurnResult
    from toolreplay._steps import Part
    from toolreplay._store import Store


def _print_json(store: Store, conversation: str, result: TurnResult) -> None:
    from toolreplay._history import message_to_dict

    count = store.counts(conversation)[0]
    # the turn's two messages are among the newest (other writers may have appended meanwhile)
    stored = {m.id: m for m in store.load_range(conversation, max(0, count - 50), count).messages}
    if result.user_message.id not in stored:
        stored = {m.id: m for m in store.load(conversation).messages}
    record = {
        "id": conversation,
        "messages": [
            message_to_dict(stored[result.user_message.id]),
            message_to_dict(stored[result.reply.id]),
        ],
    }
    click.echo(json.dumps(record, ensure_ascii=False, indent=2))


@click.command()
@click.argument("text", required=False)
@vessel_option
@conversation_options
@attach_option
@click.option("--json", "as_json", is_flag=True, help="Print the stored user message and reply as JSON.")
@turn_options
@sending_options
@db_option
@friendly
def turn(
    text: str | None,
    vessel: str | None,
    conversation: str | None,
    continue_: bool,
    attachments: tuple[Part, ...],
    as_json: bool,
    tools: tuple[str, ...],
    dry_tools: bool,
    system: str | None,
    max_requests: int,
    max_context_tokens: int | None,
    cache_breakpoints: int | None,
    base_url: str | None,
    send_key: bool,
    timeout: float,
    model: str | None,
    dump_requests: Path | None,
    db: str | None,
) -> None:
    """Run one turn of a conversation on a vessel and print the reply.

    TEXT is the user's message (- or left out with stdin piped: read from stdin); with --attach it may be
    left out, the files then the whole message. It, its files and the reply are stored; calls are run and
    recorded as they happen. A turn that fails before the provider answered anything (no connection, a
    refused key, a redirect, a 4xx, a 5xx after its retries) leaves nothing stored; one that fails later
    leaves its reply marked interrupted, with the words already shown (the error says which).

    \b
    Examples:
      toolreplay turn "Close #1." -v kimi --cid chief -T coop
      toolreplay turn -c "And #2?"              # the most recent conversation, its last vessel
      git diff | toolreplay turn -v gemini -s "Review this diff."
      toolreplay turn "What does this receipt total?" --attach receipt.pdf -v anthropic
    """
    text = prompt_text(text, attached=bool(attachments))
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
    store, registry = open_session(db, tools)
    printer = EventPrinter(stream_text=not as_json)
    try:
        cid = pick_conversation(store, conversation, continue_) or new_conversation_id(store, "turn")
        name = pick_vessel(store, vessel, cid)
        before = stored_count(store, cid)
        try:
            result = run_one(store, registry, conversation=cid, text=text, vessel=name, options=settings,
                             printer=printer, parts=attachments)  # fmt: skip
        except ToolreplayError as exc:  # the finally below ends the streamed line before click prints this
            raise click.ClickException(f"{exc} ({failed_turn(store, cid, before)})") from None
        if as_json:  # nothing was streamed (--json), so there is no line to end first
            _print_json(store, cid, result)
    finally:
        printer.end()
        store.close()

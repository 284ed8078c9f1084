"""``toolreplay import FILE [--from FORMAT] [--conversation ID]``: bring a history in and store it."""

from __future__ import annotations

from pathlib import Path

import click

from toolreplay._cli._common import db_option, friendly
from toolreplay._importers import FORMAT_NAMES, ImportBatch, StoredConversation, describe, read_file

#: Warnings shown without ``--all-warnings``.
SHOWN_WARNINGS = 20


def _formats_help() -> str:
    lines = [f"{name}: {text}." for name, text in describe().items()]
    return "FORMAT is auto (the default: detect it and say which) or one of:\n\n" + "\n\n".join(lines)


def _n(count: int, word: str) -> str:
    """``1 call``, ``2 calls``."""
    return f"{count} {word}{'s' if count != 1 else ''}"


def _not_blank(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse an empty conversation id before the file is read (the store would refuse it after the
    summary was printed, and no command can name such a conversation)."""
    if value is not None and not value.strip():
        raise click.BadParameter("must not be empty", ctx=ctx, param=param)
    return value


def _summary(batch: ImportBatch) -> str:
    how = "detected" if batch.detected else "as asked"
    convs = _n(len(batch.conversations), "conversation")
    return f"{batch.source}: {batch.format} ({how}), {convs}, {_n(batch.calls, 'call')}"


def _line(batch: ImportBatch, done: StoredConversation | None, index: int) -> str:
    h = batch.conversations[index]
    calls = sum(len(m.tool_uses) for m in h.messages)
    head = f"  {h.id}: {_n(len(h.messages), 'message')}, {_n(calls, 'call')}"
    if done is None:
        return head
    if done.result is None:
        return f"{head}: refused, nothing of it written"
    r = done.result
    if r.added == 0:
        return f"{head}: already stored, unchanged"
    return f"{head}: {r.added} added" + (f", {r.unchanged} unchanged" if r.unchanged else "")


def _issuers(batch: ImportBatch, issuer_url: str | None) -> None:
    """Say whose reasoning and signatures the replies carry (design 17), and where that host came from."""
    for i in batch.issuers:
        model = f" {i.model}" if i.model else " (no model named)"
        where = "--issuer-url" if issuer_url else "the wire's public host; --issuer-url names another"
        click.echo(f"  reasoning and signatures recorded as made by {i.wire} at {i.host}{model} ({where})")


def _warnings(batch: ImportBatch, every: bool) -> None:
    warns = batch.warnings
    if not warns:
        return
    plural = "s" if len(warns) != 1 else ""
    click.echo(f"{len(warns)} warning{plural} (what could not be kept as it was):", err=True)
    shown = warns if every else warns[:SHOWN_WARNINGS]
    for w in shown:
        click.echo(f"  warning: {w}", err=True)
    if len(shown) < len(warns):
        click.echo(f"  ... {len(warns) - len(shown)} more (--all-warnings shows every one)", err=True)


@click.command("import", epilog=_formats_help())
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--from", "fmt", type=click.Choice(FORMAT_NAMES), default="auto", show_default=True,
    help="The file's format (see below).",
)  # fmt: skip
@click.option(
    "--conversation", metavar="ID", default=None, callback=_not_blank,
    help="Store a one-conversation file under this id; from a file of many (llm logs, JSON Lines of "
    "conversations, benchmark results), import only this one.",
)  # fmt: skip
@click.option(
    "--issuer-url", metavar="URL", default=None,
    help="The base URL the recorded requests went to: their reasoning and signatures are recorded as made "
    "there and go back only to a vessel at that host (default: the wire's public endpoint).",
)  # fmt: skip
@click.option("--dry-run", is_flag=True, help="Read the file and report; store nothing.")
@click.option("--all-warnings", is_flag=True, help=f"Show every warning, not the first {SHOWN_WARNINGS}.")
@db_option
@friendly
def import_cmd(
    file: Path,
    fmt: str,
    conversation: str | None,
    issuer_url: str | None,
    dry_run: bool,
    all_warnings: bool,
    db: str | None,
) -> None:
    """Store a history file (any known format) in the store, one transaction per conversation.

    Importing the same file again changes nothing; a message id already stored with other content is
    refused with the fields that differ, and nothing of that conversation is written. A JSON Lines file
    with a broken line imports its complete lines and names the broken one.
    """
    batch = read_file(file, fmt, conversation=conversation, issuer_url=issuer_url)
    click.echo(_summary(batch))
    if batch.left_out:
        left = _n(batch.left_out, "call")
        click.echo(f"  {left} by a simulated user kept aside, not replayed as the agent's")
    _issuers(batch, issuer_url)
    if dry_run:
        for i in range(len(batch.conversations)):
            click.echo(_line(batch, None, i))
        _warnings(batch, all_warnings)
        click.echo("dry run: nothing stored")
        return
    from toolreplay._importers import store_batch
    from toolreplay._store import open_store

    store = open_store(db)
    try:
        url = store.url
        done = store_batch(store, batch)
    finally:
        store.close()
    for i, d in enumerate(done):
        click.echo(_line(batch, d, i))
    _warnings(batch, all_warnings)
    refused = [d for d in done if d.error is not None]
    added = sum(d.result.added for d in done if d.result is not None)
    kept = f"{len(done) - len(refused)} of {_n(len(done), 'conversation')}"
    click.echo(f"stored in {url}: {_n(added, 'message')} added, {kept}")
    if refused:
        for d in refused:
            click.echo(f"Error: {d.error}", err=True)
        raise SystemExit(1)

"""``toolreplay audit`` and ``toolreplay cache-diff``: read dumped requests back."""

from __future__ import annotations

import click

from toolreplay._cli._common import db_option, friendly, load_source, prompt_template_options
from toolreplay.wires import wire_names

#: The registered wires (names only: no wire package is imported for --help).
WIRE_CHOICE = click.Choice(list(wire_names()))


@click.command("cache-diff")
@click.argument("earlier", type=click.Path(dir_okay=False))
@click.argument("later", type=click.Path(dir_okay=False))
@click.option("--raw", is_flag=True, help="Compare the files' own bytes (default: the bodies as sent).")
@click.option("--wire", type=WIRE_CHOICE, default=None, help="The wire, when the shape cannot tell.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--check", is_flag=True, help="Exit with status 1 unless the earlier list is a prefix.")
@friendly
def cache_diff(earlier: str, later: str, raw: bool, wire: str | None, as_json: bool, check: bool) -> None:
    """Compare two consecutive requests (TURN_N.json TURN_N_PLUS_1.json): what a prompt cache reuses.

    The headline is the element-wise reuse of the earlier request's message list (100% when it is a
    prefix of the later one); the shared byte prefix, where the bodies diverge, and changed fields follow.
    """
    from toolreplay import _jsonenc as jsonenc
    from toolreplay._audit.cache_diff import cache_diff_files, format_cache_diff

    d = cache_diff_files(earlier, later, raw=raw, wire=wire)
    if as_json:
        click.echo(jsonenc.dumps(d.as_json()))
    else:
        click.echo(format_cache_diff(d))
    if check and not d.is_prefix:
        raise SystemExit(1)


@click.command("audit")
@click.argument("request", type=click.Path(dir_okay=False))
@click.option(
    "--history",
    "history_source",
    metavar="SOURCE",
    default=None,
    help="A history file or stored conversation id: say for each of its calls how the request carries it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the audit as JSON.")
@click.option("--wire", type=WIRE_CHOICE, default=None, help="The wire, when the shape cannot tell.")
@prompt_template_options("template", "do the calls survive into the prompt?")
@db_option
@friendly
def audit(
    request: str,
    history_source: str | None,
    as_json: bool,
    wire: str | None,
    template: str | None,
    server: str,
    db: str | None,
) -> None:
    """Say how a dumped REQUEST carries each earlier tool call: as a call, as text, or not at all.

    REQUEST is a request body (any wire), a --dump-requests file, or another tool's debug dump.
    """
    from toolreplay import _jsonenc as jsonenc
    from toolreplay._audit.body import load_request
    from toolreplay._audit.report import audit_request, format_audit

    body = load_request(request, wire=wire)
    history = load_source(history_source, db) if history_source else None
    report = audit_request(body, history, template=template, server=server)
    click.echo(jsonenc.dumps(report.as_json()) if as_json else format_audit(report))

"""``toolreplay check``: send a stored history with replayed calls to each vessel, report whether the
provider accepted it (``--offline``: the bodies are validated against the wire rules and the shipped
request schemas instead, with no network)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from toolreplay._cli._common import db_option, friendly
from toolreplay._cli._sending import sending_options


def _check_vessels(names: tuple[str, ...], offline: bool, base_url: str | None) -> list[Any]:
    from toolreplay._vessels import get_vessel, vessels

    wanted = [n.strip() for entry in names for n in entry.split(",") if n.strip()]
    if wanted:
        return [get_vessel(n) for n in dict.fromkeys(wanted)]
    if offline:
        return vessels()
    from toolreplay._config import key_for

    return [v for v in vessels() if v.key_env and key_for(v.key_env)]


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
    from toolreplay.wires import get_wire

    if get_wire(vessel.wire).http is None:
        return (
            not named,
            f"{skipped}: the {vessel.name} vessel takes the history as text (check it with --offline)",
        )
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
    "-v",
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
@sending_options
@db_option
@friendly
def check(
    vessel_names: tuple[str, ...],
    history_source: str | None,
    offline: bool,
    base_url: str | None,
    send_key: bool,
    timeout: float,
    model: str | None,
    dump_requests: Path | None,
    db: str | None,
) -> None:
    """Send a stored history with replayed calls to each vessel; report accepted or the provider's error."""
    import asyncio

    from toolreplay._cli._common import load_source
    from toolreplay._history import load_history
    from toolreplay._limits import check_timeout
    from toolreplay._render import render

    check_timeout(timeout)  # the Transport's own check, made before a missing key is said instead
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
        async with Transport(dump=dump_requests, deadline=timeout) as transport:
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

"""``toolreplay proxy``: serve the provider endpoints the coding agents call, pass each request to its
own provider, record and audit every exchange beside it (see :mod:`toolreplay._proxy`)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import click

from toolreplay._cli._common import db_option, friendly
from toolreplay._limits import PROXY_MAX_BODY


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _size(value: str) -> int:
    text = value.strip().upper()
    for suffix, factor in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)):
        if text.endswith(suffix):
            number = text[: -len(suffix)].strip()
            if number.isdigit():  # 0 is ProxyConfig's to refuse (_limits.check_max_body)
                return int(number) * factor
    if text.isdigit():
        return int(text)
    raise click.BadParameter(f"{value!r}: give a size such as 32MB, 512KB or 1000000")


def _banner(url: str, upstreams: dict[str, str], record: str, token: bool, routes: list[str]) -> list[str]:
    from toolreplay._proxy.agents import start_lines

    lines = [f"toolreplay proxy on {url}", "upstreams:"]
    lines += [f"  {wire:<17} {base}" for wire, base in upstreams.items()]
    if routes:
        lines.append("routes (translated; the first that matches wins):")
        lines += [f"  {r}" for r in routes]
    lines.append("point your agent at it:")
    lines += start_lines(url, set(upstreams))
    lines.append(f"recording: {record}")
    if token:
        lines.append("clients must present the token: header x-toolreplay-token, or the token as the API key")
        lines.append("  (the upstream key then comes from this process's environment)")
    lines.append("Ctrl-C stops it.")
    return lines


@click.command()
@click.option("-p", "--port", type=click.IntRange(0, 65535), default=8788, show_default=True, help="Port.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--upstream",
    "upstreams",
    multiple=True,
    metavar="WIRE=URL",
    help="Send WIRE's requests to URL (the base URL as a vessel takes it) instead of the provider's host.",
)
@click.option(
    "--route",
    "routes",
    multiple=True,
    metavar="[WIRE:]GLOB=VESSEL[:MODEL]",
    help="Translate requests for models matching GLOB to VESSEL (its key, its model unless named).",
)
@click.option(
    "--routes",
    "routes_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A TOML file of [[route]] tables (match, wire, vessel, model), tried after --route.",
)
@click.option("--repair", is_flag=True, help="Put back what the provider needs and the agent dropped.")
@click.option(
    "--log", "log", type=click.Path(dir_okay=False, path_type=Path), help="One JSON line per request."
)
@click.option("--no-record", is_flag=True, help="Pass through only: store nothing.")
@click.option(
    "--max-body",
    default=f"{PROXY_MAX_BODY >> 20}MB",
    show_default=True,
    help="Largest request body, also decompressed.",
)
@click.option("--token", default=None, help="What clients must present (required beyond loopback).")
@click.option("-q", "--quiet", is_flag=True, help="No console line per audit problem.")
@db_option
@friendly
def proxy(
    port: int,
    host: str,
    upstreams: tuple[str, ...],
    routes: tuple[str, ...],
    routes_file: Path | None,
    repair: bool,
    log: Path | None,
    no_record: bool,
    max_body: str,
    token: str | None,
    quiet: bool,
    db: str | None,
) -> None:
    """Stand between a coding agent and its provider: every request passes to its own provider byte for
    byte, and each exchange is recorded into the store and audited beside it (never in front of it).

    \b
    Example:
      toolreplay proxy
      ANTHROPIC_BASE_URL=http://127.0.0.1:8788 claude
      toolreplay history list
      toolreplay proxy --route 'claude-*=kimi:kimi-k2-thinking'   # Claude Code on Kimi
    """
    try:
        from toolreplay._proxy.config import ProxyConfig, parse_upstreams
        from toolreplay._proxy.model_routes import check_keys, routes_from
        from toolreplay._proxy.serve import bind, serve_forever
    except ImportError as exc:
        raise click.ClickException(
            f"toolreplay proxy needs its extra: pip install 'toolreplay[proxy]' ({exc})"
        ) from None
    from toolreplay._store import resolve_db

    if not _loopback(host) and not token:
        raise click.UsageError(
            f"--host {host} is not loopback: give --token TOKEN, which every client must present"
        )
    routed = routes_from(routes, routes_file)
    check_keys(routed)
    config = ProxyConfig(
        upstreams=parse_upstreams(upstreams), record=not no_record, db=db, log=log,
        max_body=_size(max_body), token=token, repair=repair, console=not quiet, routes=routed,
    )  # fmt: skip
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise click.ClickException(f"{host}:{port}: cannot listen ({exc.strerror})") from None
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}"
    record = "off (--no-record)" if no_record else f"into {resolve_db(db)}"

    def ready() -> None:
        labels = [r.label() for r in routed]
        for line in _banner(url, dict(config.upstreams), record, token is not None, labels):
            click.echo(line)
        if repair:
            click.echo("--repair: what the provider needs and the agent dropped is put back from the store")
        if routed and no_record:
            click.echo(
                "--no-record: routes translate without the store, so what the agent's wire cannot carry "
                "(a model's reasoning, its signatures) is not put back on the next request"
            )

    try:
        serve_forever(config, sock, lambda line: click.echo(line, err=True), ready)
    except KeyboardInterrupt:
        click.echo("stopped.", err=True)

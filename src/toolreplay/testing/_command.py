"""``toolreplay double`` (also ``python -m toolreplay.testing``): every wire's provider double on one port.

Try every command that talks to a model with no key and no network: start the double in a second
terminal and pass its base URL with ``--base-url``. It answers from a script file, then with the echo
(see :mod:`toolreplay.testing.playbook`), or with the lab's scripted stand-in model (``--stand-in``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from toolreplay.testing import ProviderDouble, RecordedRequest


def _paths(double: ProviderDouble) -> list[tuple[str, str]]:
    """(vessel, base URL with the vessel's own rules) for every vessel that speaks HTTP."""
    from toolreplay._vessels import vessels
    from toolreplay.wires import get_wire

    return [(v.name, double.base_url_for(v)) for v in vessels() if get_wire(v.wire).double is not None]


def _banner(double: ProviderDouble, answers: str) -> None:
    click.echo(f"toolreplay double: every wire's provider double on {double.url}")
    click.echo(f"  --base-url {double.url}    any vessel (the request's path tells the wire)")
    click.echo("  or a vessel's own path, to get its own rules (id limits, Codex's demands):")
    rows = _paths(double)
    width = max(len(name) for name, _ in rows)
    for name, url in rows:
        click.echo(f"    {name:<{width}}  {url}")
    click.echo(f"answers: {answers}")
    click.echo("Ctrl-C stops it.", nl=True)


def _describe(req: RecordedRequest) -> str:
    who = req.vessel or req.wire or "?"
    line = (
        f"  #{req.index + 1} {req.method} {req.path.partition('?')[0]}  {who}  -> {req.status or 'no answer'}"
    )
    if req.rejected:
        line += f" (refused: {req.rejected})"
    return line


class _Log:
    """Prints each request as its answer goes out (called on the double's threads, one line at a time):
    the double keeps only the newest requests, so a log read from them would miss a burst."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __call__(self, req: RecordedRequest) -> None:
        with self._lock:
            click.echo(_describe(req), err=True)


@click.command()
@click.option(
    "-p",
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port on 127.0.0.1 (default: a free one, printed).",
)
@click.option(
    "--script",
    "script",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Answer from this JSON or TOML file, in order (text, calls, errors, faults), then echo.",
)
@click.option(
    "--stand-in",
    is_flag=True,
    help="Answer like the lab's scripted stand-in model: it calls coop close when earlier calls travel as "
    "calls, otherwise only sometimes (seeded by the request: the same run gives the same counts).",
)
@click.option("-q", "--quiet", is_flag=True, help="Do not print each request as it is answered.")
@click.option(
    "--max-body",
    type=click.IntRange(1, 2048),
    default=32,
    show_default=True,
    metavar="MIB",
    help="Refuse a request body over this many MiB (413, in the wire's error shape).",
)
@click.option(
    "--keep",
    type=click.IntRange(1),
    default=100,
    show_default=True,
    metavar="N",
    help="Requests kept in memory (the newest; older ones and their bodies are let go).",
)
def double(port: int, script: Path | None, stand_in: bool, quiet: bool, max_body: int, keep: int) -> None:
    """Serve every wire's provider double on 127.0.0.1, for trying commands with no key or network.

    Without --script it echoes the user's message, and calls a tool when asked: a message containing
    `call coop {"action": "list"}` (a declared tool, then a JSON input) gets that call.

    \b
    Example (a second terminal):
      toolreplay double --port 8765
      toolreplay turn "call coop {\\"action\\": \\"list\\"}" -v kimi -T coop --base-url http://127.0.0.1:8765
    """
    from toolreplay.testing import Limits, ProviderDouble
    from toolreplay.testing.playbook import Playbook, ScriptError, load_script

    if script is not None and stand_in:
        raise click.UsageError("--script and --stand-in are alternatives: give one")
    try:
        items = load_script(script) if script is not None else []
    except ScriptError as exc:
        raise click.ClickException(str(exc)) from None
    if stand_in:
        from toolreplay.testing.stand_in import ScriptedAgent

        answers, then = "the lab's scripted stand-in model (not a real model)", ScriptedAgent()
        playbook = Playbook.of([], then)
    else:
        answers = f"{script} ({len(items)} answers), then the echo" if script else "the echo"
        playbook = Playbook.of(items)
    limits = Limits(max_body=max_body * 1024 * 1024)
    log = None if quiet else _Log()
    server = ProviderDouble(responder=playbook, port=port, limits=limits, keep_requests=keep, on_answer=log)
    try:
        server.start()
    except OSError as exc:
        raise click.ClickException(f"127.0.0.1:{port}: cannot listen ({exc.strerror})") from None
    try:
        _banner(server, answers)
        while True:  # the double answers on its own threads until Ctrl-C
            time.sleep(3600)
    except KeyboardInterrupt:
        click.echo("stopped.", err=True)
    finally:
        server.close()

"""``toolreplay render``: the exact request body of the next turn; ``toolreplay vessels``: the vessel table.

``render`` writes the bytes :func:`toolreplay.encode` gives (what the transport sends), with no newline
added when stdout is not a terminal (nor after a ``--prompt-template`` prompt), so
``toolreplay render h.json --vessel openai | curl --data-binary @-`` sends exactly them. ``--pretty``
indents for reading. Warnings (a tool name mapped for the wire, a stored signature not replayed, a history
warning) go to stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from toolreplay._cli._common import db_option, friendly, load_source, prompt_template_options
from toolreplay._cli._sending import CACHE_BREAKPOINTS_OPTION, MAX_CONTEXT_OPTION
from toolreplay._errors import ConfigError
from toolreplay._replay import MODES, Mode

if TYPE_CHECKING:
    from toolreplay._history import History, ToolSpec
    from toolreplay._vessels import Vessel


def read_system(value: str | None) -> str | None:
    """``--system TEXT`` as given, or ``@FILE`` read from the file."""
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--system {value}: cannot read the file ({exc.strerror or exc})") from None


def _tool_from(raw: Any, where: str) -> ToolSpec:
    from toolreplay._history import ToolSpec

    if isinstance(raw, dict) and isinstance(raw.get("function"), dict):  # OpenAI Chat / Ollama shape
        raw = raw["function"]
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ConfigError(f"{where}: a tool definition needs a name")
    params = next(
        (raw[k] for k in ("parameters", "input_schema", "inputSchema", "parametersJsonSchema") if k in raw),
        {"type": "object", "properties": {}},
    )
    if not isinstance(params, dict):
        raise ConfigError(f"{where}: the input schema must be an object")
    return ToolSpec(raw["name"], str(raw.get("description") or ""), params)


#: ``--tools`` of render and lab: tool definitions only (nothing runs), from any of three sources.
TOOLS_METAVAR = "coop|FILE.json|MODULE:ATTR"
TOOLS_HELP = (
    "Tool definitions to declare (nothing is run): coop, a FILE.json of definitions (neutral, OpenAI, "
    "Anthropic, Gemini or MCP shape), or MODULE:ATTR naming tools as turn --tools does; repeat or "
    "comma-separate."
)


def read_tools(value: str | Sequence[str] | None) -> list[ToolSpec] | None:
    """``--tools`` entries as definitions: ``coop`` (the coop board's), ``FILE.json`` (a list of
    definitions in the neutral, OpenAI, Anthropic, Gemini or MCP shape) or ``MODULE:ATTR`` (the tools
    ``turn --tools`` would run, their definitions only). Repeated or comma-separated. None (or no
    entry): the history's own definitions."""
    if value is None:
        return None
    entries = [value] if isinstance(value, str) else list(value)
    if not entries:
        return None
    out: list[ToolSpec] = []
    for entry in entries:
        parts = [entry] if Path(entry).is_file() else [p.strip() for p in entry.split(",") if p.strip()]
        for part in parts:
            out.extend(_tools_of(part))
    return out


def _tools_of(value: str) -> list[ToolSpec]:
    if value == "coop":
        from toolreplay._tools.coop import COOP_SPEC

        return [COOP_SPEC]
    path = Path(value)
    if ":" in value and not path.exists():  # module:attribute, as turn --tools takes it
        from toolreplay._tools import load_tool_spec

        return [t.spec for t in load_tool_spec(value)]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--tools {value}: cannot read the file ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{value}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list):
        raise ConfigError(f'{value}: must hold a list of tool definitions (or {{"tools": [...]}})')
    return [_tool_from(t, f"{value}: tools[{i}]") for i, t in enumerate(data)]


def endpoint_text(v: Vessel, model: str | None = None) -> str:
    """Where a vessel's request goes, for people: the URL, or the CLI for claude-prompt."""
    from toolreplay._transport.client import endpoint
    from toolreplay.wires import get_wire

    wire = get_wire(v.wire)
    if wire.http is None:
        return wire.invocation.format(base_url=v.base_url)

    try:
        return endpoint(v, v.base_url, model or v.model, stream=v.has("stream_only"))
    except ConfigError:
        return v.base_url


def write_body(body: dict[str, Any], pretty: bool) -> None:
    from toolreplay._jsonenc import encode

    sys.stdout.flush()
    out = sys.stdout.buffer
    if pretty:
        out.write(json.dumps(body, ensure_ascii=False, indent=2).encode("utf-8") + b"\n")
        out.flush()
        return
    out.write(encode(body))
    if sys.stdout.isatty():
        out.write(b"\n")
    out.flush()


def _render_as_sent(h: History, upto: str | None, pretty: bool) -> None:
    """``render --as-sent``: the history's last recorded request on its own wire (design 38)."""
    from toolreplay._render import render

    warnings: list[str] = []
    body = render(h, upto=upto, warnings=warnings, as_sent=True)
    for w in warnings:
        click.echo(f"warning: {w}", err=True)
    write_body(body, pretty)


def write_text(text: str) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


@click.command("render")
@click.argument("source", metavar="SOURCE")
@click.option(
    "-v",
    "--vessel",
    "vessel_name",
    default=None,
    metavar="NAME",
    help="The vessel (see toolreplay vessels; default: `toolreplay default`).",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="native",
    show_default=True,
    help="native: calls as calls; plain: words only; prose: calls as text in the next user message.",
)
@click.option("-m", "--model", default=None, metavar="NAME", help="Model (default: the vessel's).")
@click.option(
    "-s", "--system", default=None, metavar="TEXT|@FILE", help="System prompt, or @FILE to read it."
)
@click.option(
    "-T",
    "--tools",
    "tools_opt",
    multiple=True,
    metavar=TOOLS_METAVAR,
    help=TOOLS_HELP + " Default: the history's own; tools the history used are declared either way.",
)
@click.option("--upto", metavar="MESSAGE_ID", default=None, help="Cut the history after this message.")
@click.option("--pretty", is_flag=True, help="Indent for reading (not the bytes sent).")
@click.option(
    "--as-sent",
    is_flag=True,
    help="The last imported request as its agent sent it: its own wire, settings, ids and layout, no "
    "bounds (vessel, mode, model, system and tools do not apply).",
)
@prompt_template_options(
    "prompt_template", "print the prompt it makes of the (Chat) body instead of the body."
)
@MAX_CONTEXT_OPTION
@CACHE_BREAKPOINTS_OPTION
@db_option
@friendly
def render_cmd(
    source: str,
    vessel_name: str | None,
    mode: str,
    model: str | None,
    system: str | None,
    tools_opt: tuple[str, ...],
    upto: str | None,
    pretty: bool,
    as_sent: bool,
    prompt_template: str | None,
    server: str,
    max_context_tokens: int | None,
    cache_breakpoints: int | None,
    db: str | None,
) -> None:
    """Print the exact request body of the next turn of SOURCE on a vessel.

    SOURCE is a history file (JSON or JSON Lines) or the id of a stored conversation. The bytes are
    those sent: compact JSON, UTF-8, the same on every run. Gemini's model goes in the URL, so it is not
    in the body; claude-prompt prints the JSON the Claude Code CLI driver takes.
    """
    from toolreplay._budget import ContextBudget
    from toolreplay._config import pick_vessel
    from toolreplay._render import render
    from toolreplay._vessels import get_vessel

    if as_sent:
        _render_as_sent(load_source(source, db), upto, pretty)
        return
    vessel = get_vessel(pick_vessel(vessel_name))
    h = load_source(source, db)
    warnings: list[str] = []
    budget = ContextBudget(max_context_tokens)
    body = render(h, vessel, mode=cast(Mode, mode), system=read_system(system), tools=read_tools(tools_opt),
                  model=model, upto=upto, warnings=warnings, context=budget,
                  cache_breakpoints=cache_breakpoints)  # fmt: skip
    for w in warnings:
        click.echo(f"warning: {w}", err=True)
    if prompt_template is not None:
        from toolreplay._audit.templates import render_prompt
        from toolreplay.wires import get_wire

        if not get_wire(vessel.wire).chat_template:
            raise ConfigError(
                f"--prompt-template renders Chat bodies; vessel {vessel.name} speaks {vessel.wire}"
            )
        prompt = render_prompt(body, prompt_template, server)
        # the prompt exactly as the server renders it: no newline added unless a person reads it
        write_text(prompt + ("\n" if sys.stdout.isatty() else ""))
        return
    write_body(body, pretty)


@click.command("vessels")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per vessel, one per line.")
@friendly
def vessels_cmd(as_json: bool) -> None:
    """List the vessels: name, wire, endpoint, key variable, default model.

    Add or override vessels in $TOOLREPLAY_VESSELS or ~/.config/toolreplay/vessels.toml.
    """
    from toolreplay._vessels import config_path, vessels

    rows = vessels()
    if as_json:
        for v in rows:
            item = {
                "name": v.name,
                "wire": v.wire,
                "endpoint": endpoint_text(v),
                "key_env": v.key_env,
                "model": v.model,
                "id_policy": v.id_policy,
                "max_id_len": v.max_id_len,
                "flags": sorted(v.flags),
                "context_tokens": v.context_tokens,
            }
            click.echo(json.dumps(item, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title="toolreplay vessels", title_justify="left")
    table.add_column("name", no_wrap=True)
    table.add_column("wire", no_wrap=True)
    table.add_column("model / key variable", overflow="fold")
    table.add_column("endpoint / ids, flags", overflow="fold")
    for v in rows:
        quirks = [f"ids<={v.max_id_len}"] if v.max_id_len else []
        quirks += ["kimi ids"] if v.id_policy == "kimi" else []
        quirks += sorted(v.flags)
        model = Text(v.model)
        model.append(f"\n{v.key_env or '(no key)'}", style="dim")
        where = Text(endpoint_text(v))
        if quirks:
            where.append("\n" + " ".join(quirks), style="dim")
        table.add_row(v.name, v.wire, model, where)
    console = Console()
    console.print(table)
    console.print(f"User vessels: {config_path()}", highlight=False, style="dim")

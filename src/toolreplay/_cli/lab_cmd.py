"""``toolreplay lab``: freeze a history at a user message, run the next turn many times per replay mode."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from toolreplay._cli._common import SEND_KEY_HELP, db_option, friendly, load_source
from toolreplay._cli.render_cmd import TOOLS_HELP, TOOLS_METAVAR
from toolreplay._limits import LAB_CONCURRENCY, LAB_MAX_REQUESTS, LAB_MODES, LAB_TRIALS, TIMEOUT

if TYPE_CHECKING:
    from toolreplay._lab.plan import LabConfig
    from toolreplay._lab.runner import LabOutcome


def _print_table(outcome: LabOutcome, config: LabConfig, out: str | None) -> None:
    """The run's results on stdout, in reading order: what was resumed, the effect and the corrected p,
    the title on one line (a one-vessel table is narrower than it), the table."""
    from rich.console import Console
    from rich.table import Table

    from toolreplay._lab.summary import comparison_lines, table_rows

    rows = table_rows(outcome.summary)
    title = (
        f"{config.history.id} at {config.at}: does the next turn call {config.expect}? (95% Wilson intervals)"
    )
    table = Table(show_lines=True)
    for name in rows[0]:
        table.add_column(name, no_wrap=True)
    for row in rows[1:]:
        table.add_row(*row)
    console = Console()
    lines = (
        [f"resumed: {outcome.resumed} trials were already in {out}/trials.jsonl"] if outcome.resumed else []
    )
    lines += comparison_lines(outcome.summary)  # the effect and the corrected p lead
    for line in [*lines, title]:
        console.print(line, highlight=False, soft_wrap=True)
    console.print(table)


@click.command("lab")
@click.argument("source", metavar="SOURCE")
@click.option(
    "--at", "at", required=True, metavar="MESSAGE_ID", help="The user message where the agent should act."
)
@click.option(
    "-v",
    "--vessel",
    "vessel_names",
    multiple=True,
    metavar="NAME[,NAME...]",
    help="Vessels to ask (repeat or comma-separate; default: `toolreplay default`).",
)
@click.option("--modes", default=LAB_MODES, show_default=True, help="Replay modes to compare.")
# The numbers' checks are LabConfig's (_limits): a flag and the API refuse a bad one with the same line.
@click.option("--trials", type=int, default=LAB_TRIALS, show_default=True, help="Trials per vessel and mode.")
@click.option(
    "--expect",
    "expect",
    required=True,
    metavar="TOOL[:ACTION]",
    help="The call that counts, e.g. coop:close.",
)
@click.option(
    "--concurrency",
    type=int,
    default=LAB_CONCURRENCY,
    show_default=True,
    help="Requests in flight at once.",
)
@click.option(
    "--temperature", type=float, default=None, help="Sampling temperature (default: the provider's)."
)
@click.option("--out", "out", type=click.Path(file_okay=False), default=None,
              help="Write trials.jsonl, summary.json, chart.png here; rerunning resumes.")  # fmt: skip
@click.option("--max-requests", type=int, default=LAB_MAX_REQUESTS, show_default=True,
              help="Refuse to start a run that would send more requests.")  # fmt: skip
@click.option(
    "-u", "--base-url", default=None, metavar="URL", help="Send to this base URL instead of the vessel's."
)
@click.option("--send-key", is_flag=True, help=SEND_KEY_HELP)
@click.option("--timeout", type=float, default=TIMEOUT, show_default=True, metavar="SECONDS",
              help="Time limit of each trial, retries included.")  # fmt: skip
@click.option("-m", "--model", default=None, metavar="NAME", help="Model (default: each vessel's).")
@click.option(
    "-s", "--system", default=None, metavar="TEXT|@FILE", help="System prompt, the same in every mode."
)
@click.option("-T", "--tools", "tools_opt", multiple=True, metavar=TOOLS_METAVAR,
              help=TOOLS_HELP + " Default: the history's own plus those its calls use.")  # fmt: skip
@click.option("--until-clear", is_flag=True,
              help="Send trials in rounds; stop a mode pair once its one-sided p crosses an "
              "O'Brien-Fleming-type boundary (alpha 0.05 spent over --trials).")  # fmt: skip
@click.option("--no-chart", is_flag=True, help="Do not draw chart.png.")
@click.option("--allow-dropped-tools", is_flag=True,
              help="Run even when a local server's chat template drops the tools.")  # fmt: skip
@db_option
@friendly
def lab(
    source: str,
    at: str,
    vessel_names: tuple[str, ...],
    modes: str,
    trials: int,
    expect: str,
    concurrency: int,
    temperature: float | None,
    out: str | None,
    max_requests: int,
    base_url: str | None,
    send_key: bool,
    timeout: float,
    model: str | None,
    system: str | None,
    tools_opt: tuple[str, ...],
    until_clear: bool,
    no_chart: bool,
    allow_dropped_tools: bool,
    db: str | None,
) -> None:
    """Run the next turn of SOURCE many times per vessel and replay mode; count who calls the tool.

    The history is frozen at --at (a user message); each vessel and mode gets one request (the same
    system prompt and tools in every mode), sent --trials times. Tools are never run: the first answer
    decides the class (called, other_tool, said_without_doing, neither). Prints native against each other
    mode (Boschloo's exact test, one-sided, Holm-corrected; Fisher's without scipy), then the table of
    call rates with 95% Wilson intervals and every class. A run that counts no trial exits 1.
    """
    from toolreplay._cli.render_cmd import read_system, read_tools
    from toolreplay._config import pick_vessel
    from toolreplay._lab.plan import LabConfig, parse_expect, parse_modes, parse_vessels

    tool, action = parse_expect(expect)
    tools = read_tools(tools_opt)
    config = LabConfig(
        history=load_source(source, db),
        at=at,
        vessels=parse_vessels(",".join(vessel_names) or pick_vessel(None)),
        modes=parse_modes(modes),
        trials=trials,
        expect_tool=tool,
        expect_action=action,
        concurrency=concurrency,
        temperature=temperature,
        max_requests=max_requests,
        base_url=base_url,
        send_key=send_key,
        timeout=timeout,
        until_clear=until_clear,
        model=model,
        system=read_system(system),
        tools=tuple(tools) if tools is not None else None,
        allow_dropped_tools=allow_dropped_tools,
    )
    chart = out is not None and not no_chart
    problem = _chart_problem() if chart else None
    if problem:  # before the first request: a paid run must not fail only at its end
        raise click.ClickException(f"{problem} (nothing was sent)")
    outcome = _run(config, out)
    if not outcome.records:  # nothing to show: one line says why (a dead server, a spent budget)
        raise click.ClickException(_nothing_counted(outcome, out))
    _say_how_it_went(outcome, out)
    _print_table(outcome, config, out)
    if out:
        click.echo(f"wrote {out}/trials.jsonl, {out}/summary.json" + (f", {out}/chart.png" if chart else ""))
    if chart:
        _draw_chart(outcome, config)


def _run(config: LabConfig, out: str | None) -> LabOutcome:
    """The trials, with the live progress display; an interrupt keeps what finished."""
    from toolreplay._lab.runner import run_lab

    _, state = _progress()
    try:
        return run_lab(config, out=out, on_start=state.start, on_event=state.event, chart=False)
    except KeyboardInterrupt:
        where = f"; rerun with --out {out} to resume" if out else ""
        raise click.ClickException(f"interrupted: finished trials are saved{where}") from None
    finally:
        state.stop()


def _nothing_counted(outcome: LabOutcome, out: str | None) -> str:
    """Why a run counted no trial at all, in one line."""
    where = f" (all in {out}/errors.jsonl)" if out else ""
    if outcome.errors:
        first = outcome.errors[0]
        n = len(outcome.errors)
        which = "the one trial sent ended in an error" if n == 1 else f"all {n} trials sent ended in errors"
        lead = "" if n == 1 else "the first: "
        said = f"{first['vessel']} {first['mode']}: {first['message']}"
        spent = ", and the --max-requests budget is spent" if outcome.stopped else ""
        return f"no trial was counted: {which}{where}{spent}; {lead}{said}"
    if outcome.stopped:
        return "no trial was counted: the --max-requests budget is spent before any trial finished"
    return "no trial was counted: none was sent"


def _say_how_it_went(outcome: LabOutcome, out: str | None) -> None:
    """Stale and stopped runs and the first errors, on stderr (the table goes to stdout)."""
    if outcome.stale:
        click.echo(
            f"note: {outcome.stale} lines of trials.jsonl belong to other requests and are not counted",
            err=True,
        )
    if outcome.stopped:
        where = f"; rerun with --out {out} to go on" if out else ""
        click.echo(
            f"stopped: {outcome.sent} requests sent, retries included: the --max-requests budget is "
            f"spent{where}",
            err=True,
        )
    for e in outcome.errors[:5]:
        click.echo(f"error: {e['vessel']} {e['mode']} trial {e['trial']}: {e['message']}", err=True)
    if len(outcome.errors) > 5:
        click.echo(f"error: ... {len(outcome.errors) - 5} more in {out}/errors.jsonl", err=True)


def _chart_problem() -> str | None:
    from toolreplay._lab.chart import chart_problem

    return chart_problem()


def _draw_chart(outcome: LabOutcome, config: LabConfig) -> None:
    """The chart comes after the table, so a chart that cannot be drawn loses nothing else."""
    from toolreplay._errors import ToolreplayError
    from toolreplay._lab.runner import write_run_chart

    try:
        write_run_chart(outcome, config)
    except (ToolreplayError, OSError, RuntimeError, ValueError) as exc:
        raise click.ClickException(
            f"the table above is complete, but chart.png was not drawn: {exc}"
        ) from None


class _State:
    """Feeds the progress bar from the runner's callbacks."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.task: Any = None
        self.started = False

    def stop(self) -> None:
        if self.started:
            self.progress.stop()

    def start(self, pending: int, resumed: int) -> None:
        # shown only once sending starts: a refusal before that is its one line (rich's stop() of a
        # bar never started still prints a blank line)
        self.progress.start()
        self.started = True
        label = f"trials ({resumed} resumed)" if resumed else "trials"
        self.task = self.progress.add_task(label, total=pending)

    def event(self, line: Any) -> None:
        if self.task is not None:
            self.progress.advance(self.task)


def _progress() -> tuple[Any, _State]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,  # a log gets no bar (and no blank line where it stood)
    )
    return progress, _State(progress)

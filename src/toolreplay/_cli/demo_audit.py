"""The demo's last section: the audit of its own requests, plain against native, on every wire.

Add it to ``toolreplay demo`` with ``SECTIONS.append(demo_audit_section)`` (see :mod:`toolreplay._cli.demo`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolreplay._replay import Mode

if TYPE_CHECKING:
    from toolreplay._audit.report import AuditReport
    from toolreplay._cli.demo_context import DemoContext

#: One vessel per wire, in the order the table shows them.
AUDIT_VESSELS = ("openai", "codex", "anthropic", "gemini", "ollama", "claude")
AUDIT_MODES: tuple[Mode, ...] = ("plain", "prose", "native")


def demo_audits(ctx: DemoContext) -> dict[tuple[str, str], AuditReport]:
    """The audit of the demo's next request per vessel and mode, against the stored history."""
    from toolreplay._audit.body import load_request
    from toolreplay._audit.report import audit_request
    from toolreplay._render import render

    out: dict[tuple[str, str], AuditReport] = {}
    for vessel in AUDIT_VESSELS:
        for mode in AUDIT_MODES:
            body = render(ctx.history, vessel, mode=mode, settings=ctx.settings)
            out[(vessel, mode)] = audit_request(load_request(body, label=f"{vessel} {mode}"), ctx.history)
    return out


def _cell(report: AuditReport) -> str:
    _, a, b, c = report.counts()
    parts = [f"[green]{a} as calls[/]" if a else "", f"[yellow]{b} as text[/]" if b else ""]
    parts.append(f"[red]{c} missing[/]" if c else "")
    return ", ".join(p for p in parts if p) or "no calls"


def demo_audit_section(ctx: DemoContext) -> None:
    """Print what ``toolreplay audit`` finds in the demo's plain, prose and native requests."""
    from rich.table import Table

    reports = demo_audits(ctx)
    n = next(iter(reports.values())).counts()[0]
    ctx.console.rule("The audit: what each request really carries", align="left")
    ctx.console.print(
        f"toolreplay audit read back the next request on each wire and looked for the {n} earlier calls "
        "the history holds: [bold]as call[/] (the wire's own call shape, answered), [bold]as text[/] "
        "(described in a message), or [bold]missing[/].",
        highlight=False,
    )
    table = Table(show_header=True, header_style="bold")
    table.add_column("vessel (wire)")
    for mode in AUDIT_MODES:
        table.add_column(mode)
    for vessel in AUDIT_VESSELS:
        wire = reports[(vessel, "native")].wire
        table.add_row(f"{vessel} ({wire})", *(_cell(reports[(vessel, m)]) for m in AUDIT_MODES))
    ctx.console.print(table)
    ctx.console.print(
        "Try it on your own agent's requests: toolreplay audit REQUEST.json --history SOURCE "
        "(any wire, a --dump-requests file, or another tool's debug dump).",
        highlight=False,
        style="dim",
    )


__all__ = ["AUDIT_MODES", "AUDIT_VESSELS", "demo_audit_section", "demo_audits"]

"""The demo's audit section: plain requests carry no call as a call, native ones carry every call."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from toolreplay._cli.demo import DemoContext
from toolreplay._cli.demo_audit import AUDIT_VESSELS, demo_audit_section, demo_audits
from toolreplay._history import load_history
from toolreplay._store import ImportResult


def _ctx(demo_path: Path) -> DemoContext:
    console = Console(record=True, width=140, color_system=None)
    return DemoContext(console, load_history(demo_path), "unused.db", ImportResult("demo-chief", 0, 12))


def test_plain_misses_native_carries(demo_path: Path) -> None:
    reports = demo_audits(_ctx(demo_path))
    for vessel in AUDIT_VESSELS:
        n, as_call, as_text, missing = reports[(vessel, "plain")].counts()
        assert n == 4 and as_call == 0 and as_text + missing == 4, vessel
        assert reports[(vessel, "native")].counts() == (4, 4, 0, 0), vessel
        assert reports[(vessel, "prose")].counts() == (4, 0, 4, 0), vessel


def test_section_prints_the_table(demo_path: Path) -> None:
    ctx = _ctx(demo_path)
    demo_audit_section(ctx)
    text = ctx.console.export_text()
    assert "The audit: what each request really carries" in text
    assert "gemini (gemini)" in text and "4 as calls" in text and "4 missing" in text and "4 as text" in text

"""Produce docs/lab-doubles.png and docs/lab-doubles.txt: a real ``toolreplay lab`` run against the
provider doubles, with the scripted stand-in model (:class:`toolreplay._lab.scripted.ScriptedAgent`).

The numbers show the lab's machinery (requests, classes, intervals, tests, chart), not any real model:
the stand-in calls the tool whenever the request carries earlier calls as calls, and otherwise only
sometimes (15% plain, 20% prose), often saying it did instead.

    python docs/lab-doubles.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from toolreplay._history import load_history
from toolreplay._lab.chart import write_chart
from toolreplay._lab.plan import LabConfig
from toolreplay._lab.runner import run_lab
from toolreplay._lab.scripted import ScriptedAgent
from toolreplay._lab.summary import format_summary
from toolreplay.testing import ProviderDouble

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "src" / "toolreplay" / "data" / "demo.json"
LABEL = "produced against toolreplay's provider doubles with a scripted stand-in model, not a real model"


def main() -> None:
    with ProviderDouble(responder=ScriptedAgent()) as double, tempfile.TemporaryDirectory() as out:
        config = LabConfig(
            history=load_history(DEMO),
            at="m10",
            vessels=tuple(double.vessel(v) for v in ("kimi", "gemini", "anthropic", "codex")),
            trials=20,
            expect_tool="coop",
            expect_action="close",
            concurrency=8,
        )
        outcome = run_lab(config, out=out, chart=False)
    title = "demo-chief at m10: does the next turn call coop close? (95% Wilson intervals)"
    write_chart(outcome.summary, HERE / "lab-doubles.png", title=title, note=LABEL)
    text = f"{title}\n({LABEL})\n\n{format_summary(outcome.summary)}\n"
    (HERE / "lab-doubles.txt").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()

"""Each trial's reason beside its class (design 43): a model that writes the tool's answer itself and a
call cut off by the token limit are told apart in the trial record and the table; the table shows every
class."""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path
from typing import Any

from test_lab import config, fast_transport
from toolreplay._lab.classify import CUT_OFF, FAKED, trial_reason
from toolreplay._lab.runner import run_lab
from toolreplay._lab.summary import format_summary, summarize, table_rows
from toolreplay.testing import BrokenArgs, Call, Calls, ProviderDouble, Text

FAKE = "<tool_response>\nstatus: closed\n</tool_response>\nClosed #14."


def test_the_reasons() -> None:
    close = {"name": "coop", "input": {"action": "close", "id": 14}}
    assert trial_reason("called", "", [close], "tool_calls") == "called"
    assert trial_reason("called", "", [close], "length") == "called"  # a whole call, then the limit
    # a cut call that still names its action counts as called (design 12), but it would not have run
    assert (
        trial_reason("called", "", [{"name": "coop", "input": '{"action": "close", "id": 1'}], "length")
        == CUT_OFF
    )
    assert trial_reason("other_tool", "", [{"name": "coop", "input": '{"action": "clo'}], "length") == CUT_OFF
    assert trial_reason("neither", "I will close it and then", [], "length") == CUT_OFF
    assert trial_reason("said_without_doing", FAKE, [], "stop") == FAKED
    assert trial_reason("neither", "<|tool_response>response:coop{status:ok}", [], "stop") == FAKED
    assert trial_reason("said_without_doing", "Closed #14.", [], "stop") == "claimed in words"
    assert trial_reason("neither", "Which one?", [], "stop") == "answered"
    assert trial_reason("other_tool", "", [{"name": "other", "input": {}}], "stop") == "other tool"


class Cycle:
    """Answers in a fixed cycle, whatever the request (one of each kind per five trials)."""

    def __init__(self) -> None:
        self._answers = itertools.cycle(
            [
                Calls([Call("coop", {"action": "close", "id": 14})]),
                BrokenArgs("coop", raw='{"action": "clo'),  # cut before the action is whole
                Text(FAKE),
                Text("Closed #14."),
                Text("Which todo do you mean?"),
            ]
        )
        self._lock = threading.Lock()

    def __call__(self, request: Any) -> Any:
        with self._lock:
            return next(self._answers)


def test_records_and_table_tell_them_apart(tmp_path: Path, demo_path: Path) -> None:
    with ProviderDouble(responder=Cycle()) as double:
        cfg = config(double, demo_path, vessels=("kimi",), trials=5, concurrency=1, modes=("native",))
        outcome = run_lab(cfg, out=tmp_path / "run", transport=fast_transport(), chart=False)
    lines = [json.loads(x) for x in (tmp_path / "run" / "trials.jsonl").read_text().splitlines()]
    got = sorted((x["class"], x["reason"]) for x in lines)
    assert got == sorted(
        [
            ("called", "called"),
            ("other_tool", CUT_OFF),
            ("said_without_doing", FAKED),
            ("said_without_doing", "claimed in words"),
            ("neither", "answered"),
        ]
    )
    cell = table_rows(outcome.summary)[1][1]
    assert cell.splitlines() == [
        "1 of 5 called",
        "[4%–62%]",
        "1 other tool (1 cut off)",
        "2 said without doing (1 faked the tool's answer)",
        "1 neither",
    ]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["cells"][0]["reasons"] == {"other_tool": {CUT_OFF: 1}, "said_without_doing": {FAKED: 1}}


def test_the_table_shows_every_class_and_the_errors() -> None:
    records = [
        {"vessel": "v", "mode": "native", "class": c, "reason": r}
        for c, r in [("called", "called"), ("other_tool", "other tool"), ("neither", "answered")]
    ]
    summary = summarize(records, ["v"], ["native"], {("v", "native"): 2})
    text = format_summary(summary)
    assert "1 of 3 called [6%–79%] 1 other tool 0 said without doing 1 neither 2 errored, left out" in text

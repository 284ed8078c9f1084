"""Handoff across providers (issue 6 §3): import from each format, render on every vessel, validate, and
check that 100% of the calls the replay keeps travel as calls.

"Travel as calls" is checked two ways: an independent count of each wire's call shapes (Chat/Ollama
``tool_calls`` entries and ``tool`` messages, Responses ``function_call``/``function_call_output`` items,
Anthropic ``tool_use``/``tool_result`` blocks, Gemini ``functionCall``/``functionResponse`` parts), and the
audit (:func:`toolreplay._audit.report.audit_request`, design 13: same name, same input, answered).

Run as a script (``python tests/test_handoff.py [FILE]``) it prints the figures of a file's handoff:
conversations, calls, calls replayed as calls per vessel, calls cut by the bounds, warnings.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers_shapes import counts
from toolreplay._api import render
from toolreplay._audit.body import RequestBody
from toolreplay._audit.report import audit_request
from toolreplay._audit.validate import check_body, rule_problems
from toolreplay._history import History
from toolreplay._importers import ImportBatch, read_file
from toolreplay._jsonenc import encode, loads
from toolreplay._replay import DEFAULT_SETTINGS, prepare_turn_messages
from toolreplay._vessels import BUILTIN

DATA = Path(__file__).parent / "data"
DEMO = DATA.parent.parent / "src" / "toolreplay" / "data" / "demo.json"
VESSELS = list(BUILTIN)


@dataclass(frozen=True, slots=True)
class Handoff:
    """One conversation rendered on one vessel."""

    kept: int
    """Calls the replay keeps (the last 12 of each reply)."""
    shapes: tuple[int, int] | None
    as_call: int
    problems: tuple[str, ...]
    patches: tuple[str, ...]


def kept_calls(h: History) -> int:
    return sum(len(t.calls) for t in prepare_turn_messages(h, "native"))


def handoff(h: History, vessel: str, *, specs: bool = True) -> Handoff:
    """Render ``h`` on ``vessel``, validate the body, count its calls in the wire's shape, audit it."""
    v = BUILTIN[vessel]
    body = render(h, vessel)
    problems = check_body(vessel, body).problems if specs else tuple(rule_problems(vessel, body))
    report = audit_request(RequestBody(body, v.wire, f"{h.id} on {vessel}"), h)
    _, as_call, _, _ = report.counts()
    return Handoff(kept_calls(h), counts(v.wire, body), as_call, tuple(problems), tuple(report.patches()))


def assert_handoff(h: History, vessel: str, *, specs: bool = True) -> Handoff:
    r = handoff(h, vessel, specs=specs)
    where = f"{h.id} on {vessel}"
    assert r.problems == (), f"{where}: {r.problems[:3]}"
    if r.shapes is not None:
        assert r.shapes == (r.kept, r.kept), f"{where}: call shapes {r.shapes}, kept {r.kept}"
    assert r.as_call == r.kept, f"{where}: {r.as_call} of {r.kept} kept calls travel as calls"
    return r


# --------------------------------------------------------------------------------------------------
# sources: one file per format


def _llm_logs(tmp_path: Path) -> Path:
    from test_import import make_llm_logs

    return make_llm_logs(tmp_path / "logs.db")


def _rendered(wire_vessel: str) -> Any:
    """A wire format made the way people get one: a body another provider was sent (the demo's)."""

    def make(tmp_path: Path) -> Path:
        path = tmp_path / f"{wire_vessel}-request.json"
        path.write_bytes(encode(render(DEMO, wire_vessel)))
        return path

    return make


SOURCES: dict[str, tuple[str, Any]] = {
    "toolreplay": ("toolreplay", lambda tmp: DEMO),
    "claude-code": ("claude-code", lambda tmp: DATA / "import_claude_code_session.jsonl"),
    "pydantic-ai": ("pydantic-ai", lambda tmp: DATA / "import_pydantic_ai_history.json"),
    "llm-logs": ("llm-logs", _llm_logs),
    "tau2": ("tau-bench", lambda tmp: DATA / "import_tau2_simulation.json"),
    "gemini-litellm": ("gemini", lambda tmp: DATA / "import_gemini_litellm.json"),
    "responses-codex": ("openai-responses", lambda tmp: DATA / "import_responses_codex.json"),
    "from-kimi": ("openai-chat", _rendered("kimi")),
    "from-codex": ("openai-responses", _rendered("codex")),
    "from-anthropic": ("anthropic", _rendered("anthropic")),
    "from-gemini": ("gemini", _rendered("gemini")),
    "from-ollama": ("ollama", _rendered("ollama")),
}


@pytest.mark.slow
@pytest.mark.parametrize("source", list(SOURCES))
def test_handoff_from_each_format_to_every_vessel(source: str, tmp_path: Path) -> None:
    fmt, make = SOURCES[source]
    batch = read_file(make(tmp_path))
    assert (batch.format, batch.detected) == (fmt, True)
    assert batch.calls > 0
    for h in batch.conversations:
        for vessel in VESSELS:
            assert_handoff(h, vessel)


def test_gemini_keeps_the_real_signature_and_fills_the_rest(tmp_path: Path) -> None:
    h = read_file(DATA / "import_gemini_litellm.json").conversations[0]
    calls = [p for c in render(h, "gemini")["contents"] for p in c["parts"] if "functionCall" in p]
    assert calls[0]["thoughtSignature"] == "CiQBcsjafGx3oQ5mPk0Z+8yEmX1cW2dhbm1lU2lnbmF0dXJlQQ=="
    assert "thoughtSignature" not in calls[1]
    # the same conversation continued on Kimi: Kimi's own ids, every call answered
    chat = render(h, "kimi")["messages"]
    ids = [tc["id"] for m in chat for tc in m.get("tool_calls") or []]
    assert ids == ["functions.coop:0", "functions.coop:1"]


def test_cli_import_session_then_render_on_gemini(tmp_path: Path) -> None:
    """The README's handoff: a Claude Code session continued on Gemini, every kept call as a call."""
    from toolreplay._cli import cli

    db = str(tmp_path / "t.db")
    runner = CliRunner()
    session = DATA / "import_claude_code_session.jsonl"
    out = runner.invoke(cli, ["import", str(session), "--from", "claude-code", "--db", db])
    assert out.exit_code == 0, out.output
    cid = "5f2c9e1a-7d43-4b8e-9a61-2c0d3e8f4b17"
    rendered = runner.invoke(cli, ["render", cid, "--vessel", "gemini", "--db", db])
    assert rendered.exit_code == 0, rendered.output
    body = loads(rendered.stdout)
    assert counts("gemini", body) == (5, 5)
    names = [p["functionCall"]["name"] for c in body["contents"] for p in c["parts"] if "functionCall" in p]
    assert names == ["coop", "Bash", "coop", "Bash", "coop"]  # mcp__coop__coop replays as coop
    assert check_body("gemini", body).problems == ()


# --------------------------------------------------------------------------------------------------
# the figures (issue 6 §4)


def figures(batch: ImportBatch, vessels: list[str], *, specs: bool = True) -> dict[str, Any]:
    """The handoff figures of a batch: what was imported, what each vessel carries as calls, what the
    bounds cut, and what was reported."""
    window_cut = inputs_cut = answers_cut = 0
    for h in batch.conversations:
        for m in h.messages:
            n = len(m.tool_uses)
            window_cut += max(0, n - DEFAULT_SETTINGS.max_calls)
        for t in prepare_turn_messages(h, "native"):
            inputs_cut += sum("input_excerpt" in c.patches for c in t.calls)
            answers_cut += sum("answer_cut" in c.patches for c in t.calls)
    per_vessel: dict[str, dict[str, int]] = {}
    for vessel in vessels:
        as_call = kept = invalid = 0
        for h in batch.conversations:
            r = handoff(h, vessel, specs=specs)
            kept += r.kept
            as_call += r.as_call
            invalid += bool(r.problems)
        per_vessel[vessel] = {"kept": kept, "as_call": as_call, "invalid_bodies": invalid}
    return {
        "format": batch.format,
        "conversations": len(batch.conversations),
        "calls": batch.calls,
        "user_simulator_calls_left_out": batch.left_out,
        "calls_cut_by_12_call_window": window_cut,
        "inputs_cut_to_500": inputs_cut,
        "answers_cut_to_500": answers_cut,
        "warnings": len(batch.warnings),
        "vessels": per_vessel,
    }


if __name__ == "__main__":
    import json

    sys.path.insert(0, str(Path(__file__).parent))
    default = DATA.parent.parent.parent / "shared" / "data" / "transcripts" / "dev.jsonl"
    target = sys.argv[1] if len(sys.argv) > 1 else str(default)
    print(json.dumps(figures(read_file(target), VESSELS), indent=1))

"""The claude-prompt provider rules: what the provider refuses, read from a body.

:func:`rules` is run by the validator (``toolreplay validate``, ``check --offline``), by the tests of
every render; the CLI publishes no schema beyond these rules. Each problem is one line naming the place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.wires._rules import extra_keys, is_obj

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile


def _line_calls(turn: Mapping[str, Any], where: str, out: list[str]) -> list[Any]:
    """A line's calls: its ``calls``, or those of its ``steps`` (a line has one or the other)."""
    raw_steps = turn.get("steps")
    steps: list[Any] = raw_steps if isinstance(raw_steps, list) else []
    if "calls" in turn and steps:
        out.append(f"{where}: calls and steps both given (a turn has one or the other)")
    for k, s in enumerate(steps):
        if not is_obj(s) or set(s) - {"text", "calls"} or not isinstance(s.get("calls"), list):
            out.append(f"{where}: steps[{k}] needs calls (a list) and may have text, nothing else")
    return list(turn.get("calls") or []) + [c for s in steps if is_obj(s) for c in s.get("calls") or []]


def _turn_calls(turn: Mapping[str, Any], where: str, out: list[str]) -> None:
    for k, c in enumerate(_line_calls(turn, where, out)):
        ok = is_obj(c) and isinstance(c.get("tool"), str) and is_obj(c.get("input"))
        if not ok or not isinstance(c.get("answer"), str):
            out.append(f"{where}: calls[{k}] needs tool (string), input (object) and answer (string)")
        elif set(c) - {"tool", "input", "answer", "error"}:
            out.append(f"{where}: calls[{k}] has unknown keys")


def rules(v: VesselProfile, body: Mapping[str, Any], out: list[str]) -> None:
    from toolreplay.wires.claude_prompt.render import transcript_lines

    extra_keys(out, "body", body, frozenset({"model", "system", "prompt"}))
    if not isinstance(body.get("prompt"), str) or not body["prompt"]:
        out.append("prompt: must be a non-empty string")
        return
    for n, line in enumerate(transcript_lines(dict(body))):
        where = f"prompt: transcript line {n + 1}"
        try:
            turn = json.loads(line)
        except json.JSONDecodeError as exc:
            out.append(f"{where}: not JSON ({exc.msg})")
            continue
        if not is_obj(turn) or turn.get("role") not in ("user", "assistant"):
            out.append(f"{where}: not a turn with role user or assistant")
            continue
        extra_keys(out, where, turn, frozenset({"role", "calls", "steps", "text"}))
        _turn_calls(turn, where, out)


__all__ = ["rules"]

"""Check a rendered request body: the wire rules no schema encodes, then the providers' own definitions.

Two layers, both pure (no network):

* :func:`rule_problems` needs no dependency; it runs the rules the vessel's wire owns (``Wire.rules``,
  in ``toolreplay.wires.<wire>.rules``). Per wire: id patterns and lengths (Anthropic
  ``^[a-zA-Z0-9_-]+$``, Chat's 40 on the ``openai`` vessel, Responses 1..64, Kimi's
  ``functions.<name>:<index>`` with a running index), ids unique in a request, every call answered by
  answers right after it (same ids, same order), Anthropic ``tool_result`` blocks first in the next user
  message and tools defined, Gemini response count == call count and the first call of each model turn
  signed, Chat ``content: null`` on call-only messages, arguments that are JSON objects, every called
  tool declared, and only the keys the wire takes, plus the vessel's own extensions (Kimi ``name`` on
  tool messages), nothing else.
* :func:`spec_report` checks against the providers' definitions, each wire's own ``Wire.specs`` (in
  ``toolreplay.wires.<wire>.specs``): the request schemas shipped with the package (or OpenAI's full
  OpenAPI spec when a specs directory has it) with jsonschema, the official SDKs' types through pydantic
  (extra keys forbidden, lazy iterables forced), Ollama's Go ``api.Message`` shape. What it could not
  check (a dependency missing, a schema that cannot be read) is listed in :attr:`Report.unchecked`,
  never silently passed. A wire registered without published definitions (a toy wire) has its rules
  alone.

:func:`validate_body` runs both and returns the problems (empty: valid). Each problem is one line that
names the place: ``messages[3].tool_calls[0].id: 41 characters, the vessel allows at most 40``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolreplay._vessels import Vessel, get_vessel
from toolreplay.wires import get_wire


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of a check: ``problems`` (empty: valid) and ``unchecked`` (what could not be checked)."""

    problems: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def rule_problems(vessel: str | Vessel, body: Mapping[str, Any]) -> list[str]:
    """The wire rules no schema encodes, checked on ``body`` for ``vessel`` (no dependency needed)."""
    v = get_vessel(vessel)
    out: list[str] = []
    if not isinstance(body, Mapping):
        return [f"body: not a JSON object ({type(body).__name__})"]
    get_wire(v.wire).rules(v, body, out)
    return out


def default_specs_dir() -> Path | None:
    """Where the providers' full definitions are, when at hand: ``$TOOLREPLAY_SPECS``, else ``specs`` in
    the reference material named by ``$TOOLREPLAY_SHARED``; None without either (the shipped schemas
    are used)."""
    env = os.environ.get("TOOLREPLAY_SPECS")
    if env:
        return Path(env)
    shared = os.environ.get("TOOLREPLAY_SHARED")
    path = Path(shared) / "specs" if shared else None
    return path if path is not None and path.is_dir() else None


def check_specs(
    v: Vessel, body: Mapping[str, Any], specs_dir: Path | None = None
) -> tuple[list[str], list[str]]:
    """``(problems, unchecked)`` of ``body`` against the definitions of ``v``'s wire."""
    problems: list[str] = []
    unchecked: list[str] = []
    check = get_wire(v.wire).specs
    if check is not None:  # a wire registered without published definitions has only its rules
        check(v, body, specs_dir if specs_dir is not None else default_specs_dir(), problems, unchecked)
    return problems, unchecked


def spec_report(vessel: str | Vessel, body: Mapping[str, Any], *, specs_dir: Path | None = None) -> Report:
    """``body`` checked against the provider's own definitions (the wire's ``specs``)."""
    problems, unchecked = check_specs(get_vessel(vessel), body, specs_dir)
    return Report(tuple(problems), tuple(unchecked))


def check_body(vessel: str | Vessel, body: Mapping[str, Any], *, specs_dir: Path | None = None) -> Report:
    """The rules and the spec checks together: every problem, and what could not be checked."""
    rules = rule_problems(vessel, body)
    spec = spec_report(vessel, body, specs_dir=specs_dir)
    return Report(tuple(rules) + spec.problems, spec.unchecked)


def validate_body(
    vessel: str | Vessel, body: Mapping[str, Any], *, specs_dir: Path | None = None
) -> list[str]:
    """Every problem of ``body`` for ``vessel`` (empty: valid); :func:`check_body` also says what was
    skipped."""
    return list(check_body(vessel, body, specs_dir=specs_dir).problems)


__all__ = [
    "Report",
    "check_body",
    "check_specs",
    "default_specs_dir",
    "rule_problems",
    "spec_report",
    "validate_body",
]

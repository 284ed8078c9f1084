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
* :func:`spec_report` checks against the providers' definitions (each wire's ``Wire.specs``):
  OpenAI's OpenAPI spec with jsonschema, the official SDKs' types through pydantic (extra keys
  forbidden, lazy iterables forced), Ollama's Go ``api.Message`` shape. What it could not check (a
  dependency or the specs directory missing) is listed in :attr:`Report.unchecked`, never silently
  passed.

:func:`validate_body` runs both and returns the problems (empty: valid). Each problem is one line that
names the place: ``messages[3].tool_calls[0].id: 41 characters, the vessel allows at most 40``.
"""

from __future__ import annotations

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


def spec_report(vessel: str | Vessel, body: Mapping[str, Any], *, specs_dir: Path | None = None) -> Report:
    """``body`` checked against the provider's own definitions (see :mod:`.validate_specs`)."""
    from toolreplay._audit.validate_specs import check_specs

    v = get_vessel(vessel)
    problems, unchecked = check_specs(v, body, specs_dir)
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


__all__ = ["Report", "check_body", "rule_problems", "spec_report", "validate_body"]

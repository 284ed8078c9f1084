"""What the provider double answers a real agent: its own tools, called in the task's order, then words.

A real agent sends more than its main loop: a title for the session (opencode), a summary, a probe.
The responder tells the main loop's requests by two marks, both read from the request itself: it
declares the plan's tools and its text holds the task. Any other request gets plain words, so a side
request never uses up a step of the plan. The step a main-loop request gets is the number of tool
results it already carries (stateless: a retried request gets the same answer, and a request order the
agent chooses cannot skip a step).

Bodies are read as JSON per wire here, not through toolreplay's own parsers, so the harness keeps
working (and keeps capturing) whatever those parsers make of a new field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentlib.agents import TASK
from helpers_shapes import counts, tools_in
from toolreplay.testing import Call, Calls, Item, RecordedRequest, Text

NOTE = "hello"
FILE = "notes.txt"
DONE = "notes.txt holds hello: written and read back."
SIDE = "Notes file"
#: Each main-loop answer carries reasoning: a thinking model (Claude Code's ``thinking``, Codex's gpt-5.5)
#: always answers with some, and the providers refuse its calls sent back without it. The double sends
#: it only to a model that thinks (design 32, design 41).
#: The schema a free-form (custom) tool is called by in a script: its text as ``input``.
FREE_FORM = {"type": "object", "properties": {"input": {"type": "string"}}}
THOUGHT = "The user wants notes.txt with hello; I write it, then read it back."


@dataclass(frozen=True, slots=True)
class Step:
    """One call of the plan: the agent's tool, and its input from the work folder's path."""

    tool: str
    input: Callable[[str], dict[str, Any]]


def _path(work: str) -> str:
    return f"{work.rstrip('/')}/{FILE}"


PLANS: dict[str, tuple[Step, ...]] = {
    "claude": (
        Step("Write", lambda w: {"file_path": _path(w), "content": NOTE + "\n"}),
        Step("Read", lambda w: {"file_path": _path(w)}),
    ),
    # Codex writes with apply_patch, a free-form ("custom") tool: the double answers a custom_tool_call of
    # the patch's text ({"input": text}); it reads back with its shell tool, a function.
    "codex": (
        Step(
            "apply_patch",
            lambda w: {"input": f"*** Begin Patch\n*** Add File: {FILE}\n+{NOTE}\n*** End Patch\n"},
        ),
        Step("exec_command", lambda w: {"cmd": f"cat {FILE}", "workdir": w}),
    ),
    "opencode": (
        Step("write", lambda w: {"filePath": _path(w), "content": NOTE + "\n"}),
        Step("read", lambda w: {"filePath": _path(w)}),
    ),
    "gemini": (
        Step("write_file", lambda w: {"file_path": _path(w), "content": NOTE + "\n"}),
        Step("read_file", lambda w: {"file_path": _path(w)}),
    ),
}


def declared(wire: str, body: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The request's tools by name, each with its input schema (a free-form tool's: one string ``input``,
    how the double is scripted to call it)."""
    return {name: FREE_FORM if schema is None else schema for name, schema in tools_in(wire, body).items()}


def answered(wire: str, body: Mapping[str, Any]) -> int:
    """How many tool results the request carries (the calls the agent has run and answered)."""
    found = counts(wire, body)
    return found[1] if found is not None else 0


@dataclass(frozen=True, slots=True)
class TaskResponder:
    """The double's responder for one agent: ``plan`` in order on the main loop, ``SIDE`` elsewhere.

    ``log`` (when given) gets, per request it answered, the request's index and what the responder
    made of it: ``main K`` (the main loop, K tool results in it) or ``side``.
    """

    plan: Sequence[Step]
    work: str
    log: list[tuple[int, str]] | None = None

    def __call__(self, req: RecordedRequest) -> Item:
        body = req.body if isinstance(req.body, Mapping) else {}
        tools = declared(req.wire or "", body)
        main = bool(tools) and TASK in _text(req.raw) and all(s.tool in tools for s in self.plan)
        if not main:
            self._note(req, "side")
            return Text(SIDE)
        k = answered(req.wire or "", body)
        self._note(req, f"main {k}")
        if k >= len(self.plan):
            return Text(DONE, reasoning=THOUGHT)
        step = self.plan[k]
        args = step.input(self.work)
        unknown = sorted(set(args) - set(tools[step.tool].get("properties") or {}))
        if unknown:  # the agent's tool changed: say so in the run, where the test's failure shows it
            return Text(f"harness: {step.tool} has no parameter {', '.join(unknown)}")
        return Calls([Call(step.tool, args)], reasoning=THOUGHT)

    def _note(self, req: RecordedRequest, what: str) -> None:
        if self.log is not None:
            self.log.append((req.index, what))


def _text(raw: bytes) -> str:
    # TASK is plain ASCII without quotes or slashes: every JSON encoder writes it as it is
    return raw.decode("utf-8", "replace")


def for_agent(agent: str, work: str) -> TaskResponder:
    """The responder the harness gives the double for ``agent`` (``opencode-chat`` reads as opencode)."""
    return TaskResponder(PLANS[agent.split("-")[0]], work, [])

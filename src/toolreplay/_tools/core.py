"""A tool and the registry of them: what :mod:`toolreplay._tools` exports and the built-in tools
(:mod:`~toolreplay._tools.coop`) are made of; the package adds the ``--tools`` specs that load them.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from toolreplay._errors import ConfigError
from toolreplay._history import ToolSpec
from toolreplay._replay import replay_name
from toolreplay._tools.dry import dry_answer
from toolreplay.model import CallKind

#: A tool's callable: the call's input (a JSON object; the text itself for a free-form tool's call) -> text.
ToolFn = Callable[[Any], "str | Awaitable[str]"]


class ToolError(Exception):
    """Raised by a tool to answer a call with an error (``is_error``) instead of a result."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: its definition (sent to the model) and the callable that runs a call."""

    spec: ToolSpec
    fn: ToolFn
    source: str | None = None
    """The ``--tools`` entry it was loaded from (``coop``, ``module:attribute``), so a separate process
    (``toolreplay mcp`` started for the claude vessel) can load the same tool; None when built in code."""

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The answer to one call. ``executed`` is False for dry runs and calls refused before running."""

    answer: str
    is_error: bool = False
    executed: bool = True
    dry: bool = False


def tool(
    name: str, description: str = "", parameters: Mapping[str, Any] | None = None
) -> Callable[[ToolFn], Tool]:
    """Decorator: ``@tool("weather", "Weather in a city", {...schema...})`` turns a function into a Tool."""

    def wrap(fn: ToolFn) -> Tool:
        params = parameters if parameters is not None else {"type": "object", "properties": {}}
        return Tool(ToolSpec(name, description or (inspect.getdoc(fn) or ""), params), fn)

    return wrap


class ToolRegistry:
    """The tools one turn (or one MCP server) offers, by name, in the order they were added."""

    __slots__ = ("_tools",)

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> None:
        if t.name in self._tools:
            raise ConfigError(f"two tools are named {t.name!r}; tool names must be unique")
        self._tools[t.name] = t

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def sources(self) -> tuple[str, ...]:
        """The ``--tools`` entries that load these tools again in another process (``toolreplay mcp``)."""
        missing = [t.name for t in self._tools.values() if t.source is None]
        if missing:
            raise ConfigError(
                f"tool(s) {', '.join(missing)} were built in code, so `toolreplay mcp` cannot serve them; "
                "load them with --tools module:attribute"
            )
        return tuple(dict.fromkeys(t.source for t in self._tools.values() if t.source is not None))

    def specs(self) -> tuple[ToolSpec, ...]:
        """The definitions sent to the model, in registry order."""
        return tuple(t.spec for t in self._tools.values())

    def find(self, name: str) -> Tool | None:
        """The tool a call names: exactly, under the replay vocabulary (``mcp__coop__coop`` is coop), or
        under the name the wires gave it."""
        found = self._tools.get(name) or self._tools.get(replay_name(name))
        if found is None:
            # A name the wire had to map (``my.tool`` is sent as ``my_tool_<hash>``) comes back mapped.
            from toolreplay.wires.common import wire_tool_name

            found = next((t for t in self._tools.values() if wire_tool_name(t.name) == name), None)
        return found

    async def call(
        self,
        name: str,
        input: Any,
        *,
        dry: bool = False,
        input_error: str | None = None,
        kind: CallKind = "function",
    ) -> ToolOutcome:
        """Answer one call: run it, or refuse it (dry run, broken arguments, unknown tool). A free-form
        call (``kind`` ``custom``, Codex's ``apply_patch``) gives its tool the text the model wrote."""
        if input_error is not None:
            return ToolOutcome(
                f"error: the arguments of this {name} call cannot be used ({input_error}); "
                "nothing was executed, send the call again with valid JSON arguments",
                is_error=True,
                executed=False,
            )
        t = self.find(name)
        if t is None:
            known = ", ".join(self._tools) or "none"
            return ToolOutcome(
                f"error: there is no tool named {name!r}; tools: {known}", is_error=True, executed=False
            )
        if dry:
            return ToolOutcome(dry_answer(t.name, input), executed=False, dry=True)
        free = kind == "custom" and isinstance(input, str)
        if not free and not isinstance(input, Mapping):
            return ToolOutcome(
                f"error: {t.name} takes a JSON object as input, not {type(input).__name__}",
                is_error=True,
                executed=False,
            )
        try:
            result = t.fn(input if free else cast(Mapping[str, Any], input))
            if inspect.isawaitable(result):
                result = await result
        except ToolError as exc:
            return ToolOutcome(str(exc) or "error", is_error=True)
        if not isinstance(result, str):
            raise ConfigError(f"tool {t.name!r} returned {type(result).__name__}; a tool must return text")
        return ToolOutcome(result)


__all__ = ["Tool", "ToolError", "ToolFn", "ToolOutcome", "ToolRegistry", "tool"]

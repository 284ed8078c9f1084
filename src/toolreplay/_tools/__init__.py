"""Tools a turn can run: a registry of name, description, JSON schema and a Python callable.

A tool's callable takes the call's input (a JSON object, as a mapping; a free-form call's text, as a
string) and returns its answer as text;
it may be a plain function or a coroutine function. A tool says that a call failed (a bad id, a missing
field) by raising :class:`ToolError`: the model gets the message as an error answer (``is_error``), the
turn goes on. Any other exception is a bug in the tool and propagates; the turn loop then stores the call
as made with no answer and marks the reply interrupted.

Plain callables run inline on the event loop's thread (a SQLite connection belongs to the thread that
opened it, and the coop tool writes to the same database as the turn); give a slow tool an ``async``
callable.

The registry also answers the calls it must not run:

* dry run (``dry=True``): nothing is executed; the answer is a canned, clearly marked text
  (``[dry run] coop close 12: not executed``), for experiments;
* arguments that were not a JSON object, or held a number JSON cannot represent (``input_error``):
  answered with an error, never executed;
* a tool that is not in the registry: answered with an error naming the tools that are.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, cast

from toolreplay._errors import ConfigError
from toolreplay._tools.core import Tool, ToolError, ToolFn, ToolOutcome, ToolRegistry, tool
from toolreplay._tools.dry import dry_answer


def load_tool_spec(spec: str, store: Any = None) -> list[Tool]:
    """The tools one ``--tools`` entry names: ``coop`` (needs the store) or ``module:attribute``.

    The attribute may be a :class:`Tool`, a :class:`ToolRegistry`, a list of tools, or a function taking
    no argument that returns one of those.
    """
    spec = spec.strip()
    if spec == "coop":
        if store is None:
            raise ConfigError("the coop tool needs a store (a database to keep the todo board in)")
        from toolreplay._store.board import board_of
        from toolreplay._tools.coop import coop_tool

        return [replace(coop_tool(board_of(store)), source="coop")]
    if ":" not in spec:
        raise ConfigError(f"unknown tool {spec!r}; use coop, or module:attribute for your own tools")
    module_name, attr = spec.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"--tools {spec}: cannot import {module_name} ({exc})") from None
    try:
        value: Any = getattr(module, attr)
    except AttributeError:
        raise ConfigError(f"--tools {spec}: {module_name} has no attribute {attr!r}") from None
    if callable(value) and not isinstance(value, (Tool, ToolRegistry)):
        try:
            inspect.signature(value).bind()
        except TypeError:  # e.g. --tools os.path:join, or a tool function given instead of its Tool
            raise ConfigError(
                f"--tools {spec}: a function that needs arguments; name a Tool, a list of tools, a "
                "ToolRegistry or a function of no argument that returns one"
            ) from None
        except ValueError:
            pass  # no signature to read (some builtins): calling it will tell
        value = value()
    if isinstance(value, Tool):
        return [replace(value, source=spec)]
    if isinstance(value, (ToolRegistry, list, tuple)) and all(isinstance(t, Tool) for t in value):
        return [replace(t, source=spec) for t in cast(Iterable[Tool], value)]
    raise ConfigError(f"--tools {spec}: not a Tool, a list of tools or a ToolRegistry")


def build_registry(specs: Iterable[str], store: Any = None) -> ToolRegistry:
    """A registry of the tools named by ``--tools`` entries (each may hold several, comma-separated)."""
    reg = ToolRegistry()
    for entry in specs:
        for part in entry.split(","):
            if part.strip():
                for t in load_tool_spec(part, store):
                    reg.add(t)
    return reg


__all__ = [
    "Tool",
    "ToolError",
    "ToolFn",
    "ToolOutcome",
    "ToolRegistry",
    "build_registry",
    "dry_answer",
    "load_tool_spec",
    "tool",
]

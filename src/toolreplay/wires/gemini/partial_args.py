"""Gemini 3's streamed function-call arguments (``partialArgs``), put back together into whole calls.

With ``toolConfig.functionCallingConfig.streamFunctionCallArguments`` (Vertex AI), a call arrives over
several chunks instead of one part: a ``functionCall`` with its ``name`` and ``willContinue: true`` opens
it (the thought signature rides on that part), then nameless ``functionCall`` parts carry ``partialArgs``
(``{jsonPath, stringValue | numberValue | boolValue | nullValue, willContinue}``), and a part without
``willContinue`` (often an empty ``functionCall: {}``) closes it. A string whose piece says
``willContinue`` goes on in the next piece for the same path (``"Cook ... aside"``, then ``"."``, then
``""``). Recorded in tests/corpus (gemini/vercel-ai/*tool-call-arguments*).

:class:`Assembler` turns such a run of parts into the one part a whole answer would hold, so the stream
parser reads the same reply either way; parts that are not continuations pass through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from toolreplay.wires._parse import fail, mapping
from toolreplay.wires.gemini.signatures import either_case as _get

WIRE = "gemini"
# $.a.b, $.a[0], $['odd key'] / $["odd key"] (quotes for keys that are not plain names)
_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]")
_VALUES = (("stringValue", "string_value"), ("numberValue", "number_value"), ("boolValue", "bool_value"))


def _steps(path: Any) -> list[str | int]:
    """``$.recipe.steps[1]`` as ``["recipe", "steps", 1]``."""
    if not isinstance(path, str) or not path.startswith("$"):
        fail(WIRE, f"functionCall.partialArgs jsonPath {path!r} does not start with '$'")
    out: list[str | int] = []
    at = 1
    while at < len(path):
        m = _STEP.match(path, at)
        if m is None:
            fail(WIRE, f"functionCall.partialArgs jsonPath {path!r}: cannot read it from {path[at:]!r}")
        key, index, single, double = m.groups()
        out.append(int(index) if index is not None else (key or single or double or ""))
        at = m.end()
    return out


def _value(arg: Mapping[str, Any]) -> Any:
    for camel, snake in _VALUES:
        value = _get(arg, camel, snake)
        if value is not None:
            return value
    return None  # nullValue, or no value at all


def _child(node: Any, step: str | int, empty: Any) -> Any:
    """``node[step]``, made ``empty`` when absent (arrays grow to reach an index)."""
    if isinstance(step, int):
        if not isinstance(node, list):
            fail(WIRE, f"functionCall.partialArgs: index [{step}] into {type(node).__name__}")
        node.extend([None] * (step + 1 - len(node)))
        if node[step] is None:
            node[step] = empty
        return node[step]
    if not isinstance(node, dict):
        fail(WIRE, f"functionCall.partialArgs: key {step!r} into {type(node).__name__}")
    return node.setdefault(step, empty)


def _put(root: dict[str, Any], steps: list[str | int], value: Any, join: bool) -> None:
    """Set the value at ``steps`` (objects and arrays made on the way); ``join``: a string goes on
    from the string already there."""
    node: Any = root
    for step, nxt in pairwise(steps):
        node = _child(node, step, [] if isinstance(nxt, int) else {})
    before = _child(node, steps[-1], None)
    if join and isinstance(value, str) and isinstance(before, str):
        value = before + value
    node[steps[-1]] = value


class Assembler:
    """Merges the continuation parts of streamed calls into the part that opened each call."""

    def __init__(self) -> None:
        self._open: dict[str, Any] | None = None  # the functionCall being built
        self._growing: set[str] = set()  # paths whose string value goes on

    def take(self, part: Any) -> Any | None:
        """The part to keep (an opening part made whole as it goes), or None when ``part`` only
        continued an open call."""
        call = _get(part, "functionCall", "function_call") if isinstance(part, Mapping) else None
        if not isinstance(call, Mapping):
            return part
        continues = call.get("willContinue", call.get("will_continue")) is True
        if call.get("name") is not None:
            whole = {k: v for k, v in call.items() if k not in _STREAM_KEYS}
            self._open, self._growing = (whole if continues else None), set()
            self._apply(whole, call)
            key = "functionCall" if "functionCall" in part else "function_call"
            return {**part, key: whole}
        if self._open is None:
            return part  # not a continuation of anything: the parser names what is wrong with it
        self._apply(self._open, call)
        if not continues:
            self._open = None
        return None

    def _apply(self, whole: dict[str, Any], call: Mapping[str, Any]) -> None:
        pieces = call.get("partialArgs", call.get("partial_args"))
        if pieces is None:
            return
        if not isinstance(pieces, list):
            fail(WIRE, "functionCall.partialArgs is not an array")
        args = whole.setdefault("args", {})
        for i, raw in enumerate(pieces):
            arg = mapping(raw, WIRE, f"functionCall.partialArgs[{i}]")
            path = _get(arg, "jsonPath", "json_path")
            steps = _steps(path)
            if not steps:
                fail(WIRE, "functionCall.partialArgs jsonPath '$' names no argument")
            _put(args, steps, _value(arg), path in self._growing)
            if arg.get("willContinue", arg.get("will_continue")) is True:
                self._growing.add(path)
            else:
                self._growing.discard(path)


_STREAM_KEYS = frozenset({"willContinue", "will_continue", "partialArgs", "partial_args"})

__all__ = ["Assembler"]

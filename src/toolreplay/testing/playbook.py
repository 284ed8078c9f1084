"""What ``toolreplay double`` answers: a script file read into items, then a built-in echo.

A script file is JSON or TOML (told by its suffix: ``.toml`` is TOML, anything else JSON). It holds the
answers in order, as a list or under ``answers``::

    # double.toml
    [[answers]]                                   # a call (several: parallel calls), text optional
    calls = [{name = "coop", input = {action = "close", id = 1}}]
    [[answers]]                                   # a free-form tool's call: its text as input
    calls = [{name = "apply_patch", input = '*** Begin Patch ...'}]
    [[answers]]
    text = "Closed #1."                           # a text answer
    [[answers]]
    error = 429                                   # an HTTP error in the wire's shape
    retry_after = 1
    [[answers]]
    fault = "cut"                                 # cut | hang | reset | not-json | overloaded

Each request that passes the double's checks takes the next answer; once they are used up, the
:class:`Echo` answers. Nothing here is random or clocked: the same requests get the same answers.
"""

from __future__ import annotations

import json
import re
import threading
import tomllib
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolreplay.testing.script import (
    BrokenArgs,
    Call,
    Calls,
    CutStream,
    Error,
    Hang,
    Item,
    NotJSON,
    Reset,
    StreamError,
    Text,
)
from toolreplay.testing.server import RecordedRequest

_KEYS = {
    "text",
    "calls",
    "error",
    "retry_after",
    "message",
    "fault",
    "seconds",
    "after_events",
    "raw",
    "name",
}
_FAULTS = ("cut", "hang", "reset", "not-json", "overloaded", "broken-args")
_CALL = re.compile(r"\bcall\s+([A-Za-z_][\w.-]*)")


class ScriptError(ValueError):
    """A script file that cannot be read; the message names the file, the answer and the field."""


def _call(raw: Any, where: str) -> Call:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
        raise ScriptError(f"{where}: a call needs a name (a string)")
    args = raw.get("input", {})
    if isinstance(args, str):  # a free-form tool's text (Codex's apply_patch): {"input": text} elsewhere
        return Call(str(raw["name"]), {"input": args})
    if not isinstance(args, Mapping):
        raise ScriptError(f"{where}: input must be an object or a free-form tool's text, not "
                          f"{type(args).__name__}")  # fmt: skip
    return Call(str(raw["name"]), dict(args))


def _fault(kind: str, raw: Mapping[str, Any], where: str) -> Item:
    after = raw.get("after_events")
    if kind == "cut":
        return CutStream(after_events=int(after if after is not None else 1))
    if kind == "hang":
        return Hang(seconds=float(raw.get("seconds", 30.0)), after_events=after)
    if kind == "reset":
        return Reset(after_events=after)
    if kind == "not-json":
        return NotJSON()
    if kind == "overloaded":
        return StreamError(after_events=int(after if after is not None else 1))
    if kind == "broken-args":
        return BrokenArgs(str(raw.get("name", "coop")), **({"raw": raw["raw"]} if "raw" in raw else {}))
    raise ScriptError(f"{where}: fault {kind!r} is not one of {', '.join(_FAULTS)}")


def _item(raw: Any, where: str) -> Item:
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where}: must be an object, not {type(raw).__name__}")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ScriptError(
            f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}"
        )
    if "error" in raw:
        status = raw["error"]
        if not isinstance(status, int) or not 400 <= status <= 599:
            raise ScriptError(f"{where}: error must be an HTTP status from 400 to 599")
        return Error(status, raw.get("message"), raw.get("retry_after"))
    if "fault" in raw:
        return _fault(str(raw["fault"]), raw, where)
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise ScriptError(f"{where}: text must be a string")
    calls = raw.get("calls", [])
    if not isinstance(calls, list):
        raise ScriptError(f"{where}: calls must be a list")
    if calls:
        return Calls([_call(c, f"{where}: calls[{k}]") for k, c in enumerate(calls)], text=text)
    if "text" not in raw:
        raise ScriptError(f"{where}: an answer needs text, calls, error or fault")
    return Text(text)


def load_script(path: str | Path) -> list[Item]:
    """The answers of a JSON or TOML script file, in order."""
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
        data: Any = tomllib.loads(source) if path.suffix == ".toml" else json.loads(source)
    except OSError as exc:
        raise ScriptError(f"{path}: cannot be read ({exc.strerror})") from None
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ScriptError(
            f"{path}: not valid {'TOML' if path.suffix == '.toml' else 'JSON'} ({exc})"
        ) from None
    answers = data.get("answers") if isinstance(data, Mapping) else data
    if not isinstance(answers, list):
        raise ScriptError(f"{path}: expected a list of answers (or an object with an answers list)")
    return [_item(raw, f"{path}: answers[{k}]") for k, raw in enumerate(answers)]


class Echo:
    """The double's answer when no script says otherwise.

    It repeats the user's last message (``echo: ...``), and it calls a tool when asked: a message with
    ``call NAME`` (NAME one of the request's declared tools) and optionally a JSON object gets that call
    with that input. When the request ends with the call's answer, it says what the tool answered.
    """

    def __call__(self, request: RecordedRequest) -> Item:
        from toolreplay._errors import ToolreplayError
        from toolreplay.wires import parse_request

        try:
            history = parse_request(request.wire or "", request.body)
        except ToolreplayError:  # a body the double's checks let through but the parser does not read
            return Text("echo: (a request this echo cannot read)")
        if not history.messages:
            return Text("echo: (no messages)")
        last = history.messages[-1]
        if last.role == "assistant" and last.tool_uses:
            done = last.tool_uses[-1]
            return Text(f"{done.name} answered: {done.answer if done.answer is not None else '(nothing)'}")
        declared = {t.name for t in history.tools or ()}
        found = _CALL.search(last.text)
        if found and found.group(1) in declared:
            return Calls([Call(found.group(1), _first_object(last.text[found.end() :]))])
        return Text(f"echo: {last.text}")


def _first_object(text: str) -> dict[str, Any]:
    start = text.find("{")
    if start < 0:
        return {}
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return {}
    return dict(value) if isinstance(value, dict) else {}


@dataclass
class Playbook:
    """A responder: the scripted ``items`` in order, then ``then`` (the echo by default)."""

    items: deque[Item]
    then: Callable[[RecordedRequest], Item | None]
    _lock: threading.Lock

    @classmethod
    def of(
        cls, items: Iterable[Item], then: Callable[[RecordedRequest], Item | None] | None = None
    ) -> Playbook:
        return cls(deque(items), then or Echo(), threading.Lock())

    def __call__(self, request: RecordedRequest) -> Item | None:
        with self._lock:
            if self.items:
                return self.items.popleft()
        return self.then(request)

    @property
    def left(self) -> int:
        with self._lock:
            return len(self.items)


__all__ = ["Echo", "Playbook", "ScriptError", "load_script"]

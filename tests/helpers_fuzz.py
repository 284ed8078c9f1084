"""Hypothesis strategies and checks shared by the fuzz tests (tests/test_fuzz_*.py).

* JSON values biased towards the keys and words toolreplay's readers look for, so arbitrary input reaches
  deep into the readers instead of failing at the first key;
* mutations of a valid JSON document (replace, delete, retype or duplicate a node anywhere in it) and of
  raw bytes (flip, insert, delete, truncate);
* :func:`histories`: valid histories within the replay bounds (the round trip's, and the seed of the
  fuzz tests' valid share: an input that is always rejected never reaches the checks on what loaded);
* :func:`only_documented`: run a reader and allow exactly two outcomes, a result or the documented error
  with a one-line message.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import strategies as st

from toolreplay._errors import ToolreplayError
from toolreplay._history import History, Message, ToolCall, ToolSpec
from toolreplay._jsonenc import dumps

T = TypeVar("T")

KEYS = (
    "id", "messages", "role", "text", "content", "tool_uses", "status", "created_at", "vessel", "meta",
    "tools", "name", "description", "parameters", "input_schema", "type", "tool_use", "tool_result",
    "input", "arguments", "answer", "tool_name", "tool_input", "tool_use_id", "call_id", "is_error",
    "provider_data", "function", "tool_calls", "tool_call_id", "parts", "functionCall", "functionResponse",
    "args", "response", "contents", "input", "output", "call_id", "function_call", "function_call_output",
    "kind", "part_kind", "message", "uuid", "parentUuid", "sessionId", "timestamp", "simulations", "traj",
    "choices", "delta", "index", "finish_reason", "usage", "candidates", "model", "thoughtSignature",
)  # fmt: skip
WORDS = (
    "user", "assistant", "system", "tool", "model", "function", "result", "complete", "interrupted",
    "in_progress", "tool_use", "tool_result", "text", "function_call", "function_call_output", "message",
    "request", "response", "tool-call", "tool-return", "user-prompt", "system-prompt", "coop", "", " ",
    "{}", "[]", '{"a": 1', "null", "\u00e9\u65e5", "\x00", "\u2028", "9" * 25,
)  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(WORDS),
    st.text(max_size=12),
)
keys = st.one_of(st.sampled_from(KEYS), st.text(max_size=6))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=24,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        value = value[p]
    return value


@st.composite
def mutated_json(draw: st.DrawFn, doc: Any, max_edits: int = 3) -> Any:
    """``doc`` (a JSON value, not changed) with 1..max_edits edits at nodes anywhere in it."""
    value = json.loads(json.dumps(doc))
    for _ in range(draw(st.integers(1, max_edits))):
        paths = _paths(value)
        path = draw(st.sampled_from(paths))
        edit = draw(st.sampled_from(["replace", "delete", "retype", "duplicate", "empty"]))
        if not path:
            value = draw(json_values) if edit != "empty" else {}
            continue
        parent, last = _get(value, path[:-1]), path[-1]
        node = parent[last]
        if edit == "replace":
            parent[last] = draw(json_values)
        elif edit == "delete":
            del parent[last]
        elif edit == "retype":
            parent[last] = draw(
                st.sampled_from([json.dumps(node), [node], {"value": node}, None, 0, "", True])
            )
        elif edit == "duplicate" and isinstance(parent, list):
            parent.insert(last, json.loads(json.dumps(node)))
        elif edit == "empty":
            parent[last] = type(node)() if isinstance(node, dict | list | str) else None
    return value


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes, max_edits: int = 4) -> bytes:
    """``data`` with 1..max_edits byte-level edits: flip, insert, delete a run, or truncate."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, max_edits))):
        if not out:
            out.extend(draw(st.binary(min_size=1, max_size=8)))
            continue
        pos = draw(st.integers(0, len(out) - 1))
        edit = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        if edit == "flip":
            out[pos] = draw(st.integers(0, 255))
        elif edit == "insert":
            out[pos:pos] = draw(
                st.binary(min_size=1, max_size=8) | st.sampled_from([b'"', b"{", b"]", b"\n"])
            )
        elif edit == "delete":
            del out[pos : pos + draw(st.integers(1, 16))]
        else:
            del out[pos:]
    return bytes(out)


NAMES = ["coop", "get_weather", "mcp__coop__coop", "my.tool", "9lives", "search-v2"]

_ids = st.text(string.ascii_letters + string.digits, min_size=1, max_size=16)
_words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
# A blank (whitespace-only) reply text: Anthropic and Gemini leave it out (their servers reject it), so
# such a body cannot say where a reply with calls ended; "" (no text) and real text are in bounds.
_reply_text = _words.filter(lambda t: t == "" or bool(t.strip()))
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), _words)
_value = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
_dict_input = st.dictionaries(
    st.text(string.ascii_lowercase + "_", min_size=1, max_size=8), _value, max_size=4
)
_input = st.one_of(
    _dict_input.filter(lambda d: len(dumps(d)) <= 500),
    st.text(max_size=120),  # raw text the store kept (a cut-short input): replays as an input_excerpt
)


@st.composite
def _call(draw: st.DrawFn) -> ToolCall:
    sig = draw(st.one_of(st.none(), st.text(string.ascii_letters + "+/=", min_size=4, max_size=20)))
    return ToolCall(
        name=draw(st.sampled_from(NAMES)),
        input=draw(_input),
        answer=draw(st.one_of(st.none(), st.text(max_size=500))),
        call_id=draw(st.one_of(st.none(), st.text(string.ascii_letters + "_", min_size=3, max_size=12))),
        is_error=draw(st.booleans()),
        provider_data={"gemini": {"thoughtSignature": sig}} if sig else None,
    )


@st.composite
def histories(draw: st.DrawFn) -> History:
    n = draw(st.integers(0, 9))
    ids = draw(st.lists(_ids, min_size=n + 3, max_size=n + 3, unique=True))
    messages: list[Message] = []
    for k in range(draw(st.integers(0, 2))):
        messages.append(Message(ids.pop(), "system", draw(_words.filter(bool)) + str(k)))
    for _ in range(n):
        if draw(st.booleans()):
            messages.append(Message(ids.pop(), "user", draw(_words)))
        else:
            calls = tuple(draw(st.lists(_call(), max_size=12)))
            messages.append(Message(ids.pop(), "assistant", draw(_reply_text), calls))
    if messages and messages[-1].role == "user" and draw(st.booleans()):
        calls = tuple(draw(st.lists(_call(), min_size=1, max_size=4)))
        messages.append(Message(ids.pop(), "assistant", "", calls, status="in_progress"))
    tools = None
    if draw(st.booleans()):
        tools = (
            ToolSpec("coop", draw(_words), {"type": "object", "properties": {"id": {"type": "integer"}}}),
        )
    return History("h", tuple(messages), tools)


def only_documented(
    fn: Callable[[], T],
    error: type[ToolreplayError] | tuple[type[ToolreplayError], ...],
    where: str = "",
) -> T | None:
    """``fn()``'s result, or None when it raised ``error`` with a clear message (one line, not empty,
    naming ``where`` when given). Anything else propagates and fails the test."""
    try:
        return fn()
    except error as exc:
        msg = str(exc)
        assert msg.strip(), f"{type(exc).__name__} with an empty message"
        assert "\n" not in msg and "Traceback" not in msg, msg
        assert not where or where in msg, f"the message does not name {where!r}: {msg}"
        return None

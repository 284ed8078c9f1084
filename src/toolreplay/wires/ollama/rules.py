"""The Ollama native (the Go type api.Message) provider rules: what the provider refuses, read from a body.

:func:`rules` is run by the validator (``toolreplay validate``, ``check --offline``), by the render
tests and by the loopback double. Each problem is one line naming the place; what the server itself
refuses (arguments that do not decode into the Go map) is a :class:`~toolreplay.wires.contract.Refusal`
carrying its error text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.wires._rules import (
    NAME_RE,
    Ids,
    check_name,
    declared_names,
    extra_keys,
    is_obj,
    nonempty_list,
)
from toolreplay.wires.contract import Refused
from toolreplay.wires.ollama.render import LIST_KEY

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile


_OLLAMA_KEYS = frozenset({"role", "content", "thinking", "images", "tool_calls", "tool_name", "tool_call_id"})


def _undecodable(value: Any) -> str:
    """Go's encoding/json text for arguments that are not an object."""
    kind = (
        "string" if isinstance(value, str) else "array" if isinstance(value, list)
        else "bool" if isinstance(value, bool) else "number"
    )  # fmt: skip
    return (
        f"json: cannot unmarshal {kind} into Go struct field "
        "ToolCallFunction.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments"
    )


def _tool_names(tool: Mapping[str, Any]) -> list[Any]:
    fn = tool.get("function")
    return [fn.get("name")] if is_obj(fn) else []


def _ollama_calls(out: list[str], where: str, calls: Any, ids: Ids, declared: set[str]) -> list[Any]:
    got: list[Any] = []
    for k, c in enumerate(calls if isinstance(calls, list) else []):
        cw = f"{where}.tool_calls[{k}]"
        fn = c.get("function") if is_obj(c) else None
        if not is_obj(fn):
            out.append(f"{cw}.function: missing")
            continue
        extra_keys(out, cw, c, frozenset({"id", "function"}))
        extra_keys(out, f"{cw}.function", fn, frozenset({"index", "name", "arguments"}))
        if "id" in c:
            ids.check(f"{cw}.id", c["id"], fn.get("name"))
        if "index" in fn and (not isinstance(fn["index"], int) or isinstance(fn["index"], bool)):
            out.append(f"{cw}.function.index: not an integer")
        check_name(out, f"{cw}.function.name", fn.get("name"), declared, NAME_RE)
        args = fn.get("arguments")
        if not is_obj(args):
            line = f"{cw}.function.arguments: must be an object (a string does not decode)"
            out.append(Refused(line, _undecodable(args)) if args is not None else line)
        got.append((c.get("id"), fn.get("name")))
    return got


def rules(v: VesselProfile, body: Mapping[str, Any], out: list[str]) -> None:
    msgs = nonempty_list(body, LIST_KEY, out)
    if msgs is None:
        return
    if not isinstance(body.get("stream"), bool):
        out.append("stream: must be given (Ollama streams unless told false)")
    declared = declared_names(body, _tool_names)
    ids = Ids(v, out)
    i = 0
    while i < len(msgs):
        m, where = msgs[i], f"messages[{i}]"
        i += 1
        if not is_obj(m) or m.get("role") not in ("system", "user", "assistant", "tool"):
            out.append(f"{where}: not a message with a known role")
            continue
        extra_keys(out, where, m, _OLLAMA_KEYS)
        if not isinstance(m.get("content", ""), str):
            out.append(f"{where}.content: not a string")
        if m["role"] == "tool":
            out.append(f"{where}: tool message with no assistant tool_calls right before it")
            continue
        for wid, name in _ollama_calls(out, where, m.get("tool_calls"), ids, declared):
            nxt = msgs[i] if i < len(msgs) else None
            if not is_obj(nxt) or nxt.get("role") != "tool" or nxt.get("tool_call_id") != wid:
                out.append(f"messages[{i}]: call {wid!r} of {where} is not answered right after it")
                break
            extra_keys(out, f"messages[{i}]", nxt, _OLLAMA_KEYS)
            if nxt.get("tool_name") != name:
                out.append(f"messages[{i}].tool_name: {nxt.get('tool_name')!r} but the call is to {name!r}")
            i += 1


# The Go types of ollama api/types.go, as the keys each JSON object may carry.
OLLAMA_CHAT_REQUEST = frozenset(
    {"model", "messages", "stream", "format", "keep_alive", "tools", "options", "think", "truncate", "shift"}
    | {"logprobs", "top_logprobs"}
)


OLLAMA_MESSAGE = frozenset(
    {"role", "content", "thinking", "images", "tool_calls", "tool_name", "tool_call_id"}
)


OLLAMA_TOOL_CALL = frozenset({"id", "function"})


OLLAMA_FUNCTION = frozenset({"index", "name", "arguments"})


OLLAMA_TOOL = frozenset({"type", "items", "function"})


OLLAMA_TOOL_FUNCTION = frozenset({"name", "description", "parameters"})


__all__ = ["rules"]

"""The OpenAI Chat provider rules: what the provider refuses, read from a body.

:func:`rules` is run by the validator (``toolreplay validate``, ``check --offline``), by the render
tests and by the loopback double. Each problem is one line naming the place; what OpenAI's server itself
refuses is a :class:`~toolreplay.wires.contract.Refusal` carrying its error text (the double answers
that). The rest is what the replay promises on top: answers in call order, ``null`` content beside
calls, arguments that are JSON objects, declared tools, only the keys the wire takes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolreplay.wires._rules import (
    NAME_RE,
    Ids,
    Refusal,
    check_name,
    declared_names,
    extra_keys,
    is_obj,
    json_object_text,
    nonempty_list,
    say,
)
from toolreplay.wires.contract import Refused
from toolreplay.wires.openai_chat.ids import KIMI, kimi_id
from toolreplay.wires.openai_chat.render import LIST_KEY

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile


# OpenAI's own error texts.
ORPHAN_TOOL = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'."
UNANSWERED_CHAT = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)


def _bad_role(role: Any) -> str:
    return f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool'."


def _missing(where: str, value: str) -> str:
    return f"Missing required parameter: '{where}'."


def _not_a_function(c: Any, where: str) -> str:
    """OpenAI's text for a tool call that is not a function call: which part is missing or wrong."""
    kind = c.get("type") if is_obj(c) else None
    if kind is None:
        return _missing(f"{where}.type" if is_obj(c) else where, "")
    if kind != "function":
        return f"Invalid value: '{kind}'. Supported values are: 'function'."
    return _missing(f"{where}.function", "")


def too_long(where: str, value: str, limit: int) -> str:
    """OpenAI's text for a string over its limit (the id limits: 40 in Chat, 64 in Responses)."""
    return (
        f"Invalid '{where}': string too long. Expected a string with maximum length {limit}, "
        f"but got a string with length {len(value)} instead."
    )


_CHAT_KEYS = {
    "system": frozenset({"role", "content", "name"}),
    "developer": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    "assistant": frozenset({"role", "content", "tool_calls", "name", "refusal"}),
    "tool": frozenset({"role", "tool_call_id", "content"}),
}


#: Moonshot's answer (400, invalid_request_error) to a thinking request whose history holds an assistant
#: tool-call message without the model's reasoning.
KIMI_REASONING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}"
)
#: Moonshot's thinking models (thinking on unless the body turns it off): kimi-k2-thinking(-turbo), the K2.5
#: generation on, and later generations.
_KIMI_THINKING_MODEL = re.compile(r"^kimi-(k2-thinking|k2\.[5-9]|k[3-9])")
_MOONSHOT_HOSTS = ("moonshot.ai", "moonshot.cn")


def moonshot(v: VesselProfile) -> bool:
    """Moonshot's own server (Kimi): the ``kimi`` id policy or a base URL on Moonshot's hosts."""
    host = urlsplit(v.base_url).hostname or ""
    return v.id_policy == KIMI or host.endswith(_MOONSHOT_HOSTS)


def kimi_thinking(body: Mapping[str, Any]) -> bool:
    """Whether Moonshot thinks for ``body``: its ``thinking`` parameter when it says, else the model."""
    thinking = body.get("thinking")
    if is_obj(thinking) and thinking.get("type") in ("enabled", "disabled"):
        return bool(thinking["type"] == "enabled")
    model = body.get("model")
    return isinstance(model, str) and _KIMI_THINKING_MODEL.match(model) is not None


def kimi_reasoning(body: Mapping[str, Any]) -> Refusal | None:
    """Moonshot with thinking on: every assistant message with ``tool_calls`` carries the model's
    ``reasoning_content`` (Kimi's own reasoning, which only it can give back)."""
    msgs = body.get(LIST_KEY)
    if not isinstance(msgs, list) or not kimi_thinking(body):
        return None
    for i, m in enumerate(msgs):
        if not (is_obj(m) and m.get("role") == "assistant" and m.get("tool_calls")):
            continue
        if not isinstance(m.get("reasoning_content"), str):
            return Refusal(
                f"messages[{i}]",
                "thinking is on (Moonshot) but this assistant tool-call message has no reasoning_content",
                KIMI_REASONING.format(i=i),
            )
    return None


def _chat_keys(v: VesselProfile, role: str) -> frozenset[str]:
    keys = _CHAT_KEYS[role]
    if role == "tool" and v.has("tool_message_name"):
        keys = keys | {"name"}  # Kimi's extension, allowed deliberately for this vessel only
    if role == "assistant" and (moonshot(v) or v.has("reasoning_content")):
        keys = keys | {"reasoning_content"}  # the thinking models' own reasoning, sent back to them
    if v.has("no_message_name"):
        keys = keys - {"name"}
    return keys


def _calls(m: Mapping[str, Any], where: str, ids: Ids, declared: set[str], out: list[str]) -> list[Any]:
    """An assistant message's tool_calls, checked: ``(id, name)`` of each (the answers it is owed)."""
    calls = m.get("tool_calls")
    if m.get("content") == "":
        out.append(f'{where}.content: "" on a call-only message; send null')
    wanted: list[tuple[Any, Any]] = []
    for k, c in enumerate(calls if isinstance(calls, list) else []):
        cw = f"{where}.tool_calls[{k}]"
        fn = c.get("function") if is_obj(c) else None
        if not is_obj(fn) or c.get("type") != "function":
            out.append(Refused(f"{cw}: not a function call", _not_a_function(c, cw)))
            continue
        ids.check(f"{cw}.id", c.get("id"), fn.get("name"))
        check_name(out, f"{cw}.function.name", fn.get("name"), declared, NAME_RE)
        args = fn.get("arguments")
        if not isinstance(args, str):
            out.append(
                Refused(
                    f"{cw}.function.arguments: not a string (JSON text)",
                    f"Invalid type for '{cw}.function.arguments': expected a string, but got an object "
                    "instead.",
                )
            )
        elif not json_object_text(args):
            out.append(f"{cw}.function.arguments: not the JSON text of an object")
        wanted.append((c.get("id"), fn.get("name")))
    return wanted


def _answers(v: VesselProfile, msgs: list[Any], i: int, wanted: list[Any], where: str, out: list[str]) -> int:
    """The tool messages right after ``where``: each answers one of its calls (OpenAI refuses anything
    else), and the replay sends them in call order. Where they end."""
    open_ids = [str(wid) for wid, _ in wanted]
    names = {str(wid): name for wid, name in wanted}
    while i < len(msgs) and is_obj(msgs[i]) and msgs[i].get("role") == "tool":
        nxt, tw = msgs[i], f"messages[{i}]"
        tid = nxt.get("tool_call_id")
        if tid not in open_ids:
            out.append(Refused(f"{tw}: tool message answers no open call of {where}", ORPHAN_TOOL))
            return i + 1
        if tid != open_ids[0]:
            out.append(f"{tw}: answers {tid!r} out of call order (the replay answers in call order)")
        open_ids.remove(tid)
        extra_keys(out, tw, nxt, _chat_keys(v, "tool"))
        if "name" in nxt and nxt["name"] != names[tid]:
            out.append(f"{tw}.name: {nxt['name']!r} but the call is to {names[tid]!r}")
        if not isinstance(nxt.get("content"), str):
            out.append(f"{tw}.content: not a string")
        i += 1
    if open_ids:
        line = f"messages[{i}]: call {open_ids[0]!r} of {where} is not answered right after it"
        out.append(Refused(line, UNANSWERED_CHAT.format(ids=", ".join(open_ids))))
    return i


def _tool_names(tool: Mapping[str, Any]) -> list[Any]:
    fn = tool.get("function")
    return [fn.get("name")] if is_obj(fn) else []


def rules(v: VesselProfile, body: Mapping[str, Any], out: list[str]) -> None:
    msgs = nonempty_list(body, LIST_KEY, out, "Missing required parameter: 'messages'.")
    if msgs is None:
        return
    declared = declared_names(body, _tool_names)
    ids = Ids(v, out, missing=_missing, too_long=too_long, named=kimi_id if v.id_policy == KIMI else None)
    i = 0
    while i < len(msgs):
        m, where = msgs[i], f"messages[{i}]"
        i += 1
        role = m.get("role") if is_obj(m) else None
        if role not in _CHAT_KEYS:
            out.append(Refused(f"{where}: not a message with a known role", _bad_role(role)))
            continue
        extra_keys(out, where, m, _chat_keys(v, role))
        if role == "tool":
            line = f"{where}: tool message with no assistant tool_calls right before it"
            out.append(Refused(line, ORPHAN_TOOL))
        elif role == "assistant" and m.get("tool_calls"):
            i = _answers(v, msgs, i, _calls(m, where, ids, declared, out), where, out)
    if moonshot(v):
        say(out, kimi_reasoning(body))


__all__ = [
    "KIMI_REASONING",
    "ORPHAN_TOOL",
    "UNANSWERED_CHAT",
    "kimi_reasoning",
    "kimi_thinking",
    "moonshot",
    "rules",
    "too_long",
]

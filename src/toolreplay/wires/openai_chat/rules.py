"""The OpenAI Chat provider rules: what the provider refuses, read from a body.

:func:`rules` is run by the validator (``toolreplay validate``, ``check --offline``), and by the render
tests. Each problem is one line naming the place.
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
from toolreplay.wires.openai_chat.render import LIST_KEY

if TYPE_CHECKING:
    from toolreplay._vessels import Vessel


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


def moonshot(v: Vessel) -> bool:
    """Moonshot's own server (Kimi): the ``kimi`` id policy or a base URL on Moonshot's hosts."""
    host = urlsplit(v.base_url).hostname or ""
    return v.id_policy == "kimi" or host.endswith(_MOONSHOT_HOSTS)


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


def _chat_keys(v: Vessel, role: str) -> frozenset[str]:
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
            out.append(f"{cw}: not a function call")
            continue
        ids.check(f"{cw}.id", c.get("id"), fn.get("name"))
        check_name(out, f"{cw}.function.name", fn.get("name"), declared, NAME_RE)
        if not json_object_text(fn.get("arguments")):
            out.append(f"{cw}.function.arguments: not the JSON text of an object")
        wanted.append((c.get("id"), fn.get("name")))
    return wanted


def _answers(v: Vessel, msgs: list[Any], i: int, wanted: list[Any], where: str, out: list[str]) -> int:
    """The tool messages owed right after ``where``, same ids, same order: where they end."""
    for wid, name in wanted:
        nxt = msgs[i] if i < len(msgs) else None
        tw = f"messages[{i}]"
        if not is_obj(nxt) or nxt.get("role") != "tool" or nxt.get("tool_call_id") != wid:
            out.append(f"{tw}: call {wid!r} of {where} is not answered right after it")
            break
        extra_keys(out, tw, nxt, _chat_keys(v, "tool"))
        if "name" in nxt and nxt["name"] != name:
            out.append(f"{tw}.name: {nxt['name']!r} but the call is to {name!r}")
        if not isinstance(nxt.get("content"), str):
            out.append(f"{tw}.content: not a string")
        i += 1
    return i


def rules(v: Vessel, body: Mapping[str, Any], out: list[str]) -> None:
    msgs = nonempty_list(body, LIST_KEY, out)
    if msgs is None:
        return
    declared = declared_names(body, lambda t: [t.get("function", {}).get("name")])
    ids = Ids(v, out)
    i = 0
    while i < len(msgs):
        m, where = msgs[i], f"messages[{i}]"
        i += 1
        if not is_obj(m) or m.get("role") not in _CHAT_KEYS:
            out.append(f"{where}: not a message with a known role")
            continue
        extra_keys(out, where, m, _chat_keys(v, m["role"]))
        if m["role"] == "tool":
            out.append(f"{where}: tool message with no assistant tool_calls right before it")
        elif m["role"] == "assistant" and m.get("tool_calls"):
            i = _answers(v, msgs, i, _calls(m, where, ids, declared, out), where, out)
    if moonshot(v):
        say(out, kimi_reasoning(body))


__all__ = ["KIMI_REASONING", "kimi_reasoning", "kimi_thinking", "moonshot", "rules"]

"""The Anthropic provider rules: what the provider refuses, read from a body.

:func:`rules` is run by the validator (``toolreplay validate``, ``check --offline``), and by the render
tests. Each problem is one line naming the place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.wires._rules import (
    NAME_RE,
    Ids,
    Refusal,
    check_name,
    declared_names,
    extra_keys,
    is_obj,
    nonempty_list,
    say,
)
from toolreplay.wires.anthropic.render import LIST_KEY
from toolreplay.wires.common import signature_issuer

if TYPE_CHECKING:
    from toolreplay._vessels import Vessel


_BLOCK_KEYS = {
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "text": frozenset({"type", "text", "cache_control"}),
    "tool_use": frozenset({"type", "id", "name", "input", "cache_control"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"}),
}


def _anthropic_blocks(out: list[str], where: str, m: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(place, block)`` pairs of one message; string content becomes a text block."""
    content = m.get("content")
    if isinstance(content, str):
        if not content.strip():
            out.append(f"{where}.content: blank (Anthropic rejects empty content)")
        return [(f"{where}.content", {"type": "text", "text": content})]
    if not isinstance(content, list) or not content:
        out.append(f"{where}.content: must be a non-empty string or list of blocks")
        return []
    blocks: list[tuple[str, Any]] = []
    for k, b in enumerate(content):
        bw = f"{where}.content[{k}]"
        kind = b.get("type") if is_obj(b) else None
        if kind not in _BLOCK_KEYS:
            out.append(f"{bw}: not a block this wire renders ({kind!r})")
            continue
        extra_keys(out, bw, b, _BLOCK_KEYS[kind])
        if kind == "text" and not (isinstance(b.get("text"), str) and b["text"].strip()):
            out.append(f"{bw}.text: blank (400 text content blocks must contain non-whitespace text)")
        blocks.append((bw, b))
    return blocks


Turn = tuple[str, list[tuple[str, Any]]]


def _turns(msgs: list[Any], out: list[str]) -> list[Turn]:
    """The turns the server sees: it combines consecutive same-role messages before its checks."""
    turns: list[Turn] = []
    for i, m in enumerate(msgs):
        where = f"messages[{i}]"
        if not is_obj(m) or m.get("role") not in ("user", "assistant"):
            out.append(f"{where}: role must be user or assistant")
            continue
        extra_keys(out, where, m, frozenset({"role", "content"}))
        blocks = _anthropic_blocks(out, where, m)
        if turns and turns[-1][0] == m["role"]:
            turns[-1][1].extend(blocks)
        else:
            turns.append((m["role"], blocks))
    return turns


def _results(blocks: list[tuple[str, Any]], open_ids: list[Any], out: list[str]) -> None:
    """The tool_result blocks of a turn: exactly the open calls' results, first, in order."""
    results = [b for b in blocks if b[1].get("type") == "tool_result"]
    if open_ids:
        got = [b.get("tool_use_id") for _, b in blocks[: len(open_ids)] if b.get("type") == "tool_result"]
        if got != open_ids:
            where = blocks[0][0] if blocks else "messages"
            out.append(f"{where}: the results of {open_ids} must open the next user message, in order")
    elif results:
        out.append(f"{results[0][0]}: tool_result with no tool_use right before it")
    if len(results) > len(open_ids):
        out.append(f"{results[-1][0]}: more tool_result blocks than calls before them")


def _uses(turn: Turn, ids: Ids, declared: set[str], out: list[str]) -> list[Any]:
    """The tool_use blocks of an assistant turn, checked; their ids (the results the next turn owes)."""
    role, blocks = turn
    open_ids: list[Any] = []
    for bw, b in blocks:
        if role != "assistant" or b.get("type") != "tool_use":
            continue
        if not declared:
            out.append(f"{bw}: tool_use but the request defines no tools")
        ids.check(f"{bw}.id", b.get("id"), b.get("name"))
        check_name(out, f"{bw}.name", b.get("name"), declared or {b.get("name")}, NAME_RE)
        if not is_obj(b.get("input")):
            out.append(f"{bw}.input: must be an object")
        open_ids.append(b.get("id"))
    if role == "user" and any(b.get("type") == "tool_use" for _, b in blocks):
        out.append("a user message holds tool_use blocks")
    return open_ids


#: Anthropic's answer (400 invalid_request_error) to a thinking continuation whose turn does not open with
#: its thinking block (the extended-thinking documentation: thinking blocks must be passed back during
#: tool use).
THINKING_FIRST = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
    "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
    "previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)


def _holds(m: Any, kind: str) -> bool:
    content = m.get("content") if is_obj(m) else None
    return isinstance(content, list) and any(is_obj(b) and b.get("type") == kind for b in content)


def _loop_start(msgs: list[Any]) -> int | None:
    """The tool loop's first assistant message: the first after the last user message that is not
    ``tool_result`` blocks (the one that asked)."""
    asked = -1
    for i, m in enumerate(msgs):
        if is_obj(m) and m.get("role") == "user" and not _holds(m, "tool_result"):
            asked = i
    for i in range(asked + 1, len(msgs)):
        if is_obj(msgs[i]) and msgs[i].get("role") == "assistant":
            return i
    return None


def thinking_first(body: Mapping[str, Any]) -> Refusal | None:
    """With thinking on (``"type": "enabled"``: adaptive thinking may answer without thinking), a request
    that continues a tool loop (it ends with a user message of ``tool_result`` blocks) must open the loop's
    first assistant message with the thinking block the model wrote there."""
    msgs = body.get(LIST_KEY)
    thinking = body.get("thinking")
    if not isinstance(msgs, list) or not msgs or not (is_obj(thinking) and thinking.get("type") == "enabled"):
        return None
    if not (is_obj(msgs[-1]) and msgs[-1].get("role") == "user" and _holds(msgs[-1], "tool_result")):
        return None
    first = _loop_start(msgs)
    if first is None:
        return None
    content = msgs[first].get("content")
    head = content[0] if isinstance(content, list) and content else {"type": "text"}
    found = head.get("type") if is_obj(head) else None
    if found in ("thinking", "redacted_thinking"):
        return None
    return Refusal(
        f"messages[{first}].content[0]",
        f"thinking is on and the request continues a tool loop, but the loop's first assistant message "
        f"starts with {found!r}, not its thinking block",
        THINKING_FIRST.format(i=first, found=found),
    )


#: Anthropic's answer (400 invalid_request_error) to a thinking block it did not sign for this model
#: (edited, or written by another model).
FOREIGN_THINKING = "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"


def foreign_thinking(body: Mapping[str, Any]) -> Refusal | None:
    """A thinking block goes back only to the model that wrote it (design 17). Whose a signature is can be
    read only from the provider doubles' own (``signature_issuer``); a real one is opaque here and passes."""
    msgs, model = body.get(LIST_KEY), body.get("model")
    for i, m in enumerate(msgs if isinstance(msgs, list) else []):
        content = m.get("content") if is_obj(m) and m.get("role") == "assistant" else None
        for j, b in enumerate(content if isinstance(content, list) else []):
            sig = b.get("signature") if is_obj(b) and b.get("type") == "thinking" else None
            issuer = signature_issuer(sig) if isinstance(sig, str) else None
            if issuer is not None and issuer != model:
                problem = f"a thinking block {issuer!r} wrote, sent to {model!r}"
                return Refusal(
                    f"messages[{i}].content[{j}].signature", problem, FOREIGN_THINKING.format(i=i, j=j)
                )
    return None


def rules(v: Vessel, body: Mapping[str, Any], out: list[str]) -> None:
    msgs = nonempty_list(body, LIST_KEY, out)
    if msgs is None:
        return
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        out.append("max_tokens: required, a positive integer")
    declared = declared_names(body, lambda t: [t.get("name")])
    turns = _turns(msgs, out)
    if turns and turns[0][0] != "user":
        out.append('messages[0]: the first message must use the "user" role')
    ids = Ids(v, out, pattern=True)
    open_ids: list[Any] = []
    for turn in turns:
        _results(turn[1], open_ids, out)
        open_ids = _uses(turn, ids, declared, out)
    say(out, thinking_first(body))
    say(out, foreign_thinking(body))


__all__ = ["FOREIGN_THINKING", "THINKING_FIRST", "foreign_thinking", "rules", "thinking_first"]

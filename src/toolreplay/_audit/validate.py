"""Check a rendered request body: the wire rules no schema encodes, then the providers' own definitions.

Two layers, both pure (no network):

* :func:`rule_problems` needs no dependency. Per wire: id patterns and lengths (Anthropic
  ``^[a-zA-Z0-9_-]+$``, Chat's 40 on the ``openai`` vessel, Responses 1..64, Kimi's
  ``functions.<name>:<index>`` with a running index), ids unique in a request, every call answered by
  answers right after it (same ids, same order), Anthropic ``tool_result`` blocks first in the next user
  message and tools defined, Gemini response count == call count and the first call of each model turn
  signed, Chat ``content: null`` on call-only messages, arguments that are JSON objects, every called
  tool declared, and only the keys the wire takes, plus the vessel's own extensions (Kimi ``name`` on
  tool messages), nothing else.
* :func:`spec_report` checks against the providers' definitions (see :mod:`toolreplay._audit.validate_specs`):
  OpenAI's OpenAPI spec with jsonschema, the official SDKs' types through pydantic (extra keys
  forbidden, lazy iterables forced), Ollama's Go ``api.Message`` shape. What it could not check (a
  dependency or the specs directory missing) is listed in :attr:`Report.unchecked`, never silently
  passed.

:func:`validate_body` runs both and returns the problems (empty: valid). Each problem is one line that
names the place: ``messages[3].tool_calls[0].id: 41 characters, the vessel allows at most 40``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from toolreplay._vessels import Vessel, get_vessel

#: OpenAI and Anthropic function names.
# \Z, not $ (which also matches before a trailing newline): "coop\n" is not a valid name.
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
#: Gemini function names: a letter or ``_`` first; dots, colons and dashes allowed.
GEMINI_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}\Z")
ANTHROPIC_ID_RE = re.compile(r"^[A-Za-z0-9_-]+\Z")
KIMI_ID_RE = re.compile(r"^functions\.(?P<name>.+):(?P<index>[0-9]+)\Z")
RESPONSES_MAX_ID = 64


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of a check: ``problems`` (empty: valid) and ``unchecked`` (what could not be checked)."""

    problems: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def _is_obj(v: Any) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(v, Mapping)


def _json_object_text(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except (json.JSONDecodeError, RecursionError):
        return False


class _Ids:
    """The id rules of one request: unique, the vessel's length and shape rules."""

    def __init__(self, v: Vessel, out: list[str], *, max_len: int | None = None, pattern: bool = False):
        self.v, self.out, self.pattern = v, out, pattern
        limits = [n for n in (v.max_id_len, max_len) if n is not None]
        self.max_len = min(limits) if limits else None
        self.seen: set[str] = set()
        self.index = 0

    def check(self, where: str, wid: Any, name: Any) -> None:
        index, self.index = self.index, self.index + 1
        if not isinstance(wid, str) or not wid:
            self.out.append(f"{where}: missing or not a string")
            return
        if wid in self.seen:
            self.out.append(f"{where}: {wid!r} is used twice in this request")
        self.seen.add(wid)
        if self.v.id_policy == "kimi":
            m = KIMI_ID_RE.match(wid)
            if m is None or m.group("name") != name or int(m.group("index")) != index:
                self.out.append(f"{where}: {wid!r} is not functions.{name}:{index} (Kimi's running form)")
            return  # design 7: Kimi ids go in full, whatever their length
        if self.max_len is not None and len(wid) > self.max_len:
            self.out.append(f"{where}: {len(wid)} characters, the vessel allows at most {self.max_len}")
        if self.pattern and not ANTHROPIC_ID_RE.match(wid):
            self.out.append(f"{where}: {wid!r} does not match ^[a-zA-Z0-9_-]+$")


def _extra_keys(out: list[str], where: str, obj: Mapping[str, Any], allowed: frozenset[str]) -> None:
    extra = sorted(str(k) for k in obj if k not in allowed)
    if extra:
        out.append(f"{where}: key(s) {', '.join(extra)} not allowed here")


def _declared(body: Mapping[str, Any], names: Callable[[Any], list[Any]]) -> set[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return set()
    got: set[str] = set()
    for t in tools:
        if _is_obj(t):
            got.update(n for n in names(t) if isinstance(n, str))
    return got


def _nonempty_list(body: Mapping[str, Any], key: str, out: list[str]) -> list[Any] | None:
    """The body's ``key`` list, or None (and the problem said) when it is missing or empty."""
    value = body.get(key)
    if not isinstance(value, list) or not value:
        out.append(f"{key}: must be a non-empty list")
        return None
    return value


def _check_name(out: list[str], where: str, name: Any, declared: set[str], rx: re.Pattern[str]) -> None:
    if not isinstance(name, str) or not rx.match(name):
        out.append(f"{where}: tool name {name!r} does not match {rx.pattern}")
    elif name not in declared:
        out.append(f"{where}: tool {name!r} is not declared in tools")


# --------------------------------------------------------------------------------------------------
# OpenAI Chat

_CHAT_KEYS = {
    "system": frozenset({"role", "content", "name"}),
    "developer": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    "assistant": frozenset({"role", "content", "tool_calls", "name", "refusal"}),
    "tool": frozenset({"role", "tool_call_id", "content"}),
}


def _chat_keys(v: Vessel, role: str) -> frozenset[str]:
    keys = _CHAT_KEYS[role]
    if role == "tool" and v.has("tool_message_name"):
        keys = keys | {"name"}  # Kimi's extension, allowed deliberately for this vessel only
    if v.has("no_message_name"):
        keys = keys - {"name"}
    return keys


def _chat_rules(v: Vessel, body: Mapping[str, Any], out: list[str]) -> None:
    msgs = _nonempty_list(body, "messages", out)
    if msgs is None:
        return
    declared = _declared(body, lambda t: [t.get("function", {}).get("name")])
    ids = _Ids(v, out)
    i = 0
    while i < len(msgs):
        m, where = msgs[i], f"messages[{i}]"
        i += 1
        if not _is_obj(m) or m.get("role") not in _CHAT_KEYS:
            out.append(f"{where}: not a message with a known role")
            continue
        _extra_keys(out, where, m, _chat_keys(v, m["role"]))
        if m["role"] == "tool":
            out.append(f"{where}: tool message with no assistant tool_calls right before it")
            continue
        calls = m.get("tool_calls")
        if m["role"] != "assistant" or not calls:
            continue
        if m.get("content") == "":
            out.append(f'{where}.content: "" on a call-only message; send null')
        wanted: list[tuple[Any, Any]] = []
        for k, c in enumerate(calls if isinstance(calls, list) else []):
            cw = f"{where}.tool_calls[{k}]"
            fn = c.get("function") if _is_obj(c) else None
            if not _is_obj(fn) or c.get("type") != "function":
                out.append(f"{cw}: not a function call")
                continue
            ids.check(f"{cw}.id", c.get("id"), fn.get("name"))
            _check_name(out, f"{cw}.function.name", fn.get("name"), declared, NAME_RE)
            if not _json_object_text(fn.get("arguments")):
                out.append(f"{cw}.function.arguments: not the JSON text of an object")
            wanted.append((c.get("id"), fn.get("name")))
        for wid, name in wanted:
            nxt = msgs[i] if i < len(msgs) else None
            tw = f"messages[{i}]"
            if not _is_obj(nxt) or nxt.get("role") != "tool" or nxt.get("tool_call_id") != wid:
                out.append(f"{tw}: call {wid!r} of {where} is not answered right after it")
                break
            _extra_keys(out, tw, nxt, _chat_keys(v, "tool"))
            if "name" in nxt and nxt["name"] != name:
                out.append(f"{tw}.name: {nxt['name']!r} but the call is to {name!r}")
            if not isinstance(nxt.get("content"), str):
                out.append(f"{tw}.content: not a string")
            i += 1


# --------------------------------------------------------------------------------------------------
# OpenAI Responses

_RESP_KEYS = {
    "function_call": frozenset({"type", "call_id", "name", "arguments"}),
    "function_call_output": frozenset({"type", "call_id", "output"}),
    "message": frozenset({"type", "role", "content"}),
}


def _responses_rules(v: Vessel, body: Mapping[str, Any], out: list[str]) -> None:
    items = body.get("input")
    if not isinstance(items, list):
        out.append("input: must be a list")
        return
    if v.has("store_false") and body.get("store") is not False:
        out.append(f"store: must be false on vessel {v.name}")
    tools = body.get("tools")
    for k, t in enumerate(tools if isinstance(tools, list) else []):
        if _is_obj(t) and t.get("type") == "function" and not isinstance(t.get("strict"), bool):
            out.append(f"tools[{k}].strict: missing (the spec requires it; design 8)")
    declared = _declared(body, lambda t: [t.get("name")])
    ids = _Ids(v, out, max_len=RESPONSES_MAX_ID)
    i = 0
    while i < len(items):
        it, where = items[i], f"input[{i}]"
        kind = (it.get("type") or "message") if _is_obj(it) else None
        if kind not in _RESP_KEYS:
            out.append(f"{where}: not an item this wire renders ({kind!r})")
            i += 1
            continue
        if "id" in it and kind == "function_call":
            out.append(f"{where}.id: a replayed call carries no item id (it demands its reasoning item)")
        _extra_keys(out, where, it, _RESP_KEYS[kind] | ({"id"} if kind == "function_call" else set()))
        if kind == "function_call_output":
            out.append(f"{where}: output with no call right before it")
        if kind != "function_call":
            i += 1
            continue
        group: list[Any] = []
        while i < len(items) and _is_obj(items[i]) and items[i].get("type") == "function_call":
            c, cw = items[i], f"input[{i}]"
            ids.check(f"{cw}.call_id", c.get("call_id"), c.get("name"))
            _check_name(out, f"{cw}.name", c.get("name"), declared, NAME_RE)
            if not _json_object_text(c.get("arguments")):
                out.append(f"{cw}.arguments: not the JSON text of an object")
            group.append(c.get("call_id"))
            i += 1
        for cid in group:
            nxt = items[i] if i < len(items) else None
            if not _is_obj(nxt) or nxt.get("type") != "function_call_output" or nxt.get("call_id") != cid:
                out.append(f"input[{i}]: call {cid!r} is not answered right after the calls")
                break
            _extra_keys(out, f"input[{i}]", nxt, _RESP_KEYS["function_call_output"])
            if not isinstance(nxt.get("output"), str):
                out.append(f"input[{i}].output: not a string")
            i += 1


# --------------------------------------------------------------------------------------------------
# Anthropic

_BLOCK_KEYS = {
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
        kind = b.get("type") if _is_obj(b) else None
        if kind not in _BLOCK_KEYS:
            out.append(f"{bw}: not a block this wire renders ({kind!r})")
            continue
        _extra_keys(out, bw, b, _BLOCK_KEYS[kind])
        if kind == "text" and not (isinstance(b.get("text"), str) and b["text"].strip()):
            out.append(f"{bw}.text: blank (400 text content blocks must contain non-whitespace text)")
        blocks.append((bw, b))
    return blocks


def _anthropic_rules(v: Vessel, body: Mapping[str, Any], out: list[str]) -> None:
    msgs = _nonempty_list(body, "messages", out)
    if msgs is None:
        return
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        out.append("max_tokens: required, a positive integer")
    declared = _declared(body, lambda t: [t.get("name")])
    # The server combines consecutive same-role messages: check the turns it will see.
    turns: list[tuple[str, list[tuple[str, Any]]]] = []
    for i, m in enumerate(msgs):
        where = f"messages[{i}]"
        if not _is_obj(m) or m.get("role") not in ("user", "assistant"):
            out.append(f"{where}: role must be user or assistant")
            continue
        _extra_keys(out, where, m, frozenset({"role", "content"}))
        blocks = _anthropic_blocks(out, where, m)
        if turns and turns[-1][0] == m["role"]:
            turns[-1][1].extend(blocks)
        else:
            turns.append((m["role"], blocks))
    if turns and turns[0][0] != "user":
        out.append('messages[0]: the first message must use the "user" role')
    ids = _Ids(v, out, pattern=True)
    open_ids: list[Any] = []
    for role, blocks in turns:
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
        open_ids = []
        for bw, b in blocks:
            if role != "assistant" or b.get("type") != "tool_use":
                continue
            if not declared:
                out.append(f"{bw}: tool_use but the request defines no tools")
            ids.check(f"{bw}.id", b.get("id"), b.get("name"))
            _check_name(out, f"{bw}.name", b.get("name"), declared or {b.get("name")}, NAME_RE)
            if not _is_obj(b.get("input")):
                out.append(f"{bw}.input: must be an object")
            open_ids.append(b.get("id"))
        if role == "user" and any(b.get("type") == "tool_use" for _, b in blocks):
            out.append("a user message holds tool_use blocks")


# --------------------------------------------------------------------------------------------------
# Gemini (camelCase rendered; snake_case read too, design 9)


def _g(part: Mapping[str, Any], camel: str, snake: str) -> Any:
    return part.get(camel, part.get(snake))


_PART_KEYS = frozenset(
    {"text", "functionCall", "function_call", "functionResponse", "function_response"}
    | {"thoughtSignature", "thought_signature"}
)


def _gemini_parts(out: list[str], where: str, c: Any) -> list[tuple[str, Mapping[str, Any]]]:
    parts = c.get("parts") if _is_obj(c) else None
    if not _is_obj(c) or c.get("role") not in ("user", "model"):
        out.append(f"{where}: role must be user or model")
        return []
    _extra_keys(out, where, c, frozenset({"role", "parts"}))
    if not isinstance(parts, list) or not parts:
        out.append(f"{where}.parts: must be a non-empty list")
        return []
    got: list[tuple[str, Mapping[str, Any]]] = []
    for k, p in enumerate(parts):
        pw = f"{where}.parts[{k}]"
        if not _is_obj(p):
            out.append(f"{pw}: not an object")
            continue
        _extra_keys(out, pw, p, _PART_KEYS)
        data = [
            key for key in ("text", "functionCall", "functionResponse") if _g(p, key, _snake(key)) is not None
        ]
        if len(data) != 1:
            out.append(f"{pw}: must hold exactly one of text, functionCall, functionResponse")
        if "text" in p and not (isinstance(p["text"], str) and p["text"].strip()):
            out.append(f"{pw}.text: blank (Gemini rejects an empty text parameter)")
        got.append((pw, p))
    return got


def _snake(camel: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)


def _gemini_declared(body: Mapping[str, Any]) -> set[str]:
    declared: set[str] = set()
    tools = body.get("tools")
    for t in tools if isinstance(tools, list) else []:
        decls = _g(t, "functionDeclarations", "function_declarations") if _is_obj(t) else None
        for d in decls if isinstance(decls, list) else []:
            if _is_obj(d) and isinstance(d.get("name"), str):
                declared.add(d["name"])
    return declared


def _gemini_answers(out: list[str], where: str, c: Any, parts: list[Any], pending: list[Any]) -> None:
    """The content after a function-call turn: exactly its responses, same count, same order."""
    resps = [(pw, _g(p, "functionResponse", "function_response")) for pw, p in parts]
    resps = [(pw, r) for pw, r in resps if r is not None]
    if pending:
        names = [r.get("name") if _is_obj(r) else None for _, r in resps]
        if c.get("role") != "user" or len(resps) != len(parts) or names != pending:
            out.append(f"{where}: must be a user content of functionResponse parts for {pending}, in order")
    elif resps:
        out.append(f"{resps[0][0]}: functionResponse with no functionCall right before it")
    for pw, r in resps:
        if not _is_obj(r) or not _is_obj(r.get("response")):
            out.append(f"{pw}.functionResponse.response: must be an object")


def _gemini_calls(
    out: list[str], where: str, c: Any, parts: list[Any], prev_role: Any, declared: set[str]
) -> list[Any]:
    """The names of one content's function calls, checked (signature, placement, name, args)."""
    calls = [(pw, p, _g(p, "functionCall", "function_call")) for pw, p in parts]
    calls = [(pw, p, fc) for pw, p, fc in calls if fc is not None]
    if not calls:
        return []
    if c.get("role") != "model":
        out.append(f"{where}: functionCall parts in a {c.get('role')} content")
    if prev_role != "user":
        out.append(f"{where}: a function-call turn must follow a user or function-response turn")
    sig = _g(calls[0][1], "thoughtSignature", "thought_signature")
    if not isinstance(sig, str) or not sig:
        out.append(f"{calls[0][0]}: the first functionCall of a model turn needs a thoughtSignature")
    names: list[Any] = []
    for pw, _, fc in calls:
        if not _is_obj(fc):
            out.append(f"{pw}.functionCall: not an object")
            continue
        _check_name(out, f"{pw}.functionCall.name", fc.get("name"), declared, GEMINI_NAME_RE)
        if not _is_obj(fc.get("args", {})):
            out.append(f"{pw}.functionCall.args: must be an object")
        names.append(fc.get("name"))
    return names


def _gemini_rules(v: Vessel, body: Mapping[str, Any], out: list[str]) -> None:
    contents = _nonempty_list(body, "contents", out)
    if contents is None:
        return
    if "model" in body:
        out.append("model: goes in the URL, not in the body")
    declared = _gemini_declared(body)
    pending: list[Any] = []
    prev_role: Any = None
    for i, c in enumerate(contents):
        where = f"contents[{i}]"
        parts = _gemini_parts(out, where, c)
        if not _is_obj(c):
            continue
        _gemini_answers(out, where, c, parts, pending)
        pending = _gemini_calls(out, where, c, parts, prev_role, declared)
        prev_role = c.get("role")
    if pending:
        out.append(f"contents: the last calls {pending} have no functionResponse")


# --------------------------------------------------------------------------------------------------
# Ollama native (the Go type api.Message)

_OLLAMA_KEYS = frozenset({"role", "content", "thinking", "images", "tool_calls", "tool_name", "tool_call_id"})


def _ollama_calls(out: list[str], where: str, calls: Any, ids: _Ids, declared: set[str]) -> list[Any]:
    got: list[Any] = []
    for k, c in enumerate(calls if isinstance(calls, list) else []):
        cw = f"{where}.tool_calls[{k}]"
        fn = c.get("function") if _is_obj(c) else None
        if not _is_obj(fn):
            out.append(f"{cw}.function: missing")
            continue
        _extra_keys(out, cw, c, frozenset({"id", "function"}))
        _extra_keys(out, f"{cw}.function", fn, frozenset({"index", "name", "arguments"}))
        if "id" in c:
            ids.check(f"{cw}.id", c["id"], fn.get("name"))
        if "index" in fn and (not isinstance(fn["index"], int) or isinstance(fn["index"], bool)):
            out.append(f"{cw}.function.index: not an integer")
        _check_name(out, f"{cw}.function.name", fn.get("name"), declared, NAME_RE)
        if not _is_obj(fn.get("arguments")):
            out.append(f"{cw}.function.arguments: must be an object (a string does not decode)")
        got.append((c.get("id"), fn.get("name")))
    return got


def _ollama_rules(v: Vessel, body: Mapping[str, Any], out: list[str]) -> None:
    msgs = _nonempty_list(body, "messages", out)
    if msgs is None:
        return
    if not isinstance(body.get("stream"), bool):
        out.append("stream: must be given (Ollama streams unless told false)")
    declared = _declared(body, lambda t: [t.get("function", {}).get("name")])
    ids = _Ids(v, out)
    i = 0
    while i < len(msgs):
        m, where = msgs[i], f"messages[{i}]"
        i += 1
        if not _is_obj(m) or m.get("role") not in ("system", "user", "assistant", "tool"):
            out.append(f"{where}: not a message with a known role")
            continue
        _extra_keys(out, where, m, _OLLAMA_KEYS)
        if not isinstance(m.get("content", ""), str):
            out.append(f"{where}.content: not a string")
        if m["role"] == "tool":
            out.append(f"{where}: tool message with no assistant tool_calls right before it")
            continue
        for wid, name in _ollama_calls(out, where, m.get("tool_calls"), ids, declared):
            nxt = msgs[i] if i < len(msgs) else None
            if not _is_obj(nxt) or nxt.get("role") != "tool" or nxt.get("tool_call_id") != wid:
                out.append(f"messages[{i}]: call {wid!r} of {where} is not answered right after it")
                break
            _extra_keys(out, f"messages[{i}]", nxt, _OLLAMA_KEYS)
            if nxt.get("tool_name") != name:
                out.append(f"messages[{i}].tool_name: {nxt.get('tool_name')!r} but the call is to {name!r}")
            i += 1


# --------------------------------------------------------------------------------------------------
# claude-prompt


def _claude_prompt_rules(v: Vessel, body: Mapping[str, Any], out: list[str]) -> None:
    from toolreplay.wires.claude_prompt.render import transcript_lines

    _extra_keys(out, "body", body, frozenset({"model", "system", "prompt"}))
    if not isinstance(body.get("prompt"), str) or not body["prompt"]:
        out.append("prompt: must be a non-empty string")
        return
    for n, line in enumerate(transcript_lines(dict(body))):
        where = f"prompt: transcript line {n + 1}"
        try:
            turn = json.loads(line)
        except json.JSONDecodeError as exc:
            out.append(f"{where}: not JSON ({exc.msg})")
            continue
        if not _is_obj(turn) or turn.get("role") not in ("user", "assistant"):
            out.append(f"{where}: not a turn with role user or assistant")
            continue
        _extra_keys(out, where, turn, frozenset({"role", "calls", "text"}))
        for k, c in enumerate(turn.get("calls") or []):
            ok = _is_obj(c) and isinstance(c.get("tool"), str) and _is_obj(c.get("input"))
            if not ok or not isinstance(c.get("answer"), str):
                out.append(f"{where}: calls[{k}] needs tool (string), input (object) and answer (string)")
            elif set(c) - {"tool", "input", "answer", "error"}:
                out.append(f"{where}: calls[{k}] has unknown keys")


# --------------------------------------------------------------------------------------------------
# the public functions

_RULES: dict[str, Callable[[Vessel, Mapping[str, Any], list[str]], None]] = {
    "openai-chat": _chat_rules,
    "openai-responses": _responses_rules,
    "anthropic": _anthropic_rules,
    "gemini": _gemini_rules,
    "ollama": _ollama_rules,
    "claude-prompt": _claude_prompt_rules,
}


def rule_problems(vessel: str | Vessel, body: Mapping[str, Any]) -> list[str]:
    """The wire rules no schema encodes, checked on ``body`` for ``vessel`` (no dependency needed)."""
    v = get_vessel(vessel)
    out: list[str] = []
    if not _is_obj(body):
        return [f"body: not a JSON object ({type(body).__name__})"]
    _RULES[v.wire](v, body, out)
    return out


def spec_report(vessel: str | Vessel, body: Mapping[str, Any], *, specs_dir: Path | None = None) -> Report:
    """``body`` checked against the provider's own definitions (see :mod:`.validate_specs`)."""
    from toolreplay._audit.validate_specs import check_specs

    v = get_vessel(vessel)
    problems, unchecked = check_specs(v, body, specs_dir)
    return Report(tuple(problems), tuple(unchecked))


def check_body(vessel: str | Vessel, body: Mapping[str, Any], *, specs_dir: Path | None = None) -> Report:
    """The rules and the spec checks together: every problem, and what could not be checked."""
    rules = rule_problems(vessel, body)
    spec = spec_report(vessel, body, specs_dir=specs_dir)
    return Report(tuple(rules) + spec.problems, spec.unchecked)


def validate_body(
    vessel: str | Vessel, body: Mapping[str, Any], *, specs_dir: Path | None = None
) -> list[str]:
    """Every problem of ``body`` for ``vessel`` (empty: valid); :func:`check_body` also says what was
    skipped."""
    return list(check_body(vessel, body, specs_dir=specs_dir).problems)


__all__ = ["Report", "check_body", "rule_problems", "spec_report", "validate_body"]

"""The request checks of each double: the rules the real providers enforce, with their real error text.

Each ``check_<wire>(body, rules)`` returns None for a request the provider would take, or the message of
the 400 it would answer. Only rules that real servers enforce are here (each names its provider text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The rules that differ between vessels speaking one wire.
ORPHAN_TOOL = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'."
UNANSWERED_CHAT = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
MUST_DEFINE_TOOLS = "Requests which include `tool_use` or `tool_result` blocks must define tools."
NO_RESULT_AFTER = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
UNEXPECTED_RESULT = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to "
    "work correctly, and missing thought_signature may lead to degraded model performance. Additional "
    "data, function call `default_api:{name}` , position {pos}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
GEMINI_COUNT = (
    "Please ensure that the number of function response parts is equal to the number of function call "
    "parts of the function call turn."
)
GEMINI_ORDER = (
    "Please ensure that function call turn comes immediately after a user turn or after a function "
    "response turn."
)
NO_CALL_FOR_OUTPUT = "No tool call found for function call output with call_id {id}."
NO_OUTPUT_FOR_CALL = "No tool output found for function call {id}."
_RS = "'reasoning' item."
_STRUCT = "(type.googleapis.com/google.protobuf.Struct)"
_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+\Z")


@dataclass(frozen=True, slots=True)
class Rules:
    """Vessel-dependent rules: the Chat id limit (OpenAI's own server: 40), Codex's stream/store demands,
    Gemini 3's thought signatures."""

    max_id_len: int | None = 40
    codex: bool = False
    require_signatures: bool = True


def _too_long(where: str, value: str, limit: int) -> str:
    return (
        f"Invalid '{where}': string too long. Expected a string with maximum length {limit}, "
        f"but got a string with length {len(value)} instead."
    )


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# -- OpenAI Chat ----------------------------------------------------------------------------------------


def check_chat(body: Mapping[str, Any], rules: Rules) -> str | None:
    if not body.get("model"):
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "Missing required parameter: 'messages'."
    pending: list[str] = []
    for i, raw in enumerate(messages):
        m = _map(raw)
        role = m.get("role")
        if role == "tool":
            tid = m.get("tool_call_id")
            if tid not in pending:
                return ORPHAN_TOOL
            pending.remove(tid)
            continue
        if pending:
            return UNANSWERED_CHAT.format(ids=", ".join(pending))
        if role not in ("system", "developer", "user", "assistant"):
            return f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool'."
        for j, tc in enumerate(_list(m.get("tool_calls")) if role == "assistant" else ()):
            problem = _chat_call(_map(tc), i, j, rules)
            if problem:
                return problem
            pending.append(str(_map(tc).get("id")))
    if pending:
        return UNANSWERED_CHAT.format(ids=", ".join(pending))
    return None


def _chat_call(tc: Mapping[str, Any], i: int, j: int, rules: Rules) -> str | None:
    where = f"messages[{i}].tool_calls[{j}]"
    tid = tc.get("id")
    if not isinstance(tid, str) or not tid:
        return f"Missing required parameter: '{where}.id'."
    if rules.max_id_len is not None and len(tid) > rules.max_id_len:
        return _too_long(f"{where}.id", tid, rules.max_id_len)
    args = _map(tc.get("function")).get("arguments")
    if not isinstance(args, str):
        return f"Invalid type for '{where}.function.arguments': expected a string, but got an object instead."
    return None


# -- OpenAI Responses -----------------------------------------------------------------------------------


def check_responses(body: Mapping[str, Any], rules: Rules) -> str | None:
    if not body.get("model"):
        return "Missing required parameter: 'model'."
    if rules.codex:
        if body.get("store") is not False:
            return "Store must be set to false"
        if body.get("stream") is not True:
            return "Stream must be set to true"
    items = body.get("input")
    if isinstance(items, str):
        return None
    calls: list[str] = []
    answered: set[str] = set()
    reasoning_seen = False
    for i, raw in enumerate(_list(items)):
        item = _map(raw)
        kind = item.get("type")
        if kind == "reasoning":
            reasoning_seen = True
        elif kind == "function_call":
            cid = str(item.get("call_id") or "")
            if not cid:
                return f"Missing required parameter: 'input[{i}].call_id'."
            if len(cid) > 64:
                return _too_long(f"input[{i}].call_id", cid, 64)
            item_id = item.get("id")
            if isinstance(item_id, str) and item_id.startswith("fc_") and not reasoning_seen:
                return f"Item '{item_id}' of type 'function_call' was provided without its required {_RS}"
            calls.append(cid)
        elif kind == "function_call_output":
            cid = str(item.get("call_id") or "")
            if cid not in calls:
                return NO_CALL_FOR_OUTPUT.format(id=cid)
            answered.add(cid)
    for cid in calls:
        if cid not in answered:
            return NO_OUTPUT_FOR_CALL.format(id=cid)
    return None


# -- Anthropic ------------------------------------------------------------------------------------------


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [_map(b) for b in _list(content)]


def _merged(messages: Sequence[Any]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """Consecutive same-role messages merged, as Anthropic's server does before its checks."""
    out: list[tuple[str, list[Mapping[str, Any]]]] = []
    for raw in messages:
        m = _map(raw)
        role = str(m.get("role"))
        if out and out[-1][0] == role:
            out[-1][1].extend(_blocks(m.get("content")))
        else:
            out.append((role, _blocks(m.get("content"))))
    return out


def check_anthropic(body: Mapping[str, Any], rules: Rules) -> str | None:
    if not body.get("model"):
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: Field required"
    merged = _merged(messages)
    uses_tools = any(b.get("type") in ("tool_use", "tool_result") for _, blocks in merged for b in blocks)
    if uses_tools and not body.get("tools"):
        return MUST_DEFINE_TOOLS
    previous_ids: list[str] = []
    for i, (role, blocks) in enumerate(merged):
        if role == "user":
            problem = _anthropic_results(blocks, previous_ids, i)
            if problem:
                return problem
            previous_ids = []
        elif role == "assistant":
            previous_ids = []
            for j, b in enumerate(blocks):
                if b.get("type") != "tool_use":
                    continue
                bid = str(b.get("id") or "")
                if not _ANTHROPIC_ID.match(bid):
                    where = f"messages.{i}.content.{j}.tool_use.id"
                    return f"{where}: String should match pattern '^[a-zA-Z0-9_-]+$'"
                if not isinstance(b.get("input"), Mapping):
                    return f"messages.{i}.content.{j}.tool_use.input: Input should be a valid dictionary"
                previous_ids.append(bid)
            if previous_ids and i + 1 >= len(merged):
                return NO_RESULT_AFTER.format(i=i, ids=", ".join(previous_ids))
        else:
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    return None


def _anthropic_results(blocks: list[Mapping[str, Any]], expected: list[str], i: int) -> str | None:
    leading: list[str] = []
    for b in blocks:
        if b.get("type") != "tool_result":
            break
        leading.append(str(b.get("tool_use_id")))
    missing = [x for x in expected if x not in leading]
    if missing:
        return NO_RESULT_AFTER.format(i=i - 1, ids=", ".join(missing))
    for j, b in enumerate(blocks):
        if b.get("type") == "tool_result" and str(b.get("tool_use_id")) not in expected:
            return UNEXPECTED_RESULT.format(i=i, j=j, id=b.get("tool_use_id"))
    return None


# -- Gemini ---------------------------------------------------------------------------------------------


def _g(part: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = part.get(camel)
    return part.get(snake) if value is None else value


def check_gemini(body: Mapping[str, Any], rules: Rules) -> str | None:
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return "* GenerateContentRequest.contents: contents is not specified"
    shaped: list[tuple[str, list[Mapping[str, Any]]]] = []
    for i, raw in enumerate(contents):
        c = _map(raw)
        role = c.get("role", "user")
        if role not in ("user", "model"):
            return "Please use a valid role: user, model."
        parts = [_map(p) for p in _list(c.get("parts"))]
        if not parts:
            return f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
        shaped.append((str(role), parts))
    turn_start = 0
    for i, (role, parts) in enumerate(shaped):
        if role == "user" and not any(_g(p, "functionResponse", "function_response") for p in parts):
            turn_start = i
    for i, (role, parts) in enumerate(shaped):
        calls = [p for p in parts if _g(p, "functionCall", "function_call") is not None]
        if role != "model" or not calls:
            continue
        problem = _gemini_step(shaped, i, calls, rules, current=i > turn_start)
        if problem:
            return problem
    return None


def _gemini_step(
    shaped: list[tuple[str, list[Mapping[str, Any]]]],
    i: int,
    calls: list[Mapping[str, Any]],
    rules: Rules,
    *,
    current: bool,
) -> str | None:
    if i == 0 or shaped[i - 1][0] != "user":
        return GEMINI_ORDER
    for p in calls:
        if not isinstance(_map(_g(p, "functionCall", "function_call")).get("args", {}), Mapping):
            return f"Invalid value at 'contents[{i}].parts.function_call.args' {_STRUCT}"
    first = calls[0]
    if rules.require_signatures and current and not _g(first, "thoughtSignature", "thought_signature"):
        name = _map(_g(first, "functionCall", "function_call")).get("name")
        return MISSING_SIGNATURE.format(name=name, pos=i + 1)
    if i + 1 < len(shaped):
        answers = [p for p in shaped[i + 1][1] if _g(p, "functionResponse", "function_response") is not None]
        if shaped[i + 1][0] != "user" or len(answers) != len(calls):
            return GEMINI_COUNT
        for p in answers:
            if not isinstance(_map(_g(p, "functionResponse", "function_response")).get("response"), Mapping):
                return f"Invalid value at 'contents[{i + 1}].parts.function_response.response' {_STRUCT}"
    return None


# -- Ollama ---------------------------------------------------------------------------------------------


def check_ollama(body: Mapping[str, Any], rules: Rules) -> str | None:
    if not body.get("model"):
        return "model is required"
    for raw in _list(body.get("messages")):
        for tc in _list(_map(raw).get("tool_calls")):
            args = (
                _map(tc).get("function", {}).get("arguments")
                if isinstance(_map(tc).get("function"), Mapping)
                else None
            )
            if args is not None and not isinstance(args, Mapping):
                return (
                    "json: cannot unmarshal string into Go struct field "
                    "ToolCallFunction.messages.tool_calls.function.arguments of type "
                    "api.ToolCallFunctionArguments"
                )
    return None


CHECKS = {
    "openai-chat": check_chat,
    "openai-responses": check_responses,
    "anthropic": check_anthropic,
    "gemini": check_gemini,
    "ollama": check_ollama,
}

__all__ = [
    "CHECKS",
    "Rules",
    "check_anthropic",
    "check_chat",
    "check_gemini",
    "check_ollama",
    "check_responses",
]

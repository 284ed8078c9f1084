"""OpenAI Chat Completions request bodies read back into a stored history (importers, the audit).

Reads a whole body (``messages``, ``tools``) or just its ``messages`` list: ``system``/``developer``
messages, ``user`` messages, ``assistant`` messages with ``content`` and ``tool_calls`` (``arguments`` a
JSON string, or an object as some compatible servers take it), ``tool`` messages answering by
``tool_call_id``, and the legacy ``function_call`` / ``function`` pair (answered by position). Kimi's and
DeepSeek's ``reasoning_content`` (and vLLM's ``reasoning``), OpenRouter's ``reasoning_details`` and
Mistral's ``thinking`` content parts (kept whole, as ``thinking_parts``) are kept as provider data under
``"openai-chat"`` on the message's first call (or on the reply when it made none), never in an id.

The turn rules (one agent turn is one stored reply, pairing, deterministic ids) are
:func:`toolreplay.wires.turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay._errors import WireError
from toolreplay._history import History, ToolSpec
from toolreplay._vessels import public_issuer
from toolreplay.wires.request_common import (
    function_calls,
    listed,
    nonempty,
    objects,
    read_tools,
    split_list,
    string,
)
from toolreplay.wires.turns import (
    AgentSaid,
    Answers,
    Call,
    Event,
    Result,
    SystemText,
    UserText,
    answer_text,
    arguments_input,
    assemble,
)

WIRE = "openai-chat"
_REASONING_KEYS = ("reasoning_content", "reasoning")
#: Content part types that carry text (``refusal`` is an assistant's text too).
_TEXT_PARTS = {"text": "text", "refusal": "refusal", "input_text": "text", "output_text": "text"}


def _fail(problem: str) -> WireError:
    return WireError(f"{WIRE} request: {problem}")


def content_text(content: Any, where: str, warnings: list[str], *, thinking_kept: bool = False) -> str:
    """A message's ``content`` as text: a string, null, or a list of parts (text parts joined).
    ``thinking_kept``: the caller keeps ``thinking`` parts as reasoning, so they are not reported."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _fail(f"{where}.content is {type(content).__name__}, not a string, null or a list of parts")
    texts: list[str] = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, Mapping):
            raise _fail(f"{where}.content[{j}] is {type(part).__name__}, not a content part")
        p = cast(Mapping[str, Any], part)
        if thinking_kept and is_thinking_part(p):
            continue
        key = _TEXT_PARTS.get(str(p.get("type")))
        if key is not None and isinstance(p.get(key), str):
            texts.append(str(p[key]))
        else:
            warnings.append(f"{where}.content[{j}]: a {p.get('type')!r} part is not kept (text only)")
    return "".join(texts)


def _calls(msg: Mapping[str, Any], where: str, warnings: list[str]) -> list[Call]:
    out = function_calls(msg.get("tool_calls"), where, warnings, _fail)
    legacy = msg.get("function_call")
    if isinstance(legacy, Mapping) and isinstance(legacy.get("name"), str):
        lf = cast(Mapping[str, Any], legacy)
        value, problem = arguments_input(lf.get("arguments"))
        if problem:
            warnings.append(f"{where}.function_call: {problem}")
        out.append(Call(str(lf["name"]), value, None))
    return out


def is_thinking_part(part: Any) -> bool:
    """Mistral's ``thinking`` content part (its ``thinking`` a list of text chunks, or a string)."""
    return isinstance(part, Mapping) and part.get("type") == "thinking" and "thinking" in part


def _reasoning(msg: Mapping[str, Any]) -> dict[str, Any] | None:
    """The message's reasoning, as the issuer sent it: ``reasoning_content``/``reasoning`` text,
    ``reasoning_details`` entries, ``thinking`` content parts."""
    data: dict[str, Any] = {k: msg[k] for k in _REASONING_KEYS if isinstance(msg.get(k), str) and msg[k]}
    details = msg.get("reasoning_details")
    if isinstance(details, list) and details:
        data["reasoning_details"] = list(details)
    content = msg.get("content")
    parts = [dict(p) for p in content if is_thinking_part(p)] if isinstance(content, list) else []
    if parts:
        data["thinking_parts"] = parts
    return {WIRE: data} if data else None


def message_events(
    msg: Mapping[str, Any], where: str, warnings: list[str], *, created_at: str | None = None
) -> list[Event]:
    """The events of one Chat message (shared by the tau-bench importer for its v1 transcripts)."""
    role = msg.get("role")
    if role in ("system", "developer"):
        return [SystemText(content_text(msg.get("content"), where, warnings), where)]
    if role == "user":
        return [UserText(content_text(msg.get("content"), where, warnings), where, created_at)]
    if role == "assistant":
        text = content_text(msg.get("content"), where, warnings, thinking_kept=True)
        parts: list[str | Call] = [text] if text else []
        parts.extend(_calls(msg, where, warnings))
        return [AgentSaid(parts, where, _reasoning(msg), created_at)]
    if role in ("tool", "function"):
        answer, lost = answer_text(msg.get("content"), joiner="")
        for kind in lost:
            warnings.append(f"{where}.content: a {kind!r} part of the answer is not kept (text only)")
        cid = msg.get("tool_call_id") if role == "tool" else None
        return [Answers([Result(answer, nonempty(cid), string(msg.get("name")), where=where)], where)]
    raise _fail(f"{where}.role is {role!r}; expected system, developer, user, assistant, tool or function")


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """``tools`` (``{"type": "function", "function": {...}}``) or legacy ``functions`` definitions."""
    return read_tools(t.get("function", t) for t in listed(raw) if isinstance(t, Mapping))


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``messages`` list and the rest of the body (empty when given just the list)."""
    return split_list(body, "messages", "messages", _fail)


def parse_request(body: Any, *, conversation_id: str = "request") -> History:
    """A Chat request body (or its ``messages`` list) as a stored history. Pure.

    Raises :class:`~toolreplay._errors.WireError` naming the field for a body that is not Chat's shape;
    anything it cannot represent (image parts, broken arguments kept as text, orphan answers) is listed
    in the history's ``warnings``.
    """
    msgs, rest = split_body(body)
    warnings: list[str] = []
    events: list[Event] = []
    for _, where, msg in objects(msgs, "messages", _fail):
        events.extend(message_events(msg, where, warnings))
    tools = parse_tools(rest.get("tools")) + parse_tools(rest.get("functions"))
    issuer = public_issuer(WIRE, rest.get("model"))
    return assemble(events, conversation_id=conversation_id, tools=tools, warnings=warnings,
                    issuer=issuer)  # fmt: skip


__all__ = [
    "WIRE",
    "content_text",
    "is_thinking_part",
    "message_events",
    "parse_request",
    "parse_tools",
    "split_body",
]

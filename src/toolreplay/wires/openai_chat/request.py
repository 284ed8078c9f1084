"""OpenAI Chat Completions request bodies read back into a stored history (importers, the audit).

Reads a whole body (``messages``, ``tools``) or just its ``messages`` list: ``system``/``developer``
messages, ``user`` messages, ``assistant`` messages with ``content`` and ``tool_calls`` (``arguments`` a
JSON string, or an object as some compatible servers take it), ``tool`` messages answering by
``tool_call_id``, and the legacy ``function_call`` / ``function`` pair (answered by position). Kimi's and
DeepSeek's ``reasoning_content`` (and vLLM's ``reasoning``) are kept as provider data under
``"openai-chat"`` on the message's first call (or on the reply when it made none), never in an id.

The turn rules (one agent turn is one stored reply, pairing, deterministic ids) are
:func:`toolreplay.wires._turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.errors import WireError
from toolreplay.history import History, ToolSpec
from toolreplay.wires._turns import (
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
    tool_spec,
)

WIRE = "openai-chat"
_REASONING_KEYS = ("reasoning_content", "reasoning")
#: Content part types that carry text (``refusal`` is an assistant's text too).
_TEXT_PARTS = {"text": "text", "refusal": "refusal", "input_text": "text", "output_text": "text"}


def _fail(problem: str) -> WireError:
    return WireError(f"{WIRE} request: {problem}")


def content_text(content: Any, where: str, warnings: list[str]) -> str:
    """A message's ``content`` as text: a string, null, or a list of parts (text parts joined)."""
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
        key = _TEXT_PARTS.get(str(p.get("type")))
        if key is not None and isinstance(p.get(key), str):
            texts.append(str(p[key]))
        else:
            warnings.append(f"{where}.content[{j}]: a {p.get('type')!r} part is not kept (text only)")
    return "".join(texts)


def _calls(msg: Mapping[str, Any], where: str, warnings: list[str]) -> list[Call]:
    out: list[Call] = []
    raw = msg.get("tool_calls")
    if raw is not None and not isinstance(raw, list):
        raise _fail(f"{where}.tool_calls is {type(raw).__name__}, not a list")
    for k, tc in enumerate(raw or []):
        at = f"{where}.tool_calls[{k}]"
        if not isinstance(tc, Mapping):
            raise _fail(f"{at} is {type(tc).__name__}, not an object")
        t = cast(Mapping[str, Any], tc)
        fn = t.get("function")
        if not isinstance(fn, Mapping):
            raise _fail(f"{at}.function is missing or not an object")
        f = cast(Mapping[str, Any], fn)
        name = f.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(f"{at}.function.name is missing or not a string")
        value, problem = arguments_input(f.get("arguments"))
        if problem:
            warnings.append(f"{at}: {problem}")
        cid = t.get("id")
        out.append(Call(name, value, cid if isinstance(cid, str) and cid else None))
    legacy = msg.get("function_call")
    if isinstance(legacy, Mapping) and isinstance(legacy.get("name"), str):
        lf = cast(Mapping[str, Any], legacy)
        value, problem = arguments_input(lf.get("arguments"))
        if problem:
            warnings.append(f"{where}.function_call: {problem}")
        out.append(Call(str(lf["name"]), value, None))
    return out


def _reasoning(msg: Mapping[str, Any]) -> dict[str, Any] | None:
    data = {k: msg[k] for k in _REASONING_KEYS if isinstance(msg.get(k), str) and msg[k]}
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
        text = content_text(msg.get("content"), where, warnings)
        parts: list[str | Call] = [text] if text else []
        parts.extend(_calls(msg, where, warnings))
        return [AgentSaid(parts, where, _reasoning(msg), created_at)]
    if role in ("tool", "function"):
        answer, lost = answer_text(msg.get("content"), joiner="")
        for kind in lost:
            warnings.append(f"{where}.content: a {kind!r} part of the answer is not kept (text only)")
        cid = msg.get("tool_call_id") if role == "tool" else None
        name = msg.get("name")
        return [
            Answers(
                [
                    Result(
                        answer,
                        cid if isinstance(cid, str) and cid else None,
                        name if isinstance(name, str) else None,
                        where=where,
                    )
                ],
                where,
            )
        ]
    raise _fail(f"{where}.role is {role!r}; expected system, developer, user, assistant, tool or function")


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """``tools`` (``{"type": "function", "function": {...}}``) or legacy ``functions`` definitions."""
    out: list[ToolSpec] = []
    for t in raw if isinstance(raw, list) else []:
        if not isinstance(t, Mapping):
            continue
        td = cast(Mapping[str, Any], t)
        fn = td.get("function", td)
        if isinstance(fn, Mapping):
            f = cast(Mapping[str, Any], fn)
            spec = tool_spec(f.get("name"), f.get("description"), f.get("parameters"))
            if spec is not None:
                out.append(spec)
    return tuple(out)


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``messages`` list and the rest of the body (empty when given just the list)."""
    if isinstance(body, list):
        return body, {}
    if isinstance(body, Mapping):
        b = cast(Mapping[str, Any], body)
        msgs = b.get("messages")
        if not isinstance(msgs, list):
            raise _fail("no 'messages' list in the body")
        return msgs, b
    raise _fail(f"the body is {type(body).__name__}, not an object or a list of messages")


def parse_request(body: Any, *, conversation_id: str = "request") -> History:
    """A Chat request body (or its ``messages`` list) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not Chat's shape;
    anything it cannot represent (image parts, broken arguments kept as text, orphan answers) is listed
    in the history's ``warnings``.
    """
    msgs, rest = split_body(body)
    warnings: list[str] = []
    events: list[Event] = []
    for i, raw in enumerate(msgs):
        where = f"messages[{i}]"
        if not isinstance(raw, Mapping):
            raise _fail(f"{where} is {type(raw).__name__}, not an object")
        events.extend(message_events(cast(Mapping[str, Any], raw), where, warnings))
    tools = parse_tools(rest.get("tools")) + parse_tools(rest.get("functions"))
    return assemble(events, conversation_id=conversation_id, tools=tools, warnings=warnings)


__all__ = ["WIRE", "content_text", "message_events", "parse_request", "parse_tools", "split_body"]

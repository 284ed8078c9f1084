"""OpenAI Responses request bodies read back into a stored history (importers, the audit).

Reads a whole body (``instructions``, ``input``, ``tools``) or just its ``input`` (a list of items, or a
string: one user message). Items: messages (``role`` user/system/developer/assistant, content a string or
a list of ``input_text``/``output_text``/``refusal`` parts), ``function_call`` (``call_id``, ``name``,
JSON-string ``arguments``), ``function_call_output``, ``custom_tool_call`` (free-form input, kept as text)
and its output, and ``reasoning`` items (kept whole, ``encrypted_content`` included, as reasoning pieces
of the step they lead, replayed only to their issuer; a call's ``fc_...`` item id is kept as ``item_id``
beside it, never as its id). Hosted-tool items (``web_search_call``, ``code_interpreter_call``...) are
kept whole the same way, as server-tool pieces. Other item kinds (item references) are reported, not kept.
A user message's ``input_image`` (``image_url``: a ``data:`` URL or an address) and ``input_file``
(``file_data`` or ``file_url``, ``filename``) parts are kept as its parts in order; one given only by
``file_id`` (a file kept at OpenAI), and a ``detail`` other than ``auto``, are reported.

One model response is several items in this wire: an output-form message (``type: "message"`` or a list
of ``output_text`` parts), reasoning items and the ``function_call`` items that follow it without an
output between are read as one agent message (text beside calls). An easy-form assistant message
(``{"role": "assistant", "content": "..."}``, what the renderer writes after a reply's calls) stands on
its own. The turn rules are :func:`toolreplay.wires.turns.assemble`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from toolreplay.errors import WireError
from toolreplay.model import History, Part, ToolSpec, with_words
from toolreplay.wires.common import body_issuer, request_settings
from toolreplay.wires.media import from_data_url
from toolreplay.wires.openai_responses.response import said_item
from toolreplay.wires.request_common import listed, nonempty, objects, read_tools, split_list
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

WIRE = "openai-responses"
#: The host of the wire's public API: the issuer of an imported body's replies (design 17) unless the
#: importer is told the URL the requests went to (``--issuer-url``).
PUBLIC_HOST = "api.openai.com"
#: The top-level keys that hold the conversation, its system prompt and its tools; every other one is
#: a request setting, kept as sent.
CONVERSATION_KEYS = ("input", "instructions", "tools")
_TEXT_PARTS = ("input_text", "output_text", "text", "refusal")
_MEDIA = ("input_image", "input_file")
_CALLS = ("function_call", "custom_tool_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
#: Items of tools OpenAI runs itself: kept whole as server-tool pieces of their step, for their issuer.
_HOSTED = frozenset(
    {"web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call",
     "mcp_list_tools"}
)  # fmt: skip


def _fail(problem: str) -> WireError:
    return WireError(f"{WIRE} request: {problem}")


def _media(p: Mapping[str, Any], at: str, warnings: list[str]) -> Part | None:
    """An ``input_image`` or ``input_file`` part as a part of the message, or None (reported)."""
    kind = p.get("type")
    if kind == "input_image":
        url = p.get("image_url")
        part = from_data_url("image", url) if isinstance(url, str) and url else None
    else:
        name = p.get("filename") if isinstance(p.get("filename"), str) else ""
        data, url = p.get("file_data"), p.get("file_url")
        if isinstance(data, str) and data:
            part = from_data_url("document", data, str(name))
            if not part.data:  # bare base64, no data: URL around it
                part = Part("document", data=data, name=str(name))
        elif isinstance(url, str) and url:
            part = Part("document", url=url, name=str(name))
        else:
            part = None
    if part is None:
        warnings.append(f"{at}: an {kind!r} part given by file_id only (a file kept at OpenAI) is not kept")
    elif p.get("detail") not in (None, "auto"):
        warnings.append(f"{at}: detail {p.get('detail')!r} is not kept (sent as auto)")
    return part


def _content(content: Any, where: str, warnings: list[str], media: bool) -> tuple[str, list[Part]]:
    """A message's text, and (``media``: a user message) its parts in order when it holds any image or
    file (otherwise none: a message of words stays text)."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        raise _fail(f"{where}.content is {type(content).__name__}, not a string or a list of parts")
    texts: list[str] = []
    parts: list[Part] = []
    for j, part in enumerate(content):
        if not isinstance(part, Mapping):
            raise _fail(f"{where}.content[{j}] is {type(part).__name__}, not a content part")
        p = cast(Mapping[str, Any], part)
        kind = p.get("type")
        value = p.get("refusal") if kind == "refusal" else p.get("text")
        if kind in _TEXT_PARTS and isinstance(value, str):
            texts.append(value)
            parts.append(Part("text", text=value))
        elif media and kind in _MEDIA:
            got = _media(p, f"{where}.content[{j}]", warnings)
            parts.extend([got] if got is not None else [])
        else:
            warnings.append(f"{where}.content[{j}]: a {kind!r} part is not kept (text only)")
    if not any(p.kind != "text" for p in parts):
        return "".join(texts), []
    return with_words("", parts)[0], parts


def _is_output_form(item: Mapping[str, Any]) -> bool:
    """A message as a response produced it (not the easy input form the renderer writes)."""
    return item.get("type") == "message" or isinstance(item.get("content"), list) or "id" in item


class _Reader:
    """Walks the items, grouping the items of one model response into one :class:`AgentSaid`."""

    def __init__(self, warnings: list[str]) -> None:
        self.events: list[Event] = []
        self.group: AgentSaid | None = None
        self.warnings = warnings

    def flush(self) -> None:
        if self.group is not None:
            self.events.append(self.group)
            self.group = None

    def _group(self, where: str) -> AgentSaid:
        if self.group is None:
            self.group = AgentSaid([], where)
        return self.group

    def item(self, item: Mapping[str, Any], where: str) -> None:
        kind = item.get("type")
        role = item.get("role")
        if role is not None and kind in (None, "message"):
            self._message(item, str(role), where)
        elif kind in _CALLS:
            self._call(item, str(kind), where)
        elif kind in _OUTPUTS:
            self.flush()
            answer, lost = answer_text(item.get("output"), joiner="")
            for k in lost:
                self.warnings.append(f"{where}.output: a {k!r} part of the answer is not kept (text only)")
            res = Result(answer, nonempty(item.get("call_id")), where=where)
            self.events.append(Answers([res], where))
        elif kind == "reasoning" or (isinstance(kind, str) and kind in _HOSTED):
            # kept verbatim in its place, replayed only to its issuer (design 17)
            self._group(where).parts.append(said_item(item))
        else:
            self.warnings.append(f"{where}: a {kind!r} item is not kept (no stored form for it)")

    def _message(self, item: Mapping[str, Any], role: str, where: str) -> None:
        text, parts = _content(item.get("content"), where, self.warnings, role == "user")
        if role == "assistant":
            if _is_output_form(item):
                g = self._group(where)
                if text:
                    g.parts.append(text)
            else:
                self.flush()
                self.events.append(AgentSaid([text] if text else [], where))
            return
        self.flush()
        if role in ("system", "developer"):
            self.events.append(SystemText(text, where))
        elif role == "user":
            self.events.append(UserText(text, where, parts=tuple(parts)))
        else:
            raise _fail(f"{where}.role is {role!r}; expected user, assistant, system or developer")

    def _call(self, item: Mapping[str, Any], kind: str, where: str) -> None:
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(f"{where}.name is missing or not a string")
        if kind == "custom_tool_call":
            raw = item.get("input")
            value: Any = raw if isinstance(raw, str) else ""
            self.warnings.append(f"{where}: a free-form (custom) tool input is kept as text")
        else:
            value, problem = arguments_input(item.get("arguments"))
            if problem:
                self.warnings.append(f"{where}: {problem}")
        cid = item.get("call_id")
        item_id = item.get("id")
        data = {WIRE: {"item_id": item_id}} if isinstance(item_id, str) and item_id else None
        self._group(where).parts.append(Call(name, value, cid if isinstance(cid, str) else None, data))


def parse_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """Function tools (``{"type": "function", "name", "description", "parameters", "strict"}``)."""
    return read_tools(
        t for t in listed(raw) if isinstance(t, Mapping) and t.get("type", "function") == "function"
    )


def split_body(body: Any) -> tuple[Sequence[Any], Mapping[str, Any]]:
    """The ``input`` items and the rest of the body (a string input is one user message)."""
    if isinstance(body, str):
        return [{"role": "user", "content": body}], {}
    if isinstance(body, Mapping) and isinstance(body.get("input"), str):
        b = cast(Mapping[str, Any], body)
        return [{"role": "user", "content": b["input"]}], b
    return split_list(body, "input", "input items", _fail)


def parse_request(body: Any, *, conversation_id: str = "request") -> History:
    """A Responses request body (or its ``input``) as a stored history. Pure.

    Raises :class:`~toolreplay.errors.WireError` naming the field for a body that is not this wire's
    shape; what it cannot represent is listed in the history's ``warnings``.
    """
    items, rest = split_body(body)
    warnings: list[str] = []
    reader = _Reader(warnings)
    instructions = rest.get("instructions")
    if isinstance(instructions, str) and instructions:
        reader.events.append(SystemText(instructions, "instructions"))
    for _, where, item in objects(items, "input", _fail):
        reader.item(item, where)
    reader.flush()
    if rest.get("previous_response_id"):
        warnings.append("previous_response_id: the earlier turns kept server-side are not in this body")
    tools = parse_tools(rest.get("tools"))
    issuer = body_issuer(WIRE, PUBLIC_HOST, rest.get("model"))
    return assemble(reader.events, conversation_id=conversation_id, tools=tools, warnings=warnings,
                    issuer=issuer,
                    settings=request_settings(WIRE, body, CONVERSATION_KEYS))  # fmt: skip


__all__ = ["WIRE", "parse_request", "parse_tools", "split_body"]

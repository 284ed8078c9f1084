"""Whether each earlier call survives into the prompt a chat template renders (see
:mod:`toolreplay._audit.templates` for how the prompt is rendered).

:func:`template_audit` says for every earlier call whether it survives into the prompt as a call. It renders
a probe: the same body with each call's name and argument values replaced by unique markers, so a marker
found in the prompt can only come from that call. A call is ``as call`` when its name and all its argument
values appear, ``dropped`` when none of it does, ``name missing`` / ``arguments missing`` in between. It
also names the template's failures: an exception, dropped calls, dropped text (a message's words not in
the prompt), double-encoded arguments, call ids written into the prompt.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from toolreplay._audit.templates import ChatTemplate, PromptTemplateError, load_template, render_prompt

CallFate = Literal["as call", "dropped", "name missing", "arguments missing", "error"]


@dataclass(frozen=True, slots=True)
class CallInPrompt:
    """What became of one earlier call (in body order) in the rendered prompt."""

    index: int
    message: int
    name: str
    call_id: str | None
    fate: CallFate
    double_encoded: bool = False
    id_in_prompt: bool = False


@dataclass(frozen=True, slots=True)
class TemplateAudit:
    """The audit of one body through one template on one server."""

    template: str
    server: str
    calls: tuple[CallInPrompt, ...]
    error: str | None = None
    dropped_text: tuple[str, ...] = ()
    prompt: str | None = None
    tools_dropped: tuple[str, ...] = ()
    """The body's tool definitions (names) when the template never puts them in the prompt."""
    tools: int = 0
    """How many tool definitions the body declares."""

    def count(self, fate: CallFate) -> int:
        return sum(1 for c in self.calls if c.fate == fate)

    def failures(self) -> list[str]:
        """The template's failures in words (empty when every call survives and no text is lost)."""
        out: list[str] = []
        if self.error:
            out.append(f"the template raises: {self.error}")
        if self.tools_dropped:
            names = ", ".join(self.tools_dropped)
            out.append(
                f"tools dropped: the template never puts the request's tool definitions in the prompt "
                f"({names}): the model is not told it has tools"
            )
        for c in self.calls:
            if c.fate not in ("as call", "error"):
                out.append(f"call {c.index} ({c.name}, messages[{c.message}]): {c.fate}")
            if c.double_encoded:
                out.append(
                    f"call {c.index} ({c.name}, messages[{c.message}]): arguments double-encoded (a JSON "
                    "string in the prompt)"
                )
        out.extend(self.dropped_text)
        return out

    def notes(self) -> list[str]:
        """What is worth knowing but not lost (call ids the model reads in its prompt)."""
        ids = [c for c in self.calls if c.id_in_prompt]
        if not ids:
            return []
        shown = ", ".join(repr(c.call_id) for c in ids[:3])
        more = ", ..." if len(ids) > 3 else ""
        return [f"call ids are written into the prompt: the model reads them ({shown}{more})"]

    def as_json(self) -> dict[str, Any]:
        return {
            "template": self.template,
            "server": self.server,
            "error": self.error,
            "calls": [
                {
                    "index": c.index,
                    "message": c.message,
                    "name": c.name,
                    "id": c.call_id,
                    "fate": c.fate,
                    "double_encoded": c.double_encoded,
                    "id_in_prompt": c.id_in_prompt,
                }
                for c in self.calls
            ],
            "dropped_text": list(self.dropped_text),
            "tools": None if not self.tools else ("dropped" if self.tools_dropped else "in the prompt"),
            "failures": self.failures(),
            "notes": self.notes(),
        }


def _iter_calls(messages: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for mi, m in enumerate(messages):
        for call in m.get("tool_calls") or []:
            if isinstance(call, Mapping):
                yield mi, cast(Mapping[str, Any], call)


class _Markers:
    """Unique markers for one call's name and argument values (strings and integers, at any depth)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.name = f"zqname{index}q"
        self.values: list[str] = []
        self.strings: list[str] = []

    def _next(self) -> int:
        return len(self.values)

    def swap(self, value: Any) -> Any:
        if isinstance(value, bool) or value is None or isinstance(value, float):
            return value
        if isinstance(value, str):
            marker = f"zqv{self.index}x{self._next()}q"
            self.values.append(marker)
            self.strings.append(marker)
            return marker
        if isinstance(value, int):
            marker_int = 7_300_000_000 + self.index * 1000 + self._next()
            self.values.append(str(marker_int))
            return marker_int
        if isinstance(value, Mapping):
            return {k: self.swap(v) for k, v in cast(Mapping[str, Any], value).items()}
        if isinstance(value, list):
            return [self.swap(v) for v in value]
        return value


def _probe_body(body: Mapping[str, Any]) -> tuple[dict[str, Any], list[_Markers]]:
    """A copy of ``body`` with every call's name and argument values replaced by unique markers."""
    probe: dict[str, Any] = json.loads(json.dumps(body))
    markers: list[_Markers] = []
    renamed_ids: dict[str, str] = {}
    calls = [c for m in probe["messages"] for c in (m.get("tool_calls") or []) if isinstance(c, dict)]
    for call in calls:
        mk = _Markers(len(markers))
        markers.append(mk)
        fn = call.get("function")
        if not isinstance(fn, dict):
            continue
        name = str(fn.get("name", ""))
        fn["name"] = mk.name
        args = fn.get("arguments")
        if not isinstance(args, str):
            fn["arguments"] = mk.swap(args)
        else:  # arguments that are not JSON stay as they are: their values cannot be traced
            with contextlib.suppress(json.JSONDecodeError):
                fn["arguments"] = json.dumps(mk.swap(json.loads(args)), ensure_ascii=False)
        cid = call.get("id")
        if isinstance(cid, str) and name and name in cid:  # Kimi's functions.<name>:<index>
            call["id"] = renamed_ids[cid] = cid.replace(name, mk.name)
    for m in probe["messages"]:
        ref = m.get("tool_call_id")
        if isinstance(ref, str) and ref in renamed_ids:
            m["tool_call_id"] = renamed_ids[ref]
    return probe, markers


def _texts(messages: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, str, str]]:
    """``(index, label, text)`` of every message's words."""
    for mi, m in enumerate(messages):
        content = m.get("content")
        if isinstance(content, list):
            parts = [p.get("text") for p in content if isinstance(p, Mapping)]
            content = "\n".join(p for p in parts if isinstance(p, str))
        if not isinstance(content, str) or not content.strip():
            continue
        role = str(m.get("role"))
        if role == "tool":
            label = "tool answer"
        elif role == "assistant" and m.get("tool_calls"):
            label = "assistant text beside calls"
        else:
            label = f"{role} text"
        yield mi, label, content.strip()


def _fate(prompt: str, mk: _Markers) -> tuple[CallFate, bool]:
    has_name = mk.name in prompt
    found = [v for v in mk.values if v in prompt]
    if not has_name and not found:
        return "dropped", False
    double = any(f'\\"{s}' in prompt for s in mk.strings if s in prompt)
    if not has_name:
        return "name missing", double
    if len(found) < len(mk.values):
        return "arguments missing", double
    return "as call", double


def template_audit(
    body: Mapping[str, Any],
    template_path: str | Path | ChatTemplate,
    server: str = "transformers",
    *,
    variables: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> TemplateAudit:
    """For every earlier call of the Chat ``body``, whether it survives into the prompt as a call."""
    template = (
        template_path if isinstance(template_path, ChatTemplate) else load_template(template_path, variables)
    )
    clock = now or datetime.now()
    raw_messages = body.get("messages")
    messages: list[Mapping[str, Any]] = raw_messages if isinstance(raw_messages, list) else []
    listed = list(_iter_calls(messages))

    def call_name(call: Mapping[str, Any]) -> str:
        fn = call.get("function")
        return str(fn.get("name", "")) if isinstance(fn, Mapping) else ""

    try:
        prompt = render_prompt(body, template, server, now=clock)
    except PromptTemplateError as exc:
        failed = tuple(
            CallInPrompt(i, mi, call_name(c), c.get("id"), "error") for i, (mi, c) in enumerate(listed)
        )
        return TemplateAudit(template.name, server, failed, error=str(exc).split(": ", 1)[-1])
    probe, markers = _probe_body(body)
    try:
        probe_prompt = render_prompt(probe, template, server, now=clock)
    except PromptTemplateError:
        probe_prompt = prompt  # the markers upset the template: judge by names alone, below
    calls: list[CallInPrompt] = []
    for (mi, c), mk in zip(listed, markers, strict=True):
        fate, double = _fate(probe_prompt, mk)
        cid = c.get("id")
        in_prompt = isinstance(cid, str) and len(cid) > 3 and cid in prompt
        calls.append(CallInPrompt(mk.index, mi, call_name(c), cid, fate, double, in_prompt))
    dropped = tuple(
        f"messages[{mi}] ({label}) is not in the prompt: {text[:60]!r}"
        for mi, label, text in _texts(messages)
        # some templates write a message JSON-escaped (Llama's tool answers: ``content | tojson``)
        if text not in prompt and json.dumps(text, ensure_ascii=False)[1:-1] not in prompt
    )
    dropped_tools = _dropped_tools(body, template, server, clock, prompt)
    return TemplateAudit(
        template.name, server, tuple(calls), None, dropped, prompt, dropped_tools, len(_tool_names(body))
    )


def _tool_names(body: Mapping[str, Any]) -> list[str]:
    tools = body.get("tools")
    out = []
    for t in tools if isinstance(tools, list) else []:
        fn = t.get("function", t) if isinstance(t, Mapping) else None
        out.append(str(fn.get("name", "?")) if isinstance(fn, Mapping) else "?")
    return out


def _dropped_tools(
    body: Mapping[str, Any], template: ChatTemplate, server: str, clock: datetime, prompt: str
) -> tuple[str, ...]:
    """The tool names when the prompt is the same without the body's tools (the template never reads
    them: SmolLM2's, DeepSeek V3.1's), else ()."""
    names = _tool_names(body)
    if not names:
        return ()
    bare = {k: v for k, v in body.items() if k != "tools"}
    try:
        without = render_prompt(bare, template, server, now=clock)
    except PromptTemplateError:
        return ()  # the template needs tools to render at all: it reads them
    return tuple(names) if without == prompt else ()


def format_template_audit(audit: TemplateAudit) -> str:
    """The audit in a few lines."""
    n = len(audit.calls)
    head = f"{audit.template} on {audit.server}: {audit.count('as call')} of {n} calls survive as calls"
    if audit.tools:
        defs = f"{audit.tools} tool definition{'s' if audit.tools != 1 else ''}"
        head += f"; {defs} dropped" if audit.tools_dropped else f"; {defs} in the prompt"
    lines = [head]
    fails = audit.failures()
    lines.extend(f"  - {f}" for f in fails)
    if not fails:
        lines.append("  no failures: every call and every message's text reaches the prompt")
    lines.extend(f"  note: {n}" for n in audit.notes())
    return "\n".join(lines)


__all__ = [
    "CallFate",
    "CallInPrompt",
    "TemplateAudit",
    "format_template_audit",
    "template_audit",
]

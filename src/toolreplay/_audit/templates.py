"""What an open model really sees: a Chat body turned into the prompt by the model's own Jinja template.

Open-weight servers (vLLM, llama.cpp, transformers) render ``messages`` and ``tools`` with the model's chat
template; some templates lose replayed calls whatever the body says (see the table at the end of
``WIRES.md``). :func:`render_prompt` renders the way transformers' ``render_jinja_template`` does:

* ``jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`` with the
  ``loopcontrols`` extension and a ``{% generation %}`` tag that renders its body (transformers' assistant
  tracker, minus the mask);
* ``tojson`` is ``json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
  sort_keys=sort_keys)`` (not jinja's HTML-escaping one); ``raise_exception(msg)`` raises; ``strftime_now``;
* variables ``messages``, ``tools`` (the body's, or None), ``add_generation_prompt=True``, and the special
  tokens a tokenizer would pass (``bos_token``/``eos_token``, guessed from the template's own markers
  unless given; a ``tokenizer_config.json`` supplies its own).

Before the template runs, each server normalises the body (``server``):

* ``vllm`` and ``llama.cpp`` parse string ``arguments`` into objects and turn a ``null`` content into
  ``""`` (vLLM rebuilds each message from the keys it knows: see :func:`normalise`);
* ``transformers`` (>= 5) drops keys whose value is None; arguments stay as sent.

:func:`template_audit` says for every earlier call whether it survives into the prompt as a call. It renders
a probe: the same body with each call's name and argument values replaced by unique markers, so a marker
found in the prompt can only come from that call. A call is ``as call`` when its name and all its argument
values appear, ``dropped`` when none of it does, ``name missing`` / ``arguments missing`` in between. It
also names the template's failures: an exception, dropped calls, dropped text (a message's words not in
the prompt), double-encoded arguments, call ids written into the prompt.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from toolreplay._errors import ConfigError, WireError

Server = Literal["transformers", "vllm", "llama.cpp"]
SERVERS: tuple[Server, ...] = ("transformers", "vllm", "llama.cpp")

#: Special tokens a tokenizer passes to the template, guessed from a marker the template contains.
SPECIAL_TOKENS: tuple[tuple[str, dict[str, str]], ...] = (
    ("<|start_header_id|>", {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}),
    ("[INST]", {"bos_token": "<s>", "eos_token": "</s>"}),
    ("<｜User｜>", {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}),
    ("<|im_start|>", {"bos_token": "", "eos_token": "<|im_end|>"}),
    ("<|turn>", {"bos_token": "<bos>", "eos_token": "<turn|>"}),
    ("<start_of_turn>", {"bos_token": "<bos>", "eos_token": "<end_of_turn>"}),
)

#: The exceptions a template can raise while rendering (raise_exception, a str + dict, a missing key).
_RENDER_ERRORS: tuple[type[BaseException], ...] = (
    ArithmeticError,  # 1/0, (10**400)|float
    AssertionError,  # jinja's own checks of filter arguments: 'x'|truncate(-1)
    TypeError,
    ValueError,
    KeyError,
    AttributeError,
    IndexError,
)


class PromptTemplateError(WireError):
    """The chat template refused the body (its own ``raise_exception`` or a type error while rendering)."""


@dataclass(frozen=True, slots=True)
class ChatTemplate:
    """A chat template's source and the variables its tokenizer would pass (special tokens)."""

    source: str
    name: str
    variables: Mapping[str, Any]


def _tokens(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        content = cast(Mapping[str, Any], value).get("content")
        return content if isinstance(content, str) else None
    return None


def _from_config(data: Mapping[str, Any], name: str) -> tuple[str, dict[str, Any]]:
    tpl = data.get("chat_template")
    if isinstance(tpl, list):  # [{"name": "default", "template": ...}, {"name": "tool_use", ...}]
        named = {t.get("name"): t.get("template") for t in tpl if isinstance(t, Mapping)}
        tpl = named.get("tool_use") or named.get("default") or next(iter(named.values()), None)
    if not isinstance(tpl, str):
        raise ConfigError(f"{name}: no chat_template string in this JSON file")
    variables = {k: t for k in ("bos_token", "eos_token") if (t := _tokens(data.get(k))) is not None}
    return tpl, variables


def load_template(path: str | Path, variables: Mapping[str, Any] | None = None) -> ChatTemplate:
    """A template file: a ``.jinja`` text, or a ``tokenizer_config.json`` / ``chat_template.json``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such template file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot be read ({exc})") from None
    found: dict[str, Any] = {}
    if p.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{p}: not JSON ({exc.msg})") from None
        if not isinstance(data, Mapping):
            raise ConfigError(f"{p}: not a tokenizer config (an object with chat_template)")
        text, found = _from_config(cast(Mapping[str, Any], data), str(p))
    guessed = next((dict(toks) for marker, toks in SPECIAL_TOKENS if marker in text), {})
    merged = {"bos_token": "", "eos_token": "", **guessed, **found, **(variables or {})}
    return ChatTemplate(text, p.name, merged)


def _environment() -> Any:
    """The jinja2 environment transformers compiles chat templates in (sandboxed, with limits)."""
    from toolreplay._audit.sandbox import environment

    return environment()


def _parsed_arguments(value: Any, server: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            if server == "vllm":  # vLLM: "Default to an empty dict for any string that isn't valid JSON"
                return {}
            raise PromptTemplateError(f"the server cannot parse these arguments as JSON: {exc.msg}") from None
    return value if isinstance(value, (dict, list)) else {}


def _drop_none(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _drop_none(v) for k, v in cast(Mapping[str, Any], value).items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def _text_of(content: Any) -> Any:
    """vLLM's "string" content format: null -> "", a list of text parts -> their texts joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, Mapping) else p for p in content]
        return "\n".join(p for p in parts if isinstance(p, str))
    return content


def _vllm_message(m: Mapping[str, Any]) -> dict[str, Any]:
    """The message vLLM hands the template: rebuilt from role, content and the few keys it keeps."""
    role = m.get("role")
    out: dict[str, Any] = {"role": role, "content": _text_of(m.get("content"))}
    if role == "assistant" and m.get("tool_calls"):  # an empty list is dropped
        out["tool_calls"] = m["tool_calls"]
        for call in out["tool_calls"]:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                fn["arguments"] = _parsed_arguments(fn.get("arguments"), "vllm")
    if role == "assistant" and m.get("reasoning") is not None:
        out["reasoning"] = out["reasoning_content"] = m["reasoning"]
    if role == "tool" and "tool_call_id" in m:
        out["tool_call_id"] = m["tool_call_id"]
    if isinstance(m.get("name"), str):
        out["name"] = m["name"]
    return out


def normalise(body: Mapping[str, Any], server: str) -> tuple[list[dict[str, Any]], list[Any] | None]:
    """The ``messages`` and ``tools`` the template receives on ``server`` (a deep copy).

    * ``vllm`` (``vllm/entrypoints/chat_utils.py``): each message rebuilt from ``role``, ``content`` (null
      becomes ``""``, text parts are joined: the "string" content format), ``tool_calls`` (string
      arguments parsed; invalid JSON becomes ``{}``), ``tool_call_id``, ``name``, ``reasoning``;
    * ``llama.cpp``: string arguments parsed (invalid JSON is refused), null content becomes ``""``;
    * ``transformers`` (>= 5): keys whose value is None are dropped; everything else as sent.
    """
    if server not in SERVERS:
        raise ConfigError(f"unknown server {server!r}; use one of {', '.join(SERVERS)}")
    raw = body.get("messages")
    if not isinstance(raw, list):
        raise WireError("a chat template renders a Chat body: this one has no messages list")
    messages: list[dict[str, Any]] = json.loads(json.dumps(raw))
    tools = body.get("tools")
    tool_list: list[Any] | None = json.loads(json.dumps(tools)) if isinstance(tools, list) and tools else None
    if server == "vllm":
        return [_vllm_message(m) for m in messages], tool_list
    if server == "transformers":
        return [cast(dict[str, Any], _drop_none(m)) for m in messages], tool_list
    for m in messages:  # llama.cpp
        for call in m.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and "arguments" in fn:
                fn["arguments"] = _parsed_arguments(fn["arguments"], server)
        if "content" in m and m["content"] is None:
            m["content"] = ""
    return messages, tool_list


@functools.lru_cache(maxsize=32)
def _compiled(source: str, name: str) -> Any:
    """The compiled template (compiling the longer templates costs more than rendering them)."""
    from toolreplay._audit.sandbox import require_jinja

    jinja2 = require_jinja()
    try:
        return _environment().from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"{name}: not a valid Jinja template (line {exc.lineno}: {exc.message})") from None
    except RecursionError:
        raise ConfigError(f"{name}: not a valid Jinja template (nested too deeply)") from None


def _render(
    template: ChatTemplate, messages: list[dict[str, Any]], tools: list[Any] | None, now: datetime
) -> str:
    from toolreplay._audit.sandbox import TemplateLimit, render_limited

    compiled = _compiled(template.source, template.name)
    jinja2 = sys.modules["jinja2"]
    variables = {
        "messages": messages,
        "tools": tools,
        "add_generation_prompt": True,
        "strftime_now": now.strftime,
        **dict(template.variables),
    }
    try:
        return render_limited(lambda: compiled.generate(**variables))
    except jinja2.TemplateError as exc:
        raise PromptTemplateError(f"{template.name}: {exc.message or type(exc).__name__}") from None
    except TemplateLimit as exc:
        raise PromptTemplateError(f"{template.name}: {exc}") from None
    except RecursionError:
        raise PromptTemplateError(f"{template.name}: recursion too deep") from None
    except MemoryError:
        raise PromptTemplateError(f"{template.name}: out of memory") from None
    except _RENDER_ERRORS as exc:
        raise PromptTemplateError(f"{template.name}: {type(exc).__name__}: {exc}") from None


def render_prompt(
    body: Mapping[str, Any],
    template_path: str | Path | ChatTemplate,
    server: str = "transformers",
    *,
    variables: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> str:
    """The prompt text ``template_path`` makes of a Chat ``body`` on ``server`` (see the module doc).

    Raises :class:`PromptTemplateError` when the template refuses the body. ``now`` fixes the clock that
    ``strftime_now`` reads (templates that print today's date).
    """
    template = (
        template_path if isinstance(template_path, ChatTemplate) else load_template(template_path, variables)
    )
    messages, tools = normalise(body, server)
    return _render(template, messages, tools, now or datetime.now())


# --------------------------------------------------------------------------------------------------
# the audit of a template


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

    def count(self, fate: CallFate) -> int:
        return sum(1 for c in self.calls if c.fate == fate)

    def failures(self) -> list[str]:
        """The template's failures in words (empty when every call survives and no text is lost)."""
        out: list[str] = []
        if self.error:
            out.append(f"the template raises: {self.error}")
        for c in self.calls:
            if c.fate not in ("as call", "error"):
                out.append(f"call {c.index} ({c.name}, message {c.message}): {c.fate}")
            if c.double_encoded:
                out.append(
                    f"call {c.index} ({c.name}): arguments double-encoded (a JSON string in the prompt)"
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
        f"message {mi} ({label}) is not in the prompt: {text[:60]!r}"
        for mi, label, text in _texts(messages)
        # some templates write a message JSON-escaped (Llama's tool answers: ``content | tojson``)
        if text not in prompt and json.dumps(text, ensure_ascii=False)[1:-1] not in prompt
    )
    return TemplateAudit(template.name, server, tuple(calls), None, dropped, prompt)


def format_template_audit(audit: TemplateAudit) -> str:
    """The audit in a few lines."""
    n = len(audit.calls)
    head = f"{audit.template} on {audit.server}: {audit.count('as call')} of {n} calls survive as calls"
    lines = [head]
    fails = audit.failures()
    lines.extend(f"  - {f}" for f in fails)
    if not fails:
        lines.append("  no failures: every call and every message's text reaches the prompt")
    lines.extend(f"  note: {n}" for n in audit.notes())
    return "\n".join(lines)


__all__ = [
    "SERVERS",
    "CallInPrompt",
    "ChatTemplate",
    "PromptTemplateError",
    "TemplateAudit",
    "format_template_audit",
    "load_template",
    "normalise",
    "render_prompt",
    "template_audit",
]

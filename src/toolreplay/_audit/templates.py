"""What an open model really sees: a Chat body turned into the prompt by the model's own Jinja template.

Open-weight servers (vLLM, llama.cpp, transformers) render ``messages`` and ``tools`` with the model's chat
template; some templates lose replayed calls whatever the body says (``tests/test_templates.py`` pins
the behaviours measured on real templates). :func:`render_prompt` renders the way transformers'
``render_jinja_template`` does:

* ``jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`` with the
  ``loopcontrols`` extension and a ``{% generation %}`` tag that renders its body (transformers' assistant
  tracker, minus the mask);
* ``tojson`` is ``json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
  sort_keys=sort_keys)`` (not jinja's HTML-escaping one); ``raise_exception(msg)`` raises; ``strftime_now``;
* variables ``messages``, ``tools`` (the body's, or None), ``add_generation_prompt=True``, and the special
  tokens a tokenizer would pass (``bos_token``/``eos_token``, guessed from the template's own markers
  unless given; a ``tokenizer_config.json`` supplies its own).

Before the template runs, each server normalises the body (``server``):

* ``vllm`` parses string ``arguments`` into objects and turns a ``null`` content into ``""`` (it rebuilds
  each message from the keys it knows: see :func:`normalise`);
* ``llama.cpp`` turns a ``null`` content into ``""`` and hands the template objects as ``arguments`` when
  the template can render them, else JSON strings (:func:`template_caps` probes the template as
  llama.cpp does); it passes today's ``date_string`` and ``enable_thinking=True`` (thinking is on by
  default there);
* ``transformers`` (>= 5) drops keys whose value is None; arguments stay as sent.

vLLM and llama.cpp both pass the body's ``chat_template_kwargs`` to the template as variables (over their
own), so a body that fixes ``date_string`` or turns thinking off renders the same on both sides.

What survives of each call is :mod:`toolreplay._audit.template_audit`'s question.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Mapping
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


def _string_arguments(value: Any) -> Any:
    """llama.cpp's arguments for a template that cannot render objects: a string as sent, else JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


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


def normalise(
    body: Mapping[str, Any], server: str, *, object_arguments: bool = True
) -> tuple[list[dict[str, Any]], list[Any] | None]:
    """The ``messages`` and ``tools`` the template receives on ``server`` (a deep copy).

    * ``vllm`` (``vllm/entrypoints/chat_utils.py``): each message rebuilt from ``role``, ``content`` (null
      becomes ``""``, text parts are joined: the "string" content format), ``tool_calls`` (string
      arguments parsed; invalid JSON becomes ``{}``), ``tool_call_id``, ``name``, ``reasoning``;
    * ``llama.cpp``: null content becomes ``""``; with ``object_arguments`` (the template renders them)
      string arguments are parsed (invalid JSON is refused), else they stay strings (objects become
      compact JSON text);
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
                raw_args = fn["arguments"]
                fn["arguments"] = (
                    _parsed_arguments(raw_args, server) if object_arguments else _string_arguments(raw_args)
                )
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
    template: ChatTemplate,
    messages: list[dict[str, Any]],
    tools: list[Any] | None,
    now: datetime,
    extra: Mapping[str, Any] | None = None,
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
        **dict(extra or {}),
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
    clock = now or datetime.now()
    extra: dict[str, Any] = {}
    objects = True
    if server == "llama.cpp":
        objects = template_caps(template).supports_object_arguments
        # llama.cpp's own variables: today's date ("%d %b %Y") and thinking on by default
        extra = {"date_string": clock.strftime("%d %b %Y"), "enable_thinking": True}
    kwargs = body.get("chat_template_kwargs")
    if server != "transformers" and isinstance(kwargs, Mapping):
        extra.update(cast(Mapping[str, Any], kwargs))
    messages, tools = normalise(body, server, object_arguments=objects)
    return _render(template, messages, tools, clock, extra)


@dataclass(frozen=True, slots=True)
class TemplateCaps:
    """What a template can render, probed the way llama.cpp probes it (its ``chat_template_caps``)."""

    supports_tools: bool
    supports_tool_calls: bool
    supports_object_arguments: bool


_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "some_tool",
        "description": "Some tool.",
        "parameters": {"type": "object", "properties": {"arg": {"type": "string"}}, "required": ["arg"]},
    },
}


def _probe(template: ChatTemplate, messages: list[dict[str, Any]], tools: list[Any] | None) -> str:
    """The template's render of a probe conversation; empty when the template refuses it."""
    try:
        return _render(template, messages, tools, datetime(2026, 1, 1))
    except PromptTemplateError:
        return ""


def _call_probe(arguments: Any) -> list[dict[str, Any]]:
    call = {"id": "call_1___", "type": "function", "function": {"name": "tool_name", "arguments": arguments}}
    return [
        {"role": "user", "content": "Hey"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1___", "name": "tool_name", "content": "Some response!"},
    ]


#: Probed capabilities per template source and variables (the probes cost three renders).
_CAPS: dict[tuple[str, str], TemplateCaps] = {}


def _caps(template: ChatTemplate) -> TemplateCaps:
    tools = "some_tool" in _probe(template, [{"role": "user", "content": "Hey"}], [_PROBE_TOOL])
    needle = {"argument_needle": "print('Hello, World!')"}
    as_object = "argument_needle" in _probe(template, _call_probe(needle), None)
    as_string = "argument_needle" in _probe(template, _call_probe(json.dumps(needle)), None)
    return TemplateCaps(tools, as_object or as_string, as_object)


def template_caps(template: str | Path | ChatTemplate) -> TemplateCaps:
    """Whether ``template`` reads ``tools``, renders calls, and renders them from object arguments.

    The probes are llama.cpp's: a tool named ``some_tool`` must show in the prompt, and a call's
    ``argument_needle`` argument must show. A template that never reads ``tools`` (SmolLM2's,
    DeepSeek V3.1's) silently loses the request's tool definitions.
    """
    loaded = template if isinstance(template, ChatTemplate) else load_template(template)
    key = (loaded.source, json.dumps(dict(loaded.variables), sort_keys=True, default=str))
    if key not in _CAPS:
        _CAPS[key] = _caps(loaded)
    return _CAPS[key]


__all__ = [
    "SERVERS",
    "ChatTemplate",
    "PromptTemplateError",
    "Server",
    "TemplateCaps",
    "load_template",
    "normalise",
    "render_prompt",
    "template_caps",
]

"""Rendered bodies checked against the providers' own definitions (used by :mod:`toolreplay._audit.validate`).

* Every HTTP wire: a request schema that ships with the package (``toolreplay/data/schemas/``: the OpenAI
  OpenAPI spec's ``CreateChatCompletionRequest`` and ``CreateResponse``, the Gemini
  ``GenerateContentRequest``, each trimmed to the schemas the request reaches by ``scripts/trim_specs.py``;
  an Anthropic Messages request schema written for toolreplay; SOURCES.md there says where each comes from
  and its licence), validated with jsonschema's Draft 2020-12 validator. Nothing to download, no
  environment variable: ``check --offline`` works in a plain install. When the full OpenAI spec is at hand
  (``openai/openapi.json`` in a specs directory), it is used instead of the trimmed copy.
* Then, when installed (the dev extra), the SDKs' own types, as a second opinion:
* Anthropic: the ``anthropic`` SDK's ``ContentBlockParam`` per block and ``ToolParam`` per tool (the
  ``MessageParam`` union also admits response models that allow any key, so blocks are checked against
  the param union alone), top-level keys against ``MessageCreateParams``.
* Gemini: ``google.genai.types.Content`` per content and ``GenerateContentConfig`` for the rest (both
  pydantic models that reject unknown keys).
* Ollama: the shape of the Go type ``api.Message`` / ``api.ChatRequest`` (the bundled openapi.yaml lacks
  ``tool_name``, ``tool_call_id`` and ``tool_calls[].id``), written out here: no dependency.

TypedDicts are validated through ``pydantic.TypeAdapter`` with extra keys forbidden and strict types
(no coercion: ``"no"`` is not a bool, ``1`` is not a string). Fields typed
``Iterable[...]`` validate lazily, so every result is walked (iterables turned into lists) while its
adapter is still referenced: a bare ``validate_python`` would pass broken blocks.

Vendor extensions a vessel may send (Kimi's ``name`` on tool messages) are taken out before the SDK
check, deliberately and only for that vessel; the rule checks have already checked them.

Heavy imports (jsonschema, referencing, pydantic, the SDKs) happen inside the functions. The SDK checks
are a second opinion on top of the shipped schemas: an SDK that is not installed is skipped silently (the
schema has checked the body); a schema that cannot be read is reported as "unchecked", never as a pass.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from toolreplay._vessels import Vessel

Checker = Callable[[Vessel, Mapping[str, Any], "Path | None", list[str], list[str]], None]


def default_specs_dir() -> Path | None:
    """``$TOOLREPLAY_SPECS``, else ``$TOOLREPLAY_SHARED/specs``, else ``../shared/specs`` beside the
    checkout; None when none of them exists."""
    env = os.environ.get("TOOLREPLAY_SPECS")
    if env:
        return Path(env)
    shared = os.environ.get("TOOLREPLAY_SHARED")
    path = Path(shared) / "specs" if shared else Path(__file__).resolve().parents[3] / "shared" / "specs"
    return path if path.is_dir() else None


# --------------------------------------------------------------------------------------------------
# OpenAPI (jsonschema)


@functools.lru_cache(maxsize=4)
def _openapi_validators(path: str) -> dict[str, Any]:
    """Draft 2020-12 validators for the two request schemas of the OpenAI spec at ``path`` (cached)."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    resource = Resource.from_contents(spec, default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource("urn:openai", resource)
    return {
        name: Draft202012Validator({"$ref": f"urn:openai#/components/schemas/{name}"}, registry=registry)
        for name in ("CreateChatCompletionRequest", "CreateResponse")
    }


#: wire -> (shipped schema file, the request type it describes)
SHIPPED: dict[str, tuple[str, str]] = {
    "openai-chat": ("openai-chat.json", "CreateChatCompletionRequest"),
    "openai-responses": ("openai-responses.json", "CreateResponse"),
    "anthropic": ("anthropic.json", "CreateMessageRequest"),
    "gemini": ("gemini.json", "GenerateContentRequest"),
}


@functools.lru_cache(maxsize=8)
def _shipped_validator(wire: str) -> Any:
    """A Draft 2020-12 validator for ``wire``'s shipped request schema (built once per process)."""
    from importlib.resources import files

    from jsonschema import Draft202012Validator

    name, _ = SHIPPED[wire]
    text = files("toolreplay").joinpath("data", "schemas", name).read_text(encoding="utf-8")
    return Draft202012Validator(json.loads(text))


def _report(validator: Any, schema: str, origin: str, body: Mapping[str, Any], problems: list[str]) -> None:
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    errors = list(validator.iter_errors(body))
    if errors:
        err = best_match(errors)
        where = ".".join(str(p) for p in err.absolute_path) or "body"
        problems.append(f"{where}: {schema} ({origin}): {err.message[:300]}")


def _schema_check(wire: str, body: Mapping[str, Any], problems: list[str], unchecked: list[str]) -> None:
    """``body`` against the shipped schema of ``wire``."""
    schema = SHIPPED[wire][1]
    try:
        validator = _shipped_validator(wire)
    except (ImportError, OSError, ValueError) as exc:
        unchecked.append(f"{schema}: the shipped schema cannot be used ({exc})")
        return
    _report(validator, schema, "shipped schema", body, problems)


def _openapi_check(
    schema: str, body: Mapping[str, Any], specs_dir: Path | None, problems: list[str], unchecked: list[str]
) -> None:
    if specs_dir is None or not (specs_dir / "openai" / "openapi.json").is_file():
        wire = next(w for w, (_, name) in SHIPPED.items() if name == schema)
        _schema_check(wire, body, problems, unchecked)
        return
    validators = _openapi_validators(str(specs_dir / "openai" / "openapi.json"))
    _report(validators[schema], schema, "OpenAPI", body, problems)


# --------------------------------------------------------------------------------------------------
# pydantic TypeAdapters over the SDKs' TypedDicts


@functools.lru_cache(maxsize=32)
def _adapter(module: str, name: str) -> Any:
    """A TypeAdapter (extra keys forbidden) for ``module.name``; cached, so it stays referenced."""
    import importlib

    from pydantic import ConfigDict, TypeAdapter

    tp = getattr(importlib.import_module(module), name)
    # Wrapped in a list: pydantic refuses ``config`` on a bare TypedDict, and applies it to the
    # TypedDicts inside a container (checked by the tests: an extra key is rejected).
    return TypeAdapter(list[tp], config=ConfigDict(extra="forbid", strict=True))  # type: ignore[valid-type]


def _force(value: Any) -> Any:
    """Walk a validated value, turning every lazy iterable into a list (that is when it validates)."""
    if isinstance(value, Mapping):
        return {k: _force(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, Iterable):
        return [_force(v) for v in value]
    return value


def _pydantic_message(exc: Any, strip: int = 0) -> str:
    errors = [{**e, "loc": e["loc"][strip:]} for e in exc.errors()]
    pick = next((e for e in errors if e["type"] == "extra_forbidden"), None) or min(
        errors, key=lambda e: len(e["loc"])
    )
    loc = ".".join(str(p) for p in pick["loc"])
    return f"{pick['msg']} at {loc} ({len(errors)} error(s) over the union)"


def _typed_check(
    module: str, name: str, items: Iterable[tuple[str, Any]], problems: list[str], unchecked: list[str]
) -> None:
    """Validate each ``(place, value)`` against ``module.name`` with extra keys forbidden."""
    try:
        adapter = _adapter(module, name)
        from pydantic import ValidationError
    except ImportError:  # a second opinion only: the shipped schema has checked the body
        return
    for where, value in items:
        try:
            _force(adapter.validate_python([value]))
        except ValidationError as exc:
            problems.append(f"{where}: not a valid {name}: {_pydantic_message(exc, strip=1)}")


def _keys_check(
    module: str, name: str, body: Mapping[str, Any], problems: list[str], unchecked: list[str]
) -> None:
    """Top-level keys of ``body`` against the SDK's create-params TypedDict."""
    import importlib

    try:
        allowed = set(getattr(importlib.import_module(module), name).__annotations__)
    except ImportError:  # a second opinion only: the shipped schema has checked the body
        return
    extra = sorted(k for k in body if k not in allowed)
    if extra:
        problems.append(f"body: key(s) {', '.join(extra)} are not in {name}")


def _listed(body: Mapping[str, Any], key: str) -> list[tuple[str, Any]]:
    value = body.get(key)
    return [(f"{key}[{i}]", v) for i, v in enumerate(value)] if isinstance(value, list) else []


# --------------------------------------------------------------------------------------------------
# per wire


def _chat(
    v: Vessel, body: Mapping[str, Any], specs: Path | None, problems: list[str], unchecked: list[str]
) -> None:
    _openapi_check("CreateChatCompletionRequest", body, specs, problems, unchecked)
    _keys_check(
        "openai.types.chat.completion_create_params",
        "CompletionCreateParamsNonStreaming",
        body,
        problems,
        unchecked,
    )
    messages = []
    for where, m in _listed(body, "messages"):
        if v.has("tool_message_name") and isinstance(m, Mapping) and m.get("role") == "tool":
            m = {k: val for k, val in m.items() if k != "name"}  # Kimi's extension, allowed for this vessel
        messages.append((where, m))
    _typed_check("openai.types.chat", "ChatCompletionMessageParam", messages, problems, unchecked)
    _typed_check(
        "openai.types.chat", "ChatCompletionFunctionToolParam", _listed(body, "tools"), problems, unchecked
    )


def _responses(
    v: Vessel, body: Mapping[str, Any], specs: Path | None, problems: list[str], unchecked: list[str]
) -> None:
    _openapi_check("CreateResponse", body, specs, problems, unchecked)
    _keys_check(
        "openai.types.responses.response_create_params",
        "ResponseCreateParamsNonStreaming",
        body,
        problems,
        unchecked,
    )
    _typed_check(
        "openai.types.responses", "ResponseInputItemParam", _listed(body, "input"), problems, unchecked
    )
    _typed_check("openai.types.responses", "FunctionToolParam", _listed(body, "tools"), problems, unchecked)


def _anthropic(
    v: Vessel, body: Mapping[str, Any], specs: Path | None, problems: list[str], unchecked: list[str]
) -> None:
    _schema_check("anthropic", body, problems, unchecked)
    _keys_check(
        "anthropic.types.message_create_params", "MessageCreateParamsNonStreaming", body, problems, unchecked
    )
    blocks: list[tuple[str, Any]] = []
    for where, m in _listed(body, "messages"):
        content = m.get("content") if isinstance(m, Mapping) else None
        if (
            not isinstance(m, Mapping)
            or set(m) != {"role", "content"}
            or m["role"] not in ("user", "assistant")
        ):
            problems.append(f"{where}: not a MessageParam (role user/assistant and content, nothing else)")
        elif isinstance(content, list):
            blocks.extend((f"{where}.content[{k}]", b) for k, b in enumerate(content))
        elif not isinstance(content, str):
            problems.append(f"{where}.content: neither a string nor a list of blocks")
    _typed_check("anthropic.types", "ContentBlockParam", blocks, problems, unchecked)
    _typed_check("anthropic.types", "ToolParam", _listed(body, "tools"), problems, unchecked)
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        _typed_check("anthropic.types", "TextBlockParam", _listed(body, "system"), problems, unchecked)


#: The fields of the REST ``GenerateContentRequest`` besides ``model`` (which is in the URL).
GEMINI_BODY_KEYS = frozenset(
    {
        "contents",
        "systemInstruction",
        "tools",
        "toolConfig",
        "generationConfig",
        "safetySettings",
        "cachedContent",
    }
)


def _gemini(
    v: Vessel, body: Mapping[str, Any], specs: Path | None, problems: list[str], unchecked: list[str]
) -> None:
    extra = sorted(k for k in body if k not in GEMINI_BODY_KEYS)
    if extra:
        problems.append(f"body: key(s) {', '.join(extra)} are not in GenerateContentRequest")
    _schema_check("gemini", body, problems, unchecked)
    try:
        from google.genai import types as gt
        from pydantic import ValidationError
    except ImportError:  # a second opinion only: the shipped schema has checked the body
        return
    for where, c in _listed(body, "contents"):
        try:
            gt.Content.model_validate(c)
        except ValidationError as exc:
            problems.append(f"{where}: not a valid google.genai Content: {_pydantic_message(exc)}")
    config = {k: body[k] for k in ("systemInstruction", "tools", "toolConfig", "safetySettings") if k in body}
    gen = body.get("generationConfig")
    if isinstance(gen, Mapping):
        config.update(gen)
    try:
        gt.GenerateContentConfig.model_validate(config)
    except ValidationError as exc:
        problems.append(f"config: not a valid GenerateContentConfig: {_pydantic_message(exc)}")


# The Go types of ollama api/types.go, as the keys each JSON object may carry.
OLLAMA_CHAT_REQUEST = frozenset(
    {"model", "messages", "stream", "format", "keep_alive", "tools", "options", "think", "truncate", "shift"}
    | {"logprobs", "top_logprobs"}
)
OLLAMA_MESSAGE = frozenset(
    {"role", "content", "thinking", "images", "tool_calls", "tool_name", "tool_call_id"}
)
OLLAMA_TOOL_CALL = frozenset({"id", "function"})
OLLAMA_FUNCTION = frozenset({"index", "name", "arguments"})
OLLAMA_TOOL = frozenset({"type", "items", "function"})
OLLAMA_TOOL_FUNCTION = frozenset({"name", "description", "parameters"})


def _ollama(
    v: Vessel, body: Mapping[str, Any], specs: Path | None, problems: list[str], unchecked: list[str]
) -> None:
    def keys(where: str, obj: Any, allowed: frozenset[str], required: tuple[str, ...] = ()) -> None:
        if not isinstance(obj, Mapping):
            problems.append(f"{where}: not an object (api types)")
            return
        extra = sorted(k for k in obj if k not in allowed)
        if extra:
            problems.append(f"{where}: key(s) {', '.join(extra)} are not in the Go api type")
        problems.extend(f"{where}.{k}: required" for k in required if k not in obj)

    keys("body", body, OLLAMA_CHAT_REQUEST, ("model", "messages"))
    for where, m in _listed(body, "messages"):
        keys(where, m, OLLAMA_MESSAGE, ("role",))
        for k, c in enumerate(m.get("tool_calls") or [] if isinstance(m, Mapping) else []):
            keys(f"{where}.tool_calls[{k}]", c, OLLAMA_TOOL_CALL, ("function",))
            fn = c.get("function") if isinstance(c, Mapping) else None
            keys(f"{where}.tool_calls[{k}].function", fn, OLLAMA_FUNCTION, ("name", "arguments"))
            if isinstance(fn, Mapping) and not isinstance(fn.get("arguments"), Mapping):
                problems.append(
                    f"{where}.tool_calls[{k}].function.arguments: api.ToolCallFunctionArguments is a map"
                )
    for where, t in _listed(body, "tools"):
        keys(where, t, OLLAMA_TOOL, ("type", "function"))
        keys(
            f"{where}.function",
            t.get("function") if isinstance(t, Mapping) else None,
            OLLAMA_TOOL_FUNCTION,
            ("name",),
        )


def _claude_prompt(
    v: Vessel, body: Mapping[str, Any], specs: Path | None, problems: list[str], unchecked: list[str]
) -> None:
    """The Claude Code CLI takes a prompt string: there is no provider schema beyond the rules."""


CHECKS: dict[str, Checker] = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "ollama": _ollama,
    "claude-prompt": _claude_prompt,
}


def check_specs(
    v: Vessel, body: Mapping[str, Any], specs_dir: Path | None = None
) -> tuple[list[str], list[str]]:
    """``(problems, unchecked)`` of ``body`` against ``v``'s wire definitions."""
    problems: list[str] = []
    unchecked: list[str] = []
    check = CHECKS.get(v.wire)
    if check is not None:  # a wire registered without published definitions has only its rules
        check(v, body, specs_dir if specs_dir is not None else default_specs_dir(), problems, unchecked)
    return problems, unchecked

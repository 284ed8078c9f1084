"""What the wires' spec checks share: rendered bodies checked against the providers' own definitions.

Each wire's ``specs.py`` (its ``Wire.specs``) is built from these; nothing outside ``wires/`` imports
this module.

* A request schema that ships with the package (``toolreplay/data/schemas/``: the OpenAI OpenAPI spec's
  ``CreateChatCompletionRequest`` and ``CreateResponse``, the Gemini ``GenerateContentRequest``, each
  trimmed to the schemas the request reaches by ``scripts/trim_specs.py``; an Anthropic Messages request
  schema written for toolreplay; SOURCES.md there says where each comes from and its licence), validated
  with jsonschema's Draft 2020-12 validator (:func:`schema_check`). Nothing to download, no environment
  variable: ``check --offline`` works in a plain install. When the full OpenAI spec is at hand
  (``openai/openapi.json`` in a specs directory), :func:`openapi_check` uses it instead.
* Then, when installed (the dev extra), the SDKs' own types, as a second opinion (:func:`typed_check`,
  :func:`keys_check`). TypedDicts are validated through ``pydantic.TypeAdapter`` with extra keys
  forbidden and strict types (no coercion: ``"no"`` is not a bool, ``1`` is not a string). Fields typed
  ``Iterable[...]`` validate lazily, so every result is walked (iterables turned into lists) while its
  adapter is still referenced: a bare ``validate_python`` would pass broken blocks.

Heavy imports (jsonschema, referencing, pydantic, the SDKs) happen inside the functions. An SDK that is
not installed is skipped silently (the schema has checked the body); a schema that cannot be read is
reported as "unchecked", never as a pass.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any


def _any_of_validator() -> Any:
    """Draft 2020-12 with ``oneOf`` read as ``anyOf``. OpenAI's ``oneOf`` are unions its server reads by
    shape, and some shapes fit two branches: a user message whose content is a list of parts is both an
    ``EasyInputMessage`` and an ``InputMessage`` (the server takes it, as real traffic shows), which a
    strict ``oneOf`` refuses. A body that fits no branch is still refused."""
    from jsonschema import Draft202012Validator, ValidationError, validators  # type: ignore[import-untyped]

    def one_of_as_any_of(v: Any, branches: list[Any], instance: Any, schema: Any) -> Iterator[Any]:
        found: list[Any] = []
        for k, branch in enumerate(branches):
            errors = list(v.descend(instance, branch, schema_path=k))
            if not errors:
                return
            found.extend(errors)
        yield ValidationError(f"{instance!r} is not valid under any of the given schemas", context=found)

    return validators.extend(Draft202012Validator, {"oneOf": one_of_as_any_of})


@functools.lru_cache(maxsize=4)
def _openapi_validators(path: str) -> dict[str, Any]:
    """Draft 2020-12 validators for the two request schemas of the OpenAI spec at ``path`` (cached;
    ``oneOf`` read as ``anyOf``: :func:`_any_of_validator`)."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    resource = Resource.from_contents(spec, default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource("urn:openai", resource)
    validator = _any_of_validator()
    return {
        name: validator({"$ref": f"urn:openai#/components/schemas/{name}"}, registry=registry)
        for name in ("CreateChatCompletionRequest", "CreateResponse")
    }


@functools.lru_cache(maxsize=8)
def _shipped_validator(file: str) -> Any:
    """A Draft 2020-12 validator for the shipped request schema ``file`` (built once per process;
    ``oneOf`` read as ``anyOf``: :func:`_any_of_validator`)."""
    from importlib.resources import files

    text = files("toolreplay").joinpath("data", "schemas", file).read_text(encoding="utf-8")
    return _any_of_validator()(json.loads(text))


def _report(validator: Any, schema: str, origin: str, body: Mapping[str, Any], problems: list[str]) -> None:
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    errors = list(validator.iter_errors(body))
    if errors:
        err = best_match(errors)
        where = ".".join(str(p) for p in err.absolute_path) or "body"
        problems.append(f"{where}: {schema} ({origin}): {err.message[:300]}")


def schema_check(
    shipped: tuple[str, str], body: Mapping[str, Any], problems: list[str], unchecked: list[str]
) -> None:
    """``body`` against a shipped schema: ``shipped`` is (file in data/schemas, the request type)."""
    file, schema = shipped
    try:
        validator = _shipped_validator(file)
    except (ImportError, OSError, ValueError) as exc:
        unchecked.append(f"{schema}: the shipped schema cannot be used ({exc})")
        return
    _report(validator, schema, "shipped schema", body, problems)


def openapi_check(
    shipped: tuple[str, str],
    body: Mapping[str, Any],
    specs_dir: Path | None,
    problems: list[str],
    unchecked: list[str],
) -> None:
    """``body`` against the full OpenAI spec in ``specs_dir`` when it is there, else the shipped schema."""
    if specs_dir is None or not (specs_dir / "openai" / "openapi.json").is_file():
        schema_check(shipped, body, problems, unchecked)
        return
    validators = _openapi_validators(str(specs_dir / "openai" / "openapi.json"))
    _report(validators[shipped[1]], shipped[1], "OpenAPI", body, problems)


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


def pydantic_message(exc: Any, strip: int = 0) -> str:
    """One line for a pydantic ValidationError: an extra key first, else the shallowest error."""
    errors = [{**e, "loc": e["loc"][strip:]} for e in exc.errors()]
    pick = next((e for e in errors if e["type"] == "extra_forbidden"), None) or min(
        errors, key=lambda e: len(e["loc"])
    )
    loc = ".".join(str(p) for p in pick["loc"])
    return f"{pick['msg']} at {loc} ({len(errors)} error(s) over the union)"


def typed_check(module: str, name: str, items: Iterable[tuple[str, Any]], problems: list[str]) -> None:
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
            problems.append(f"{where}: not a valid {name}: {pydantic_message(exc, strip=1)}")


def keys_check(module: str, name: str, body: Mapping[str, Any], problems: list[str]) -> None:
    """Top-level keys of ``body`` against the SDK's create-params TypedDict."""
    import importlib

    try:
        allowed = set(getattr(importlib.import_module(module), name).__annotations__)
    except ImportError:  # a second opinion only: the shipped schema has checked the body
        return
    extra = sorted(k for k in body if k not in allowed)
    if extra:
        problems.append(f"body: key(s) {', '.join(extra)} are not in {name}")


def listed(body: Mapping[str, Any], key: str) -> list[tuple[str, Any]]:
    """``(place, element)`` of the list ``body[key]`` (empty when it is not a list)."""
    value = body.get(key)
    return [(f"{key}[{i}]", v) for i, v in enumerate(value)] if isinstance(value, list) else []


__all__ = ["keys_check", "listed", "openapi_check", "pydantic_message", "schema_check", "typed_check"]

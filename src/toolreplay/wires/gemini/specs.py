"""Gemini bodies against Google's definitions: the REST ``GenerateContentRequest``'s fields, the shipped
schema, then when installed ``google.genai.types.Content`` per content and ``GenerateContentConfig`` for
the rest (both pydantic models that reject unknown keys)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolreplay.wires._specs import listed, pydantic_message, schema_check
from toolreplay.wires.gemini.rules import GEMINI_BODY_KEYS

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile

#: The shipped schema file and the request type it describes.
SHIPPED = ("gemini.json", "GenerateContentRequest")


def _sdk_check(body: Mapping[str, Any], problems: list[str]) -> None:
    try:
        from google.genai import types as gt
        from pydantic import ValidationError
    except ImportError:  # a second opinion only: the shipped schema has checked the body
        return
    for where, c in listed(body, "contents"):
        try:
            gt.Content.model_validate(c)
        except ValidationError as exc:
            problems.append(f"{where}: not a valid google.genai Content: {pydantic_message(exc)}")
    config = {k: body[k] for k in ("systemInstruction", "tools", "toolConfig", "safetySettings") if k in body}
    gen = body.get("generationConfig")
    if isinstance(gen, Mapping):
        config.update(gen)
    try:
        gt.GenerateContentConfig.model_validate(config)
    except ValidationError as exc:
        problems.append(f"config: not a valid GenerateContentConfig: {pydantic_message(exc)}")


def specs(
    v: VesselProfile,
    body: Mapping[str, Any],
    specs_dir: Path | None,
    problems: list[str],
    unchecked: list[str],
) -> None:
    extra = sorted(k for k in body if k not in GEMINI_BODY_KEYS)
    if extra:
        problems.append(f"body: key(s) {', '.join(extra)} are not in GenerateContentRequest")
    schema_check(SHIPPED, body, problems, unchecked)
    _sdk_check(body, problems)


__all__ = ["SHIPPED", "specs"]

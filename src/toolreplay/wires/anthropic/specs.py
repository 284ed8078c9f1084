"""Anthropic bodies against the provider's definitions: the shipped Messages request schema, then the
``anthropic`` SDK's types when installed: ``ContentBlockParam`` per block and ``ToolParam`` per tool (the
``MessageParam`` union also admits response models that allow any key, so blocks are checked against the
param union alone), top-level keys against ``MessageCreateParams``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolreplay.wires._specs import keys_check, listed, schema_check, typed_check

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile

#: The shipped schema file and the request type it describes.
SHIPPED = ("anthropic.json", "CreateMessageRequest")


def _blocks(body: Mapping[str, Any], problems: list[str]) -> list[tuple[str, Any]]:
    """Every content block of every message; a message that is no MessageParam is a problem."""
    blocks: list[tuple[str, Any]] = []
    for where, m in listed(body, "messages"):
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
    return blocks


def specs(
    v: VesselProfile,
    body: Mapping[str, Any],
    specs_dir: Path | None,
    problems: list[str],
    unchecked: list[str],
) -> None:
    schema_check(SHIPPED, body, problems, unchecked)
    keys_check("anthropic.types.message_create_params", "MessageCreateParamsNonStreaming", body, problems)
    typed_check("anthropic.types", "ContentBlockParam", _blocks(body, problems), problems)
    typed_check("anthropic.types", "ToolParam", listed(body, "tools"), problems)
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        typed_check("anthropic.types", "TextBlockParam", listed(body, "system"), problems)


__all__ = ["SHIPPED", "specs"]

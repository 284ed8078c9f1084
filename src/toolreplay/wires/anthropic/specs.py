"""Anthropic bodies against the provider's definitions: the shipped Messages request schema, then the
``anthropic`` SDK's types when installed: ``ContentBlockParam`` per block (the
``MessageParam`` union also admits response models that allow any key, so blocks are checked against the
param union alone), ``ToolParam`` per client tool and ``ToolUnionParam`` per typed tool
(``web_search_20250305``: the shipped schema knows client tools only), top-level keys against
``MessageCreateParams``."""

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


def _typed(tool: Any) -> bool:
    """A tool of a type Anthropic defines (a server or versioned client tool), not a client tool."""
    return isinstance(tool, Mapping) and tool.get("type", "custom") != "custom"


def specs(
    v: VesselProfile,
    body: Mapping[str, Any],
    specs_dir: Path | None,
    problems: list[str],
    unchecked: list[str],
) -> None:
    tools = listed(body, "tools")
    client = [(w, t) for w, t in tools if not _typed(t)]
    # the shipped schema knows client tools only: a typed tool Anthropic defines (web_search_20250305,
    # bash_20250124...) is checked against the SDK's union of every tool type instead
    shipped = {**body, "tools": [t for _, t in client]} if len(client) < len(tools) else body
    schema_check(SHIPPED, shipped, problems, unchecked)
    keys_check("anthropic.types.message_create_params", "MessageCreateParamsNonStreaming", body, problems)
    typed_check("anthropic.types", "ContentBlockParam", _blocks(body, problems), problems)
    typed_check("anthropic.types", "ToolParam", client, problems)
    typed_check("anthropic.types", "ToolUnionParam", [(w, t) for w, t in tools if _typed(t)], problems)
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        typed_check("anthropic.types", "TextBlockParam", listed(body, "system"), problems)


__all__ = ["SHIPPED", "specs"]

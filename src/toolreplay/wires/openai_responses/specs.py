"""Responses bodies against OpenAI's own definitions: the OpenAPI ``CreateResponse`` (shipped, or the full
spec when a specs directory has it), then the ``openai`` SDK's types when installed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolreplay.wires._specs import keys_check, listed, openapi_check, typed_check

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile

#: The shipped schema file and the request type it describes.
SHIPPED = ("openai-responses.json", "CreateResponse")


def specs(
    v: VesselProfile,
    body: Mapping[str, Any],
    specs_dir: Path | None,
    problems: list[str],
    unchecked: list[str],
) -> None:
    openapi_check(SHIPPED, body, specs_dir, problems, unchecked)
    keys_check(
        "openai.types.responses.response_create_params", "ResponseCreateParamsNonStreaming", body, problems
    )
    typed_check("openai.types.responses", "ResponseInputItemParam", listed(body, "input"), problems)
    # each tool against its own kind's type (a union's error names whichever branch failed last)
    tools = listed(body, "tools")
    for kind, name in _TOOL_TYPES.items():
        typed_check("openai.types.responses", name, [t for t in tools if _kind(t[1]) == kind], problems)
    known = [t for t in tools if _kind(t[1]) not in _TOOL_TYPES]
    typed_check("openai.types.responses", "ToolParam", known, problems)


#: The SDK's type of each tool kind checked on its own; every other kind goes against the whole union.
_TOOL_TYPES = {"function": "FunctionToolParam", "custom": "CustomToolParam"}


def _kind(tool: Any) -> Any:
    return tool.get("type") if isinstance(tool, Mapping) else None


__all__ = ["SHIPPED", "specs"]

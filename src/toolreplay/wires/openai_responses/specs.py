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
    # Hosted tools (web_search, tool_search, mcp...) are checked by the OpenAPI definition alone: the SDK's
    # types lag the API there (Codex 0.171 declares web_search with `external_web_access`, which the
    # published spec defines and openai 3.57's WebSearchToolParam refuses as an extra input).
    for kind, name in _TOOL_TYPES.items():
        typed_check("openai.types.responses", name, [t for t in tools if _kind(t[1]) == kind], problems)


#: The SDK's type of each tool kind it checks; the other (hosted) kinds are the OpenAPI check's alone.
_TOOL_TYPES = {"function": "FunctionToolParam", "custom": "CustomToolParam"}


def _kind(tool: Any) -> Any:
    return tool.get("type") if isinstance(tool, Mapping) else None


__all__ = ["SHIPPED", "specs"]

"""Responses bodies against OpenAI's own definitions: the OpenAPI ``CreateResponse`` (shipped, or the full
spec when a specs directory has it), then the ``openai`` SDK's types when installed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolreplay.wires._specs import keys_check, listed, openapi_check, typed_check

if TYPE_CHECKING:
    from toolreplay import Vessel

#: The shipped schema file and the request type it describes.
SHIPPED = ("openai-responses.json", "CreateResponse")


def specs(
    v: Vessel, body: Mapping[str, Any], specs_dir: Path | None, problems: list[str], unchecked: list[str]
) -> None:
    openapi_check(SHIPPED, body, specs_dir, problems, unchecked)
    keys_check(
        "openai.types.responses.response_create_params", "ResponseCreateParamsNonStreaming", body, problems
    )
    typed_check("openai.types.responses", "ResponseInputItemParam", listed(body, "input"), problems)
    typed_check("openai.types.responses", "ToolParam", listed(body, "tools"), problems)


__all__ = ["SHIPPED", "specs"]

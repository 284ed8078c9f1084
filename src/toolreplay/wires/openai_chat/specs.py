"""Chat bodies against OpenAI's own definitions: the OpenAPI ``CreateChatCompletionRequest`` (shipped,
or the full spec when a specs directory has it), then the ``openai`` SDK's types when installed.

Kimi's ``name`` on tool messages is a vendor extension its vessel sends: it is taken out before the SDK
check, deliberately and only for that vessel (the rules have already checked it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolreplay.wires._specs import keys_check, listed, openapi_check, typed_check

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile

#: The shipped schema file and the request type it describes.
SHIPPED = ("openai-chat.json", "CreateChatCompletionRequest")


def specs(
    v: VesselProfile,
    body: Mapping[str, Any],
    specs_dir: Path | None,
    problems: list[str],
    unchecked: list[str],
) -> None:
    openapi_check(SHIPPED, body, specs_dir, problems, unchecked)
    keys_check(
        "openai.types.chat.completion_create_params", "CompletionCreateParamsNonStreaming", body, problems
    )
    messages = []
    for where, m in listed(body, "messages"):
        if v.has("tool_message_name") and isinstance(m, Mapping) and m.get("role") == "tool":
            m = {k: val for k, val in m.items() if k != "name"}  # Kimi's extension, allowed for this vessel
        messages.append((where, m))
    typed_check("openai.types.chat", "ChatCompletionMessageParam", messages, problems)
    typed_check("openai.types.chat", "ChatCompletionFunctionToolParam", listed(body, "tools"), problems)


__all__ = ["SHIPPED", "specs"]

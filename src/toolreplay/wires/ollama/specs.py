"""Ollama bodies against the shape of its Go types ``api.ChatRequest`` / ``api.Message`` (ollama
api/types.go), written out here: no dependency. The bundled openapi.yaml lacks ``tool_name``,
``tool_call_id`` and ``tool_calls[].id``, so it is not used."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolreplay.wires._specs import listed
from toolreplay.wires.ollama.rules import (
    OLLAMA_CHAT_REQUEST,
    OLLAMA_FUNCTION,
    OLLAMA_MESSAGE,
    OLLAMA_TOOL,
    OLLAMA_TOOL_CALL,
    OLLAMA_TOOL_FUNCTION,
)

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile


def _keys(
    problems: list[str], where: str, obj: Any, allowed: frozenset[str], required: tuple[str, ...] = ()
) -> None:
    if not isinstance(obj, Mapping):
        problems.append(f"{where}: not an object (api types)")
        return
    extra = sorted(k for k in obj if k not in allowed)
    if extra:
        problems.append(f"{where}: key(s) {', '.join(extra)} are not in the Go api type")
    problems.extend(f"{where}.{k}: required" for k in required if k not in obj)


def _calls(problems: list[str], where: str, m: Any) -> None:
    for k, c in enumerate(m.get("tool_calls") or [] if isinstance(m, Mapping) else []):
        _keys(problems, f"{where}.tool_calls[{k}]", c, OLLAMA_TOOL_CALL, ("function",))
        fn = c.get("function") if isinstance(c, Mapping) else None
        _keys(problems, f"{where}.tool_calls[{k}].function", fn, OLLAMA_FUNCTION, ("name", "arguments"))
        if isinstance(fn, Mapping) and not isinstance(fn.get("arguments"), Mapping):
            problems.append(
                f"{where}.tool_calls[{k}].function.arguments: api.ToolCallFunctionArguments is a map"
            )


def specs(
    v: VesselProfile,
    body: Mapping[str, Any],
    specs_dir: Path | None,
    problems: list[str],
    unchecked: list[str],
) -> None:
    _keys(problems, "body", body, OLLAMA_CHAT_REQUEST, ("model", "messages"))
    for where, m in listed(body, "messages"):
        _keys(problems, where, m, OLLAMA_MESSAGE, ("role",))
        _calls(problems, where, m)
    for where, t in listed(body, "tools"):
        _keys(problems, where, t, OLLAMA_TOOL, ("type", "function"))
        fn = t.get("function") if isinstance(t, Mapping) else None
        _keys(problems, f"{where}.function", fn, OLLAMA_TOOL_FUNCTION, ("name",))


__all__ = ["specs"]

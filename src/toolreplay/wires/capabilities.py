"""What a local open-weight server says of its chat template: does it drop the request's tools?

The lab asks before it spends a trial (design 43); each wire names its servers' question
(:attr:`toolreplay.wires.contract.Wire.dropped_tools`): llama.cpp's ``/props`` and ``/apply-template`` on the
Chat wire, Ollama's ``/api/show``. Nothing is posted to a server whose ``GET`` did not say it is one of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast


def tool_names(body: Mapping[str, Any]) -> list[str]:
    """The names of a body's tool definitions (Chat's ``function`` wrapper or a bare definition)."""
    names = []
    for t in body.get("tools") or []:
        fn = t.get("function", t) if isinstance(t, Mapping) else {}
        if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
            names.append(str(fn["name"]))
    return names


def json_of(response: Any) -> Mapping[str, Any] | None:
    """A 200 answer's JSON object, else None (not this server, or not this route)."""
    if response.status_code != 200:
        return None
    try:
        data = response.json()
    except ValueError:
        return None
    return cast(Mapping[str, Any], data) if isinstance(data, Mapping) else None


def llama_cpp(client: Any, origin: str, body: Mapping[str, Any], model: str) -> str | None:
    """llama.cpp: ``chat_template_caps.supports_tools`` of ``/props``, else (an older build) whether the
    prompt ``/apply-template`` makes of ``body`` names a tool."""
    props = json_of(client.get(f"{origin}/props"))
    if props is None:
        return None  # not llama.cpp: nothing is posted to a server that does not say what it is
    caps = props.get("chat_template_caps")
    if isinstance(caps, Mapping) and caps.get("supports_tools") is False:
        return "its chat template never reads the tools (/props: chat_template_caps.supports_tools is false)"
    if isinstance(caps, Mapping):
        return None
    rendered = json_of(client.post(f"{origin}/apply-template", json=dict(body)))
    prompt = rendered.get("prompt") if rendered else None
    if isinstance(prompt, str) and not any(n in prompt for n in tool_names(body)):
        return "the prompt its chat template makes of the request names none of the tools (/apply-template)"
    return None


def ollama(client: Any, origin: str, body: Mapping[str, Any], model: str) -> str | None:
    """Ollama (when ``/api/version`` answers): the model's ``capabilities`` of ``/api/show``."""
    if json_of(client.get(f"{origin}/api/version")) is None:
        return None  # not Ollama itself (a proxy, a double): not asked
    shown = json_of(client.post(f"{origin}/api/show", json={"model": model}))
    caps = shown.get("capabilities") if shown else None
    if isinstance(caps, list) and "tools" not in caps:
        return f"model {model}'s capabilities (/api/show) do not include tools"
    return None


__all__ = ["json_of", "llama_cpp", "ollama", "tool_names"]

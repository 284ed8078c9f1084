"""The OpenAI Chat Completions wire (OpenAI, Kimi, GLM and every OpenAI-compatible server).

``render.py`` bodies, ``response.py`` answers and stream events, ``request.py`` bodies back into a
history, ``rules.py`` what the provider refuses, ``detect.py`` how its bodies are recognised,
``double.py`` the loopback double's side. :data:`WIRE` holds them all.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from toolreplay.wires import capabilities
from toolreplay.wires.common import same_wire_settings
from toolreplay.wires.contract import Http, ImportForm, Wire, lazy_bridge, lazy_double, stream_key

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile
from toolreplay.wires.openai_chat import (
    as_sent,
    detect,
    errors,
    render,
    repair,
    request,
    response,
    rules,
    specs,
)
from toolreplay.wires.openai_chat.translation import TRANSLATION


def _endpoint(base: str, model: str, stream: bool) -> str:
    return f"{base}/chat/completions"


def bearer(vessel: VesselProfile, key: str | None) -> dict[str, str]:
    """``authorization: Bearer <key>`` (OpenAI and the servers that copy it)."""
    return {"authorization": f"Bearer {key}"} if key else {}


def _stream_flag(body: dict[str, Any], stream: bool) -> None:
    stream_key(body, stream)
    if stream:
        body.setdefault("stream_options", {"include_usage": True})
    else:
        body.pop("stream_options", None)  # OpenAI refuses stream_options without stream


WIRE = Wire(
    name=render.WIRE,
    replayed_as=(
        "assistant `tool_calls` (`content: null`), then one `tool` message per call, then the assistant text"
    ),
    translation=TRANSLATION,
    public_host=request.PUBLIC_HOST,
    conversation_keys=request.CONVERSATION_KEYS,
    carry_settings=same_wire_settings(request.WIRE, request.CONVERSATION_KEYS),
    mid_system=True,
    render_as_sent=as_sent.render_as_sent,
    list_key=render.LIST_KEY,
    part_kinds=render.PART_KINDS,
    carries=render.carries,
    reasoning_flag="reasoning_content",
    carries_data=False,
    dropped_tools=capabilities.llama_cpp,
    render=render.render,
    render_turn=render.turn_renderer,
    call_ids=render.call_ids,
    parse_request=request.parse_request,
    parse_response=response.parse_response,
    stream_parser=response.StreamParser,
    http=Http(
        endpoint=_endpoint,
        auth_headers=bearer,
        stream_flag=_stream_flag,
        path=re.compile(r"^/v1/chat/completions$"),
        base_suffix="/v1",
        side_paths=(re.compile(r"^/v1/models(?:/[^/:]+)?$"),),
        error_body=errors.error_body,
        stream_error=errors.stream_error,
        stream_end=errors.stream_end,
        session_field="prompt_cache_key",
        repairs=(repair.reasoning_back, repair.orphans_answered),
    ),
    url_endings=("/chat/completions",),
    sniff=detect.sniff,
    importing=ImportForm(
        description="OpenAI Chat messages or request bodies (tau-bench v1, LiteLLM, vLLM logs)",
        rank=10,
        is_element=detect.is_element,
        marks=detect.marks,
    ),
    rules=rules.rules,
    specs=specs.specs,
    double=lazy_double("toolreplay.wires.openai_chat.double"),
    bridge=lazy_bridge("toolreplay.wires.openai_chat.bridge"),
    chat_template=True,
)

__all__ = ["WIRE", "bearer"]

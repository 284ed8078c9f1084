"""The Ollama native wire (``/api/chat``).

``render.py`` bodies, ``response.py`` answers and NDJSON stream lines, ``request.py`` bodies back into a
history, ``rules.py`` what the server refuses, ``detect.py`` how its bodies are recognised,
``double.py`` the loopback double's side. :data:`WIRE` holds them all.
"""

from __future__ import annotations

import re
from typing import Any

from toolreplay.wires import capabilities
from toolreplay.wires.common import same_wire_settings
from toolreplay.wires.contract import Http, ImportForm, Wire, lazy_bridge, lazy_double
from toolreplay.wires.ollama import as_sent, detect, errors, render, request, response, rules, specs
from toolreplay.wires.ollama.translation import TRANSLATION
from toolreplay.wires.openai_chat import bearer


def _endpoint(base: str, model: str, stream: bool) -> str:
    return f"{base}/api/chat"


def _stream_flag(body: dict[str, Any], stream: bool) -> None:
    body["stream"] = stream  # Ollama streams when the flag is absent


WIRE = Wire(
    name=render.WIRE,
    replayed_as=(
        "assistant `tool_calls` (arguments as an object),"
        " then `tool` messages with `tool_name`, then the text"
    ),
    translation=TRANSLATION,
    public_host=request.PUBLIC_HOST,
    conversation_keys=request.CONVERSATION_KEYS,
    carry_settings=same_wire_settings(request.WIRE, request.CONVERSATION_KEYS),
    render_as_sent=as_sent.render_as_sent,
    list_key=render.LIST_KEY,
    part_kinds=render.PART_KINDS,
    carries=render.carries,
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
        framing="ndjson",
        path=re.compile(r"^/api/chat$"),
        side_paths=(re.compile(r"^/api/(?:tags|show|version|ps)$"),),
        error_body=errors.error_body,
        stream_error=errors.stream_error,
        stream_end=errors.stream_end,
    ),
    url_endings=("/api/chat",),
    sniff=detect.sniff,
    importing=ImportForm(
        description="Ollama /api/chat messages or bodies",
        rank=20,
        is_element=detect.is_element,
        marks=detect.marks,
    ),
    rules=rules.rules,
    specs=specs.specs,
    double=lazy_double("toolreplay.wires.ollama.double"),
    bridge=lazy_bridge("toolreplay.wires.ollama.bridge"),
    chat_template=True,
    carries_data=False,
    dropped_tools=capabilities.ollama,
)

__all__ = ["WIRE"]

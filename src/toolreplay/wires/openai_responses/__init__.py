"""The OpenAI Responses wire (OpenAI, Codex, Grok).

``render.py`` bodies, ``response.py`` answers and stream events, ``request.py`` bodies back into a
history, ``rules.py`` what the provider refuses, ``detect.py`` how its bodies are recognised,
``double.py`` the loopback double's side, ``bridge.py`` answers and streams to and from the neutral
deltas (the proxy's translation). :data:`WIRE` holds them all.
"""

from __future__ import annotations

import re
from typing import Any

from toolreplay.model import RequestSettings
from toolreplay.wires.common import RenderOptions
from toolreplay.wires.contract import Http, ImportForm, Wire, lazy_bridge, lazy_double
from toolreplay.wires.openai_chat import bearer
from toolreplay.wires.openai_chat import errors as chat_errors
from toolreplay.wires.openai_responses import (
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
from toolreplay.wires.openai_responses.translation import TRANSLATION


def _endpoint(base: str, model: str, stream: bool) -> str:
    return f"{base}/responses"


#: What the render itself decides: never carried from an imported request, never named as lost.
_RENDER_DECIDES = frozenset({"model", "stream", "stream_options", *request.CONVERSATION_KEYS})


def _carry(req: RequestSettings, opts: RenderOptions) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A Responses request's own settings (``reasoning``, ``include``, ``text``, ``tool_choice``,
    ``prompt_cache_key``...) carried by a Responses render, those of OpenAI's public API
    (:data:`~.request.PUBLIC_PARAMS`); none of another wire's. A setting sent empty
    says nothing: only the as-sent render gives it back."""
    names = [k for k in req.fields if k not in _RENDER_DECIDES and req.fields[k] not in (None, [], {}, "")]
    if req.wire != render.WIRE:
        return {}, tuple(names)
    # a field only the ChatGPT backend takes (Codex's client_metadata) would be refused by the public API
    return {k: req.fields[k] for k in names if k in request.PUBLIC_PARAMS}, tuple(
        k for k in names if k not in request.PUBLIC_PARAMS
    )


WIRE = Wire(
    sealed_reasoning=("store_false", "encrypted_content"),
    translation=TRANSLATION,
    name=render.WIRE,
    replayed_as=(
        "`function_call` items (a free-form tool's: `custom_tool_call`),"
        " then their output items, then the assistant text"
    ),
    public_host=request.PUBLIC_HOST,
    conversation_keys=request.CONVERSATION_KEYS,
    list_key=render.LIST_KEY,
    part_kinds=render.PART_KINDS,
    carries=render.carries,
    mid_system=True,
    carry_settings=_carry,
    tool_kinds=frozenset({"function", "custom", "hosted"}),
    render=render.render,
    render_as_sent=as_sent.render_as_sent,
    render_turn=render.turn_renderer,
    call_ids=render.call_ids,
    parse_request=request.parse_request,
    parse_response=response.parse_response,
    stream_parser=response.StreamParser,
    http=Http(
        endpoint=_endpoint,
        auth_headers=bearer,
        path=re.compile(r"^/v1/responses$"),
        base_suffix="/v1",
        side_paths=(re.compile(r"^/v1/responses/[^/]+(?:/[^/]+)?$"),),
        error_body=chat_errors.error_body,
        stream_error=errors.stream_error,
        stream_end=errors.stream_end,
        session_field="prompt_cache_key",
        repairs=(repair.orphans_answered,),
        body_repairs=(repair.sealed_back,),
    ),
    url_endings=("/responses",),
    sniff=detect.sniff,
    holds=detect.holds,
    importing=ImportForm(
        description="OpenAI Responses input items or request bodies (Codex, Grok)",
        rank=40,
        is_element=detect.is_element,
        marks=detect.marks,
        elements=detect.elements,
    ),
    rules=rules.rules,
    specs=specs.specs,
    double=lazy_double("toolreplay.wires.openai_responses.double"),
    bridge=lazy_bridge("toolreplay.wires.openai_responses.bridge"),
)

__all__ = ["WIRE"]

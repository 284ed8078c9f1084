"""The Anthropic Messages wire.

``render.py`` bodies, ``breakpoints.py`` their prompt-cache markers, ``response.py`` answers and stream
events, ``request.py`` bodies back into a history, ``rules.py`` what the provider refuses, ``detect.py``
how its bodies are recognised, ``double.py`` the loopback double's side (``prompt_cache.py`` its
simulated prompt cache), ``bridge.py`` its answers read into and written from the bridge's deltas.
:data:`WIRE` holds them all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from toolreplay.wires.anthropic import (
    as_sent,
    breakpoints,
    detect,
    errors,
    render,
    repair,
    request,
    response,
    rules,
    specs,
)
from toolreplay.wires.anthropic.translation import TRANSLATION
from toolreplay.wires.contract import Http, ImportForm, Wire, lazy_bridge, lazy_double

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile

#: The ``anthropic-version`` header every request carries.
ANTHROPIC_VERSION = "2023-06-01"
#: Claude Code asks for its prompt's size here before a request (answered by the proxy on a routed model).
_COUNT_PATH = re.compile(r"^/v1/messages/count_tokens$")


def _endpoint(base: str, model: str, stream: bool) -> str:
    return f"{base}/v1/messages"


def _auth(vessel: VesselProfile, key: str | None) -> dict[str, str]:
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if key:
        headers["x-api-key"] = key
    return headers


#: An ``anthropic-beta`` flag: lower-case words and numbers joined by hyphens (``compact-2026-01-12``).
_FLAG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _carried(headers: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The agent's ``anthropic-beta`` flags a routed Anthropic upstream gets (design 56): each flag but
    those about the agent's own credentials (``oauth-*``: the vessel's key is not the agent's); a value
    that is not a flag is left out and said without being quoted (it may be a key)."""
    flags: list[str] = []
    notes: list[str] = []
    for value in (v.strip() for v in headers.get("anthropic-beta", "").split(",")):
        if not value or value in flags:
            continue
        if len(value) > 64 or not _FLAG.match(value):
            notes.append("anthropic-beta: a value that is not a flag was not carried")
        elif value.startswith("oauth-"):
            notes.append(f"anthropic-beta: {value} not carried (it is about the agent's own credentials)")
        else:
            flags.append(value)
    return ({"anthropic-beta": ",".join(flags)} if flags else {}), tuple(dict.fromkeys(notes))


WIRE = Wire(
    name=render.WIRE,
    replayed_as="assistant `tool_use` blocks, then user `tool_result` blocks, then the assistant text",
    translation=TRANSLATION,
    public_host=request.PUBLIC_HOST,
    conversation_keys=request.CONVERSATION_KEYS,
    list_key=render.LIST_KEY,
    part_kinds=render.PART_KINDS,
    carries=render.carries,
    render=render.render,
    render_as_sent=as_sent.render_as_sent,
    tool_kinds=frozenset({"function", "hosted"}),
    carry_settings=render.carry_settings,
    render_turn=render.turn_renderer,
    call_ids=render.call_ids,
    finish=breakpoints.finish,
    max_breakpoints=breakpoints.MAX_BREAKPOINTS,
    elements=breakpoints.unmarked,
    parse_request=request.parse_request,
    parse_response=response.parse_response,
    parse_usage=response.parse_usage,
    stream_parser=response.StreamParser,
    http=Http(
        endpoint=_endpoint,
        auth_headers=_auth,
        path=re.compile(r"^/v1/messages$"),
        side_paths=(_COUNT_PATH, re.compile(r"^/v1/models(?:/[^/:]+)?$")),
        count_path=_COUNT_PATH,
        count_answer=lambda tokens: {"input_tokens": tokens},
        carried_headers=_carried,
        marks=("anthropic-version", "x-api-key"),
        error_body=errors.error_body,
        stream_error=errors.stream_error,
        stream_end=errors.stream_end,
        repairs=(repair.orphans_answered, repair.foreign_out),
        body_repairs=(repair.thinking_back,),
    ),
    url_endings=("/messages",),
    sniff=detect.sniff,
    importing=ImportForm(
        description="Anthropic Messages lists or request bodies",
        rank=30,
        is_element=detect.is_element,
        marks=detect.marks,
        message_events=request.message_events,
        reasoning_piece=request.thinking_piece,
    ),
    rules=rules.rules,
    specs=specs.specs,
    double=lazy_double("toolreplay.wires.anthropic.double"),
    bridge=lazy_bridge("toolreplay.wires.anthropic.bridge"),
)

__all__ = ["ANTHROPIC_VERSION", "WIRE"]

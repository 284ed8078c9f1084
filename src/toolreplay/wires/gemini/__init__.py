"""The Gemini wire (``generateContent`` / ``streamGenerateContent``).

``render.py`` bodies, ``response.py`` answers and stream events, ``request.py`` bodies back into a
history, ``rules.py`` what the provider refuses, ``detect.py`` how its bodies are recognised,
``double.py`` the loopback double's side. :data:`WIRE` holds them all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

from toolreplay.model import RequestSettings
from toolreplay.wires.common import RenderOptions, same_wire_settings
from toolreplay.wires.contract import (
    Framing,
    Http,
    ImportForm,
    Wire,
    lazy_bridge,
    lazy_double,
    stream_by_url,
)
from toolreplay.wires.gemini import (
    as_sent,
    detect,
    errors,
    render,
    repair,
    request,
    response,
    rules,
    signatures,
    specs,
)
from toolreplay.wires.gemini.signatures import DUMMY_SIGNATURE, camel_settings, either_case
from toolreplay.wires.gemini.translation import TRANSLATION

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile


def _framing(query: str) -> Framing:
    """``alt=sse`` (what google-genai and Gemini CLI ask for) streams SSE; the REST default is one JSON
    array of the same chunks."""
    return "sse" if "sse" in parse_qs(query).get("alt", ()) else "json-array"


def _endpoint(base: str, model: str, stream: bool) -> str:
    name = quote(model.removeprefix("models/"), safe="-._")
    return f"{base}/models/{name}:" + ("streamGenerateContent?alt=sse" if stream else "generateContent")


def _auth(vessel: VesselProfile, key: str | None) -> dict[str, str]:
    # A header, never a ?key= query: keys must not land in URLs, logs or dumps.
    return {"x-goog-api-key": key} if key else {}


def _call_notes(body: Mapping[str, Any]) -> dict[int, str]:
    """Which calls (in body order) carry Google's dummy thought signature: Gemini did not make them."""
    out: dict[int, str] = {}
    n = 0
    for content in body.get(render.LIST_KEY) or []:
        if not isinstance(content, Mapping):
            continue
        for part in content.get("parts") or []:
            if not isinstance(part, Mapping) or either_case(part, "functionCall", "function_call") is None:
                continue
            if either_case(part, "thoughtSignature", "thought_signature") in request.DUMMY_SIGNATURES:
                out[n] = f"dummy thought signature ({DUMMY_SIGNATURE!r}): Gemini did not make this call"
            n += 1
    return out


_same_wire = same_wire_settings(request.WIRE, request.CONVERSATION_KEYS)


def _carry(req: RequestSettings, opts: RenderOptions) -> tuple[dict[str, Any], tuple[str, ...]]:
    """An imported Gemini request's settings, their keys in camelCase as this wire writes them (design 9:
    a body may spell ``generationConfig.response_mime_type``; the published schema names only one)."""
    fields, left = _same_wire(req, opts)
    return camel_settings(fields), left


WIRE = Wire(
    name=render.WIRE,
    replayed_as=(
        "`model` `functionCall` parts (the first with `thoughtSignature`),"
        " then `user` `functionResponse` parts, then the `model` text"
    ),
    translation=TRANSLATION,
    public_host=request.PUBLIC_HOST,
    conversation_keys=request.CONVERSATION_KEYS,
    list_key=render.LIST_KEY,
    part_kinds=render.PART_KINDS,
    carries=render.carries,
    render=render.render,
    render_as_sent=as_sent.render_as_sent,
    carry_settings=_carry,
    render_turn=render.turn_renderer,
    parse_request=request.parse_request,
    parse_response=response.parse_response,
    stream_parser=response.StreamParser,
    http=Http(
        endpoint=_endpoint,
        auth_headers=_auth,
        stream_flag=stream_by_url,
        framing_of=_framing,
        model_in_body=False,
        # the SDKs ask for v1beta or v1 (google-genai 3): both are Gemini's
        path=re.compile(
            r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?:generateContent|(?P<stream>streamGenerateContent))$"
        ),
        base_suffix="/v1beta",
        side_paths=(re.compile(r"^/v1(?:beta|alpha)?/models(?:/[^/:]+(?::countTokens)?)?$"),),
        count_path=re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):countTokens$"),
        count_answer=lambda tokens: {"totalTokens": tokens},
        marks=("x-goog-api-key", "x-goog-api-client"),
        error_body=errors.error_body,
        stream_error=errors.stream_error,
        stream_end=errors.stream_end,
        repairs=(repair.signatures_back,),
    ),
    url_endings=(":generatecontent", ":streamgeneratecontent"),
    sniff=detect.sniff,
    importing=ImportForm(
        description="Gemini contents or generateContent bodies (camelCase or snake_case)",
        rank=50,
        is_element=detect.is_element,
        marks=detect.marks,
        content_key="parts",
    ),
    rules=rules.rules,
    specs=specs.specs,
    double=lazy_double("toolreplay.wires.gemini.double"),
    bridge=lazy_bridge("toolreplay.wires.gemini.bridge"),
    call_notes=_call_notes,
    render_notes=signatures.render_notes,
    tool_kinds=frozenset({"function", "hosted"}),
)

__all__ = ["WIRE"]

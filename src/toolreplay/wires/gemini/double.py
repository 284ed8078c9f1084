"""The Gemini double (a :class:`toolreplay.wires.contract.Double`): ``GenerateContentResponse`` bodies and
SSE chunks (Gemini 3's closing chunk and usage included), Google's error status objects, and the request
checks with Google's own texts: the wire's rules (contents given, roles, function responses matching the
calls) plus what only the server adds (thought signatures on Gemini 3).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolreplay.wires._rules import Refusal
from toolreplay.wires.contract import Double
from toolreplay.wires.doubles import (
    ERROR_KINDS,
    Answer,
    AnswerCall,
    Event,
    Rules,
    Splitter,
    as_map,
    signature_for,
    token_pieces,
    usage_counts,
)
from toolreplay.wires.gemini.errors import error_body
from toolreplay.wires.gemini.rules import foreign_signature, structure
from toolreplay.wires.gemini.signatures import either_case

MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to "
    "work correctly, and missing thought_signature may lead to degraded model performance. Additional "
    "data, function call `default_api:{name}` , position {pos}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)


def check_gemini(body: Mapping[str, Any], rules: Rules) -> str | None:
    """The wire's structure rule with what only this server adds at each function-call turn (Gemini 3's
    thought signatures, a demand the double can be told to drop), then the signatures' issuer rule."""

    def signed(i: int, first: Mapping[str, Any], current: bool) -> Refusal | None:
        # Signatures are Gemini 3's demand: gemini-2.5-flash took a call without one (tests/corpus
        # llm-gemini/test_tools.2; design 32)
        if not (rules.require_signatures and current and _gemini_3(rules.model or "")):
            return None
        if either_case(first, "thoughtSignature", "thought_signature"):
            return None
        name = as_map(either_case(first, "functionCall", "function_call")).get("name")
        problem = "the current turn's first functionCall has no thoughtSignature (Gemini 3)"
        return Refusal(f"contents[{i}].parts", problem, MISSING_SIGNATURE.format(name=name, pos=i + 1))

    refused = structure(body, signed)  # the wire's rule, with Google's own text
    if refused is None and rules.model:
        refused = foreign_signature(body.get("contents") or [], rules.model)
    return refused.provider if refused else None


def _gemini_usage(a: Answer, done: int | None = None) -> dict[str, Any]:
    """The usage after ``done`` answer tokens (None: the final usage). The scripted output count holds
    the thoughts (Gemini bills them as output): ``thoughtsTokenCount`` apart, once thinking is done."""
    i, o, c = usage_counts(a.usage)
    thoughts = min(o, len(a.reasoning or "") // 4 + 1) if a.reasoning else 0
    answer = o - thoughts if done is None else min(o - thoughts, done)
    usage: dict[str, Any] = {"promptTokenCount": i, "candidatesTokenCount": answer}
    if thoughts and (done is None or done > 0):
        usage["thoughtsTokenCount"] = thoughts
    usage["totalTokenCount"] = i + answer + usage.get("thoughtsTokenCount", 0)
    if c:
        usage["cachedContentTokenCount"] = c
    return usage


def _gemini_call_part(c: AnswerCall) -> dict[str, Any]:
    call: dict[str, Any] = {"name": c.name, "args": c.args}
    if c.call_id:
        call["id"] = c.call_id
    part: dict[str, Any] = {"functionCall": call}
    if c.signature:
        part["thoughtSignature"] = c.signature
    return part


def _text_signature(a: Answer) -> dict[str, str]:
    """Gemini 3 signs the end of an answer without calls (with calls, the first call carries the step's
    signature): the final text part of a whole answer, the closing empty text chunk of a stream
    (tests/corpus crewai test_gemini_async_basic_call, openinference test_streaming_reasoning; design 32)."""
    if a.calls or not a.text or not _gemini_3(a.model):
        return {}
    return {"thoughtSignature": signature_for(a.seq, 0, a.model)}


def _gemini_parts(a: Answer) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if a.reasoning:
        parts.append({"text": a.reasoning, "thought": True})
    if a.text:
        parts.append({"text": a.text, **_text_signature(a)})
    parts += [_gemini_call_part(c) for c in a.calls]
    return parts


def _finish(a: Answer) -> dict[str, Any]:
    finish: dict[str, Any] = {"finishReason": "STOP"}
    if a.calls:
        finish["finishMessage"] = "Model generated function call(s)."
    return finish


def gemini_body(a: Answer) -> dict[str, Any]:
    cand = {"content": {"role": "model", "parts": _gemini_parts(a)}, **_finish(a), "index": 0}
    return {
        "candidates": [cand],
        "usageMetadata": _gemini_usage(a),
        "modelVersion": a.model,
        "responseId": f"double{a.seq}",
    }


def _gemini_3(model: str) -> bool:
    return not model.startswith(("gemini-1", "gemini-2"))


def gemini_events(a: Answer, cut: Splitter = token_pieces) -> list[Event]:
    # Usage builds up chunk by chunk (the output count grows; thoughts once thinking is done). Gemini 2
    # puts finishReason on the last chunk of content (the call chunk); Gemini 3 sends no finishReason
    # with the call and ends with a separate chunk: an empty text part (signed when the answer has no
    # calls), finishReason, the final usage.
    texts = [p for p in cut(a.text) if p]
    sent = 0

    def chunk(parts: list[dict[str, Any]], final: bool = False, size: int = 0) -> Event:
        nonlocal sent
        sent += size
        cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if final:
            cand.update(_finish(a))
        usage = _gemini_usage(a, None if final else sent)
        return None, {"candidates": [cand], "usageMetadata": usage, "modelVersion": a.model,
                      "responseId": f"double{a.seq}"}  # fmt: skip

    out: list[Event] = []
    if a.reasoning:
        out.append(chunk([{"text": a.reasoning, "thought": True}]))
    out += [chunk([{"text": p}], size=max(1, len(p) // 4)) for p in texts]
    calls = [_gemini_call_part(c) for c in a.calls]
    ends_apart = _gemini_3(a.model) or not (calls or texts)
    if calls:
        out.append(
            chunk(calls, final=not ends_apart, size=max(1, sum(len(c.arguments) // 4 for c in a.calls)))
        )
    elif not ends_apart:  # Gemini 2 text: the last text chunk ends the answer
        payload = out[-1][1]
        payload["candidates"][0].update(_finish(a))
        payload["usageMetadata"] = _gemini_usage(a)
    if ends_apart:
        out.append(chunk([{"text": "", **_text_signature(a)}], final=True))
    return out


def error_event(kind: str, message: str) -> Event:
    return None, {"error": {"code": ERROR_KINDS[kind][0], "message": message, "status": ERROR_KINDS[kind][3]}}


def _wants_stream(body: Any, streamed: bool) -> bool:
    return streamed


DOUBLE = Double(
    route=re.compile(
        r"^(?:/v1beta|/v1)?/models/(?P<model>[^/:]+):(?:generateContent|(?P<stream>streamGenerateContent))$"
    ),
    base_suffix="/v1beta",
    body=gemini_body,
    events=gemini_events,
    error_body=error_body,
    error_event=error_event,
    check=check_gemini,
    call_id=lambda seq, k: None,  # the Gemini API sends no call ids
    wants_stream=_wants_stream,
)

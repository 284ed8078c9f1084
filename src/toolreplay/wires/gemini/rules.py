"""The Gemini provider rules: what the provider refuses, read from a body (camelCase rendered;
snake_case read too, design 9).

:func:`rules` is run by the validator (``toolreplay validate``, ``check --offline``), by the render
tests and by the loopback double. Each problem is one line naming the place; what Gemini's server itself
refuses is a :class:`~toolreplay.wires._rules.Refusal` carrying Google's error text (design 30).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.wires._rules import Refusal, check_name, extra_keys, is_obj, say
from toolreplay.wires.doubles import signature_issuer
from toolreplay.wires.gemini.render import LIST_KEY
from toolreplay.wires.gemini.signatures import DUMMY_SIGNATURE, either_case

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile


#: Gemini function names: a letter or ``_`` first; dots, colons and dashes allowed.
GEMINI_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}\Z")


_PART_KEYS = frozenset(
    {"text", "functionCall", "function_call", "functionResponse", "function_response"}
    | {"thoughtSignature", "thought_signature", "inlineData", "inline_data", "fileData", "file_data"}
)
#: The data a part holds: exactly one (the ``data`` oneof of ``Part`` in content.proto).
_DATA_KEYS = ("text", "functionCall", "functionResponse", "inlineData", "fileData")


def _media(out: list[str], pw: str, p: Mapping[str, Any]) -> None:
    """An ``inlineData`` blob (``mimeType`` and base64 ``data``) or a ``fileData`` (``fileUri``)."""
    blob = either_case(p, "inlineData", "inline_data")
    if blob is not None:
        ok = is_obj(blob) and isinstance(either_case(blob, "mimeType", "mime_type"), str)
        if not (ok and isinstance(blob.get("data"), str) and blob["data"]):
            out.append(f"{pw}.inlineData: needs mimeType and base64 data")
    file = either_case(p, "fileData", "file_data")
    if file is not None and not (is_obj(file) and isinstance(either_case(file, "fileUri", "file_uri"), str)):
        out.append(f"{pw}.fileData: needs a fileUri")


def _gemini_parts(out: list[str], where: str, c: Any) -> list[tuple[str, Mapping[str, Any]]]:
    parts = c.get("parts") if is_obj(c) else None
    if not is_obj(c) or c.get("role", "user") not in ("user", "model"):
        return []  # the provider's refusal (refusals), said there
    extra_keys(out, where, c, frozenset({"role", "parts"}))
    if not isinstance(parts, list) or not parts:
        return []  # the provider's refusal (refusals), said there
    got: list[tuple[str, Mapping[str, Any]]] = []
    for k, p in enumerate(parts):
        pw = f"{where}.parts[{k}]"
        if not is_obj(p):
            out.append(f"{pw}: not an object")
            continue
        extra_keys(out, pw, p, _PART_KEYS)
        data = [key for key in _DATA_KEYS if either_case(p, key, _snake(key)) is not None]
        if len(data) != 1:
            out.append(f"{pw}: must hold exactly one of {', '.join(_DATA_KEYS)}")
        _media(out, pw, p)
        if "text" in p and not (isinstance(p["text"], str) and p["text"].strip()):
            out.append(f"{pw}.text: blank (Gemini rejects an empty text parameter)")
        got.append((pw, p))
    return got


def _snake(camel: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)


def _geminideclared_names(body: Mapping[str, Any]) -> set[str]:
    declared: set[str] = set()
    tools = body.get("tools")
    for t in tools if isinstance(tools, list) else []:
        decls = either_case(t, "functionDeclarations", "function_declarations") if is_obj(t) else None
        for d in decls if isinstance(decls, list) else []:
            if is_obj(d) and isinstance(d.get("name"), str):
                declared.add(d["name"])
    return declared


def _gemini_answers(out: list[str], where: str, c: Any, parts: list[Any], pending: list[Any]) -> None:
    """The content after a function-call turn: exactly its responses, same count, same order."""
    resps = [(pw, either_case(p, "functionResponse", "function_response")) for pw, p in parts]
    resps = [(pw, r) for pw, r in resps if r is not None]
    if pending:
        # another count (or no user content) is the provider's refusal (response_count); the replay
        # promises one user content of exactly the responses, in call order
        names = [r.get("name") if is_obj(r) else None for _, r in resps]
        counted = c.get("role") == "user" and len(resps) == len(pending)
        if counted and (len(resps) != len(parts) or names != pending):
            out.append(f"{where}: must be a user content of functionResponse parts for {pending}, in order")
        return  # a response that is not an object: the provider's refusal, said there
    if resps:
        out.append(f"{resps[0][0]}: functionResponse with no functionCall right before it")
    for pw, r in resps:
        if not is_obj(r) or not is_obj(r.get("response")):
            out.append(f"{pw}.functionResponse.response: must be an object")


def _gemini_calls(
    out: list[str], where: str, c: Any, parts: list[Any], prev_role: Any, declared: set[str]
) -> list[Any]:
    """The names of one content's function calls, checked (signature, placement, name, args)."""
    calls = [(pw, p, either_case(p, "functionCall", "function_call")) for pw, p in parts]
    calls = [(pw, p, fc) for pw, p, fc in calls if fc is not None]
    if not calls:
        return []
    if c.get("role") != "model":
        out.append(f"{where}: functionCall parts in a {c.get('role')} content")
    # a call turn after another model turn, args that are not an object: the provider's refusals
    sig = either_case(calls[0][1], "thoughtSignature", "thought_signature")
    if not isinstance(sig, str) or not sig:
        out.append(f"{calls[0][0]}: the first functionCall of a model turn needs a thoughtSignature")
    names: list[Any] = []
    for pw, _, fc in calls:
        if not is_obj(fc):
            out.append(f"{pw}.functionCall: not an object")
            continue
        check_name(out, f"{pw}.functionCall.name", fc.get("name"), declared, GEMINI_NAME_RE)
        names.append(fc.get("name"))
    return names


#: Gemini's answers (400 INVALID_ARGUMENT) to a function-call turn answered by another number of
#: function responses, and to a thought signature it did not issue for this model.
GEMINI_COUNT = (
    "Please ensure that the number of function response parts is equal to the number of function call "
    "parts of the function call turn."
)
CORRUPTED_SIGNATURE = "Corrupted thought signature."
#: The placeholders Google documents for calls Gemini did not make (Vertex takes only the first).
DUMMY_SIGNATURES = (DUMMY_SIGNATURE, "context_engineering_is_the_way_to_go")


def _count(c: Any, key: str) -> int:
    parts = c.get("parts") if is_obj(c) else None
    if not isinstance(parts, list):
        return 0
    return sum(1 for p in parts if is_obj(p) and either_case(p, key, _snake(key)) is not None)


def response_count(contents: list[Any], i: int) -> Refusal | None:
    """The function-call turn ``contents[i]`` is answered, in the user content(s) right after it, by as
    many ``functionResponse`` parts as it has ``functionCall`` parts. (The validator's own
    check of the answers, :func:`_gemini_answers`, is stricter: names and order too.)"""
    calls = _count(contents[i], "functionCall")
    if not calls or i + 1 >= len(contents):
        return None
    # Gemini joins consecutive user contents: parallel calls answered by one user content each were taken
    # (tests/corpus crewai test_gemini_parallel_native_tool_calling_*.1)
    answers, k = 0, i + 1
    while k < len(contents) and is_obj(contents[k]) and contents[k].get("role", "user") == "user":
        found = _count(contents[k], "functionResponse")
        if not found:
            break
        answers, k = answers + found, k + 1
    if answers == calls:
        return None
    problem = f"{answers} functionResponse parts answer the {calls} functionCall parts of contents[{i}]"
    return Refusal(f"contents[{i + 1}]", problem, GEMINI_COUNT)


def foreign_signature(contents: list[Any], model: str) -> Refusal | None:
    """A thought signature goes back only to the model that issued it (design 17); Google's documented
    placeholders are anyone's. Whose a signature is can be read only from the provider doubles' own
    (``signature_issuer``); a real provider's signature is opaque here and passes."""
    for i, c in enumerate(contents):
        parts = c.get("parts") if is_obj(c) else None
        for k, p in enumerate(parts if isinstance(parts, list) else []):
            sig = either_case(p, "thoughtSignature", "thought_signature") if is_obj(p) else None
            if not isinstance(sig, str) or not sig or sig in DUMMY_SIGNATURES:
                continue
            issuer = signature_issuer(sig)
            if issuer is None or issuer == model:
                continue
            problem = f"a thought signature issued by {issuer!r}, sent to {model!r}"
            return Refusal(f"contents[{i}].parts[{k}].thoughtSignature", problem, CORRUPTED_SIGNATURE)
    return None


#: Gemini's answer (400 INVALID_ARGUMENT) to a function-call turn that follows neither a user turn nor a
#: function-response turn.
GEMINI_ORDER = (
    "Please ensure that function call turn comes immediately after a user turn or after a function "
    "response turn."
)
_STRUCT = "(type.googleapis.com/google.protobuf.Struct)"
#: A check only a server makes at one function-call turn (the double's thought-signature demand):
#: (index, the turn's first functionCall part, whether the turn is of the current user turn).
StepCheck = Callable[[int, Mapping[str, Any], bool], "Refusal | None"]


def _shaped(contents: list[Any], faults: list[Refusal]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """Each content's role and parts (same positions as ``contents``); a role Gemini does not take and
    empty parts are added to ``faults``."""
    shaped: list[tuple[str, list[Mapping[str, Any]]]] = []
    for i, raw in enumerate(contents):
        c = raw if is_obj(raw) else {}
        role = c.get("role", "user")
        if role not in ("user", "model"):
            problem = f"role {role!r} is not user or model"
            faults.append(Refusal(f"contents[{i}].role", problem, "Please use a valid role: user, model."))
        raw_parts = c.get("parts")
        parts = [p if is_obj(p) else {} for p in (raw_parts if isinstance(raw_parts, list) else [])]
        if not parts:
            text = f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
            faults.append(Refusal(f"contents[{i}].parts", "empty", text))
        shaped.append((str(role), parts))
    return shaped


def _step(
    contents: list[Any],
    shaped: list[tuple[str, list[Mapping[str, Any]]]],
    i: int,
    at_step: StepCheck | None,
    current: bool,
) -> Iterator[Refusal]:
    """The function-call turn ``contents[i]``: after a user turn, object args, answered by as many
    responses (objects) as it has calls."""
    calls = [p for p in shaped[i][1] if either_case(p, "functionCall", "function_call") is not None]
    if i == 0 or shaped[i - 1][0] != "user":
        yield Refusal(
            f"contents[{i}]",
            "a function-call turn must follow a user or function-response turn",
            GEMINI_ORDER,
        )
    for p in calls:
        fc = either_case(p, "functionCall", "function_call")
        if not is_obj((fc if is_obj(fc) else {}).get("args", {})):
            text = f"Invalid value at 'contents[{i}].parts.function_call.args' {_STRUCT}"
            yield Refusal(f"contents[{i}].parts", "functionCall args is not an object", text)
    refused = at_step(i, calls[0], current) if at_step else None
    if refused:
        yield refused
    counted = response_count(contents, i)
    if counted:
        yield counted
    if i + 1 >= len(shaped):
        return
    for p in shaped[i + 1][1]:
        fr = either_case(p, "functionResponse", "function_response")
        if fr is not None and not is_obj((fr if is_obj(fr) else {}).get("response")):
            text = f"Invalid value at 'contents[{i + 1}].parts.function_response.response' {_STRUCT}"
            yield Refusal(f"contents[{i + 1}].parts", "functionResponse response is not an object", text)


def refusals(body: Mapping[str, Any], at_step: StepCheck | None = None) -> Iterator[Refusal]:
    """Every break of the request structure Gemini documents, with Google's own text: contents given,
    valid roles, non-empty parts, each function-call turn placed and answered (:func:`_step`);
    ``at_step`` is what a server alone adds at each such turn. The validator says each once; the double
    answers the first."""
    contents = body.get(LIST_KEY)
    if not isinstance(contents, list) or not contents:
        text = "* GenerateContentRequest.contents: contents is not specified"
        yield Refusal("contents", "required (a non-empty list)", text)
        return
    faults: list[Refusal] = []
    shaped = _shaped(contents, faults)
    yield from faults
    turn_start = 0
    for i, (role, parts) in enumerate(shaped):
        if role == "user" and not any(either_case(p, "functionResponse", "function_response") for p in parts):
            turn_start = i
    for i, (role, parts) in enumerate(shaped):
        if role == "model" and any(
            either_case(p, "functionCall", "function_call") is not None for p in parts
        ):
            yield from _step(contents, shaped, i, at_step, i > turn_start)


def structure(body: Mapping[str, Any], at_step: StepCheck | None = None) -> Refusal | None:
    """The first of :func:`refusals`: what Gemini's server answers."""
    return next(refusals(body, at_step), None)


def rules(v: VesselProfile, body: Mapping[str, Any], out: list[str]) -> None:
    # Each fault once: the provider's refusals first (the double answers the first, design 30), then
    # what the replay promises on top, which leaves out what a refusal already said.
    for refused in refusals(body):
        say(out, refused)
    contents = body.get(LIST_KEY)
    if not isinstance(contents, list) or not contents:
        return
    if "model" in body:
        out.append("model: goes in the URL, not in the body")
    declared = _geminideclared_names(body)
    pending: list[Any] = []
    prev_role: Any = None
    for i, c in enumerate(contents):
        where = f"contents[{i}]"
        parts = _gemini_parts(out, where, c)
        if not is_obj(c):
            continue
        _gemini_answers(out, where, c, parts, pending)
        pending = _gemini_calls(out, where, c, parts, prev_role, declared)
        prev_role = c.get("role")
    if pending:
        out.append(f"contents: the last calls {pending} have no functionResponse")
    say(out, foreign_signature(contents, v.model))


#: The fields of the REST ``GenerateContentRequest`` besides ``model`` (which is in the URL).
GEMINI_BODY_KEYS = frozenset(
    {
        "contents",
        "systemInstruction",
        "tools",
        "toolConfig",
        "generationConfig",
        "safetySettings",
        "cachedContent",
    }
)


__all__ = [
    "CORRUPTED_SIGNATURE",
    "DUMMY_SIGNATURES",
    "GEMINI_COUNT",
    "GEMINI_ORDER",
    "StepCheck",
    "foreign_signature",
    "refusals",
    "response_count",
    "rules",
    "structure",
]

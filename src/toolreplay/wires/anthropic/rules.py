"""The Anthropic provider rules: what the provider refuses, read from a body.

:func:`rules` is run by the validator (``toolreplay validate``, ``check --offline``), by the render
tests and by the loopback double. Each problem is one line naming the place; what Anthropic's server
itself refuses is a :class:`~toolreplay.wires._rules.Refusal` carrying its error text (the double answers
that, design 30).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.wires._rules import (
    NAME_RE,
    Ids,
    Refusal,
    check_name,
    declared_names,
    extra_keys,
    is_obj,
    say,
)
from toolreplay.wires.anthropic.breakpoints import MAX_BREAKPOINTS, count_markers
from toolreplay.wires.anthropic.render import LIST_KEY, MEDIA_TYPES
from toolreplay.wires.anthropic.signatures import placeholder_signature
from toolreplay.wires.common import ID_SAFE
from toolreplay.wires.doubles import signature_issuer

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile


_BLOCK_KEYS = {
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "text": frozenset({"type", "text", "cache_control"}),
    "tool_use": frozenset({"type", "id", "name", "input", "cache_control"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"}),
    "image": frozenset({"type", "source", "cache_control"}),
    "document": frozenset({"type", "source", "title", "context", "citations", "cache_control"}),
}
_MEDIA_TYPES = MEDIA_TYPES


def _source(out: list[str], where: str, kind: str, source: Any) -> None:
    """An image or document block's ``source``: base64 data of a type the block takes, or a URL."""
    if not is_obj(source):
        out.append(f"{where}.source: must be an object")
    elif source.get("type") == "base64":
        extra_keys(out, f"{where}.source", source, frozenset({"type", "media_type", "data"}))
        if kind != "image" and source.get("media_type") not in _MEDIA_TYPES[kind]:  # images: media_types()
            allowed = ", ".join(sorted(_MEDIA_TYPES[kind]))
            out.append(f"{where}.source.media_type: {source.get('media_type')!r} is not one of {allowed}")
        if not (isinstance(source.get("data"), str) and source["data"]):
            out.append(f"{where}.source.data: must be a non-empty base64 string")
    elif source.get("type") == "url":
        extra_keys(out, f"{where}.source", source, frozenset({"type", "url"}))
        if not (isinstance(source.get("url"), str) and source["url"]):
            out.append(f"{where}.source.url: must be a non-empty string")
    else:
        out.append(f"{where}.source.type: {source.get('type')!r} is not a source this wire renders")


def _anthropic_blocks(out: list[str], where: str, m: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(place, block)`` pairs of one message; string content becomes a text block."""
    content = m.get("content")
    if isinstance(content, str):  # blank words are the provider's refusal (empty_contents)
        return [(f"{where}.content", {"type": "text", "text": content})]
    if not isinstance(content, list) or not content:
        return []  # no content: the provider's refusal (empty_contents)
    # a blank text block beside other blocks is taken by Anthropic, though the replay never sends one;
    # alone, or empty, it is the provider's refusal (empty_contents), said there once
    words_only = all(is_obj(b) and b.get("type") == "text" for b in content)
    blocks: list[tuple[str, Any]] = []
    for k, b in enumerate(content):
        bw = f"{where}.content[{k}]"
        kind = b.get("type") if is_obj(b) else None
        if kind not in _BLOCK_KEYS:
            out.append(f"{bw}: not a block this wire renders ({kind!r})")
            continue
        extra_keys(out, bw, b, _BLOCK_KEYS[kind])
        text = b.get("text")
        if kind == "text" and not words_only and isinstance(text, str) and text and not text.strip():
            out.append(f"{bw}.text: blank (the replay sends no blank words)")
        if kind in _MEDIA_TYPES:
            if m.get("role") != "user":
                out.append(f"{bw}: an {kind} block outside a user message")
            _source(out, bw, kind, b.get("source"))
        blocks.append((bw, b))
    return blocks


Turn = tuple[str, list[tuple[str, Any]]]


#: The roles a ``messages`` entry may have: ``user`` and ``assistant`` take turns; a ``system`` entry is
#: taken where it stands (see :func:`in_loop`).
_ROLES = ("user", "assistant", "system")


def in_loop(m: Any) -> bool:
    """Whether a ``messages`` entry takes part in the user/assistant alternation and the tool loop.

    A ``role: "system"`` entry inside ``messages`` does not: the API takes it where it stands. The API
    reference lists only ``user`` and ``assistant`` there, but real requests carry such entries and are
    answered: Claude Code 2.1 sends its runtime reminders as ``system`` entries inside ``messages``
    (gateways that rebuilt the Messages API had to add them: ankitcharolia/kiro-gateway#76,
    ogx-ai/ogx#5982, whose ``Input should be 'user' or 'assistant'`` refused Claude Code), and
    LangChain's Anthropic package sends a system message that is not first at its own position
    (@langchain/anthropic 1.5.11). What the server does with one between a ``tool_use`` and its
    ``tool_result`` is not documented; these rules leave it out of the loop's checks, so it breaks
    nothing there and is not itself refused."""
    return not (is_obj(m) and m.get("role") == "system")


def _turns(msgs: list[Any], out: list[str]) -> list[Turn]:
    """The turns the server sees: it combines consecutive same-role messages before its checks."""
    turns: list[Turn] = []
    for i, m in enumerate(msgs):
        where = f"messages[{i}]"
        if not is_obj(m) or m.get("role") not in _ROLES:
            continue  # another role: the provider's refusal (_tool_loop)
        if not in_loop(m):
            extra_keys(out, where, m, frozenset({"role", "content"}))
            _anthropic_blocks(out, where, m)
            continue
        extra_keys(out, where, m, frozenset({"role", "content"}))
        blocks = _anthropic_blocks(out, where, m)
        if turns and turns[-1][0] == m["role"]:
            turns[-1][1].extend(blocks)
        else:
            turns.append((m["role"], blocks))
    return turns


def _results(blocks: list[tuple[str, Any]], open_ids: list[Any], out: list[str]) -> None:
    """What the replay promises of a turn's tool_result blocks beyond the provider's rule (which
    :func:`_tool_loop` says: every call answered by the blocks opening the next message, no answer for
    another call): the answers in call order, one each."""
    results = [(w, b.get("tool_use_id")) for w, b in blocks if b.get("type") == "tool_result"]
    got = [r for _, r in results[: len(open_ids)]]
    if open_ids and sorted(map(str, got)) == sorted(map(str, open_ids)) and got != open_ids:
        out.append(f"{blocks[0][0]}: the results of {open_ids} are not in call order")
    if len(results) > len(open_ids) and all(r in open_ids for _, r in results):
        out.append(f"{results[-1][0]}: more tool_result blocks than calls before them")


def _uses(turn: Turn, ids: Ids, declared: set[str], out: list[str]) -> list[Any]:
    """The tool_use blocks of an assistant turn, checked; their ids (the results the next turn owes)."""
    role, blocks = turn
    open_ids: list[Any] = []
    for bw, b in blocks:
        if role != "assistant" or b.get("type") != "tool_use":
            continue
        # no tools defined, a missing or malformed id, an input that is not an object: the provider's
        # refusals (structure), said there once
        if isinstance(b.get("id"), str) and ID_SAFE.match(b["id"]):
            ids.check(f"{bw}.id", b.get("id"), b.get("name"))
        check_name(out, f"{bw}.name", b.get("name"), declared or {b.get("name")}, NAME_RE)
        open_ids.append(b.get("id"))
    if role == "user" and any(b.get("type") == "tool_use" for _, b in blocks):
        out.append("a user message holds tool_use blocks")
    return open_ids


#: Anthropic's answer (400 invalid_request_error) to a thinking continuation whose turn does not open with
#: its thinking block (the extended-thinking documentation: thinking blocks must be passed back during
#: tool use).
THINKING_FIRST = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
    "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
    "previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)


def _holds(m: Any, kind: str) -> bool:
    content = m.get("content") if is_obj(m) else None
    return isinstance(content, list) and any(is_obj(b) and b.get("type") == kind for b in content)


def _loop_start(msgs: list[Any]) -> int | None:
    """The tool loop's first assistant message: the first after the last user message that is not
    ``tool_result`` blocks (the one that asked)."""
    asked = -1
    for i, m in enumerate(msgs):
        if is_obj(m) and m.get("role") == "user" and not _holds(m, "tool_result"):
            asked = i
    for i in range(asked + 1, len(msgs)):
        if is_obj(msgs[i]) and msgs[i].get("role") == "assistant":
            return i
    return None


def thinking_first(body: Mapping[str, Any]) -> Refusal | None:
    """With thinking on (``"type": "enabled"``: adaptive thinking may answer without thinking), a request
    that continues a tool loop (it ends with a user message of ``tool_result`` blocks) must open the loop's
    first assistant message with the thinking block the model wrote there."""
    msgs = body.get(LIST_KEY)
    thinking = body.get("thinking")
    if not isinstance(msgs, list) or not msgs or not (is_obj(thinking) and thinking.get("type") == "enabled"):
        return None
    if not (is_obj(msgs[-1]) and msgs[-1].get("role") == "user" and _holds(msgs[-1], "tool_result")):
        return None
    first = _loop_start(msgs)
    if first is None:
        return None
    content = msgs[first].get("content")
    head = content[0] if isinstance(content, list) and content else {"type": "text"}
    found = head.get("type") if is_obj(head) else None
    if found in ("thinking", "redacted_thinking"):
        return None
    return Refusal(
        f"messages[{first}].content[0]",
        f"thinking is on and the request continues a tool loop, but the loop's first assistant message "
        f"starts with {found!r}, not its thinking block",
        THINKING_FIRST.format(i=first, found=found),
    )


#: Anthropic's answer (400 invalid_request_error) to a thinking block it did not sign for this model
#: (edited, or written by another model).
FOREIGN_THINKING = "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"


def foreign_thinking(body: Mapping[str, Any]) -> Refusal | None:
    """A thinking block goes back only to the model that wrote it (design 17). Whose a signature is can be
    read only from the provider doubles' own (``signature_issuer``); a real one is opaque here and passes.
    A placeholder (:func:`placeholder_signature`) is no one's: refused too."""
    msgs, model = body.get(LIST_KEY), body.get("model")
    for i, m in enumerate(msgs if isinstance(msgs, list) else []):
        content = m.get("content") if is_obj(m) and m.get("role") == "assistant" else None
        for j, b in enumerate(content if isinstance(content, list) else []):
            sig = b.get("signature") if is_obj(b) and b.get("type") == "thinking" else None
            if not isinstance(sig, str):
                continue
            issuer, fake = signature_issuer(sig), placeholder_signature(sig)
            if fake or (issuer is not None and issuer != model):
                problem = f"a thinking block {issuer!r} wrote, sent to {model!r}"
                if fake:
                    problem = (
                        f"a thinking block with a placeholder signature ({sig[:20]!r}), sent to {model!r}"
                    )
                return Refusal(
                    f"messages[{i}].content[{j}].signature", problem, FOREIGN_THINKING.format(i=i, j=j)
                )
    return None


# Anthropic's own texts (400 invalid_request_error) for the structure it documents: the server merges
# consecutive same-role messages before these checks, so their indices count merged messages.
MUST_DEFINE_TOOLS = "Requests which include `tool_use` or `tool_result` blocks must define tools."
NO_RESULT_AFTER = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
UNEXPECTED_RESULT = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
EMPTY_MESSAGE = (
    "messages.{i}: all messages must have non-empty content except for the optional final assistant message"
)
EMPTY_TEXT = "messages: text content blocks must be non-empty"
BLANK_TEXT = "messages: text content blocks must contain non-whitespace text"
_ID_PATTERN = "String should match pattern '^[a-zA-Z0-9_-]+$'"


def _server_blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b if is_obj(b) else {} for b in (content if isinstance(content, list) else [])]


def _merged(messages: list[Any]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """Consecutive same-role messages merged, as Anthropic's server does before its checks."""
    out: list[tuple[str, list[Mapping[str, Any]]]] = []
    for raw in messages:
        if not in_loop(raw):
            continue  # a system entry stands where it is (see in_loop)
        m = raw if is_obj(raw) else {}
        role = str(m.get("role"))
        if out and out[-1][0] == role:
            out[-1][1].extend(_server_blocks(m.get("content")))
        else:
            out.append((role, _server_blocks(m.get("content"))))
    return out


def empty_contents(messages: list[Any]) -> Iterator[Refusal]:
    """Anthropic's 400s for empty content (design 32): a message with no content (only the last one may be
    an empty assistant prefill), an empty text block, a message whose only words are blank (a blank text
    block beside a tool_use is taken: tests/corpus llm-anthropic/test_tools.1)."""
    for i, raw in enumerate(messages):
        m = raw if is_obj(raw) else {}
        content = m.get("content")
        last = i == len(messages) - 1 and m.get("role") == "assistant"
        if content in ("", []):
            if not last:
                yield Refusal(f"messages[{i}]", "empty content", EMPTY_MESSAGE.format(i=i))
            continue
        blocks = _server_blocks(content)
        texts = [b.get("text") for b in blocks if b.get("type") == "text"]
        if "" in texts and isinstance(content, list):
            yield Refusal(f"messages[{i}]", "an empty text block", EMPTY_TEXT)
        elif (
            not last
            and len(texts) == len(blocks)
            and all(isinstance(t, str) and not t.strip() for t in texts)
        ):
            yield Refusal(f"messages[{i}]", "only blank words", BLANK_TEXT)


def empty_content(messages: list[Any]) -> Refusal | None:
    """The first of :func:`empty_contents`."""
    return next(empty_contents(messages), None)


def _server_uses(blocks: list[Mapping[str, Any]], i: int, ids: list[str]) -> Iterator[Refusal]:
    """The ``tool_use`` blocks of merged assistant message ``i``: each id (appended to ``ids``) and input."""
    for j, b in enumerate(blocks):
        if b.get("type") != "tool_use":
            continue
        bid = str(b.get("id") or "")
        where = f"messages (merged) {i}, block {j}"
        if not ID_SAFE.match(bid):
            yield Refusal(
                where,
                f"tool_use id {bid!r} breaks Anthropic's id pattern",
                f"messages.{i}.content.{j}.tool_use.id: {_ID_PATTERN}",
            )
        if not is_obj(b.get("input")):
            yield Refusal(
                where,
                "tool_use input is not an object",
                f"messages.{i}.content.{j}.tool_use.input: Input should be a valid dictionary",
            )
        ids.append(bid)


def _server_results(blocks: list[Mapping[str, Any]], expected: list[str], i: int) -> Iterator[Refusal]:
    leading: list[str] = []
    for b in blocks:
        if b.get("type") != "tool_result":
            break
        leading.append(str(b.get("tool_use_id")))
    missing = [x for x in expected if x not in leading]
    if missing:
        problem = f"tool_use ids {missing} are not answered by tool_result blocks opening the next message"
        yield Refusal(
            f"messages (merged) {i - 1}", problem, NO_RESULT_AFTER.format(i=i - 1, ids=", ".join(missing))
        )
    for j, b in enumerate(blocks):
        if b.get("type") == "tool_result" and str(b.get("tool_use_id")) not in expected:
            tid = b.get("tool_use_id")
            problem = f"tool_result for {tid!r}, not a tool_use of the message before"
            yield Refusal(
                f"messages (merged) {i}, block {j}", problem, UNEXPECTED_RESULT.format(i=i, j=j, id=tid)
            )


def _tool_loop(merged: list[tuple[str, list[Mapping[str, Any]]]]) -> Iterator[Refusal]:
    """Each merged assistant message's ``tool_use`` ids answered by the ``tool_result`` blocks opening the
    next (user) message, and only those."""
    previous_ids: list[str] = []
    for i, (role, blocks) in enumerate(merged):
        if role == "user":
            yield from _server_results(blocks, previous_ids, i)
            previous_ids = []
        elif role == "assistant":
            previous_ids = []
            yield from _server_uses(blocks, i, previous_ids)
            if previous_ids and i + 1 >= len(merged):
                problem = f"tool_use ids {previous_ids} are not answered by a next message"
                yield Refusal(
                    f"messages (merged) {i}",
                    problem,
                    NO_RESULT_AFTER.format(i=i, ids=", ".join(previous_ids)),
                )
        else:
            problem = f"role {role!r} is not user or assistant"
            yield Refusal(
                f"messages (merged) {i}", problem, f"messages.{i}.role: Input should be 'user' or 'assistant'"
            )
            previous_ids = []


#: Anthropic's answer (400 invalid_request_error) to more than four prompt-cache markers in one request.
TOO_MANY_MARKERS = "A maximum of 4 blocks with cache_control may be provided. Found {n}."


def cache_markers(body: Mapping[str, Any]) -> Refusal | None:
    """At most :data:`~toolreplay.wires.anthropic.breakpoints.MAX_BREAKPOINTS` blocks carry
    ``cache_control`` (design 36: the breakpoints placed never exceed it)."""
    n = count_markers(body)
    if n <= MAX_BREAKPOINTS:
        return None
    return Refusal(
        "cache_control",
        f"{n} blocks carry a cache marker (at most {MAX_BREAKPOINTS})",
        TOO_MANY_MARKERS.format(n=n),
    )


def refusals(body: Mapping[str, Any]) -> Iterator[Refusal]:
    """Every break of the request structure Anthropic documents, in the order its server checks, with its
    own text: ``max_tokens`` and ``messages`` given, no empty content, tools defined when blocks use them,
    the tool loop answered, at most four cache markers. The validator says each once; the double answers
    the first."""
    if not isinstance(body.get("max_tokens"), int):
        yield Refusal("max_tokens", "required (an integer)", "max_tokens: Field required")
    messages = body.get(LIST_KEY)
    if not isinstance(messages, list) or not messages:
        yield Refusal("messages", "required (a non-empty list)", "messages: Field required")
        return
    yield from empty_contents(messages)
    merged = _merged(messages)
    uses_tools = any(b.get("type") in ("tool_use", "tool_result") for _, blocks in merged for b in blocks)
    if uses_tools and not body.get("tools"):
        yield Refusal("tools", "tool_use or tool_result blocks but no tools defined", MUST_DEFINE_TOOLS)
    yield from _tool_loop(merged)
    markers = cache_markers(body)
    if markers:
        yield markers


def structure(body: Mapping[str, Any]) -> Refusal | None:
    """The first of :func:`refusals`: what Anthropic's server answers."""
    return next(refusals(body), None)


#: Anthropic's answer (400 invalid_request_error) to an image whose base64 source names another type.
IMAGE_TYPE = (
    "messages.{i}.content.{k}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', "
    "'image/gif' or 'image/webp'"
)


def media_types(body: Mapping[str, Any]) -> Refusal | None:
    """The first image of a message whose base64 source is not JPEG, PNG, GIF or WebP (design 34)."""
    msgs = body.get(LIST_KEY)
    for i, m in enumerate(msgs if isinstance(msgs, list) else []):
        content = m.get("content") if is_obj(m) else None
        for k, b in enumerate(content if isinstance(content, list) else []):
            src = b.get("source") if is_obj(b) and b.get("type") == "image" else None
            if (
                is_obj(src)
                and src.get("type") == "base64"
                and src.get("media_type") not in MEDIA_TYPES["image"]
            ):
                problem = f"{src.get('media_type')!r} is not one of {', '.join(sorted(MEDIA_TYPES['image']))}"
                return Refusal(
                    f"messages[{i}].content[{k}].source.media_type", problem, IMAGE_TYPE.format(i=i, k=k)
                )
    return None


def rules(v: VesselProfile, body: Mapping[str, Any], out: list[str]) -> None:
    # Each fault once: the provider's refusals first (the double answers the first, design 30), then
    # what the replay promises on top, which leaves out what a refusal already said.
    for refused in refusals(body):
        say(out, refused)
    say(out, media_types(body))
    msgs = body.get(LIST_KEY)
    if not isinstance(msgs, list) or not msgs:
        return
    if isinstance(body.get("max_tokens"), int) and body["max_tokens"] < 1:
        out.append("max_tokens: must be a positive integer")
    declared = declared_names(body, lambda t: [t.get("name")])
    turns = _turns(msgs, out)
    if turns and turns[0][0] != "user":
        out.append('messages[0]: the first message must use the "user" role')
    ids = Ids(v, out)
    open_ids: list[Any] = []
    for turn in turns:
        _results(turn[1], open_ids, out)
        open_ids = _uses(turn, ids, declared, out)
    say(out, thinking_first(body))
    say(out, foreign_thinking(body))


__all__ = [
    "FOREIGN_THINKING",
    "IMAGE_TYPE",
    "MUST_DEFINE_TOOLS",
    "THINKING_FIRST",
    "TOO_MANY_MARKERS",
    "cache_markers",
    "empty_content",
    "empty_contents",
    "foreign_thinking",
    "media_types",
    "refusals",
    "rules",
    "structure",
    "thinking_first",
]

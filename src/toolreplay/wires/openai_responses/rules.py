"""The OpenAI Responses provider rules: what the provider refuses, read from a body.

:func:`rules` is run by the validator (``toolreplay validate``, ``check --offline``), by the render
tests and by the loopback double. Each problem is one line naming the place; what OpenAI's server itself
refuses is a :class:`~toolreplay.wires.contract.Refused` line carrying its error text (the double answers
that): missing or over-long call ids, an output whose call no earlier item made, a call no output
answers, a call item id (``fc_``, ``ctc_``) without its reasoning item, a reasoning item without the
item the model made after it (a message, a call, a free-form call, a hosted tool's call). The rest is
what the replay promises on top (outputs right after their calls, in call order; JSON-object arguments;
declared tools; only the keys it sends).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.wires._rules import (
    NAME_RE,
    Ids,
    Refusal,
    check_name,
    declared_names,
    extra_keys,
    is_obj,
    json_object_text,
    say,
)
from toolreplay.wires.contract import Refused
from toolreplay.wires.openai_chat.rules import too_long
from toolreplay.wires.openai_responses.layout import HOSTED_ITEMS
from toolreplay.wires.openai_responses.render import LIST_KEY, MAX_CALL_ID

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile


# OpenAI's own error texts.
NO_CALL_FOR_OUTPUT = "No tool call found for function call output with call_id {id}."
NO_OUTPUT_FOR_CALL = "No tool output found for function call {id}."


def _missing(where: str, value: str) -> str:
    return f"Missing required parameter: '{where}'."


_RESP_KEYS = {
    "reasoning": frozenset({"type", "id", "summary", "encrypted_content", "content", "status"}),
    "function_call": frozenset({"type", "call_id", "name", "arguments"}),
    "function_call_output": frozenset({"type", "call_id", "output"}),
    "custom_tool_call": frozenset({"type", "call_id", "name", "input"}),
    "custom_tool_call_output": frozenset({"type", "call_id", "output"}),
    "message": frozenset({"type", "role", "content"}),
}
_CALL_ITEMS = ("function_call", "custom_tool_call")
_OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output")


def _calls(items: list[Any], i: int, ids: Ids, declared: set[str], out: list[str]) -> tuple[int, list[str]]:
    """The run of ``function_call`` items from ``i``, checked: where it ends, and its call ids."""
    group: list[str] = []
    while i < len(items) and is_obj(items[i]) and items[i].get("type") in _CALL_ITEMS:
        c, cw = items[i], f"input[{i}]"
        ids.check(f"{cw}.call_id", c.get("call_id"), c.get("name"))
        check_name(out, f"{cw}.name", c.get("name"), declared, NAME_RE)
        if c.get("type") == "custom_tool_call":
            if not isinstance(c.get("input"), str):
                out.append(f"{cw}.input: not a string (a free-form call's input is its text)")
        elif not json_object_text(c.get("arguments")):
            out.append(f"{cw}.arguments: not the JSON text of an object")
        group.append(str(c.get("call_id") or ""))
        i += 1
    return i, group


class _Outputs:
    """The calls a request made so far and which of them an output answered (OpenAI's view: an output
    answers any call before it), and what the replay promises (right after the calls, in call order)."""

    def __init__(self, out: list[str]) -> None:
        self.out = out
        self.made: list[str] = []
        self.answered: set[str] = set()
        self.late: list[tuple[str, str]] = []  # (call id, line): answered later than right after the calls

    def run(self, items: list[Any], i: int, group: list[str]) -> int:
        """The ``function_call_output`` items from ``i`` (owed to ``group``, the calls right before them):
        where they end."""
        self.made += group
        expected = list(group)
        while i < len(items) and is_obj(items[i]) and items[i].get("type") in _OUTPUT_ITEMS:
            self._one(items[i], f"input[{i}]", expected)
            i += 1
        if expected:
            self.late.append(
                (expected[0], f"input[{i}]: call {expected[0]!r} is not answered right after the calls")
            )
        return i

    def _one(self, o: Mapping[str, Any], where: str, expected: list[str]) -> None:
        cid = str(o.get("call_id") or "")
        if cid not in self.made:
            self.out.append(
                Refused(f"{where}: output with no call before it", NO_CALL_FOR_OUTPUT.format(id=cid))
            )
            return
        self.answered.add(cid)
        if expected and expected[0] == cid:
            expected.pop(0)
        else:
            self.out.append(f"{where}: the output for {cid!r} is not right after its call, in call order")
            if cid in expected:
                expected.remove(cid)
        extra_keys(self.out, where, o, _RESP_KEYS[str(o.get("type"))])
        if not isinstance(o.get("output"), str):
            self.out.append(f"{where}.output: not a string")

    def finish(self) -> None:
        # a call never answered is the provider's refusal, said once; one answered later than the
        # replay promises is the promise's line
        self.out.extend(line for cid, line in self.late if cid in self.answered)
        left = [c for c in self.made if c not in self.answered]
        if left:
            line = f"{LIST_KEY}: call {left[0]!r} has no function_call_output"
            self.out.append(Refused(line, NO_OUTPUT_FOR_CALL.format(id=left[0])))


def _top(v: VesselProfile, body: Mapping[str, Any], out: list[str]) -> None:
    if v.has("store_false") and body.get("store") is not False:
        out.append(f"store: must be false on vessel {v.name}")
    tools = body.get("tools")
    for k, t in enumerate(tools if isinstance(tools, list) else []):
        if is_obj(t) and t.get("type") == "function" and not isinstance(t.get("strict"), bool):
            out.append(f"tools[{k}].strict: missing (the spec requires it; design 8)")


#: OpenAI's answer (400 invalid_request_error, param ``input``) to a ``function_call`` item that carries
#: its item id (``fc_...``) without the reasoning item the model produced with it; the reasoning item's
#: id follows when the server knows it.
NO_REASONING_ITEM = "Item '{id}' of type '{type}' was provided without its required 'reasoning' item"
#: Item ids the provider double gives one answer's items (``fc_double3_0`` goes with ``rs_double3``).
_DOUBLE_CALL_ITEM = re.compile(r"^(?:fc|ctc)_(?P<answer>double[0-9]+)_[0-9]+\Z")
#: OpenAI's models that never reason: their answers hold no reasoning item, so OpenAI takes their call
#: items back with their ids alone (recorded: the OpenAI Agents SDK sends gpt-4.1's ``fc_`` items back
#: without reasoning and is answered 200). Every other model is held to the rule.
_NON_REASONING = re.compile(r"^(gpt-4|gpt-3\.5|chatgpt-|gpt-5(\.[0-9]+)?-chat)")
#: Items the model produced in one answer (a step): reasoning, words, calls (free-form ones too), the
#: calls of tools OpenAI ran itself.
_MODEL_ITEMS = frozenset(
    {"reasoning", *_CALL_ITEMS, *(k for k in HOSTED_ITEMS if not k.endswith(("_output", "_response")))}
)
#: The item id prefix of each call item the reasoning rule pairs: ``fc_`` and ``ctc_``.
_CALL_ID_PREFIX = {"function_call": "fc_", "custom_tool_call": "ctc_"}


def _produced(item: Any) -> bool:
    if not is_obj(item):
        return False
    kind = item.get("type")
    return kind in _MODEL_ITEMS or (kind in (None, "message") and item.get("role") == "assistant")


def reasoning_items(body: Mapping[str, Any]) -> Refusal | None:
    """A request that carries its own history (no ``previous_response_id``: nothing is looked up on
    the server) may send a ``function_call`` with its item id only beside the reasoning item of the same
    answer: a ``reasoning`` item among the model's items right before it. A model that never reasons
    produced none, so its call items' ids travel alone."""
    items = body.get(LIST_KEY)
    if not isinstance(items, list) or body.get("previous_response_id"):
        return None
    model = body.get("model")
    foreign_ok = isinstance(model, str) and _NON_REASONING.match(model) is not None
    for i, item in enumerate(items):
        kind = item.get("type") if is_obj(item) else None
        fc = item.get("id") if kind in _CALL_ID_PREFIX else None
        if not (isinstance(fc, str) and fc.startswith(_CALL_ID_PREFIX[str(kind)])):
            continue
        j = i
        while j > 0 and _produced(items[j - 1]):
            j -= 1
        seen = {items[k].get("id") for k in range(j, i) if items[k].get("type") == "reasoning"}
        own = _DOUBLE_CALL_ITEM.match(fc)
        if own is None and foreign_ok:
            continue
        needed = f"rs_{own.group('answer')}" if own else None
        if (needed in seen) if needed else seen:
            continue
        text = NO_REASONING_ITEM.format(id=fc, type=kind) + (f": '{needed}'." if needed else ".")
        return Refusal(
            f"{LIST_KEY}[{i}].id",
            f"a {kind} item id ({fc[: fc.index('_') + 1]}...) without its reasoning item",
            text,
        )
    return None


#: OpenAI's answer (400 invalid_request_error) to a reasoning item sent without the item the model
#: produced right after it (its words or its call).
NO_FOLLOWING_ITEM = "Item '{id}' of type 'reasoning' was provided without its required following item."


def lone_reasoning(body: Mapping[str, Any]) -> Refusal | None:
    """A ``reasoning`` item is followed by what the model produced with it (a message or a call, or more
    reasoning), never by the end of the input, a user message or an answer."""
    raw = body.get(LIST_KEY)
    items: list[Any] = raw if isinstance(raw, list) else []
    for i, item in enumerate(items):
        if not (is_obj(item) and item.get("type") == "reasoning"):
            continue
        nxt = items[i + 1] if i + 1 < len(items) else None
        if _produced(nxt) or (is_obj(nxt) and nxt.get("type") == "message" and nxt.get("role") != "user"):
            continue
        problem = "a reasoning item with nothing the model produced after it"
        return Refusal(f"{LIST_KEY}[{i}]", problem, NO_FOLLOWING_ITEM.format(id=item.get("id")))
    return None


#: OpenAI's answer to a reasoning item a ``store: false`` request sends without its ``encrypted_content``:
#: nothing was kept server-side to look the id up by (reported with 404 and with 400).
NOT_PERSISTED = (
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with "
    "`store` set to true, or remove this item from your input."
)


def unsealed_reasoning(body: Mapping[str, Any]) -> Refusal | None:
    """With ``store: false`` the server keeps nothing between requests, so a ``reasoning`` item is read
    only from its ``encrypted_content``; one without it names an item the server never kept."""
    raw = body.get(LIST_KEY)
    if body.get("store") is not False or not isinstance(raw, list):
        return None
    for i, item in enumerate(raw):
        if is_obj(item) and item.get("type") == "reasoning" and not item.get("encrypted_content"):
            problem = "a reasoning item without its encrypted_content on a store: false request"
            return Refusal(f"{LIST_KEY}[{i}]", problem, NOT_PERSISTED.format(id=item.get("id")))
    return None


def rules(v: VesselProfile, body: Mapping[str, Any], out: list[str]) -> None:
    items = body.get(LIST_KEY)
    if not isinstance(items, list):
        out.append(f"{LIST_KEY}: must be a list")
        return
    _top(v, body, out)
    declared = declared_names(body, lambda t: [t.get("name")])
    ids = Ids(v, out, max_len=MAX_CALL_ID, missing=_missing, too_long=too_long)
    outputs = _Outputs(out)
    i = 0
    while i < len(items):
        it, where = items[i], f"input[{i}]"
        kind = (it.get("type") or "message") if is_obj(it) else None
        if kind in HOSTED_ITEMS:  # a hosted tool's item, verbatim to its issuer
            i += 1
            continue
        if kind not in _RESP_KEYS:
            out.append(f"{where}: not an item this wire renders ({kind!r})")
            i += 1
            continue
        if kind in _OUTPUT_ITEMS:  # its keys are checked with it
            i = outputs.run(items, i, [])
            continue
        extra_keys(out, where, it, _RESP_KEYS[kind] | ({"id"} if kind in _CALL_ITEMS else set()))
        if kind in _CALL_ITEMS:
            i, group = _calls(items, i, ids, declared, out)
            i = outputs.run(items, i, group)
        else:
            i += 1
    outputs.finish()
    say(out, reasoning_items(body))
    say(out, lone_reasoning(body))
    say(out, unsealed_reasoning(body))


__all__ = [
    "NOT_PERSISTED",
    "NO_CALL_FOR_OUTPUT",
    "NO_FOLLOWING_ITEM",
    "NO_OUTPUT_FOR_CALL",
    "NO_REASONING_ITEM",
    "lone_reasoning",
    "reasoning_items",
    "rules",
    "unsealed_reasoning",
]

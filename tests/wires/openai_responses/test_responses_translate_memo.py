"""Responses requests through the translation's memos (design 53): Codex's request N+1 reads its earlier
items from the read memo, each item alone; the one decision that looks past an item (the items of one
model response, reasoning, output-form messages and calls with nothing else between, are one agent
message) is made on the items' groups, once per identity of the run, never inside an item's events.
Every kept Codex and corpus Responses body for every vessel, a conversation growing item by item (a
model response cut anywhere), edits to its last and middle items, interleaved sessions under a budget
that evicts, random item sequences and the body read from its bytes give what the uncached path gives."""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from helpers_common import TESTS
from memo_checks import (
    agent_bodies,
    corpus_bodies,
    edits_and_interleaved_sessions_alike,
    every_body_alike_cached_or_not,
    every_prefix_alike,
    grown,
    loaded_continuing,
    middle_change_read_again,
    parsed,
    prefixes_alike_through_one_memo,
    spellings_alike_from_slices,
    unchanged_turn_shares_messages,
)
from test_translate import VESSELS
from toolreplay.wires import get_wire
from toolreplay.wires.openai_responses import request as responses
from toolreplay.wires.read_joined import joined
from toolreplay.wires.read_memo import Group, ReadMemo

WIRE = get_wire("openai-responses")


def _kept_bodies() -> list[dict[str, Any]]:
    data = TESTS / "data"
    out = agent_bodies("codex", "openai-responses")
    for name in ("codex_responses_bodies", "codex_apply_patch_bodies"):
        out += json.loads((data / f"{name}.json").read_text(encoding="utf-8"))["bodies"]
    out.append(json.loads((data / "import_responses_codex.json").read_text(encoding="utf-8")))
    return [*out, *corpus_bodies("openai-responses")]


def _round(k: int) -> list[dict[str, Any]]:
    """Round ``k`` of a Codex task: reasoning, a call (now and then free-form, now and then two) and their
    outputs; every seventh round the turn closes with words and the user asks again."""
    summary = [{"type": "summary_text", "text": f"Think {k}"}]
    enc = f"enc:{'x' * 40}{k}"
    rs = {
        "type": "reasoning",
        "id": f"rs_memo{k}",
        "summary": summary,
        "content": None,
        "encrypted_content": enc,
    }
    if k % 7 == 6:
        words = [{"type": "output_text", "text": f"Done with part {k}.", "annotations": []}]
        said = {"type": "message", "id": f"msg_memo{k}", "role": "assistant", "content": words}
        ask = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": f"Now {k + 1}."}],
        }
        return [rs, said, ask]
    if k % 5 == 2:
        patch = f"*** Begin Patch\n*** Add File: f{k}.txt\n+x\n*** End Patch\n"
        call = {"type": "custom_tool_call", "id": f"ctc_memo{k}", "call_id": f"call_m{k}",
                "name": "apply_patch", "input": patch}  # fmt: skip
        out = {"type": "custom_tool_call_output", "call_id": f"call_m{k}", "output": "Success."}
        return [rs, call, out]
    calls = [
        {"type": "function_call", "id": f"fc_memo{k}_{j}", "name": "exec_command", "call_id": f"c_m{k}_{j}",
         "arguments": orjson.dumps({"cmd": f"cat src/m{k}_{j}.py"}).decode()}
        for j in range(2 if k % 4 == 3 else 1)
    ]  # fmt: skip
    outs = [
        {"type": "function_call_output", "call_id": c["call_id"], "output": f"line\n{k}" * 30} for c in calls
    ]
    return [rs, *calls, *outs]


def _long_body() -> dict[str, Any]:
    """The last captured Codex request, grown by rounds to some 200 items."""
    body = copy.deepcopy(agent_bodies("codex", "openai-responses")[-1])
    k = 0
    while len(body["input"]) < 200:
        body["input"].extend(_round(k))
        k += 1
    return body


@pytest.mark.slow
@pytest.mark.parametrize("vessel", VESSELS)
def test_every_codex_and_corpus_body_translates_alike_cached_or_not(vessel: str) -> None:
    every_body_alike_cached_or_not(WIRE, [*_kept_bodies(), _long_body()], vessel)


def test_an_unchanged_turn_reads_into_the_same_message_objects() -> None:
    unchanged_turn_shares_messages(WIRE, _long_body())


@pytest.mark.slow
@pytest.mark.parametrize("vessel", ["anthropic", "kimi", "openai", "gemini"])
def test_a_growing_conversation_translates_alike_item_after_item(vessel: str) -> None:
    # every prefix: a model response cut after its reasoning, between its calls, before their outputs
    every_prefix_alike(WIRE, _long_body(), vessel)


def _edited(body: dict[str, Any], at: int) -> dict[str, Any]:
    """``body`` with item ``at`` changed in its middle (same length, same ends)."""
    out = copy.deepcopy(body)
    item = out["input"][at]
    key = next(
        k for k in ("output", "encrypted_content", "arguments", "input") if isinstance(item.get(k), str)
    )
    text = item[key]
    mid = len(text) // 2
    item[key] = text[:mid] + ("#" if text[mid] != "#" else "%") + text[mid + 1 :]
    return out


def _editable(body: dict[str, Any], at: int) -> bool:
    return any(
        isinstance(body["input"][at].get(k), str) for k in ("output", "encrypted_content", "arguments")
    )


@pytest.mark.slow
def test_interleaved_sessions_and_edits_to_the_last_and_middle_items_translate_alike() -> None:
    long = _long_body()
    other = copy.deepcopy(long)
    other["input"][2]["content"][0]["text"] = "another session"
    steps = range(5, len(long["input"]) + 1, 4)
    edits_and_interleaved_sessions_alike(WIRE, (long, other), steps, _edited, _editable, "anthropic")


@pytest.mark.slow
def test_every_body_reads_alike_from_its_slices_in_any_spelling() -> None:
    long = _long_body()
    bodies = [*_kept_bodies(), *(grown(WIRE, long, k) for k in range(2, len(long["input"]) + 1, 11))]
    spellings_alike_from_slices(WIRE, bodies)


def test_unchanged_items_are_neither_parsed_nor_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _long_body()
    grown = copy.deepcopy(body)
    grown["input"].append({"type": "function_call_output", "call_id": "call_late", "output": "late"})
    # the new item and the settings (Codex's client_metadata is 1.2 KB); no earlier item, no tools
    assert loaded_continuing(WIRE, body, grown, monkeypatch) < 2_000 < 40_000 < len(orjson.dumps(body))


def test_an_item_changed_in_the_middle_is_read_again_from_its_bytes() -> None:
    body = _long_body()
    at = next(i for i, item in enumerate(body["input"]) if item.get("type") == "reasoning" and i > 50)
    middle_change_read_again(WIRE, body, _edited(body, at))


_ITEMS = ["reasoning", "call", "custom", "output", "said", "easy", "user", "developer", "unknown", "orphan"]


def _item(move: str, k: int, text: str) -> dict[str, Any]:
    cid = f"call_{k % 3}"  # ids repeat, as agents reuse them
    made: dict[str, dict[str, Any]] = {
        "reasoning": {"type": "reasoning", "id": f"rs_{k}", "summary": [], "encrypted_content": f"e{text}"},
        "call": {"type": "function_call", "name": "f", "call_id": cid, "arguments": json.dumps({"t": text})},
        "custom": {"type": "custom_tool_call", "name": "apply_patch", "call_id": cid, "input": text},
        "output": {"type": "function_call_output", "call_id": cid, "output": text},
        "said": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
        "easy": {"role": "assistant", "content": text},
        "user": {"role": "user", "content": text or "go"},
        "developer": {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "d"}],
        },
        "unknown": {"type": "item_reference", "id": f"ref_{k}"},
        "orphan": {"type": "function_call_output", "call_id": "gone", "output": "?"},
    }
    return made[move]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_ITEMS), st.text(alphabet="ab \n", max_size=5)), max_size=14))
def test_random_item_sequences_translate_alike_as_they_grow(moves: list[tuple[str, str]]) -> None:
    items = [{"role": "user", "content": "start"}, *(_item(m, k, t) for k, (m, t) in enumerate(moves))]
    bodies = (
        {
            "model": "gpt-5",
            "instructions": "be brief",
            "input": items[:k],
            "previous_response_id": "resp_1" if k % 3 == 0 else None,
        }
        for k in range(1, len(items) + 1)
    )
    prefixes_alike_through_one_memo(WIRE, bodies, "anthropic")


def _alone(memo: ReadMemo, runs: Any, join: Any) -> list[Group]:
    """A broken join: each item's group joined alone (as if an item's events said whether it joins)."""
    out = []
    for run in runs:
        groups = joined(memo, [[g] for g in run], join)
        out.append(
            Group(tuple(e for g in groups for e in g.events), tuple(w for g in groups for w in g.warnings), 0)
        )
    return out


def test_a_join_moved_into_the_items_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # the checks above can fail: a reader that settles each item's message alone reads Codex's reasoning
    # and the call after it as two agent messages, which the uncached read does not
    body = _long_body()
    monkeypatch.setattr(responses, "joined", _alone)
    assert parsed(WIRE, body, ReadMemo()) != parsed(WIRE, body)

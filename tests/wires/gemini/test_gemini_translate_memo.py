"""Gemini requests through the translation's memos (design 53): Gemini CLI's request N+1 reads its
earlier contents from the read memo, each content alone (its answers' pairing with the calls before it
is the assembler's). The one reading that looks past a content, the renderer's ``(continued)`` separator
and the content after it, sends a body that holds one to the whole read. Every kept Gemini CLI and corpus
Gemini body for every vessel, a conversation growing content by content, edits to its last and middle
contents, interleaved sessions under a budget that evicts, random conversations (separators among them)
and the body read from its bytes give exactly what the uncached path gives."""

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
    prefixes_alike_through_one_memo,
    spellings_alike_from_slices,
)
from test_translate import VESSELS
from toolreplay.wires import get_wire
from toolreplay.wires.common import SEPARATOR

WIRE = get_wire("gemini")


def _kept_bodies() -> list[dict[str, Any]]:
    litellm = json.loads((TESTS / "data" / "import_gemini_litellm.json").read_text(encoding="utf-8"))
    return [*agent_bodies("gemini", "gemini"), litellm, *corpus_bodies("gemini")]


def _call(k: int, sig: bool = True) -> dict[str, Any]:
    part: dict[str, Any] = {
        "functionCall": {"id": f"read_file_{k}", "name": "read_file", "args": {"p": f"m{k}.py"}}
    }
    if sig:
        part["thoughtSignature"] = f"c2lnLXtr{k:04d}"
    return part


def _answer(k: int, text: str = "") -> dict[str, Any]:
    response = {"output": text or f"line {k}\n" * 20}
    return {"functionResponse": {"id": f"read_file_{k}", "name": "read_file", "response": response}}


def _long_body() -> dict[str, Any]:
    """The last captured Gemini CLI request, grown by rounds of calls (now and then two) and their
    answers to some 200 contents."""
    body = copy.deepcopy(agent_bodies("gemini", "gemini")[-1])
    contents = body["contents"]
    k = 0
    while len(contents) < 200:
        calls = [_call(k), _call(k + 1000, False)] if k % 5 == 3 else [_call(k)]
        contents.append({"role": "model", "parts": [{"text": f"Step {k}."}, *calls]})
        contents.append(
            {"role": "user", "parts": [_answer(k), *([_answer(k + 1000)] if len(calls) > 1 else [])]}
        )
        if k % 9 == 8:
            contents.append({"role": "model", "parts": [{"text": f"Done with part {k}."}]})
            contents.append({"role": "user", "parts": [{"text": f"Now part {k + 1}."}]})
        k += 1
    return body


@pytest.mark.parametrize("vessel", VESSELS)
def test_every_gemini_and_corpus_body_translates_alike_cached_or_not(vessel: str) -> None:
    every_body_alike_cached_or_not(WIRE, [*_kept_bodies(), _long_body()], vessel)


@pytest.mark.slow
@pytest.mark.parametrize("vessel", ["anthropic", "kimi", "openai", "openai-responses"])
def test_a_growing_conversation_translates_alike_request_after_request(vessel: str) -> None:
    every_prefix_alike(WIRE, _long_body(), vessel)


def _edited(body: dict[str, Any], at: int) -> dict[str, Any]:
    """``body`` with content ``at``'s first text or answer changed in its middle (same length)."""
    out = copy.deepcopy(body)
    part = out["contents"][at]["parts"][0]
    holder, key = (part, "text") if "text" in part else (part["functionResponse"]["response"], "output")
    text = holder[key]
    mid = len(text) // 2
    holder[key] = text[:mid] + ("#" if text[mid] != "#" else "%") + text[mid + 1 :]
    return out


def _editable(body: dict[str, Any], at: int) -> bool:
    return bool({"text", "functionResponse"} & set(body["contents"][at]["parts"][0]))


@pytest.mark.slow
def test_interleaved_sessions_and_edits_to_the_last_and_middle_contents_translate_alike() -> None:
    long = _long_body()
    other = copy.deepcopy(long)
    other["contents"][0]["parts"][0]["text"] = "another session"
    steps = range(3, len(long["contents"]) + 1, 5)
    edits_and_interleaved_sessions_alike(WIRE, (long, other), steps, _edited, _editable, "anthropic")


@pytest.mark.slow
def test_every_body_reads_alike_from_its_slices_in_any_spelling() -> None:
    long = _long_body()
    bodies = [*_kept_bodies(), *(grown(WIRE, long, k) for k in range(2, len(long["contents"]) + 1, 11))]
    spellings_alike_from_slices(WIRE, bodies)


def test_unchanged_contents_are_neither_parsed_nor_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _long_body()
    grown = copy.deepcopy(body)
    grown["contents"].append({"role": "user", "parts": [{"text": "one more"}]})
    assert loaded_continuing(WIRE, body, grown, monkeypatch) < 1_000 < 40_000 < len(orjson.dumps(body))


def test_a_content_changed_in_the_middle_is_read_again_from_its_bytes() -> None:
    body = _long_body()
    middle_change_read_again(WIRE, body, _edited(body, 101))


_MOVES = ["call", "calls", "text", "prompt", "orphan", "unanswered", "separator"]


def _conversation(moves: list[tuple[str, str]]) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "start"}]}]
    for k, (move, text) in enumerate(moves):
        if move in ("call", "calls", "unanswered", "separator"):
            calls = [_call(k % 3), _call(k % 3 + 7, False)] if move == "calls" else [_call(k % 3)]
            if move == "separator":  # the renderer's: calls that follow a model content
                contents.append({"role": "user", "parts": [{"text": SEPARATOR}]})
            contents.append({"role": "model", "parts": [*calls, *([{"text": text}] if text else [])]})
            if move != "unanswered":  # the answers in reverse order: pairing is by id
                contents.append({"role": "user", "parts": [_answer(int(c["functionCall"]["id"][10:]), text)
                                                           for c in reversed(calls)]})  # fmt: skip
        elif move == "text":
            contents.append({"role": "model", "parts": [{"text": text or "done"}]})
        elif move == "prompt":
            contents.append({"role": "user", "parts": [{"text": text or "go"}]})
        else:
            contents.append({"role": "user", "parts": [_answer(99)]})
    return contents


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_MOVES), st.text(alphabet="ab \n", max_size=6)), max_size=12))
def test_random_conversations_translate_alike_as_they_grow(moves: list[tuple[str, str]]) -> None:
    contents = _conversation(moves)
    bodies = (
        {"systemInstruction": {"parts": [{"text": "sys"}]}, "contents": contents[:k]}
        for k in range(1, len(contents) + 1)
    )
    prefixes_alike_through_one_memo(WIRE, bodies, "anthropic")

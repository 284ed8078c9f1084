"""``toolreplay audit`` says what reasoning a body carries back, per earlier reply, and where (design 17).

Checked against the corpus census (counted straight from each real body's JSON, independent of the
parsers): every piece of reasoning and every signature a recorded request carries is listed, no more; and
through the CLI, in the text output and in ``--json``, on real bodies of every wire that carries some.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import corpus_census as census
from corpus_loader import WIRES, Exchange, exchanges
from helpers_cli import run, write_json
from toolreplay._audit.body import load_request
from toolreplay._audit.reasoning import describe, reasoning_pieces
from toolreplay._audit.report import audit_request
from toolreplay.wires import parse_request

REQUESTS = [x for w in WIRES for x in exchanges(w) if x.request]
CARRYING = [
    x for x in REQUESTS if any(p.kind == "reasoning" for p in census.REQUEST[x.wire](x.request or {}).pieces)
]


def _body(name: str) -> Exchange:
    return next(x for x in REQUESTS if x.id == name)


def test_the_corpus_has_bodies_carrying_reasoning_on_four_wires() -> None:
    assert len(CARRYING) >= 10
    assert {x.wire for x in CARRYING} >= {"anthropic", "openai-responses", "gemini", "openai-chat"}


@pytest.mark.parametrize("x", REQUESTS, ids=lambda x: x.id)
def test_every_piece_the_body_carries_is_listed_and_nothing_else(x: Exchange) -> None:
    seen = [p for p in census.REQUEST[x.wire](x.request or {}).pieces if p.kind == "reasoning"]
    report = audit_request(load_request(x.request or {}, wire=x.wire))
    listed = [p for p in report.reasoning if not p.kind.startswith("item id") and "ran itself" not in p.kind]
    assert len(listed) == len(seen), ([p.label for p in seen], [p.kind for p in listed])
    assert report.as_json()["reasoning"] == [
        {**p.as_json(), "at": report.at(p.message)} for p in report.reasoning
    ]


EXPECTED = {
    "anthropic/crewai/cassettes.test_anthropic_thinking_blocks_preserved_across_turns.1": (
        "messages[1] (m2) step 1, with the final words: "
        "thinking block (51 characters), signature (300 characters)"
    ),
    "openai-responses/llm/test_responses_interleaved_reasoning_between_tool_calls.2": (
        "input[1] (m2) step 2, before its calls: reasoning item "
        "rs_0429c1fcf5cbfa350169fabfe83488819788888aaafb2ab1fd, encrypted_content (1,508 characters)"
    ),
    "gemini/llm-gemini/test_tools_with_gemini_3_thought_signatures.1": (
        "contents[1] (m2) step 1, on call 0 (multiply): thoughtSignature (300 characters)"
    ),
    "openai-chat/llm-mistral/magistral-completion-replay": (
        "messages[1] (m2) step 1, with the final words: thinking content part (in the message's content)"
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_cli_prints_each_piece_with_its_place_in_text_and_json(tmp_path: Path, name: str) -> None:
    x = _body(name)
    path = write_json(tmp_path, "body.json", x.request)
    text = run("audit", str(path))
    assert text.exit_code == 0, text.output
    assert "reasoning carried: " in text.output
    assert f"  {EXPECTED[name]} [{x.wire}]" in text.output.splitlines()
    as_json = run("audit", str(path), "--json")
    rows = json.loads(as_json.output)["reasoning"]
    # the body path: the one numbering of the audit (design 42)
    assert any(f"{r['at']} ({r['message_id']}) step {r['step']}, {r['where']}: {r['kind']}"
               == EXPECTED[name] for r in rows)  # fmt: skip
    assert all(r["wire"] == x.wire for r in rows)


def test_a_body_without_reasoning_says_none(tmp_path: Path) -> None:
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Hi."}]}
    res = run("audit", str(write_json(tmp_path, "plain.json", body)))
    assert "reasoning carried: none" in res.output.splitlines()
    assert json.loads(run("audit", str(tmp_path / "plain.json"), "--json").output)["reasoning"] == []


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        ({"type": "redacted_thinking", "data": "abc"}, "redacted_thinking block (data 3 characters)"),
        ({"reasoning_content": "Think."}, "reasoning_content (6 characters) on the message"),
        ({"reasoning_details": [{"type": "reasoning.text"}]}, "reasoning_details (1 entry) on the message"),
        ({"text": "Hmm.", "thought": True}, "thought part (4 characters), unsigned"),
        ({"thinking": "Hmm."}, "thinking (4 characters) on the message"),
    ],
)
def test_each_kind_of_piece_is_named_by_its_fields(data: dict[str, object], kind: str) -> None:
    assert describe(data) == kind


def test_a_signature_on_the_final_words_is_listed_with_them() -> None:
    said = {"role": "model", "parts": [{"text": "Hello.", "thoughtSignature": "c2ln"}]}
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi."}]}, said]}
    pieces = reasoning_pieces(parse_request("gemini", body))
    assert [(p.where, p.kind, p.signed) for p in pieces] == [
        ("with the final words", "data on the words, thoughtSignature (4 characters)", True)
    ]

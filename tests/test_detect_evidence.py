"""Detection by evidence (design 27): each wire's sniffer says what a body proves, one rule decides.

The rule is checked on its own (the strongest proof, a mark ruling another wire out, two equal proofs
ambiguous, the same answer in any order), through the registry with the wires registered in reverse,
on every recorded request body of the corpus, and through the audit and the importer for a body two
wires fit equally.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from corpus_loader import exchanges
from test_wire_detection import _GRID, _MESSAGES, _TOOLS, _TOP
from toolreplay import wires
from toolreplay._audit.body import detect_wire
from toolreplay._errors import ImportFormatError, WireError
from toolreplay._importers import read_file
from toolreplay.wires import Evidence, Proof, choose, get_wire, register_wire, sniff_wire, unregister_wire

KEY = Evidence(Proof.KEY, ("a 'contents' list",))
MARK = Evidence(Proof.MARK, ("a 'tool_use' block",), rules_out=("chat",))
CHAT = Evidence(Proof.MARK, ("string tool-call arguments",))
FITS = Evidence(Proof.FITS, ("a 'messages' list",))


def test_the_strongest_proof_wins() -> None:
    assert choose({"chat": FITS, "gemini": KEY}).wire == "gemini"
    assert choose({"chat": FITS}).wire == "chat"
    assert choose({}).wire is None and not choose({}).ambiguous


def test_a_mark_that_rules_a_wire_out_settles_equal_proofs() -> None:
    assert choose({"chat": CHAT, "anthropic": MARK}).wire == "anthropic"


def test_equal_proofs_are_ambiguous_and_name_both() -> None:
    found = choose({"b": KEY, "a": Evidence(Proof.KEY, ("an 'input'",))})
    assert (found.wire, found.ambiguous, found.left) == (None, True, ("a", "b"))
    assert found.why() == "the body fits a (an 'input') and b (a 'contents' list) equally; name its wire"
    # two wires that rule each other out are ambiguous too: neither mark is worth more
    both = choose({"a": replace(MARK, rules_out=("b",)), "b": replace(MARK, rules_out=("a",))})
    assert both.left == ("a", "b")


def test_the_order_of_the_evidence_changes_nothing() -> None:
    items = [("chat", CHAT), ("anthropic", MARK), ("x", FITS)]
    assert choose(dict(items)) == choose(dict(reversed(items)))


def test_evidence_names_what_it_saw() -> None:
    with pytest.raises(ValueError, match="names the marks"):
        Evidence(Proof.MARK, ())


def _bodies() -> Iterator[Mapping[str, Any]]:
    for top, tools, messages in _GRID:
        yield {"model": "m", **_TOP[top], **_TOOLS[tools], "messages": _MESSAGES[messages]}
    for ex in exchanges():
        if ex.request is not None:
            yield ex.request


def _detected() -> list[tuple[str | None, tuple[str, ...]]]:
    return [(d.wire, d.left) for d in map(sniff_wire, _bodies())]


def test_reversing_the_registration_order_changes_no_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _detected()
    assert len(before) > 300 and all(wire is not None for wire, _ in before)  # no body is ambiguous
    last = wires.wire_names()[-1]
    monkeypatch.setattr(wires, "_modules", dict(reversed(list(wires._modules.items()))))
    assert wires.wire_names()[0] == last
    assert _detected() == before


def test_the_corpus_bodies_are_their_own_wires() -> None:
    found = [(ex.id, sniff_wire(ex.request).wire) for ex in exchanges() if ex.request is not None]
    # Mistral's legacy bodies say "stream": false and nothing else of Chat's: Ollama's habit, in every
    # byte an Ollama body too (they were read so under the confidences as well)
    legacy = "openai-chat/openllmetry/test_mistralai_"
    wrong = {(i.removeprefix(legacy), w) for i, w in found if w != i.split("/")[0]}
    assert wrong == {
        (f"{t}.0", "ollama") for t in ("async_chat_legacy", "chat_legacy", "chat_with_cache_tokens")
    }


@pytest.fixture
def twins() -> Iterator[None]:
    gemini = get_wire("gemini")
    register_wire(replace(gemini, name="twin-a"))
    register_wire(replace(gemini, name="twin-b"))
    yield
    unregister_wire("twin-a")
    unregister_wire("twin-b")


@pytest.mark.usefixtures("twins")
def test_wires_tied_on_a_body_are_ambiguous_in_either_registration_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # before (confidences), the first registered of two equally sure wires took the body
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    assert sniff_wire(body).left == ("gemini", "twin-a", "twin-b")
    with monkeypatch.context() as patched:
        patched.setattr(wires, "_modules", dict(reversed(list(wires._modules.items()))))
        assert sniff_wire(body).left == ("gemini", "twin-a", "twin-b")
    with pytest.raises(WireError, match=r"fits gemini .* and twin-a .* and twin-b .* equally"):
        detect_wire(body)


def test_a_body_two_wires_fit_is_refused_by_the_audit_and_the_importer(tmp_path: Path) -> None:
    body = {"model": "m", "contents": [{"role": "user", "parts": [{"text": "hi"}]}], "input": "hi"}
    with pytest.raises(WireError, match=r"fits gemini \(a 'contents' list\) and openai-responses"):
        detect_wire(body)
    path = tmp_path / "both.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(ImportFormatError, match="in no known format") as refused:
        read_file(path)  # before, the body was Gemini's: its confidence was the higher
    assert "gemini" not in str(refused.value)

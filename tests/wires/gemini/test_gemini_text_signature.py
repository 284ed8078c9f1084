"""A thought signature Gemini puts on the final text part of a turn (design 16-17).

Gemini 3 signs the last part of a text answer (a whole answer's text part, or, streamed, an empty text
chunk at the end). The reply keeps it with its issuer, in its closing step, and the replay puts it back
on the reply's final text part, byte-identical, for that same issuer only; every other vessel gets none of
it, and the warnings name it. Checked on the corpus's real answers and streams, through the turn loop, and
on an imported request body.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from corpus_loader import Exchange, exchanges
from scripted import Scripted
from toolreplay import _jsonenc as jsonenc
from toolreplay._api import render
from toolreplay._loop import TurnOptions, run_turn
from toolreplay._store.board import board_of
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import ToolRegistry
from toolreplay._tools.coop import coop_tool
from toolreplay.testing import ProviderDouble, Text
from toolreplay.testing.answers import Answer, AnswerCall, signature_for
from toolreplay.wires import get_wire
from toolreplay.wires.gemini.double import gemini_body, gemini_events
from toolreplay.wires.reply import ParsedCall, Reply, Usage

GEMINI = get_wire("gemini")


def _final_text_signature(parts: list[Any]) -> str | None:
    """The signature on the last non-call part of an answer, when it is a text part."""
    texts = [p for p in parts if "functionCall" not in p and "function_call" not in p]
    last = texts[-1] if texts else None
    if last is None or "text" not in last or last.get("thought"):
        return None
    sig = last.get("thoughtSignature")
    return sig if isinstance(sig, str) and sig else None


def _answer_parts(x: Exchange) -> list[Any]:
    if x.response is not None:
        return list(x.response["candidates"][0]["content"]["parts"])
    out: list[Any] = []
    for ev in x.events():
        if isinstance(ev, Mapping):
            for c in ev.get("candidates") or []:
                out.extend((c.get("content") or {}).get("parts") or [])
    return out


def _reply(x: Exchange) -> Reply:
    if x.response is not None:
        return GEMINI.parse_response(x.response)
    parser = GEMINI.stream_parser()
    for ev in x.events():
        if isinstance(ev, Mapping):
            parser.feed(ev)
    return parser.finish()


SIGNED = [
    x
    for x in exchanges("gemini")
    if (x.response is not None or x.streamed) and _final_text_signature(_answer_parts(x)) is not None
]


def test_the_corpus_holds_signed_final_text_parts_whole_and_streamed() -> None:
    assert any(x.streamed for x in SIGNED) and any(x.response is not None for x in SIGNED)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "sig.db")
    yield s
    s.close()


def _model_contents(body: Mapping[str, Any]) -> list[Any]:
    return [c for c in body["contents"] if c["role"] == "model"]


@pytest.mark.parametrize("x", SIGNED, ids=lambda x: x.id)
def test_a_signed_final_text_part_goes_back_on_that_part_to_its_issuer_only(
    store: SQLiteStore, x: Exchange
) -> None:
    reply = _reply(x)
    sig = _final_text_signature(_answer_parts(x))
    model = reply.model or x.model
    assert sig is not None and reply.text and model
    reg = ToolRegistry([coop_tool(board_of(store))])
    run_turn(
        "c1",
        "Hello.",
        "gemini",
        reg,
        store=store,
        transport=Scripted(reply),
        options=TurnOptions(model=model),
    )
    stored = store.load("c1")
    warnings: list[str] = []
    body = render(stored, "gemini", model=model, warnings=warnings)
    final = _model_contents(body)[-1]["parts"][-1]
    assert jsonenc.dumps(final) == jsonenc.dumps({"text": reply.text, "thoughtSignature": sig})
    assert warnings == []
    for vessel, other_model in (("gemini", "gemini-2.5-flash-lite"), ("anthropic", None), ("openai", None)):
        warnings = []
        text = jsonenc.dumps(render(stored, vessel, model=other_model, warnings=warnings))
        assert sig not in text and jsonenc.dumps(reply.text)[1:40] in text
        if vessel == "openai":  # Chat never carries a signature: nothing it could take was lost, no warning
            assert not any("data on its text" in w or "signature" in w for w in warnings), warnings
            continue
        assert any("data on its text not replayed" in w for w in warnings), (vessel, warnings)


def test_a_multi_step_turn_keeps_its_final_signature_beside_its_steps(store: SQLiteStore) -> None:
    signed = {"gemini": {"thoughtSignature": "Y2FsbA=="}}
    first = Reply(calls=(ParsedCall("coop", {"action": "list"}, None, signed),), model="gemini-3-pro-preview")
    parts = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Nothing to do."}, {"text": "", "thoughtSignature": "ZmluYWw="}]}, "finishReason": "STOP"}],
        "modelVersion": "gemini-3-pro-preview"}  # fmt: skip
    last = GEMINI.parse_response(parts)
    reg = ToolRegistry([coop_tool(board_of(store))])
    run_turn("c1", "List todos.", "gemini", reg, store=store, transport=Scripted(first, last),
             options=TurnOptions(model="gemini-3-pro-preview"))  # fmt: skip
    stored = store.load("c1")
    body = render(stored, "gemini", model="gemini-3-pro-preview")
    models = _model_contents(body)
    assert models[0]["parts"][0]["thoughtSignature"] == "Y2FsbA=="
    assert models[-1]["parts"] == [{"text": "Nothing to do.", "thoughtSignature": "ZmluYWw="}]


def test_an_imported_body_keeps_the_signature_on_its_final_words() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Hi."}]},
            {"role": "model", "parts": [{"text": "Hello there.", "thoughtSignature": "dGV4dA=="}]},
            {"role": "user", "parts": [{"text": "Bye."}]},
        ]
    }
    h = GEMINI.parse_request(body)
    again = render(h, "gemini")
    assert again["contents"] == body["contents"]
    warnings: list[str] = []
    text = jsonenc.dumps(render(h, "anthropic", warnings=warnings))
    assert "dGV4dA==" not in text and "Hello there." in text
    assert any("data on its text" in w for w in warnings)


# -- the Gemini double signs the end of a Gemini 3 answer as the real API does (design 32) --------------


def _answer(model: str, text: str = "Done.", calls: tuple[AnswerCall, ...] = ()) -> Answer:
    return Answer(7, model, text, calls, None, Usage(3, 2, 0))


def test_the_double_signs_the_final_text_of_a_gemini_3_answer_whole_and_streamed() -> None:
    sig = signature_for(7, 0, "gemini-3-pro-preview")
    whole = gemini_body(_answer("gemini-3-pro-preview"))["candidates"][0]["content"]["parts"]
    assert whole == [{"text": "Done.", "thoughtSignature": sig}]
    events = gemini_events(_answer("gemini-3-pro-preview"))
    closing = events[-1][1]["candidates"][0]
    assert closing["content"]["parts"] == [{"text": "", "thoughtSignature": sig}] and closing["finishReason"]
    assert all("thoughtSignature" not in jsonenc.dumps(e[1]) for e in events[:-1])
    # Gemini 2.5 signs no text; with calls, the first call carries the step's signature, the text none
    assert "thoughtSignature" not in jsonenc.dumps(gemini_body(_answer("gemini-2.5-flash")))
    assert "thoughtSignature" not in jsonenc.dumps(gemini_events(_answer("gemini-2.5-flash")))
    call = AnswerCall("coop", {"action": "list"}, None, signature_for(7, 0, "gemini-3-pro-preview"))
    signed = gemini_body(_answer("gemini-3-pro-preview", "Looking.", (call,)))
    parts = signed["candidates"][0]["content"]["parts"]
    assert parts[0] == {"text": "Looking."} and parts[1]["thoughtSignature"] == sig
    closing = gemini_events(_answer("gemini-3-pro-preview", "Looking.", (call,)))[-1][1]
    assert closing["candidates"][0]["content"]["parts"] == [{"text": ""}]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_doubles_final_text_signature_goes_back_to_its_issuer_over_two_turns(
    store: SQLiteStore, stream: bool
) -> None:
    model = "gemini-3-pro-preview"
    options = TurnOptions(model=model, stream=stream, dry_tools=True)
    reg = ToolRegistry([coop_tool(board_of(store))])
    with ProviderDouble() as double:
        double.script(Text("Hello there."), Text("Goodbye."))
        vessel = double.vessel("gemini")
        run_turn("c1", "Hi.", vessel, reg, store=store, options=options)
        run_turn("c1", "Bye.", vessel, reg, store=store, options=options)
        first, second = (r for r in double.requests if r.status == 200)
    assert first.stream == second.stream == stream
    sig = signature_for(1, 0, model)  # the double numbers its answers from 1
    assert first.body["contents"] == [{"role": "user", "parts": [{"text": "Hi."}]}]
    earlier = _model_contents(second.body)
    assert len(earlier) == 1
    sent = jsonenc.dumps(earlier[0]["parts"][-1])
    assert sent == jsonenc.dumps({"text": "Hello there.", "thoughtSignature": sig})
    stored = store.load("c1")
    for vessel_name, other_model in (("gemini", "gemini-2.5-flash"), ("anthropic", None)):
        warnings: list[str] = []
        text = jsonenc.dumps(render(stored, vessel_name, model=other_model, warnings=warnings))
        assert "thoughtSignature" not in text and sig not in text and "Hello there." in text
        assert any("data on its text not replayed" in w for w in warnings), (vessel_name, warnings)

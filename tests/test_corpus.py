"""toolreplay against real recorded provider traffic (tests/corpus/, cited in its SOURCES.md).

Every request body must be read with its own wire (the importer's ``--from auto`` and the audit's detection),
every call and answer in it read, every recorded answer and stream parsed, and nothing in them dropped
silently: the counts of calls, results and text match a census taken straight from the provider's JSON
(tests/corpus_census.py), and each piece of reasoning, media or server-side tool output is kept or named in
a warning. A body read and rendered again for the same wire and model must keep its calls and answers,
its steps, the words beside each step's calls, its ending, its reasoning and its media, and be valid for
its wire (the rules and the provider's published definitions).

Known gaps are marked ``xfail(strict=True)`` with the issue item that closes them (tests/corpus_gaps.py), so
a fix flips them to failures until the mark is removed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

import corpus_census as census
from corpus_gaps import GAPS
from corpus_loader import CORPUS, DONE, KINDS, WIRES, Exchange, exchanges, sources
from toolreplay._api import render
from toolreplay._audit.body import load_request
from toolreplay._audit.validate import validate_body
from toolreplay._importers import read_file
from toolreplay.wires import get_wire, parse_request, parse_response


def _cases(test: str, found: Iterable[Exchange]) -> list[Any]:
    out = []
    for ex in found:
        gap = GAPS.get(test, {}).get(ex.id)
        marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
        out.append(pytest.param(ex, id=ex.id, marks=marks))
    return out


def _dump(obj: Any) -> str:
    """A parser's output as JSON text, to look for a piece's needle in it."""

    def default(o: Any) -> Any:
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
        if isinstance(o, Mapping):
            return dict(o)
        if isinstance(o, (tuple, set, frozenset)):
            return list(o)
        return str(o)

    return json.dumps(obj, default=default, ensure_ascii=False)


def _escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _silently_dropped(pieces: Iterable[census.Piece], dump: str, warnings: Iterable[str] = ()) -> list[str]:
    """The pieces neither found in the parser's output nor named in one of its warnings."""
    said = " ".join(warnings).lower()
    lost = []
    for p in pieces:
        kept = bool(p.needle) and _escaped(p.needle) in dump
        if not kept and p.label.split()[0].lower() not in said:
            lost.append(f"{p.kind} {p.label} ({p.needle[:16]!r})")
    return lost


def _squeezed(text: str) -> str:
    return "".join(text.split())


# ------------------------------------------------------------------------------------------- the corpus


@pytest.mark.parametrize("wire", WIRES)
def test_the_corpus_holds_requests_answers_and_streams_of(wire: str) -> None:
    found = list(exchanges(wire))
    assert any(ex.request is not None for ex in found), f"no request body of {wire}"
    assert any(ex.response is not None for ex in found), f"no whole answer of {wire}"
    assert any(ex.streamed for ex in found), f"no stream of {wire}"


def test_the_corpus_is_broad() -> None:
    assert sum(1 for _ in exchanges(with_request=True)) >= 50
    assert {ex.kind for ex in exchanges()} == set(KINDS)


def test_every_source_is_cited_with_its_commit() -> None:
    cited = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    for repo, commit in sorted(sources()):
        assert f"{repo}@{commit}" in cited, f"{repo}@{commit} is not cited in tests/corpus/SOURCES.md"


@pytest.mark.parametrize("ex", _cases("envelope", exchanges()))
def test_each_envelope_is_complete(ex: Exchange) -> None:
    env = ex.envelope
    assert ex.wire in WIRES and ex.kind in KINDS
    assert {"repo", "commit", "path"} <= set(env["source"])
    assert Path(ex.id).parts[0] == ex.wire
    if ex.kind == "exchange":
        assert isinstance(ex.request, dict)
    assert (ex.response is not None) != ex.streamed, "an exchange holds an answer or a stream, not both"
    if ex.streamed:
        assert env["stream_format"] in ("sse", "chunks", "json-array", "ndjson")
        assert ex.events(), "an empty stream"


# --------------------------------------------------------------------------------------------- requests


@pytest.mark.parametrize("ex", _cases("import_detects", exchanges(with_request=True)))
def test_import_detects_the_wire(ex: Exchange, tmp_path: Path) -> None:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(ex.request, ensure_ascii=False), encoding="utf-8")
    batch = read_file(path)
    assert (batch.format, batch.detected) == (ex.wire, True)


@pytest.mark.parametrize("ex", _cases("audit_detects", exchanges(with_request=True)))
def test_audit_detects_the_wire(ex: Exchange) -> None:
    assert load_request(ex.request or {}).wire == ex.wire


@pytest.mark.parametrize("ex", _cases("request_read", exchanges(with_request=True)))
def test_request_body_reads_every_call_and_answer(ex: Exchange) -> None:
    seen = census.REQUEST[ex.wire](ex.request or {})
    history = parse_request(ex.wire, ex.request)
    calls = [tc for m in history.messages for tc in m.tool_uses]
    assert [tc.name for tc in calls] == seen.call_names
    assert sum(tc.answer is not None for tc in calls) == seen.results


@pytest.mark.parametrize("ex", _cases("request_pieces", exchanges(with_request=True)))
def test_request_body_drops_nothing_silently(ex: Exchange) -> None:
    seen = census.REQUEST[ex.wire](ex.request or {})
    history = parse_request(ex.wire, ex.request)
    assert _silently_dropped(seen.pieces, _dump(history), history.warnings) == []


# -------------------------------------------------------------------------------------------- responses


def _check_reply(reply: Any, seen: census.Census) -> None:
    assert [c.name for c in reply.calls] == seen.call_names
    assert _squeezed(reply.text) == _squeezed("".join(seen.texts))


@pytest.mark.parametrize("ex", _cases("response_read", exchanges(streamed=False)))
def test_response_reads_every_call_and_the_text(ex: Exchange) -> None:
    if ex.response is None:
        pytest.skip("a request alone")
    _check_reply(parse_response(ex.wire, ex.response), census.RESPONSE[ex.wire](ex.response))


@pytest.mark.parametrize("ex", _cases("response_pieces", exchanges(streamed=False)))
def test_response_drops_nothing_silently(ex: Exchange) -> None:
    if ex.response is None:
        pytest.skip("a request alone")
    reply = parse_response(ex.wire, ex.response)
    assert _silently_dropped(census.RESPONSE[ex.wire](ex.response).pieces, _dump(reply)) == []


def _streamed(ex: Exchange) -> Any:
    parser = get_wire(ex.wire).stream_parser()
    for ev in ex.events():
        if ev == DONE:
            if hasattr(parser, "mark_done"):
                parser.mark_done()
        else:
            parser.feed(ev)
    return parser.finish()


@pytest.mark.parametrize("ex", _cases("stream_read", exchanges(streamed=True)))
def test_stream_reads_every_call_and_the_text(ex: Exchange) -> None:
    _check_reply(_streamed(ex), census.STREAM[ex.wire](ex.events()))


@pytest.mark.parametrize("ex", _cases("stream_pieces", exchanges(streamed=True)))
def test_stream_drops_nothing_silently(ex: Exchange) -> None:
    reply = _streamed(ex)
    assert _silently_dropped(census.STREAM[ex.wire](ex.events()).pieces, _dump(reply)) == []


# ------------------------------------------------------------------------------------------- round trip
# A body read into a history and rendered again for the one that answered it (same wire, same model) must
# say what the recorded body said: its calls and answers, its steps, the words beside each step's calls,
# its ending, its reasoning (same issuer) and its media; and it must be valid for its wire.

#: The built-in vessel each wire renders with in the round trip (no id length limit of its own).
ROUND_TRIP_VESSEL = {
    "openai-chat": "openai-compatible",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
}


def _again(ex: Exchange) -> dict[str, Any]:
    history = parse_request(ex.wire, ex.request)
    body: dict[str, Any] = render(history, ROUND_TRIP_VESSEL[ex.wire], model=ex.model)
    return body


def _with(test: str, has: Any) -> list[Any]:
    return _cases(test, (ex for ex in exchanges(with_request=True) if has(ex)))


def _seen(ex: Exchange) -> census.Census:
    return census.REQUEST[ex.wire](ex.request or {})


def _steps(wire: str, body: Mapping[str, Any]) -> str:
    return "".join(x for x in census.shape(wire, body)[0] if x in "CR")


@pytest.mark.parametrize("ex", _with("round_trip_calls", lambda ex: _seen(ex).calls))
def test_round_trip_keeps_every_call_and_answer(ex: Exchange) -> None:
    before, after = _seen(ex), census.REQUEST[ex.wire](_again(ex))
    assert (after.call_names, after.results) == (before.call_names, before.results)


@pytest.mark.parametrize("ex", _with("round_trip_steps", lambda ex: _seen(ex).calls))
def test_round_trip_keeps_the_steps(ex: Exchange) -> None:
    assert _steps(ex.wire, _again(ex)) == _steps(ex.wire, ex.request or {})


@pytest.mark.parametrize(
    "ex", _with("round_trip_words", lambda ex: census.shape(ex.wire, ex.request or {})[1])
)
def test_round_trip_keeps_the_words_beside_each_steps_calls(ex: Exchange) -> None:
    assert census.shape(ex.wire, _again(ex))[1] == census.shape(ex.wire, ex.request or {})[1]


@pytest.mark.parametrize("ex", _with("round_trip_ending", lambda ex: True))
def test_round_trip_ends_as_the_recorded_body_ends(ex: Exchange) -> None:
    assert census.shape(ex.wire, _again(ex))[0][-1:] == census.shape(ex.wire, ex.request or {})[0][-1:]


def _kept(ex: Exchange, kind: str) -> list[str]:
    text = _dump(_again(ex))
    wanted = [p for p in _seen(ex).pieces if p.kind == kind and p.needle]
    return [f"{p.label} ({p.needle[:16]!r})" for p in wanted if _escaped(p.needle) not in text]


def _has(kind: str) -> Any:
    return lambda ex: any(p.kind == kind and p.needle for p in _seen(ex).pieces)


@pytest.mark.parametrize("ex", _with("round_trip_reasoning", _has("reasoning")))
def test_round_trip_replays_reasoning_to_its_issuer(ex: Exchange) -> None:
    assert _kept(ex, "reasoning") == []


@pytest.mark.parametrize("ex", _with("round_trip_media", _has("media")))
def test_round_trip_keeps_images_and_documents(ex: Exchange) -> None:
    assert _kept(ex, "media") == []


@pytest.mark.parametrize("ex", _with("round_trip_valid", lambda ex: True))
def test_round_trip_body_is_valid(ex: Exchange) -> None:
    """The body rendered again keeps the wire's rules and the provider's published definitions."""
    assert validate_body(ROUND_TRIP_VESSEL[ex.wire], _again(ex)) == []

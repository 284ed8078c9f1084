"""Every pair of wires, by the official clients (issue 26, item 4): a thinking model's answer (reasoning,
words, two calls, usage with cached tokens) from the upstream wire's provider double, streamed or whole,
read by that wire's bridge and written by the agent's wire's bridge, is read by the agent's official SDK
in strict mode, and the message its accumulator rebuilds is the upstream's message as the upstream's own
parser reads it: the words, each call's name and arguments, the usage where the agent's wire carries it,
the reasoning when the agent asked to see it, our token where the agent's wire has a place for one and
never the upstream's own signatures; every call id valid for the agent's wire. What the agent's wire
cannot carry is in the writer's notes, and nothing else is.

The stream is translated as it arrives: the upstream's bytes, cut anywhere, are framed, read and written
event by event while the agent's SDK reads the other end of the loopback relay.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from helpers_bridge_http import Relay, frame, relaying
from helpers_bridge_matrix import (
    AUTH,
    WIRES,
    Framer,
    ask,
    call_id_for,
    recut,
    valid_call_id,
)
from helpers_bridge_sdks import AGENT_MODEL, ANSWER_ID, SDKS, Seen, strict_body, strict_events
from toolreplay.model import Issuer, Reasoning
from toolreplay.model import Text as Said
from toolreplay.testing import Call, Calls, ProviderDouble, Text, Usage
from toolreplay.wires import get_wire
from toolreplay.wires.bridge import Event, Outbound, neutral_reply, seal
from toolreplay.wires.reply import Reply

httpx = pytest.importorskip("httpx")

BRIDGED = [w for w in WIRES if get_wire(w).bridge is not None]
PAIRS = [(up, agent) for up in BRIDGED for agent in BRIDGED if up != agent]


@dataclass(frozen=True)
class Case:
    """What the upstream answers: ``calls`` (reasoning, words, two calls) or words alone; ``summary``
    False: a Responses upstream shows no summary of its reasoning (only its encrypted content), so the
    piece has no readable text."""

    name: str
    calls: bool
    summary: bool
    thinking: tuple[bool, ...]


CALLS = Case("calls", calls=True, summary=True, thinking=(True, False))
WORDS = Case("words", calls=False, summary=False, thinking=(True,))


def _params(streamed: bool) -> list[Any]:
    """Every pair, each case. The quick tier: every pair streamed with thinking and whole without, and
    the unreadable reasoning streamed; the rest is slow."""
    out = []
    for case in (CALLS, WORDS):
        for thinking in case.thinking:
            for up, agent in PAIRS:
                quick = (case is CALLS and thinking == streamed) or (
                    case is WORDS and streamed and up == "openai-responses"
                )
                shown = "thinking" if thinking else "no-thinking"
                marks = () if quick else (pytest.mark.slow,)
                out.append(
                    pytest.param(
                        case, up, agent, thinking, id=f"{case.name}-{shown}-{up}>{agent}", marks=marks
                    )
                )
    return out


#: Where the agent's wire holds our token for a piece of reasoning (given whether it asked to see the
#: reasoning): Anthropic's thinking signature and Responses' encrypted_content with the reasoning shown,
#: Gemini's thoughtSignature always (on the step's first call, as Gemini 3 signs). Chat and Ollama have
#: no place: the store matches what the agent echoes back by its text.
TOKEN_PLACE = {
    "anthropic": lambda thinking: thinking,
    "openai-responses": lambda thinking: thinking,
    "gemini": lambda thinking: True,
    "openai-chat": lambda thinking: False,
    "ollama": lambda thinking: False,
}
#: The agent's wire has a field for the cached tokens.
CACHED = {"anthropic": True, "openai-chat": True, "openai-responses": True, "gemini": True, "ollama": False}
#: The agent's wire has a field for the tokens written to the prompt cache.
CACHE_WRITTEN = {
    "anthropic": True,
    "openai-chat": True,
    "openai-responses": True,
    "gemini": False,
    "ollama": False,
}
#: How an answer that made calls, and one that did not, ended as each agent's SDK says.
FINISH = {
    "anthropic": ("tool_use", "end_turn"),
    "openai-chat": ("tool_calls", "stop"),
    "openai-responses": ("completed", "completed"),
    "gemini": ("STOP", "STOP"),
    "ollama": ("stop", "stop"),
}
#: The call ids an upstream's script gives its calls: Kimi's on Chat, which no other wire takes as they are.
OWN_IDS = {"openai-chat": ("functions.read_file:0", "functions.grep:1")}
#: The agents' wires whose SDK shows no call id (ollama's): the ids are read from the lines themselves.
HIDES_IDS = frozenset({"ollama"})
#: The prefixes of the item ids an agent's SDK shows, by item type (Responses').
ITEM_PREFIXES = {"openai-responses": {"reasoning": "rs_", "message": "msg_", "function_call": "fc_"}}
#: Where a signature or an encrypted reasoning sits in what a wire's parser keeps.
_SECRET_KEYS = frozenset({"signature", "encrypted_content", "thoughtSignature", "thought_signature", "data"})


@pytest.fixture(scope="module")
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.fixture(scope="module")
def http() -> Iterator[Any]:
    """One client to the double for the whole module (plain HTTP: no certificates to load)."""
    with httpx.Client(verify=False, timeout=10) as client:
        yield client


def _script(case: Case, up: str) -> Calls | Text:
    """Reasoning, words, two calls with arguments (or words alone), usage with cached tokens (and written
    ones, which only Anthropic reports); on Chat, Kimi's call ids, which no other wire takes as they are."""
    thought = "I should read a.py first, then grep for ünï."
    usage = Usage(1200, 80, 1000, 100)
    if not case.calls:
        return Text("Done: a.py has no ünï.", usage=usage, reasoning=thought)
    ids = OWN_IDS.get(up, (None, None))
    return Calls(
        [
            Call("read_file", {"path": "a.py", "lines": [1, 2]}, ids[0]),
            Call("grep", {"pattern": "ünï", "max": 3, "flags": {"i": True}}, ids[1]),
        ],
        text="Let me look at a.py — ünï.",
        reasoning=thought,
        usage=usage,
    )


def _issuer(up: str) -> Issuer:
    return Issuer(up, "upstream.test", "upstream-model")


def _out(up: str, agent: str, thinking: bool) -> Outbound:
    issuer = _issuer(up)
    return Outbound(
        model=AGENT_MODEL[agent],
        answer_id=ANSWER_ID[agent],
        thinking=thinking,
        seal=lambda piece: seal(issuer, piece),
        call_id=call_id_for(agent),
        created=1764000000,
    )


def _framing(wire: str) -> Any:
    http = get_wire(wire).http
    assert http is not None
    return http.framing


@dataclass
class _Translation:
    """One upstream stream translated as it arrives: its parser, the bridge's reader and writer, the
    events written, and how many of them were out before the upstream's last bytes came."""

    up: str
    agent: str
    out: Outbound
    events: list[Event] = field(default_factory=list)
    written_before_chunk: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.parser = get_wire(self.up).stream_parser()
        up_bridge, agent_bridge = get_wire(self.up).bridge, get_wire(self.agent).bridge
        assert up_bridge is not None and agent_bridge is not None
        self.reader = up_bridge().reader()
        self.writer = agent_bridge().writer(self.out)

    def stream(self, http: Any, url: str, body: dict[str, Any]) -> Iterator[bytes]:
        framer, rnd = Framer(_framing(self.up)), random.Random(f"{self.up}>{self.agent}")
        with http.stream("POST", url, json=body, headers=AUTH) as r:
            assert r.status_code == 200, r.read()
            for piece in recut(r.iter_bytes(), rnd):
                self.written_before_chunk.append(len(self.events))
                for payload in framer.feed(piece):
                    yield from self._take(payload)
        for payload in framer.end():
            yield from self._take(payload)
        yield from self._write(self.reader.finish(), self.writer.close)

    def _take(self, payload: Any) -> Iterator[bytes]:
        if payload == "[DONE]":
            self.parser.mark_done()
        else:
            self.parser.feed(payload)
        yield from self._write(self.reader.feed(payload))

    def _write(self, deltas: Sequence[Any], close: Any = None) -> Iterator[bytes]:
        events = [e for d in deltas for e in self.writer.write(d)] + (close() if close else [])
        self.events += events
        for event in events:
            yield frame(_framing(self.agent), event)


def _secrets(reply: Reply) -> list[str]:
    """The upstream's own signatures and encrypted reasoning in its reply (never to reach the agent)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k in _SECRET_KEYS and isinstance(v, str) and len(v) > 8:
                    found.append(v)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk([p.data for p in reply.said if isinstance(p, Reasoning | Said)])
    walk([c.provider_data for c in reply.calls])
    walk(reply.provider_data)
    return found


def _no_secrets(up: str, want: Reply, sent: str) -> None:
    """None of the upstream's signatures reached the agent (Anthropic, Responses and Gemini sign; Chat's
    and Ollama's reasoning is plain text)."""
    secrets = _secrets(want)
    assert bool(secrets) == (up in ("anthropic", "openai-responses", "gemini")), secrets
    assert not [s for s in secrets if s in sent]


def _as_upstream(
    seen: Seen, want: Reply, case: Case, up: str, agent: str, thinking: bool, out: Outbound
) -> None:
    """What the agent's SDK rebuilt is the upstream's message, as far as the agent's wire carries it."""
    pieces = [p for p in want.said if isinstance(p, Reasoning)]
    assert pieces and want.text and len(want.calls) == (2 if case.calls else 0)  # it thought and said
    readable = case.summary or up != "openai-responses"  # only Responses can hide its reasoning's text
    assert all(bool(p.text) == readable for p in pieces)
    assert seen.text == want.text
    assert [(name, args) for _, name, args in seen.calls] == [(c.name, c.input) for c in want.calls]
    ids = [cid for cid, _, _ in seen.calls]
    if agent not in HIDES_IDS:  # the lines are checked instead
        assert ids == _agent_ids(want, out)
        assert all(valid_call_id(agent, i) for i in ids), ids
    assert seen.reasoning == ("".join(p.text for p in pieces) if thinking else "")
    assert seen.tokens == ([out.seal(p) for p in pieces] if TOKEN_PLACE[agent](thinking) else [])
    u = want.usage
    cached = (u.cached_tokens or 0) if CACHED[agent] else None  # an upstream without the count: 0
    assert seen.usage == (u.input_tokens, u.output_tokens, cached)
    assert seen.finish == FINISH[agent][0 if case.calls else 1] and seen.model == out.model
    if agent in ITEM_PREFIXES:
        prefixes = ITEM_PREFIXES[agent]
        assert all(i.startswith(prefixes[t]) for t, i in seen.items), seen.items


def _lost(want: Reply, agent: str, thinking: bool) -> list[str]:
    """What the agent's wire cannot carry of ``want`` (as words a note must hold): reasoning the agent
    did not ask to see, or without readable text on a wire with no place for its token; cached tokens
    and tokens written to the cache."""
    lost = []
    pieces = [p for p in want.said if isinstance(p, Reasoning)]
    unreadable = any(not p.text for p in pieces) and not TOKEN_PLACE[agent](thinking)
    if (pieces and not thinking) or unreadable:
        lost.append("reasoning")
    if not CACHED[agent] and want.usage.cached_tokens:
        lost.append("cached")
    if not CACHE_WRITTEN[agent] and want.usage.cache_write_tokens:
        lost.append("cache_write")
    return lost


def _named(notes: list[str], want: Reply, agent: str, thinking: bool) -> None:
    lost = _lost(want, agent, thinking)
    assert bool(notes) == bool(lost), notes
    for word in lost:
        assert any(word in n for n in notes), (word, notes)


def _agent_ids(want: Reply, out: Outbound) -> list[str | None]:
    return [out.call_id(k, c.call_id, c.name) or None for k, c in enumerate(want.calls)]


def _written_ids(agent: str, payloads: Sequence[Any], want: Reply, out: Outbound) -> None:
    """Ollama's call ids, which its SDK does not show, are the agent's ids in the lines themselves."""
    if agent not in HIDES_IDS:
        return
    ids = [c.get("id") for p in payloads for c in (p.get("message") or {}).get("tool_calls") or []]
    assert ids == _agent_ids(want, out) and all(valid_call_id(agent, i) for i in ids), ids


@pytest.mark.parametrize(("case", "up", "agent", "thinking"), _params(streamed=True))
def test_a_translated_stream_rebuilds_the_upstreams_message(
    double: ProviderDouble, http: Any, case: Case, up: str, agent: str, thinking: bool
) -> None:
    double.clear()  # nothing left over from a test that failed before its answer was asked for
    double.script(_script(case, up), wire=up)
    url, body = ask(up, double.base_url_for(up), stream=True, summary=case.summary)
    run = _Translation(up, agent, _out(up, agent, thinking))
    relay = Relay(stream=lambda: run.stream(http, url, body), framing=_framing(agent))
    with relaying(relay) as base:
        seen = SDKS[agent](base, True, thinking)
    if relay.errors:
        raise relay.errors[0]
    want = run.parser.finish()
    strict_events(agent, run.events)
    _as_upstream(seen, want, case, up, agent, thinking, run.out)
    _written_ids(agent, [p for _, p in run.events], want, run.out)
    _no_secrets(up, want, json.dumps([p for _, p in run.events]))
    _named(run.writer.notes, want, agent, thinking)
    # translated as it arrived: most events were out before the upstream's last bytes
    assert run.written_before_chunk[-1] >= len(run.events) // 2


@pytest.mark.parametrize(("case", "up", "agent", "thinking"), _params(streamed=False))
def test_a_translated_whole_answer_reads_as_the_upstreams_message(
    double: ProviderDouble, http: Any, case: Case, up: str, agent: str, thinking: bool
) -> None:
    double.clear()  # nothing left over from a test that failed before its answer was asked for
    double.script(_script(case, up), wire=up)
    url, body = ask(up, double.base_url_for(up), stream=False, summary=case.summary)
    answer = http.post(url, json=body, headers=AUTH)
    assert answer.status_code == 200, answer.text
    up_bridge, agent_bridge = get_wire(up).bridge, get_wire(agent).bridge
    assert up_bridge is not None and agent_bridge is not None
    want = get_wire(up).parse_response(answer.json())
    out = _out(up, agent, thinking)
    written, notes = agent_bridge().body(neutral_reply(want, up_bridge()), out)
    strict_body(agent, written)
    with relaying(Relay(body=written)) as base:
        seen = SDKS[agent](base, False, thinking)
    _as_upstream(seen, want, case, up, agent, thinking, out)
    _written_ids(agent, [written], want, out)
    _no_secrets(up, want, json.dumps(written))
    _named(notes, want, agent, thinking)


def test_all_five_wires_are_in_the_matrix() -> None:
    assert list(WIRES) == BRIDGED, f"wires without a bridge: {sorted(set(WIRES) - set(BRIDGED))}"
    assert len(PAIRS) == 20

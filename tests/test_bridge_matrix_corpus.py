"""Every recorded provider stream and whole answer (tests/corpus), read by its wire's bridge and written by
each other wire's bridge, with thinking shown and not: every event and body passes the agent's SDK models
in strict mode, and the agent's own reader gets the recording's calls and words back. Slow (the corpus
times four agents, twice): the quick tier has the doubles' matrix (test_bridge_matrix.py)."""

from __future__ import annotations

import pytest

from corpus_loader import exchanges
from helpers_bridge_http import read_all
from helpers_bridge_matrix import WIRES, call_id_for
from helpers_bridge_sdks import AGENT_MODEL, ANSWER_ID, strict_body, strict_events
from toolreplay.model import Issuer
from toolreplay.wires import get_wire
from toolreplay.wires.bridge import Failed, Outbound, collect, neutral_reply, seal
from toolreplay.wires.reply import Reply

PAIRS = [(up, agent) for up in WIRES for agent in WIRES if up != agent]


def _out(agent: str, thinking: bool) -> Outbound:
    issuer = Issuer("upstream", "upstream.test", "recorded")
    return Outbound(
        model=AGENT_MODEL[agent],
        answer_id=ANSWER_ID[agent],
        thinking=thinking,
        seal=lambda piece: seal(issuer, piece),
        call_id=call_id_for(agent),
    )


def _words(reply: Reply) -> str:
    # Anthropic starts words after a call as a new block, read back joined by a blank line
    return reply.text.replace("\n\n", "")


@pytest.mark.slow
@pytest.mark.parametrize(("up", "agent"), PAIRS, ids=[f"{u}>{a}" for u, a in PAIRS])
def test_every_recorded_answer_translates_strictly_and_reads_back(up: str, agent: str) -> None:
    up_bridge, agent_bridge = get_wire(up).bridge, get_wire(agent).bridge
    assert up_bridge is not None and agent_bridge is not None
    source, target = up_bridge(), agent_bridge()
    streams = 0
    for ex in exchanges(up, streamed=True):
        reader = source.reader()
        deltas = [d for e in ex.events() for d in reader.feed(e)] + reader.finish()
        if any(isinstance(d, Failed) for d in deltas):
            continue  # a recorded failure: the writers' error events are each wire's own tests
        streams += 1
        want = collect(deltas)
        for thinking in (True, False):
            writer = target.writer(_out(agent, thinking))
            events = [e for d in deltas for e in writer.write(d)] + writer.close()
            strict_events(agent, events)
            back = collect(read_all(target, events))
            assert [(c.name, c.input) for c in back.calls] == [(c.name, c.input) for c in want.calls], ex.id
            assert _words(back) == _words(want), ex.id
    assert streams
    for ex in exchanges(up, streamed=False):
        answer = ex.envelope.get("response")
        if not isinstance(answer, dict):
            continue
        reply = get_wire(up).parse_response(answer)
        for thinking in (True, False):
            body, _ = target.body(neutral_reply(reply, source), _out(agent, thinking))
            strict_body(agent, body)
            back = get_wire(agent).parse_response(body)
            assert [(c.name, c.input) for c in back.calls] == [(c.name, c.input) for c in reply.calls], ex.id

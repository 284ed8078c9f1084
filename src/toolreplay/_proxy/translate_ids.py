"""Call ids across two wires (design 49): which id each call goes upstream under, which id the agent sees
for each call of the answer, and the answer's own id; every one a pure function of the conversation.

The store keeps a translated reply's calls under the id the agent saw (``ToolCall.call_id``); the
upstream's own id, when it differs, in the call's ``provider_data[<upstream wire>]["id"]``. So:

* **to the upstream** a call goes under the upstream's own id when that wire issued it, else under the
  agent's id; the upstream wire's id policy (its ``call_ids`` hook: Anthropic's pattern, OpenAI's 40
  characters, Kimi's ``functions.NAME:IDX``) then fits it, by a pure function of the id. A call without
  an id (Gemini's) gets the replay's derived id (design 2). An id used twice in one request (agents
  reuse ``call_0`` across turns) gets a deterministic suffix the second time;
* **to the agent** each call of the answer goes under the upstream's id where it fits the agent's wire
  (``Wire.translation.ids``), else under one minted from the digest of the conversation, the call's
  index and its name (Gemini's calls have no id at all), so a second run of the same conversation shows
  the same ids.
"""

from __future__ import annotations

import functools
import hashlib
import weakref
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from toolreplay.model import History, Message, ToolCall
from toolreplay.wires import get_wire
from toolreplay.wires.bounded import ByIdentity, alive, shared_prefix, weakly
from toolreplay.wires.common import ID_SAFE
from toolreplay.wires.translation import IdRule

#: A wire without a translation: what every served wire's agents take.
STRICT = IdRule(ID_SAFE, 40, "call_", "")


def rule_of(wire: str) -> IdRule:
    """What call ids ``wire``'s agents take (``Wire.translation.ids``)."""
    hook = get_wire(wire).translation
    return hook.ids if hook is not None else STRICT


def history_digest(h: History) -> str:
    """A digest of what the conversation holds that an answer follows: each message's role and words,
    and each call's name and id, in order (no clock, no randomness). Two requests of one turn (the
    agent's continuations) differ in their calls, so their answers get different ids."""
    msgs = h.messages
    if not msgs:
        return hashlib.sha256(_SEED).hexdigest()
    # request N+1 holds request N's messages (the read memo gives them again, design 53): the hash of the
    # shared opening is taken up where request N's left it, and only the rest is hashed
    held, kept = _CHAINS.peek(msgs[0]) or ((), [])
    k = shared_prefix(alive(held), msgs)
    state = kept[k - 1].copy() if k else hashlib.sha256(_SEED)
    states = kept[:k]
    for m in msgs[k:]:
        state.update(_SAID.get(m, functools.partial(_said, m)))
        states.append(state.copy())
    _CHAINS.put(msgs[0], (weakly(msgs), states))
    return state.hexdigest()


_SEED = b"toolreplay translated answer"
#: Per conversation (by its first message), its messages (weakly: nothing here keeps them alive) and the
#: digest's state after each of them.
_CHAINS: ByIdentity[tuple[tuple[weakref.ref[Message], ...], list[Any]]] = ByIdentity(64)


#: What a message gives the digest, by the message (design 53: the read memo gives it again).
_SAID: ByIdentity[bytes] = ByIdentity(4096)


def _said(m: Message) -> bytes:
    out = [f"\x1e{m.role}\x1f{m.text}\x1f{len(m.parts)}"]
    out.extend(f"\x1d{c.name}\x1f{c.call_id or ''}\x1f{c.answer is not None}" for c in m.tool_uses)
    return "".join(out).encode("utf-8", "surrogatepass")


def _minted(prefix: str, *parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return prefix + digest


def answer_id(agent_wire: str, digest: str) -> str:
    """The answer's own id in the agent's wire (``msg_...``, ``chatcmpl-...``, ``resp_...``)."""
    return _minted(rule_of(agent_wire).answer_prefix, digest, "answer")


def agent_call_ids(agent_wire: str, digest: str) -> Callable[[int, str | None, str], str]:
    """``Outbound.call_id`` for an answer of the conversation whose digest is ``digest``: the upstream's
    id where it fits the agent's wire, else one minted from the digest, the index and the name."""
    rule = rule_of(agent_wire)

    def call_id(index: int, upstream: str | None, name: str) -> str:
        if upstream and rule.fits(upstream):
            return upstream
        return _minted(rule.call_prefix, digest, str(index), name, upstream or "")

    return call_id


def own_id(call: ToolCall, wire: str) -> str | None:
    """The id ``wire`` itself gave the call (kept in its provider data by the proxy), or None."""
    data = call.provider_data.get(wire) if call.provider_data else None
    got = data.get("id") if isinstance(data, Mapping) else None
    return got if isinstance(got, str) and got else None


def upstream_ids(h: History, wire: str) -> History:
    """``h`` with each call under the id it goes upstream under (see the module docstring); the wire's
    id policy fits it further when rendered. Calls without an id keep none (the replay derives one)."""
    seen: set[str] = set()
    out: list[Message] = []
    known = _SENT.get(wire)
    if known is None:  # made once per wire (setdefault would build one on every request)
        known = _SENT.setdefault(wire, ByIdentity(4096))
    for m in h.messages:
        if not m.tool_uses:
            out.append(m)
            continue
        wanted, sent = known.get(m, functools.partial(_as_sent, m, wire))
        if seen.isdisjoint(wanted) and len(set(wanted)) == len(wanted):  # no id taken twice: as it is
            seen.update(wanted)
            out.append(sent)
            continue
        calls = []
        for c in m.tool_uses:
            cid = own_id(c, wire) or c.call_id
            if cid is not None:
                cid = _unique(cid, seen)
            calls.append(c if cid == c.call_id else replace(c, call_id=cid))
        out.append(_with_calls(m, calls))
    return replace(h, messages=tuple(out))


#: Per upstream wire, each message's ids as it would go upstream alone and the message under them (the
#: read memo gives a conversation's messages again: design 53).
_SENT: dict[str, ByIdentity[tuple[tuple[str, ...], Message]]] = {}


def _as_sent(m: Message, wire: str) -> tuple[tuple[str, ...], Message]:
    cids = [own_id(c, wire) or c.call_id for c in m.tool_uses]
    calls = [
        c if cid == c.call_id else replace(c, call_id=cid) for c, cid in zip(m.tool_uses, cids, strict=True)
    ]
    return tuple(cid for cid in cids if cid is not None), _with_calls(m, calls)


def _with_calls(m: Message, calls: list[ToolCall]) -> Message:
    # unchanged, the same message (an incremental render knows it by its identity, design 53)
    same = all(a is b for a, b in zip(calls, m.tool_uses, strict=True))
    return m if same else replace(m, tool_uses=tuple(calls))


def _unique(cid: str, seen: set[str]) -> str:
    got, n = cid, 2
    while got in seen:
        got, n = f"{cid}_{n}", n + 1
    seen.add(got)
    return got


__all__ = [
    "STRICT",
    "agent_call_ids",
    "answer_id",
    "history_digest",
    "own_id",
    "rule_of",
    "upstream_ids",
]

"""The agent's request merged with the stored conversation it continues (design 48), and the opaque
reasoning tokens it sends back resolved from the store (design 50).

The store is the memory of what the agent's wire cannot carry: for a reply the store holds, its steps
(reasoning with its issuer and data, server-tool pieces) and its calls' provider data are the store's,
whatever the agent sent back of them (Claude Code drops Kimi's ``reasoning_content``; a Chat client has no
place for a Gemini ``thoughtSignature``). The agent's own inputs and answers stay the agent's.

Reasoning the agent sends that carries one of our tokens (:func:`toolreplay.wires.bridge.is_token` on an
Anthropic signature, a Responses ``encrypted_content``, a Gemini ``thoughtSignature`` in its base64
form) stands for a
stored piece: it is resolved to that piece (the token is :func:`~toolreplay.wires.bridge.seal` of the
piece and its issuer, computed again over the stored pieces), and a token that names no stored piece is
dropped with a note. A token is never forwarded. Any other reasoning keeps the issuer the agent's wire
names for it, and the replay's audience rule (design 17) sends it only there.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from toolreplay._proxy.matching import message_key, unseen
from toolreplay.model import History, Issuer, Message, Piece, Reasoning, Step, Text, ToolCall
from toolreplay.wires.bounded import ByIdentity, shared_prefix
from toolreplay.wires.bridge import is_token, seal, token_of

#: A stored piece a token resolves to, with the issuer of its step.
Resolved = tuple[Reasoning, Issuer]


def has_token(value: Any) -> bool:
    """Whether ``value`` (provider data, at any depth) holds a token of ours."""
    if is_token(value):
        return True
    if isinstance(value, Mapping):
        return any(has_token(v) for v in cast(Mapping[str, Any], value).values())
    if isinstance(value, list):
        return any(has_token(v) for v in value)
    return False


def tokens_of(value: Any) -> list[str]:
    """The tokens of ours in ``value`` (provider data), in order, each as sealed (a Gemini agent sends
    its base64 form back)."""
    token = token_of(value)
    if token is not None:
        return [token]
    out: list[str] = []
    if isinstance(value, Mapping):
        for v in cast(Mapping[str, Any], value).values():
            out += tokens_of(v)
    elif isinstance(value, list):
        for v in value:
            out += tokens_of(v)
    return out


def without_tokens(data: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """Provider data with every field that holds a token of ours taken out (a wire left empty goes)."""
    if not data or not has_token(data):
        return data
    out: dict[str, Any] = {}
    for wire, d in data.items():
        if is_token(d):
            continue
        if isinstance(d, Mapping):
            kept = {k: v for k, v in cast(Mapping[str, Any], d).items() if not has_token(v)}
            if kept:
                out[wire] = kept
        elif not has_token(d):
            out[wire] = d
    return out or None


class Tokens:
    """The tokens the stored conversation's pieces were shown under, each to its piece: sealed again
    only when the request carries a token at all (most requests carry none, and a long conversation
    holds hundreds of pieces)."""

    __slots__ = ("_issuer", "_pieces", "_stored")

    def __init__(self, stored: History | None, issuer: Issuer) -> None:
        self._stored = stored
        self._issuer = issuer
        self._pieces: dict[str, Resolved] | None = None

    @property
    def pieces(self) -> Mapping[str, Resolved]:
        if self._pieces is None:
            self._pieces = _sealed(self._stored, self._issuer)
        return self._pieces

    def resolve(self, token: str) -> Resolved | None:
        return self.pieces.get(token)

    @property
    def used(self) -> bool:
        """Whether a token was resolved against the stored pieces (a merge then depends on them)."""
        return self._pieces is not None


def stored_tokens(stored: History | None, issuer: Issuer) -> Tokens:
    """The tokens a piece of ``stored`` can have been shown under (see :func:`_sealed`)."""
    return Tokens(stored, issuer)


def _sealed(stored: History | None, issuer: Issuer) -> dict[str, Resolved]:
    """Every token a piece of ``stored`` can have been shown under: sealed with its step's issuer as
    recorded, and with the model the request named (``issuer``'s) on the same wire and host, since a
    provider may report a dated snapshot of the model the request named."""
    out: dict[str, Resolved] = {}
    for m in stored.messages if stored is not None else ():
        for s in m.steps:
            if s.issuer is None:
                continue
            named = Issuer(s.issuer.wire, s.issuer.host, issuer.model)
            sealers = [s.issuer] if named == s.issuer or (s.issuer.wire, s.issuer.host) != (
                issuer.wire, issuer.host) else [s.issuer, named]  # fmt: skip
            for p in s.reasoning:
                for who in sealers:
                    out.setdefault(seal(who, p), (p, s.issuer))
    return out


def aligned(inbound: Sequence[Message], stored: History | None) -> list[Message]:
    """The stored messages the request's first messages are (compared as the proxy's matching does: a
    reply by its role alone, other messages by role and words), in order, up to the first difference."""
    if stored is None:
        return []
    seen = [m for m in stored.messages if not unseen(m)]
    out: list[Message] = []
    for a, s in zip(inbound, seen, strict=False):
        if not _same(a, s):
            break
        out.append(s)
    return out


def _same(a: Message, s: Message) -> bool:
    if a.role != s.role:
        return False
    # a reply by its role alone; the same words and parts need no folding (a long conversation's big
    # tool answers and prompts): only where they differ is the matching's key asked
    if a.role == "assistant" or (a.text == s.text and a.parts == s.parts):
        return True
    return message_key(a) == message_key(s)


def merge(history: History, stored: History | None, issuer: Issuer, notes: list[str]) -> History:
    """``history`` (the agent's request) with what the store holds of its replies (module docstring).
    Taken up from the conversation's last merge (:data:`_MERGES`) over the messages and stored replies it
    shares with it, the same objects, as far as that merge resolved no token and named nothing: those
    merge from their own objects alone."""
    tokens = stored_tokens(stored, issuer)
    msgs = history.messages
    known = aligned(msgs, stored)
    held = _MERGES.peek(msgs[0]) if msgs else None
    k = 0
    if held is not None and held.issuer == issuer:
        # the stored replies bound it where they differ, not where both end (a new conversation has none)
        same_known = shared_prefix(held.known, known)
        ended = same_known == len(held.known) == len(known)
        k = min(held.plain, shared_prefix(held.messages, msgs), len(msgs) if ended else same_known)
    out = list(held.out[:k]) if held is not None and k else []
    plain = k
    for i in range(k, len(msgs)):
        m, before = msgs[i], len(notes)
        if m.role != "assistant":
            out.append(m)
        elif i < len(known):
            out.append(stored_reply(m, known[i], tokens, notes))
        else:
            out.append(resolved_reply(m, tokens, notes))
        if plain == i and len(notes) == before and not tokens.used:
            plain += 1  # merged of its own objects alone (no token resolved so far, nothing named)
    if msgs:
        _MERGES.put(msgs[0], _Merge(msgs, tuple(known), tuple(out), plain, issuer))
    return replace(history, messages=tuple(out))


@dataclass(frozen=True, slots=True)
class _Merge:
    """A conversation's last merge: the request's messages, the stored replies aligned with them, what
    they merged to, and how many leading messages merged without a token of ours and without a note
    (merged again from the same objects, the same messages)."""

    messages: tuple[Message, ...]
    known: tuple[Message, ...]
    out: tuple[Message, ...]
    plain: int
    issuer: Issuer


#: Per conversation (by its first message): its last merge (design 62: every request of it carries its
#: messages again, the read memo's objects; the routed path's memory gives its stored replies again).
_MERGES: ByIdentity[_Merge] = ByIdentity(64)


def _stored_call(c: ToolCall, k: int, stored: Message) -> ToolCall | None:
    """The stored call the agent's call ``k`` is: the same id, else the same position and name."""
    if c.call_id:
        for s in stored.tool_uses:
            if s.call_id == c.call_id:
                return s
    if k < len(stored.tool_uses) and stored.tool_uses[k].name == c.name:
        return stored.tool_uses[k]
    return None


#: A reply merged with the stored reply it is, by the agent's reply, while that stored reply is the same
#: object (the read memo gives an unchanged reply again, the routed path's memory an unchanged stored one,
#: design 53-54): the same merged reply again, which the render cache knows by identity.
_MERGED: ByIdentity[tuple[Message, Message]] = ByIdentity(4096)


def stored_reply(m: Message, s: Message, tokens: Tokens, notes: list[str]) -> Message:
    """The agent's reply ``m`` with the stored reply ``s``'s steps and its calls' provider data, where the
    two hold the same calls; the agent's own inputs, answers and words stay."""
    if _renamed(m, s):
        return m  # a new conversation's remembered state holds the request's own reply under an id
    held = _MERGED.peek(m)
    if held is not None and held[0] is s:
        return held[1]
    calls: list[ToolCall] = []
    matched = 0
    for k, c in enumerate(m.tool_uses):
        sc = _stored_call(c, k, s)
        if sc is None:
            calls.append(replace(c, provider_data=without_tokens(c.provider_data)))
        else:
            matched += 1
            # a call the agent's wire sends without an id (Gemini's) is the stored one, under its id; the
            # stored call that is the agent's own (a new conversation's state holds the request's calls)
            # is taken as it is
            calls.append(
                c if sc is c else replace(c, call_id=c.call_id or sc.call_id, provider_data=sc.provider_data)
            )
    same = matched == len(m.tool_uses) and len(s.tool_uses) == len(m.tool_uses)
    if same and (s.steps or not m.steps):  # of ``m`` and ``s`` alone (no token resolved, no note): kept
        data = s.provider_data or None
        unchanged = (
            s.steps is m.steps and data is m.provider_data and all(map(operator.is_, calls, m.tool_uses))
        )
        out = m if unchanged else replace(m, tool_uses=tuple(calls), steps=s.steps, provider_data=data)
        _MERGED.put(m, (s, out))
        return out
    # the agent's reply holds other calls than the stored one: its own steps, tokens resolved
    return resolved_reply(replace(m, tool_uses=tuple(calls)), tokens, notes)


def _renamed(m: Message, s: Message) -> bool:
    """Whether ``s`` is ``m`` itself but for its id: its merge is ``m`` (each call its own stored call,
    no id taken twice; the steps and the provider data the same objects)."""
    if s.tool_uses is not m.tool_uses or s.steps is not m.steps or s.provider_data is not m.provider_data:
        return False
    if m.provider_data is not None and not m.provider_data:
        return False  # an empty mapping is merged to None
    if len(m.tool_uses) < 2:
        return True
    ids = [c.call_id for c in m.tool_uses if c.call_id]
    return len(set(ids)) == len(ids)


def resolved_reply(m: Message, tokens: Tokens, notes: list[str]) -> Message:
    """A reply the store does not hold: each token of ours resolved to its stored piece (its step then
    the piece's issuer's), each token that names none dropped with a note; other pieces as they are."""
    if not m.steps and not any(has_token(c.provider_data) for c in m.tool_uses):
        return m
    if not _holds(m):  # nothing to resolve (most replies): kept as it is
        return m
    steps = tuple(
        _resolved_step(s, made, f"message {m.id}: step {k + 1}", tokens, notes)
        for k, (s, made) in enumerate(m.step_calls())
    )
    calls = tuple(
        replace(c, provider_data=without_tokens(c.provider_data)) if has_token(c.provider_data) else c
        for c in m.tool_uses
    )
    return replace(m, steps=steps, tool_uses=calls, provider_data=without_tokens(m.provider_data))


#: Whether a reply holds a token, by the reply (design 53: the read memo gives an unchanged reply again).
_HOLDS: ByIdentity[bool] = ByIdentity(4096)


def _holds(m: Message) -> bool:
    return _HOLDS.get(m, lambda: _holds_token(m))


def _holds_token(m: Message) -> bool:
    """Whether a reply holds a token of ours anywhere the resolution looks (without, it comes out equal)."""
    return (
        has_token(m.provider_data)
        or any(has_token(c.provider_data) for c in m.tool_uses)
        or any(has_token(p.data) for s in m.steps for p in s.said)
    )


_DROPPED = "a reasoning token of ours that names no stored piece: dropped (design 50)"


def _resolved(found: Sequence[str], tokens: Tokens, where: str, notes: list[str]) -> Resolved | None:
    got = next((r for t in found if (r := tokens.resolve(t)) is not None), None)
    if got is None:
        notes.append(f"{where}: {_DROPPED}")
    return got


def _resolved_step(s: Step, calls: Sequence[ToolCall], where: str, tokens: Tokens, notes: list[str]) -> Step:
    """One step with its tokens resolved: a piece carrying one becomes the stored piece; a token on its
    calls (Gemini's ``thoughtSignature`` stands for the step's reasoning) brings the stored piece in."""
    said, issuer = _resolved_pieces(s.said, where, tokens, notes)
    on_calls = [t for c in calls for t in tokens_of(c.provider_data)]
    if on_calls and issuer is None and (got := _resolved(on_calls, tokens, where, notes)) is not None:
        said.insert(0, got[0])
        issuer = got[1]
    if issuer is None:
        return replace(s, said=tuple(said))
    return replace(s, said=_issuers_own(said, issuer, where, tokens, notes), issuer=issuer)


def _resolved_pieces(
    pieces: Sequence[Piece], where: str, tokens: Tokens, notes: list[str]
) -> tuple[list[Piece], Issuer | None]:
    """The pieces with each token resolved to its stored piece (words kept of a text whose token names
    nothing), and the issuer of the last piece resolved."""
    said: list[Piece] = []
    issuer: Issuer | None = None
    for p in pieces:
        found = tokens_of(p.data)
        if not found:
            said.append(p)
        elif (got := _resolved(found, tokens, where, notes)) is not None:
            said.append(got[0])
            issuer = got[1]
        elif isinstance(p, Text) and p.text:
            said.append(Text(p.text))
    return said, issuer


def _issuers_own(
    said: Sequence[Piece], issuer: Issuer, where: str, tokens: Tokens, notes: list[str]
) -> tuple[Piece, ...]:
    """The step goes back as its issuer's: pieces of reasoning the agent's wire named for another issuer
    stay out (named), and a stored piece brought in twice is kept once."""
    others = [p for p in said if isinstance(p, Reasoning) and not _stored(p, tokens)]
    if others:
        notes.append(f"{where}: {len(others)} piece(s) of reasoning beside a stored piece, not of its "
                     f"issuer ({issuer.describe()}): left out")  # fmt: skip
    kept = [p for p in said if not (isinstance(p, Reasoning) and not _stored(p, tokens))]
    return tuple(p for k, p in enumerate(kept) if not any(p is q for q in kept[:k]))


def _stored(p: Reasoning, tokens: Tokens) -> bool:
    return any(p is r for r, _ in tokens.pieces.values())


__all__ = [
    "Tokens",
    "aligned",
    "has_token",
    "merge",
    "resolved_reply",
    "stored_reply",
    "stored_tokens",
    "tokens_of",
    "without_tokens",
]

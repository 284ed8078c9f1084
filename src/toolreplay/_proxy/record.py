"""Writing one exchange into the store: find the conversation it continues, append what is new, store the
answer as the reply (a new one, or the next step of the reply in progress) with its issuer and usage.

Runs on the recorder's thread only (design 44), never on the event loop that serves the agents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolreplay._history import History, Message, Status, Step, ToolCall
from toolreplay._proxy.exchange import AnswerRead, Exchange
from toolreplay._proxy.live_audit import LiveAudit, audit
from toolreplay._proxy.matching import Continued, find_continued, head_of, unseen
from toolreplay._steps import Issuer, Text, closing_pieces, host_of
from toolreplay.wires.reply import Reply, usage_json

if TYPE_CHECKING:
    from toolreplay._store import Store

_PREFIX = {"system": "s", "user": "u", "assistant": "a"}


@dataclass(frozen=True, slots=True)
class Recorded:
    """Where an exchange went: the conversation, the reply written (None: no answer to keep), the audit."""

    conversation_id: str
    reply_id: str | None
    audit: LiveAudit
    new: bool


def issuer_of(ex: Exchange, reply: Reply | None) -> Issuer:
    """Who made the answer (design 17): the wire, the upstream's host, the model the provider reported
    (a translated answer's: the routed vessel's wire and host)."""
    reported = reply.model if reply is not None else None
    if ex.issuer is not None:
        return Issuer(ex.issuer.wire, ex.issuer.host, reported or ex.issuer.model)
    return Issuer(ex.wire, host_of(ex.upstream), reported or ex.model or "")


def upstream_label(ex: Exchange) -> str:
    wire = ex.issuer.wire if ex.issuer is not None else ex.wire
    return f"{wire} {urlsplit(ex.upstream).netloc or ex.upstream}"


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _new_id(store: Store, heads: Sequence[str]) -> str:
    base = f"proxy-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{(heads[-1] if heads else '0')[:6]}"
    cid, n = base, 2
    while store.exists(cid):
        cid, n = f"{base}-{n}", n + 1
    return cid


def _fresh_ids(store: Store, cid: str, roles: Sequence[str], start: int) -> list[str]:
    """Ids for messages appended at positions ``start``, ``start + 1``... (``u7``, ``a8``), the next free."""
    wanted = [f"{_PREFIX[r]}{start + i + 1}" for i, r in enumerate(roles)]
    taken = set(store.positions(cid, wanted)) if wanted else set()
    out = []
    for w in wanted:
        got, k = w, 2
        while got in taken:
            got, k = f"{w}-{k}", k + 1
        taken.add(got)
        out.append(got)
    return out


def _answer_step(reply: Reply, issuer: Issuer) -> tuple[Step | None, str]:
    """The answer as a step of its reply, and its final words (a reply's words after its last call)."""
    said = reply.said or ((Text(reply.text),) if reply.text else ())
    if reply.calls:
        return Step(tuple(said), len(reply.calls), issuer), ""
    closing = closing_pieces(said)
    return (Step(closing, 0, issuer) if closing else None), reply.text


def _calls(reply: Reply) -> list[ToolCall]:
    return [ToolCall(c.name, c.input, None, c.call_id, False, c.provider_data) for c in reply.calls]


def _fill_answers(store: Store, cid: str, stored: Message, sent: Message) -> None:
    """The answers the request now carries for the stored reply's calls, filled in."""
    for old, new in zip(stored.tool_uses, sent.tool_uses, strict=False):
        if old.answer is None and new.answer is not None:
            store.record_call(
                cid, stored.id, replace(old, answer=new.answer, is_error=new.is_error, parts=new.parts)
            )


class Writer:
    """Records exchanges into one store (see the module docstring)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def record(self, ex: Exchange, request: History, answer: AnswerRead | None) -> Recorded:
        store = self.store
        held = find_continued(store, request.messages, ex.session)
        heads, cont, stored = held.heads, held.continued, held.stored
        issuer = issuer_of(ex, answer.reply if answer is not None else None)
        # a translated request is the proxy's own rendering (design 47): the audit is of agents' bodies
        found = LiveAudit() if ex.history is not None else audit(
            ex.body if isinstance(ex.body, Mapping) else {},
            ex.wire,
            request,
            stored,
            cont.holds if cont else 0,
            issuer,
        )  # fmt: skip
        if cont is None or stored is None:
            cid, messages = self._start(ex, request, heads)
            new = True
        else:
            cid, messages = cont.conversation_id, self._extend(stored, cont, request)
            new = False
        reply_id = None
        if answer is not None and (answer.reply is not None or ex.cut):
            reply_id, messages = self._answer(cid, messages, ex, answer, issuer)
            if ex.answer_id and answer.reply is not None:  # the agent may name it next time (design 56)
                store.set_answer_id(cid, reply_id, ex.answer_id)
        store.set_head(cid, head_of(messages), ex.session)
        return Recorded(cid, reply_id, found, new)

    def _start(self, ex: Exchange, request: History, heads: Sequence[str]) -> tuple[str, list[Message]]:
        store = self.store
        cid = _new_id(store, heads)
        linked = store.session_conversations(ex.session)[:1] if ex.session else []
        messages = [
            replace(m, id=f"{_PREFIX[m.role]}{i + 1}", created_at=m.created_at or _stamp())
            for i, m in enumerate(request.messages)
        ]
        origin: dict[str, Any] = {"agent": ex.agent, "wire": ex.wire, "upstream": upstream_label(ex)}
        if ex.route:
            origin["route"] = ex.route
        if linked:
            origin["from"] = linked[0]  # the agent rewrote that one's history (compacted or edited it)
        store.set_origin(cid, origin, session=ex.session, head=head_of(messages))
        if messages:
            store.import_history(History(cid, tuple(messages), request.tools))
        return cid, messages

    def _extend(self, stored: History, cont: Continued, request: History) -> list[Message]:
        """The stored messages the agent sees, with the answers the request adds and its new messages."""
        store, cid = self.store, cont.conversation_id
        seen = [m for m in stored.messages if not unseen(m)]
        if cont.holds:
            last, sent = seen[cont.holds - 1], request.messages[cont.holds - 1]
            if last.role == "assistant" and last.status != "complete" and sent.role == "assistant":
                _fill_answers(store, cid, last, sent)
                seen[cont.holds - 1] = replace(last, tool_uses=tuple(
                    replace(o, answer=n.answer) if o.answer is None else o
                    for o, n in zip(last.tool_uses, sent.tool_uses, strict=False)
                ) + last.tool_uses[len(sent.tool_uses):])  # fmt: skip
        fresh = list(request.messages[cont.holds :])
        ids = _fresh_ids(store, cid, [m.role for m in fresh], store.counts(cid)[0])
        for mid, m in zip(ids, fresh, strict=True):
            m = replace(m, id=mid, created_at=m.created_at or _stamp())
            store.append_message(cid, m)
            seen.append(m)
        return seen

    def _answer(
        self, cid: str, messages: list[Message], ex: Exchange, answer: AnswerRead, issuer: Issuer
    ) -> tuple[str, list[Message]]:
        """Store the answer: the next step of the reply in progress the request ends with, or a new reply."""
        store = self.store
        last = messages[-1] if messages else None
        extend = last if last is not None and last.role == "assistant" and last.status != "complete" else None
        if extend is not None:
            rid = extend.id
        else:
            rid = _fresh_ids(store, cid, ["assistant"], store.counts(cid)[0])[0]
            store.begin_reply(cid, rid, vessel=None, created_at=_stamp())
        meta: dict[str, Any] = {
            "proxy": {"wire": ex.wire, "upstream": upstream_label(ex)},
            "issuer": issuer.as_json(),
        }
        if ex.route:
            meta["proxy"]["route"] = ex.route
            if ex.notes:
                meta["proxy"]["notes"] = list(ex.notes)
        reply = answer.reply
        if reply is None:
            done = _interrupted(rid, extend, ex, answer, meta, issuer)
        else:
            done = _answered(rid, extend, reply, issuer, meta)
        for c in done.tool_uses[len(extend.tool_uses) if extend is not None else 0 :]:
            store.record_call(cid, rid, c)
        store.finish_reply(
            cid, rid, text=done.text, status=done.status, provider_data=done.provider_data, meta=meta,
            steps=done.steps,
        )  # fmt: skip
        if reply is not None and usage_json(reply.usage):  # step n of the reply: the n-th answer it took
            before = len(extend.step_calls()) if extend is not None else 0
            store.record_usage(cid, rid, before + 1, reply.usage, reply.model)
        return rid, [*messages[:-1], done] if extend is not None else [*messages, done]


def _interrupted(
    rid: str, extend: Message | None, ex: Exchange, answer: AnswerRead, meta: dict[str, Any], issuer: Issuer
) -> Message:
    """The reply of an answer that broke off: what the agent saw kept (the calls the upstream finished
    before it broke off among it), the reply marked interrupted (and, when it was a reply of its own, one
    the agent never saw whole: no key, design 45)."""
    meta["interrupted"] = ex.cut or answer.problem or "the answer ended early"
    if extend is None:
        meta["cut"] = True
    partial = answer.partial
    if partial is not None and partial.calls:
        return replace(_answered(rid, extend, partial, issuer, meta), status="interrupted")
    if extend is None:
        return Message(rid, "assistant", answer.seen_text, status="interrupted", meta=meta)
    steps = _kept([s for s, _ in extend.step_calls()], len(extend.tool_uses))
    return replace(extend, status="interrupted", meta=meta, steps=steps)


def _answered(
    rid: str, extend: Message | None, reply: Reply, issuer: Issuer, meta: dict[str, Any]
) -> Message:
    """The reply with this answer: a new one, or the reply in progress with the answer as its next step."""
    step, text = _answer_step(reply, issuer)
    before = [s for s, _ in extend.step_calls()] if extend is not None else []
    calls = (*(extend.tool_uses if extend is not None else ()), *_calls(reply))
    steps = [*before, *([step] if step is not None else [])]
    if usage_json(reply.usage):
        meta["usage"] = usage_json(reply.usage)
    if reply.model:
        meta["model"] = reply.model
    pdata = _merged(extend.provider_data if extend is not None else None, reply.provider_data)
    status: Status = "in_progress" if reply.calls else "complete"
    return Message(rid, "assistant", text, calls, provider_data=pdata, status=status, meta=meta,
                   steps=_kept(steps, len(calls)))  # fmt: skip


def _kept(steps: list[Step], n_calls: int) -> tuple[Step, ...]:
    """The step record, when it records anything (words, reasoning, an issuer) and holds every call."""
    if any(s.said or s.issuer for s in steps) and sum(s.calls for s in steps) == n_calls:
        return tuple(steps)
    return ()


def _merged(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    from toolreplay._loop.recorder import merge_provider_data

    return merge_provider_data(a, b)


__all__ = ["Recorded", "Writer", "issuer_of", "upstream_label"]

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
from toolreplay._proxy.matching import (
    Continued,
    Found,
    Known,
    find_continued,
    head_of,
    last_head,
    next_head,
    unseen,
)
from toolreplay._steps import Issuer, Text, closing_pieces, host_of
from toolreplay._store.rows import input_text
from toolreplay.wires.bounded import Bounded
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
    head: str = ""
    """The conversation's head once written."""
    base: str | None = None
    """The head it had before (None: a new conversation)."""


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
    """``proxy-<time>-<head>``, or the first of ``...-2``, ``...-3``... no conversation has: the
    candidates asked for in one query, 16 then twice as many each time (dozens of conversations a
    second, each asked one query at a time, cost 1.5 ms of an exchange)."""
    base = f"proxy-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{(heads[-1] if heads else '0')[:6]}"
    start, size = 0, 16
    while True:
        batch = [f"{base}-{i + 1}" if i else base for i in range(start, start + size)]
        taken = store.existing(batch)
        free = next((cid for cid in batch if cid not in taken), None)
        if free is not None:
            return free
        start, size = start + size, size * 2


def _fresh_ids(store: Store, cid: str, roles: Sequence[str], start: int) -> list[str]:
    """Ids for messages appended at positions ``start``, ``start + 1``... (``u7``, ``a8``), the next free."""
    wanted = _wanted(roles, start)
    return _free(wanted, set(store.positions(cid, wanted)) if wanted else set())


def _wanted(roles: Sequence[str], start: int) -> list[str]:
    return [f"{_PREFIX[r]}{start + i + 1}" for i, r in enumerate(roles)]


def _free(wanted: Sequence[str], taken: set[str]) -> list[str]:
    """Each of ``wanted``, or the first of ``w-2``, ``w-3``... not ``taken`` (each taken once given)."""
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


def collapses(calls: Sequence[ToolCall]) -> bool:
    """Whether :meth:`Store.record_call`, given ``calls`` one by one on a new reply, would take one for
    the answer of another (the latest call of its id, or an id-less latest call, unanswered, of the same
    name and input): then they are written so, not as one message."""
    for i, c in enumerate(calls):
        if c.call_id is not None:
            prev = next((p for p in reversed(calls[:i]) if p.call_id == c.call_id), None)
        else:
            prev = calls[i - 1] if i and calls[i - 1].call_id is None else None
        # the store compares the inputs' stored text (``rows.input_text``)
        if (
            prev is not None
            and prev.answer is None
            and prev.name == c.name
            and input_text(prev) == input_text(c)
        ):
            return True
    return False


class Written:
    """What the writer left in the conversations it wrote lately (design 54): each one's state as the
    store will load it (:func:`recorded_state`), so that the next exchange continuing it is written
    without loading it back. A state is recalled only while the store holds the conversation as this
    writer left it: the same head and the same time of the proxy's last write (another process, or this
    one, writing it again moves that), and as many messages and calls (a writer other than the proxy)."""

    LIMIT = 16

    def __init__(self) -> None:
        self._held: Bounded[tuple[tuple[str, str], tuple[int, int], History]] = Bounded(self.LIMIT)

    def recall(self, store: Store, cid: str) -> History | None:
        got = self._held.pop(cid)
        if got is None:
            return None
        mark, counts, state = got
        if store.written(cid) != mark or store.counts(cid) != counts:
            return None
        return state

    def keep(self, store: Store, cid: str, state: History) -> None:
        """``state``, worked out for the exchange just written into ``cid`` (inside its transaction),
        kept when the store holds as many messages and calls (else it is not foreseen here)."""
        mark = store.written(cid)
        counts = (len(state.messages), sum(len(m.tool_uses) for m in state.messages))
        if mark is None or store.counts(cid) != counts:
            return
        self._held.put(cid, (mark, counts, replace(state, id=cid)), 1)


class Writer:
    """Records exchanges into one store (see the module docstring)."""

    def __init__(self, store: Store, written: Written | None = None) -> None:
        self.store = store
        self.written = written

    def record(
        self, ex: Exchange, request: History, answer: AnswerRead | None, known: Known | None = None
    ) -> Recorded:
        store, mem = self.store, self.written
        recall = (lambda cid: mem.recall(store, cid)) if mem is not None else None
        held = find_continued(store, request.messages, ex.session, ex.heads, known, recall)
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
        cid, messages, cont, stored = self._into(ex, request, held)
        new = cont is None
        reply_id = None
        if answer is not None and (answer.reply is not None or ex.cut):
            reply_id, messages = self._answer(cid, messages, ex, answer, issuer)
            if ex.answer_id and answer.reply is not None:  # the agent may name it next time (design 55)
                store.set_answer_id(cid, reply_id, ex.answer_id, len(messages[-1].step_calls()))
        head = _head(heads, messages, len(request.messages), _aligned(stored, cont))
        store.set_head(cid, head, ex.session)
        if mem is not None:
            mem.keep(store, cid, recorded_state(None if new else stored, cont.holds if cont else 0, request,
                                                ex, answer))  # fmt: skip
        return Recorded(cid, reply_id, found, new, head, heads[cont.holds - 1] if cont else None)

    def _into(
        self, ex: Exchange, request: History, held: Found
    ) -> tuple[str, list[Message], Continued | None, History | None]:
        """The conversation the exchange goes into, its messages, and what of it was stored: the one it
        continues, else a new one (a branch of the one it went back in, design 55)."""
        cont, stored = held.continued, held.stored
        if cont is not None and stored is not None and not _went_back(ex, stored, cont, request):
            return cont.conversation_id, self._extend(stored, cont, request), cont, stored
        branched = cont.conversation_id if cont is not None and stored is not None else None
        cid, messages = self._start(ex, request, held.heads, branched)
        return cid, messages, None, None

    def _start(
        self, ex: Exchange, request: History, heads: Sequence[str], branched: str | None = None
    ) -> tuple[str, list[Message]]:
        # the messages are the request's under new ids: their head is the request's (``heads[-1]``)
        store = self.store
        cid = _new_id(store, heads)
        linked = [branched] if branched else store.session_conversations(ex.session)[:1] if ex.session else []
        messages = [
            replace(m, id=f"{_PREFIX[m.role]}{i + 1}", created_at=m.created_at or _stamp())
            for i, m in enumerate(request.messages)
        ]
        origin: dict[str, Any] = {"agent": ex.agent, "wire": ex.wire, "upstream": upstream_label(ex)}
        if ex.route:
            origin["route"] = ex.route
        if linked:
            origin["from"] = linked[0]  # the agent rewrote that one's history (compacted or edited it)
        store.set_origin(cid, origin, session=ex.session, head=last_head(heads))
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
        extend = _in_progress(messages)
        rid = (
            extend.id
            if extend is not None
            else _fresh_ids(store, cid, ["assistant"], store.counts(cid)[0])[0]
        )
        reply = answer.reply
        done = reply_message(rid, extend, ex, answer, issuer)
        meta = dict(done.meta or {})
        if extend is None and not collapses(done.tool_uses):  # a new reply: one row and its calls at once
            store.append_message(cid, replace(done, meta=meta, created_at=_stamp()))
        else:  # as a live turn writes it: begun, its calls, finished (the same rows, a statement each)
            if extend is None:
                store.begin_reply(cid, rid, vessel=None, created_at=_stamp())
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


def _went_back(ex: Exchange, stored: History, cont: Continued, request: History) -> bool:
    """A translated request whose last reply it continues has fewer steps than the stored reply: it goes
    back to an earlier answer of it (Responses' ``previous_response_id`` naming one a later step
    superseded, design 55) and is a branch of its own, not the next turn of the stored reply: fewer steps,
    or a reply in progress where the stored one has ended."""
    if ex.history is None or not cont.holds:
        return False
    seen = [m for m in stored.messages if not unseen(m)]
    last, sent = seen[cont.holds - 1], request.messages[cont.holds - 1]
    if not last.role == sent.role == "assistant":
        return False
    fewer = len(sent.step_calls()) < len(last.step_calls())
    return fewer or (last.status == "complete" and sent.status == "in_progress")  # before its last words


def recorded_state(
    stored: History | None, holds: int, request: History, ex: Exchange, answer: AnswerRead | None
) -> History:
    """What the store will hold of the conversation once :meth:`Writer.record` has written this exchange
    over ``stored`` (None: a new conversation), continued at ``holds``, as :meth:`Store.load` gives it
    back, but for the times written (the routed path's memory, design 54). Pure: the same steps as the
    writer, on the messages in hand in place of the store's rows."""
    if stored is None:
        every = [replace(m, id=f"{_PREFIX[m.role]}{i + 1}") for i, m in enumerate(request.messages)]
        seen = list(range(len(every)))
    else:
        every = list(stored.messages)
        seen = [i for i, m in enumerate(every) if not unseen(m)]
        if holds and every[seen[holds - 1]].role == "assistant":
            at, sent = seen[holds - 1], request.messages[holds - 1]
            if every[at].status != "complete" and sent.role == "assistant":
                every[at] = replace(every[at], tool_uses=_filled(every[at], sent))
        fresh = request.messages[holds:]
        ids = _free(_wanted([m.role for m in fresh], len(every)), {m.id for m in every})
        for mid, m in zip(ids, fresh, strict=True):
            seen.append(len(every))
            every.append(replace(m, id=mid))
    if answer is not None and (answer.reply is not None or ex.cut):
        _with_answer(every, seen, ex, answer)
    tools = stored.tools if stored is not None else request.tools
    return History(stored.id if stored is not None else "", tuple(every), tools)


def _with_answer(every: list[Message], seen: list[int], ex: Exchange, answer: AnswerRead) -> None:
    """``every`` (the conversation's messages, ``seen`` the agent's) with the answer as the writer stores
    it: the next step of the reply in progress they end with, or a reply of its own."""
    extend = _in_progress([every[seen[-1]]] if seen else [])
    rid = (
        extend.id
        if extend is not None
        else _free(_wanted(["assistant"], len(every)), {m.id for m in every})[0]
    )
    done = reply_message(rid, extend, ex, answer, issuer_of(ex, answer.reply))
    if extend is None:
        every.append(done)
        return
    every[seen[-1]] = replace(  # its row keeps what finish_reply does not write (as sent, vessel, times)
        extend, text=done.text, tool_uses=done.tool_uses, provider_data=done.provider_data,
        status=done.status, meta=done.meta, steps=done.steps,
    )  # fmt: skip


def _filled(stored: Message, sent: Message) -> tuple[ToolCall, ...]:
    """The stored reply's calls with the answers the request now carries (as :func:`_fill_answers`
    writes them)."""
    return (
        tuple(
            replace(o, answer=n.answer, is_error=n.is_error, parts=n.parts)
            if o.answer is None and n.answer is not None
            else o
            for o, n in zip(stored.tool_uses, sent.tool_uses, strict=False)
        )
        + stored.tool_uses[len(sent.tool_uses) :]
    )


def _in_progress(messages: Sequence[Message]) -> Message | None:
    """The reply in progress the request ends with (its answer is that reply's next step), or None."""
    last = messages[-1] if messages else None
    return last if last is not None and last.role == "assistant" and last.status != "complete" else None


def reply_message(
    rid: str, extend: Message | None, ex: Exchange, answer: AnswerRead, issuer: Issuer
) -> Message:
    """The reply ``rid`` as it is stored with this answer: a new one, or ``extend`` (the reply in progress)
    with the answer as its next step."""
    meta: dict[str, Any] = {
        "proxy": {"wire": ex.wire, "upstream": upstream_label(ex)},
        "issuer": issuer.as_json(),
    }
    if ex.route:
        meta["proxy"]["route"] = ex.route
        if ex.notes:
            meta["proxy"]["notes"] = list(ex.notes)
    if answer.reply is None:
        return _interrupted(rid, extend, ex, answer, meta, issuer)
    return _answered(rid, extend, answer.reply, issuer, meta)


def _aligned(stored: History | None, cont: Continued | None) -> bool:
    """Whether the stored messages the agent sees are the request's first ``holds`` (they are, but for a
    clash of digests): then the messages written have the request's head before the reply."""
    return cont is None or stored is None or sum(not unseen(m) for m in stored.messages) == cont.holds


def _head(heads: Sequence[str], messages: Sequence[Message], n: int, aligned: bool) -> str:
    """The head of ``messages`` (the request's ``n`` and the reply, when one was added), from the
    request's ``heads`` where the first ``n`` are the request's."""
    if not aligned or len(messages) < n:
        return head_of(messages)
    head = last_head(heads)
    for m in messages[n:]:
        head = next_head(head, m)
    return head


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


__all__ = ["Recorded", "Writer", "Written", "issuer_of", "recorded_state", "reply_message", "upstream_label"]

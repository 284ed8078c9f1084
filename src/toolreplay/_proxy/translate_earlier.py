"""Earlier turns a body names by id and the server keeps (design 55: Responses' ``previous_response_id``),
rebuilt from the store for a routed request.

The recorder keeps, with each reply of a translated answer on such a wire, the id the agent was given for
it (``Store.set_answer_id``). A body that names one sends only what is new; the request's history is the
stored conversation up to that reply, the earlier messages the wire carries over (``Earlier.carried``),
then what the body adds: its answers to the reply's open calls (the wire's reader is given those calls,
``Earlier.opened``, so it pairs each answer with its call) and its new messages. The stored conversation,
cut the same way, is what the request continues: its replies' reasoning and signatures go back to their
issuer as on every routed request. An id the store does not hold, or a proxy that keeps no store, gets the
wire's own refusal (``Earlier.unknown``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolreplay.model import History, Message
from toolreplay.wires.contract import Wire
from toolreplay.wires.translation import Earlier

if TYPE_CHECKING:
    from toolreplay._store import Store


class Unanswerable(Exception):
    """The earlier turns a body names cannot be rebuilt: the wire's own refusal (status, body)."""

    def __init__(self, status: int, body: dict[str, Any], why: str) -> None:
        super().__init__(why)
        self.status, self.body = status, body


def earlier_of(wire: Wire) -> Earlier | None:
    return wire.translation.earlier if wire.translation is not None else None


def names_earlier(wire: Wire, body: Mapping[str, Any]) -> bool:
    """Whether ``body`` names an earlier answer of its wire's by id (design 55), to be found in the store."""
    hook = earlier_of(wire)
    return hook is not None and hook.named(body) is not None


def stored_answer(store: Store, answer_id: str) -> History | None:
    """The stored conversation up to and including the reply whose answer was given ``answer_id``, the
    reply as it stood at that answer (an answer its later steps superseded: :func:`as_it_stood`)."""
    found = store.find_answer(answer_id)
    if found is None:
        return None
    cid, mid, steps = found
    h = store.load(cid)
    at = next((i for i, m in enumerate(h.messages) if m.id == mid), None)
    if at is None:
        return None
    reply = h.messages[at] if steps is None else as_it_stood(h.messages[at], steps)
    return replace(h, messages=(*h.messages[:at], reply))


def as_it_stood(reply: Message, steps: int) -> Message:
    """``reply`` as it was when it had taken its first ``steps`` answers: those steps and their calls,
    the last step's calls open (their answers came with a later request), no closing words yet."""
    kept = reply.step_calls()[:steps]
    calls = [c for _step, cs in kept for c in cs]
    last = len(kept[-1][1]) if kept else 0
    opened = [replace(c, answer=None, is_error=False, parts=()) for c in calls[len(calls) - last :]]
    return replace(
        reply,
        text="",
        status="in_progress",
        steps=tuple(step for step, _cs in kept) if reply.steps else (),
        tool_uses=(*calls[: len(calls) - last], *opened),
    )


def _answered(reply: Message, sent: Message) -> Message:
    """The stored reply with the answers the body gives its open calls (paired by call id)."""
    answers = {c.call_id: c for c in sent.tool_uses if c.call_id and c.answer is not None}
    calls = tuple(
        replace(c, answer=a.answer, is_error=a.is_error, parts=a.parts)
        if c.answer is None and (a := answers.get(c.call_id or "")) is not None
        else c
        for c in reply.tool_uses
    )
    return replace(reply, tool_uses=calls)


def rebuilt(
    wire: Wire,
    body: dict[str, Any],
    store: Store | None,
    read: Callable[[dict[str, Any]], History],
    wait: Callable[[], object],
) -> tuple[History, History] | None:
    """(the request's history with its earlier turns, the stored conversation it continues), or None
    when ``body`` names no earlier answer. ``read``: the wire's reader; ``wait``: lets the recorder
    store the answers already given (an answer is looked up again once, after it). Raises
    :class:`Unanswerable` with the wire's refusal."""
    hook = earlier_of(wire)
    answer_id = hook.named(body) if hook is not None else None
    if hook is None or answer_id is None:
        return None
    if store is None:
        why = "toolreplay proxy: not recording (--no-record), so no earlier answer is kept"
        raise Unanswerable(*hook.unknown(answer_id, why), why)
    earlier = stored_answer(store, answer_id)
    if earlier is None:
        wait()  # its answer may have reached the agent a moment before the recorder had it
        earlier = stored_answer(store, answer_id)
    if earlier is None or not earlier.messages:
        raise Unanswerable(*hook.unknown(answer_id, ""), f"no stored answer {answer_id}")
    reply = earlier.messages[-1]
    open_calls = [c for c in reply.tool_uses if c.answer is None and c.call_id]
    request = read(hook.opened(body, open_calls))  # its tools and settings, as the body gives them
    sent = list(request.messages)
    head = [sent.pop(0)] if sent and sent[0].role == "system" else []  # the body's own instructions
    if open_calls and sent and sent[0].role == "assistant":
        reply = _answered(reply, sent.pop(0))
    before = [m for m in earlier.messages[:-1] if hook.carried(m)]
    said = f"the earlier turns {answer_id} names rebuilt from the store ({earlier.id}, up to {reply.id})"
    history = replace(request, messages=(*head, *before, reply, *sent), warnings=(said, *request.warnings))
    return history, replace(earlier, messages=(*head, *before, earlier.messages[-1]))


__all__ = ["Unanswerable", "as_it_stood", "earlier_of", "names_earlier", "rebuilt", "stored_answer"]

"""Neutral deltas written as a Responses stream, as OpenAI's server sends it and Codex CLI and the openai
SDK read it (design 51).

``response.created`` and ``response.in_progress`` open it (the response object with ``output: []`` and
``usage: null``); each item is ``output_item.added``, its deltas, then ``output_item.done``, with one
``output_index`` per item and ``sequence_number`` counting every event from 0. Item ids come from
``Outbound.answer_id`` and the item's index (``msg_``/``rs_``/``fc_``/``ctc_`` + the answer's stem), and a
call's ``call_id`` from ``Outbound.call_id``: both are the same in ``.added``, every delta and ``.done``
(cc-switch #4671 changed the ``call_id`` between them and Codex lost the call). A message is one
``output_text`` part (``content_part.added`` / ``output_text.delta`` / ``.done`` / ``content_part.done``);
reasoning, only when the agent asked for it, is one ``summary_text`` part whose ``encrypted_content`` is
``Outbound.seal(piece)``, never the upstream's own. The stream ends with ``response.completed`` (the whole
object, with the usage), ``response.incomplete`` for ``length`` (``max_output_tokens``) and ``refusal``
(``content_filter``), or ``response.failed``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from toolreplay.model import Reasoning, Usage
from toolreplay.wires.bridge import (
    Begin,
    CallBegin,
    CallDelta,
    CallEnd,
    Delta,
    Event,
    Failed,
    Finish,
    Outbound,
    ReasoningDelta,
    ReasoningEnd,
    TextDelta,
)

_Kind = Literal["message", "reasoning", "function_call", "custom_tool_call"]
_PREFIX = {"message": "msg", "reasoning": "rs", "function_call": "fc", "custom_tool_call": "ctc"}
_UNSAFE = re.compile(r"[^A-Za-z0-9]")
_HIDDEN = "reasoning is not shown: the request did not ask for it (the upstream's reasoning is kept for it)"


def item_id(out: Outbound, kind: str, index: int) -> str:
    """The id of the answer's item ``index``: its kind's prefix, the answer id's stem, the index."""
    stem = _UNSAFE.sub("", out.answer_id.removeprefix("resp_")) or "answer"
    return f"{_PREFIX[kind]}_{stem}_{index}"


def usage_object(usage: Usage) -> dict[str, Any]:
    """Responses ``usage``: cached tokens in ``input_tokens_details``, reasoning tokens unknown (0)."""
    i, o = usage.input_tokens or 0, usage.output_tokens or 0
    return {
        "input_tokens": i,
        "input_tokens_details": {
            "cached_tokens": usage.cached_tokens or 0,
            "cache_write_tokens": usage.cache_write_tokens or 0,
        },
        "output_tokens": o,
        # no wire's neutral usage says how much of the output was reasoning
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": i + o,
    }


def response_object(
    out: Outbound,
    status: str,
    output: list[dict[str, Any]],
    usage: Usage | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """The ``response`` object of each lifecycle event (``fields``: ``error``, ``incomplete_details``)."""
    return {
        "id": out.answer_id,
        "object": "response",
        "created_at": out.created,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "model": out.model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage_object(usage) if usage is not None else None,
        **fields,
    }


@dataclass(slots=True)
class _Open:
    """An item between its ``.added`` and its ``.done``: the item as ``.done`` will give it, what it has
    streamed, whether its part (text, summary) is open."""

    index: int
    item: dict[str, Any]
    streamed: list[str] = field(default_factory=list)
    part: bool = False


@dataclass(slots=True)
class ResponsesWriter:
    out: Outbound
    notes: list[str] = field(default_factory=list)
    _seq: int = 0
    _items: int = 0
    _started: bool = False
    _ended: bool = False
    _output: dict[int, dict[str, Any]] = field(default_factory=dict)
    _current: _Open | None = None
    _calls: dict[int, _Open] = field(default_factory=dict)

    def write(self, delta: Delta) -> list[Event]:
        if self._ended:
            return []
        events = self._start()
        if isinstance(delta, Begin):
            return events
        if isinstance(delta, (ReasoningDelta, ReasoningEnd)) and not self.out.thinking:
            if _HIDDEN not in self.notes:
                self.notes.append(_HIDDEN)
            return events
        return events + self._write(delta)

    def close(self) -> list[Event]:
        if self._ended:
            return []
        return self._start() + self._fail("the upstream's answer ended before it was complete", None)

    def _write(self, delta: Delta) -> list[Event]:
        if isinstance(delta, TextDelta):  # its data (a Gemini signature) is the upstream's: never shown
            return self._text(delta.text) if delta.text else []
        if isinstance(delta, ReasoningDelta):
            return self._reasoning(delta.text)
        if isinstance(delta, ReasoningEnd):
            return self._reasoning_end(delta)
        if isinstance(delta, CallBegin):
            return self._call_begin(delta)
        if isinstance(delta, CallDelta):
            return self._call_delta(delta)
        if isinstance(delta, CallEnd):
            return self._call_end(delta.index)
        if isinstance(delta, Finish):
            return self._finish(delta)
        if isinstance(delta, Failed):
            return self._fail(delta.message, delta.status)
        return []

    # -- events ---------------------------------------------------------------------------------------

    def _ev(self, kind: str, **fields: Any) -> Event:
        event = {"type": kind, **fields, "sequence_number": self._seq}
        self._seq += 1
        return kind, event

    def _start(self) -> list[Event]:
        if self._started:
            return []
        self._started = True
        opening = response_object(self.out, "in_progress", [])
        return [
            self._ev("response.created", response=opening),
            self._ev("response.in_progress", response=opening),
        ]

    def _open(self, kind: _Kind, item: dict[str, Any], added: dict[str, Any]) -> tuple[_Open, Event]:
        index, self._items = self._items, self._items + 1
        full = {"id": item_id(self.out, kind, index), "type": kind, **item}
        opened = _Open(index, full)
        return opened, self._ev("response.output_item.added", output_index=index, item={**full, **added})

    def _done(self, opened: _Open) -> Event:
        self._output[opened.index] = opened.item
        return self._ev("response.output_item.done", output_index=opened.index, item=opened.item)

    # -- text and reasoning -----------------------------------------------------------------------------

    def _text(self, text: str) -> list[Event]:
        events: list[Event] = []
        if self._current is None or self._current.item["type"] != "message":
            events += self._close_current()
            message = {"status": "completed", "role": "assistant", "content": []}
            self._current, added = self._open("message", message, {"status": "in_progress"})
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            events += [added, self._ev("response.content_part.added", **self._at(), part=part)]
        self._current.streamed.append(text)
        return [*events, self._ev("response.output_text.delta", **self._at(), delta=text, logprobs=[])]

    def _reasoning(self, text: str) -> list[Event]:
        events: list[Event] = []
        if self._current is None or self._current.item["type"] != "reasoning":
            events += self._close_current()
            self._current, added = self._open("reasoning", {"summary": []}, {})
            events.append(added)
        current = self._current
        if not text:
            return events
        at = {"item_id": current.item["id"], "output_index": current.index, "summary_index": 0}
        if not current.part:
            current.part = True
            part = {"type": "summary_text", "text": ""}
            events.append(self._ev("response.reasoning_summary_part.added", **at, part=part))
        current.streamed.append(text)
        return [*events, self._ev("response.reasoning_summary_text.delta", **at, delta=text)]

    def _reasoning_end(self, end: ReasoningEnd) -> list[Event]:
        current = self._current
        streamed = "".join(current.streamed) if current and current.item["type"] == "reasoning" else ""
        text = end.text or streamed
        # what an upstream gave only at the end (its whole text) is streamed now, as one delta
        rest = text[len(streamed) :] if text.startswith(streamed) else ""
        events = self._reasoning(rest)
        assert self._current is not None  # _reasoning opened it
        current, self._current = self._current, None
        current.item["encrypted_content"] = self.out.seal(Reasoning(text, end.data))
        if current.part:
            at = {"item_id": current.item["id"], "output_index": current.index, "summary_index": 0}
            part = {"type": "summary_text", "text": text}
            current.item["summary"] = [part]
            events.append(self._ev("response.reasoning_summary_text.done", **at, text=text))
            events.append(self._ev("response.reasoning_summary_part.done", **at, part=part))
        return [*events, self._done(current)]

    def _at(self) -> dict[str, Any]:
        assert self._current is not None
        return {"item_id": self._current.item["id"], "output_index": self._current.index, "content_index": 0}

    def _close_current(self) -> list[Event]:
        current, self._current = self._current, None
        if current is None:
            return []
        if current.item["type"] == "reasoning":  # reasoning that never got its end: closed as it is
            self._current = current
            return self._reasoning_end(ReasoningEnd())
        text = "".join(current.streamed)
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        current.item["content"] = [part]
        at = {"item_id": current.item["id"], "output_index": current.index, "content_index": 0}
        return [
            self._ev("response.output_text.done", **at, text=text, logprobs=[]),
            self._ev("response.content_part.done", **at, part=part),
            self._done(current),
        ]

    # -- calls ------------------------------------------------------------------------------------------

    def _call_begin(self, begin: CallBegin) -> list[Event]:
        events = self._close_current()
        if begin.index in self._calls:  # the same call begun twice: the first is closed as it stands
            events += self._call_end(begin.index)
        kind: _Kind = "custom_tool_call" if begin.call_kind == "custom" else "function_call"
        field_ = "input" if kind == "custom_tool_call" else "arguments"
        call_id = self.out.call_id(begin.index, begin.call_id, begin.name)
        item = {"call_id": call_id, "name": begin.name, field_: "", "status": "completed"}
        opened, added = self._open(kind, item, {"status": "in_progress"})
        self._calls[begin.index] = opened
        return [*events, added]

    def _call_delta(self, delta: CallDelta) -> list[Event]:
        opened = self._calls.get(delta.index)
        if opened is None or not delta.arguments:
            return []
        opened.streamed.append(delta.arguments)
        kind = (
            "custom_tool_call_input"
            if opened.item["type"] == "custom_tool_call"
            else "function_call_arguments"
        )
        at = {"item_id": opened.item["id"], "output_index": opened.index}
        return [self._ev(f"response.{kind}.delta", **at, delta=delta.arguments)]

    def _call_end(self, index: int) -> list[Event]:
        opened = self._calls.pop(index, None)
        if opened is None:
            return []
        whole = "".join(opened.streamed)
        at = {"item_id": opened.item["id"], "output_index": opened.index}
        if opened.item["type"] == "custom_tool_call":
            opened.item["input"] = whole
            done = self._ev("response.custom_tool_call_input.done", **at, input=whole)
        else:
            opened.item["arguments"] = whole
            done = self._ev("response.function_call_arguments.done", **at, arguments=whole)
        return [done, self._done(opened)]

    # -- the end ----------------------------------------------------------------------------------------

    def _close_all(self) -> list[Event]:
        events = self._close_current()
        for index in sorted(self._calls):
            events += self._call_end(index)
        return events

    def _finish(self, finish: Finish) -> list[Event]:
        if finish.reason == "error":
            return self._fail("the upstream's answer ended with an error", None)
        events = self._close_all()
        self._ended = True
        output = [item for _, item in sorted(self._output.items())]
        if finish.reason in ("length", "refusal"):
            reason = "max_output_tokens" if finish.reason == "length" else "content_filter"
            response = response_object(
                self.out, "incomplete", output, finish.usage, incomplete_details={"reason": reason}
            )
            return [*events, self._ev("response.incomplete", response=response)]
        response = response_object(self.out, "completed", output, finish.usage)
        return [*events, self._ev("response.completed", response=response)]

    def _fail(self, message: str, status: int | None) -> list[Event]:
        self._ended = True
        output = [item for _, item in sorted(self._output.items())]
        error = {"code": "rate_limit_exceeded" if status == 429 else "server_error", "message": message}
        response = response_object(self.out, "failed", output, None, error=error)
        return [self._ev("response.failed", response=response)]


__all__ = ["ResponsesWriter", "item_id", "response_object", "usage_object"]

"""Provider doubles: a real HTTP server on 127.0.0.1 that answers like OpenAI, Anthropic, Gemini and Ollama.

Use them to test an agent without a network or a key. One double serves every wire on its own paths
(``/v1/chat/completions`` and ``/chat/completions``, ``/v1/responses`` and ``/responses``,
``/v1/messages``, ``/v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``,
``/api/chat``), streamed (SSE with each wire's real event names; NDJSON for Ollama; Gemini without
``alt=sse`` one JSON array of its chunks, its REST default) or whole, as the request asks::

    from toolreplay.testing import ProviderDouble, Text, Calls, Call, Error

    def test_my_agent_closes_the_todo():
        with ProviderDouble() as double:
            double.script(
                Error(429, retry_after=1),                       # retried by the client
                Calls([Call("coop", {"action": "close", "id": 12})]),
                Text("Closed todo 12."),
            )
            vessel = double.vessel("kimi")                      # the kimi profile, pointed at the double
            run_my_agent(base_url=vessel.base_url)              # any OpenAI-compatible client works
            assert double.requests[-1].body["messages"][-1]["role"] == "tool"

``double.base_url_for("anthropic")`` gives a base URL for a vessel or a wire; ``double.vessel(name)`` a
copy of a vessel pointed at the double. The double needs no key; the key headers it receives are recorded
redacted. The official SDKs work too: ``openai.OpenAI(base_url=double.base_url_for("openai-chat"),
api_key="x")`` (Chat and Responses), ``anthropic.Anthropic(base_url=double.base_url_for("anthropic"),
api_key="x")``, ``genai.Client(api_key="x", http_options=HttpOptions(base_url=double.url))``.

**Script.** Each request that passes the checks takes the next item: :class:`Text`, :class:`Calls` (of
:class:`Call`; several calls are parallel calls), :class:`BrokenArgs` (arguments that are not JSON),
:class:`Error` (any status, in the wire's error shape, ``retry_after`` as the ``Retry-After`` header),
:class:`Hang` (say nothing: the client times out), :class:`CutStream` (close before the final event),
:class:`Reset` (TCP reset, before answering or mid-stream), :class:`StreamError` (an error event inside
a 200 stream, e.g. Anthropic's ``overloaded_error``), :class:`NotJSON` (a proxy's HTML page).
``double.script(..., wire="gemini")`` queues for one wire only. ``ProviderDouble(responder=fn)``: ``fn``
gets each :class:`RecordedRequest` and returns an item (or None for the queue), for answers that depend on
the request; it runs on the server's threads, several at once under concurrent requests. When the queue
is empty the double answers ``default`` (``Text("ok")``; None: a 500).
``delay`` waits before every answer (seconds).

**Checks.** Every request is checked the way the real provider checks it, and refused with a 400 carrying
the provider's real error text (also kept in ``RecordedRequest.rejected``): unanswered calls and orphan
answers (Chat, Responses), Chat call ids over 40 characters (OpenAI's own server: the plain paths and the
``openai`` vessel), Anthropic results not placed first in the very next message and ``tool_use`` without
``tools``, Gemini calls of the current turn without a ``thoughtSignature`` (``require_signatures=False``
to act like Gemini 2.5), mismatched Gemini response counts, Codex's ``store``/``stream`` demands, Ollama
arguments that are not objects. A refused request does not use up a scripted item.

**Records.** ``double.requests`` lists the :class:`RecordedRequest` of each request (path, wire, vessel,
redacted headers, parsed body, exact bytes, stream flag, the status answered), the newest
``keep_requests`` of them (10,000; None: all); ``on_answer=fn`` is called with each one as its answer
goes out (on the server's threads). Works from sync and asyncio tests alike (``with`` or
``async with``): the server runs in its own thread.

**Limits.** ``ProviderDouble(limits=Limits(...))``: a body over ``max_body`` bytes (32 MiB) is refused
with a 413 in the wire's error shape before it is read, a ``Content-Length`` that is not a number of bytes
with a 400; headers must be complete within ``header_timeout`` seconds (10) of connecting and a body may
pause at most ``idle_timeout`` (30), else a 408 and the connection is closed. One thread reads every
connection; at most ``workers`` threads (128) answer at once, so slow or idle connections hold none.
"""

from __future__ import annotations

from toolreplay.testing._http import Limits
from toolreplay.testing.script import (
    BrokenArgs,
    Call,
    Calls,
    CutStream,
    Error,
    Hang,
    Item,
    NotJSON,
    Reset,
    StreamError,
    Text,
)
from toolreplay.testing.server import ProviderDouble, RecordedRequest, Responder, serve
from toolreplay.wires.reply import Usage

__all__ = [
    "BrokenArgs",
    "Call",
    "Calls",
    "CutStream",
    "Error",
    "Hang",
    "Item",
    "Limits",
    "NotJSON",
    "ProviderDouble",
    "RecordedRequest",
    "Reset",
    "Responder",
    "StreamError",
    "Text",
    "Usage",
    "serve",
]

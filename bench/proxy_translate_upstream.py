"""The translation benchmark's upstream: a minimal keep-alive HTTP/1.1 server on 127.0.0.1 answering OpenAI
Chat at ``/v1/chat/completions`` with a fixed answer of text and one tool call, whole or as an SSE stream
(the usage chunk when the request asks for it), as fast as Python answers, so what is measured is the proxy
in front of it. ``GET /last`` gives the last body it was sent (the bench sends that body straight to it, as
the upstream's own time, and checks what each proxy made of the Anthropic request); any other path is a
404, so a proxy that goes elsewhere (LiteLLM's Responses route) is seen.

``python -m bench.proxy_translate_upstream PORT``; prints ``ready`` once listening.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys

from bench.proxy_upstream import read_request

MODEL = "gpt-4.1"
TEXT = "I'll read the file before changing it."
#: The call the answer makes (its arguments streamed in three pieces).
CALL_NAME, CALL_ARGS = "Read", '{"file_path": "/tmp/toolreplay-claude-run/task/src/app.py", "limit": 200}'
_CALL = {"id": "call_bench_1", "type": "function", "function": {"name": CALL_NAME, "arguments": CALL_ARGS}}
_OPEN = {"name": CALL_NAME, "arguments": ""}
_USAGE = {"prompt_tokens": 52100, "completion_tokens": 42, "total_tokens": 52142}
_BASE = {"id": "chatcmpl-bench", "created": 0, "model": MODEL}
WHOLE = json.dumps({
    **_BASE, "object": "chat.completion",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT, "tool_calls": [_CALL]},
                 "finish_reason": "tool_calls"}],
    "usage": _USAGE,
}).encode()  # fmt: skip


def _chunk(delta: dict[str, object] | None, finish: str | None = None, usage: bool = False) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body = {**_BASE, "object": "chat.completion.chunk", "choices": choices}
    if usage:
        body["usage"] = _USAGE
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _events() -> list[bytes]:
    words = TEXT.split(" ")
    cut = (0, 20, 50, len(CALL_ARGS))
    return [
        _chunk({"role": "assistant", "content": ""}),
        *[_chunk({"content": w if i == 0 else " " + w}) for i, w in enumerate(words)],
        _chunk({"tool_calls": [{"index": 0, "id": _CALL["id"], "type": "function", "function": _OPEN}]}),
        *[
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": CALL_ARGS[a:b]}}]})
            for a, b in itertools.pairwise(cut)
        ],
        _chunk({}, "tool_calls"),
    ]


EVENTS = _events()
USAGE_EVENT = _chunk(None, usage=True)
DONE = b"data: [DONE]\n\n"
_SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _plain(status: bytes, body: bytes) -> bytes:
    return b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        status,
        len(body),
        body,
    )


class Upstream:
    def __init__(self) -> None:
        self.last = b"{}"

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head, body = await read_request(reader)
                await self._answer(head.split(b" ", 2)[1], body, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _answer(self, path: bytes, body: bytes, writer: asyncio.StreamWriter) -> None:
        if path == b"/last":
            writer.write(_plain(b"200 OK", self.last))
        elif path.split(b"?")[0] != b"/v1/chat/completions":
            writer.write(_plain(b"404 Not Found", b'{"error": {"message": "not here: %s"}}' % path))
        elif b'"stream":true' in body or b'"stream": true' in body:
            self.last = body
            writer.write(_SSE_HEAD)
            tail = [USAGE_EVENT] if b'"include_usage"' in body else []
            for event in [*EVENTS, *tail, DONE]:
                writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
        else:
            self.last = body
            writer.write(_plain(b"200 OK", WHOLE))
        await writer.drain()


async def main(port: int) -> None:
    up = Upstream()
    server = await asyncio.start_server(up.serve, "127.0.0.1", port, backlog=1024)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))

"""The benchmark's upstream: a minimal keep-alive HTTP/1.1 server on 127.0.0.1 answering OpenAI Chat, a
fixed answer whole or as an SSE stream, as fast as Python answers, so what is measured is the proxy in
front of it. ``python -m bench.proxy_upstream PORT [CHUNK_DELAY_MS]``; prints ``ready`` once listening."""

from __future__ import annotations

import asyncio
import json
import sys

_CALL = {"id": "call_b1", "type": "function", "function": {"name": "coop", "arguments": '{"action":"list"}'}}
_MESSAGE = {"role": "assistant", "content": None, "tool_calls": [_CALL]}
_USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
WHOLE = json.dumps(
    {"id": "chatcmpl-b", "object": "chat.completion", "created": 0, "model": "gpt-4.1",
     "choices": [{"index": 0, "message": _MESSAGE, "finish_reason": "tool_calls"}], "usage": _USAGE}
).encode()  # fmt: skip


def _chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    body = {"id": "chatcmpl-b", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4.1",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return b"data: " + json.dumps(body).encode() + b"\n\n"


_SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
EVENTS = [
    _chunk({"role": "assistant", "content": ""}),
    *[_chunk({"content": f"word{i} "}) for i in range(8)],
    _chunk({}, "stop"),
    b"data: [DONE]\n\n",
]


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One HTTP/1.1 request off a kept-alive connection: its head and its body (by Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return head, await reader.readexactly(length) if length else b""


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    try:
        while True:
            _head, body = await read_request(reader)
            if b'"stream":true' in body or b'"stream": true' in body:
                writer.write(_SSE_HEAD)
                for event in EVENTS:
                    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                    await writer.drain()
                    if delay:
                        await asyncio.sleep(delay)
                writer.write(b"0\r\n\r\n")
            else:
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
                    % len(WHOLE)
                )
                writer.write(WHOLE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port: int, delay: float) -> None:
    server = await asyncio.start_server(lambda r, w: _serve(r, w, delay), "127.0.0.1", port, backlog=1024)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.0))

"""The matrix of translated answers (tests/test_bridge_matrix.py): how each wire's provider double is asked
for a thinking answer, an incremental framer of the bytes it streams, a relay that serves one wire's
translation over loopback while it reads the upstream, and what each wire's official SDK rebuilds.

The framer here is the test's own: the proxy's ``_proxy.exchange.sse_payloads`` takes a whole body and
``_transport.client._lines`` works on an httpx response, so neither frames bytes as they come from a
socket cut anywhere (the proxy's translated path needs one of its own).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from toolreplay.wires import get_wire

HI = [{"role": "user", "content": "read a.py and look for ünï"}]
WIRES = ("anthropic", "openai-chat", "openai-responses", "gemini", "ollama")

#: The model each wire's double is asked for, and the body that asks it to think and show it: a Chat
#: model that thinks (design 32: the double sends reasoning_content only from one), a Responses request
#: asking for the summary and the encrypted reasoning, Gemini's includeThoughts, Ollama's think.
ASK: dict[str, tuple[str, dict[str, Any]]] = {
    "anthropic": (
        "claude-sonnet-4-5",
        {"max_tokens": 2048, "messages": HI, "thinking": {"type": "enabled", "budget_tokens": 1024}},
    ),
    "openai-chat": ("deepseek-reasoner", {"messages": HI, "stream_options": {"include_usage": True}}),
    "openai-responses": (
        "gpt-5",
        {"input": HI, "reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"]},
    ),
    "gemini": (
        "gemini-3-pro-preview",
        {
            "contents": [{"role": "user", "parts": [{"text": HI[0]["content"]}]}],
            "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
        },
    ),
    "ollama": ("qwen3", {"messages": HI, "think": True}),
}
AUTH = {
    "x-api-key": "k",
    "authorization": "Bearer k",
    "x-goog-api-key": "k",
    "anthropic-version": "2023-06-01",
}


def ask(wire: str, base: str, stream: bool, summary: bool = True) -> tuple[str, dict[str, Any]]:
    """The URL and body that ask ``wire``'s double (at ``base``) for its answer, streamed or whole
    (``summary`` False: a Responses request that asks for the encrypted reasoning and no summary)."""
    model, body = ASK[wire]
    http = get_wire(wire).http
    assert http is not None
    body = dict(body)
    if not summary:
        body.pop("reasoning", None)
    if http.model_in_body:
        body["model"] = model
    if not stream:
        body.pop("stream_options", None)
    http.stream_flag(body, stream)  # Ollama's sets false too: it streams unless told not to
    return http.endpoint(base, model, stream), body


# -- framing bytes as they come ----------------------------------------------------------------------------

_EOL = re.compile(rb"\r\n|\r|\n")


class Framer:
    """SSE ``data`` payloads or NDJSON lines out of bytes cut anywhere (inside a line, a CRLF or a UTF-8
    character): ``feed`` returns the payloads the bytes so far complete, decoded (Chat's ``[DONE]`` as
    the string)."""

    def __init__(self, framing: Literal["sse", "ndjson"]) -> None:
        self.framing = framing
        self._rest = b""
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[Any]:
        text, out, start = self._rest + chunk, [], 0
        for m in _EOL.finditer(text):
            if m.group() == b"\r" and m.end() == len(text):
                break  # maybe half a CRLF: the next bytes say
            out += self._line(text[start : m.start()])
            start = m.end()
        self._rest = text[start:]
        return out

    def end(self) -> list[Any]:
        rest, self._rest = self._rest, b""
        return self._line(rest) if self.framing == "ndjson" and rest.strip() else []

    def _line(self, line: bytes) -> list[Any]:
        if self.framing == "ndjson":
            return [json.loads(line)] if line.strip() else []
        if line:
            name, _, value = line.partition(b":")
            if name == b"data":
                self._data.append(value[1:] if value.startswith(b" ") else value)
            return []
        data, self._data = b"\n".join(self._data), []
        if not data:
            return []
        text = data.decode("utf-8")
        return [text if text.strip() == "[DONE]" else json.loads(text)]


def recut(chunks: Iterable[bytes], rnd: random.Random) -> Iterator[bytes]:
    """The same bytes in pieces of 1 to 23 bytes, wherever they fall."""
    for chunk in chunks:
        at = 0
        while at < len(chunk):
            step = rnd.randint(1, 23)
            yield chunk[at : at + step]
            at += step


# -- ids the agent sees ----------------------------------------------------------------------------------

_VALID: dict[str, Callable[[str | None], bool]] = {
    "anthropic": lambda i: bool(i and re.fullmatch(r"[a-zA-Z0-9_-]+", i)),
    "openai-chat": lambda i: bool(i) and len(i or "") <= 40,
    "openai-responses": lambda i: bool(i and re.fullmatch(r"call_[A-Za-z0-9_-]+", i)),
    "gemini": lambda i: i is None,  # the Gemini API's own answers carry no call ids
    "ollama": lambda i: bool(i and re.fullmatch(r"call_[a-z0-9]{8}", i)),  # its server's shape
}


def valid_call_id(wire: str, value: str | None) -> bool:
    return _VALID[wire](value)


#: How many digest characters the ids minted for an agent's wire hold where its provider's own are
#: shorter (the Ollama server's ``call_`` and eight).
_MINTED_LENGTH = {"ollama": 8}


def call_id_for(wire: str) -> Callable[[int, str | None, str], str]:
    """The agent-side id of a call: the upstream's where it is valid on ``wire``, else one derived from the
    call's place, the upstream's id and its name under the wire's own prefix (deterministic; none where
    the wire's answers carry no ids: Gemini's)."""
    w = get_wire(wire)
    assert w.double is not None and w.translation is not None
    ids = w.double().call_id(1, 0) is not None
    prefix = w.translation.ids.call_prefix

    def call_id(index: int, upstream: str | None, name: str) -> str:
        if not ids:
            return ""
        if upstream and valid_call_id(wire, upstream):
            return upstream
        digest = hashlib.sha256(f"{index}\x1f{upstream}\x1f{name}".encode()).hexdigest()
        return prefix + digest[: _MINTED_LENGTH.get(wire, 24)]

    return call_id

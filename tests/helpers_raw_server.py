"""A loopback server that answers every POST with bytes the test gives, for answers no real provider
double would produce (lone surrogates, JSON nested thousands deep, huge numbers)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

from helpers_common import loopback_server


class RawAnswers:
    """Answers POSTs in turn with ``answers`` (the last one repeats); counts the requests."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = list(answers)
        self.count = 0
        self.lock = threading.Lock()

    def next(self) -> bytes:
        with self.lock:
            self.count += 1
            return self.answers[min(self.count, len(self.answers)) - 1]


@contextmanager
def raw_server(answers: list[bytes]) -> Iterator[tuple[str, RawAnswers]]:
    """``(base_url, state)``: an OpenAI-Chat-shaped base URL on 127.0.0.1 answering with ``answers``."""
    state = RawAnswers(answers)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = state.next()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    with loopback_server(Handler) as base:
        yield f"{base}/v1", state


def chat_answer(content_json: str) -> bytes:
    """A whole OpenAI Chat answer whose message content is the JSON text ``content_json`` (as written)."""
    return (
        '{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":'
        '{"role":"assistant","content":' + content_json + '},"finish_reason":"stop"}]}'
    ).encode()

"""A turn whose first request fails before the provider answered anything leaves the conversation as it
was (design 28): through the real transport, against a port nobody listens on, then the provider double."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolreplay import ConnectionFault, ProviderError, ServerError, TurnOptions, open_store, run_turn
from toolreplay._cli import cli
from toolreplay._history import History, Message
from toolreplay._transport.client import Transport
from toolreplay._transport.policy import RetryPolicy
from toolreplay.testing import Error, ProviderDouble, Text


def _refused_port() -> int:
    """A loopback port that was free a moment ago: nothing listens there, so connecting is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_port_leaves_the_conversation_and_the_next_body_has_the_text_once(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "t.db"))
    try:
        store.import_history(
            History("c", (Message("u1", "user", "before"), Message("a2", "assistant", "ok")))
        )
        refused = TurnOptions(base_url=f"http://127.0.0.1:{_refused_port()}")
        with pytest.raises(ConnectionFault):
            run_turn("c", "say hi", "kimi", store=store, options=refused)
        assert [m.id for m in store.load("c").messages] == ["u1", "a2"]
        with ProviderDouble() as d:
            d.script(Text("Hi."))
            run_turn("c", "say hi", "kimi", store=store, options=TurnOptions(base_url=d.base_url_for("kimi")))
            body = d.requests[0].body
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert users == ["before", "say hi"]
        assert [m.id for m in store.load("c").messages] == ["u1", "a2", "u3", "a4"]
    finally:
        store.close()


def test_the_cli_says_nothing_was_stored(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    url = f"http://127.0.0.1:{_refused_port()}"
    args = ["turn", "hi", "-v", "kimi", "--conversation", "c", "--db", db, "--base-url", url]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1
    assert res.output.rstrip().endswith("(nothing was stored)"), res.output
    res = CliRunner().invoke(cli, ["history", "list", "--db", db, "--json"])
    assert res.output.strip() == "[]"


def _redirecting_server() -> tuple[ThreadingHTTPServer, str]:
    """A loopback server answering every POST with a 307 to another host (never to be followed)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(307)
            self.send_header("location", "http://elsewhere.invalid/v1/chat/completions")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # shutdown() waits for the loop's next poll: every 20 ms, not 0.5 s
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def _no_wait() -> Transport:
    async def skip(seconds: float) -> None:
        return None

    return Transport(retry=RetryPolicy(sleep=skip))


def test_a_redirect_not_followed_leaves_nothing_stored(tmp_path: Path) -> None:
    server, url = _redirecting_server()
    store = open_store(str(tmp_path / "t.db"))
    try:
        with pytest.raises(ProviderError, match="HTTP 307"):
            run_turn("c", "say hi", "kimi", store=store, options=TurnOptions(base_url=url))
        assert not store.exists("c")
    finally:
        store.close()
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("stream", [True, False])
def test_a_5xx_after_its_retries_leaves_nothing_stored(tmp_path: Path, stream: bool) -> None:
    store = open_store(str(tmp_path / "t.db"))
    store.import_history(History("c", (Message("u1", "user", "before"), Message("a2", "assistant", "ok"))))
    try:
        with ProviderDouble() as d:
            d.script(*[Error(503)] * 4)
            opts = TurnOptions(base_url=d.base_url_for("kimi"), stream=stream)
            with pytest.raises(ServerError, match="HTTP 503"):
                run_turn("c", "say hi", "kimi", store=store, options=opts, transport=_no_wait())
            assert len(d.requests) == 4  # the retries were made
        assert [m.id for m in store.load("c").messages] == ["u1", "a2"]
    finally:
        store.close()


def test_the_cli_says_nothing_was_stored_after_a_5xx(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    with ProviderDouble() as d:
        d.script(*[Error(500, retry_after=0)] * 4)
        args = ["turn", "hi", "-v", "kimi", "--cid", "c", "--db", db, "--base-url", d.base_url_for("kimi")]
        res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1
    assert "HTTP 500" in res.output and res.output.rstrip().endswith("(nothing was stored)"), res.output

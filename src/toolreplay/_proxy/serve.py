"""Running the proxy: the recorder's thread, the app, and uvicorn serving it (in this thread, or in a
thread of its own for tests and the benchmark: :class:`Running`)."""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolreplay._proxy.app import Proxy, build_app
from toolreplay._proxy.config import ProxyConfig
from toolreplay._proxy.worker import RecorderThread, Say

if TYPE_CHECKING:
    from toolreplay._proxy.repair import Repairer


def recorder_for(config: ProxyConfig, say: Say | None) -> RecorderThread | None:
    """The recorder's thread the settings ask for (None: no recording, no log, no console lines)."""
    if not (config.record or config.log):
        return None

    def opened():  # type: ignore[no-untyped-def]
        from toolreplay._store import open_store

        return open_store(config.db)

    return RecorderThread(
        opened if config.record else None, log_path=config.log, say=say, max_answer=config.max_body
    ).start()


def repairer_for(config: ProxyConfig, recorder: RecorderThread | None) -> Repairer | None:
    """The repairs' thread (``--repair``): it reads the store the recorder writes."""
    if not config.repair:
        return None
    from toolreplay._proxy.repair import Repairer
    from toolreplay._store import open_store

    return Repairer(lambda: open_store(config.db), recorder)


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (the proxy extra brings it), else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _server(config: ProxyConfig, sock: socket.socket, say: Say | None) -> tuple[object, Proxy]:
    import uvicorn

    recorder = recorder_for(config, say if config.console else None)
    proxy = Proxy(config, recorder, repairer_for(config, recorder))
    uv = uvicorn.Config(
        build_app(proxy),
        log_level="warning",
        access_log=False,
        # X-Forwarded-For and its kin are the agent's headers, passed on, not a client address to trust
        proxy_headers=False,
        ws="none",
        lifespan="on",
        timeout_keep_alive=75,
    )
    return uvicorn.Server(uv), proxy


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # the answer's head and its first chunk go out as two writes: no waiting on the agent's delayed ACK
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(1024)
    return sock


def serve_forever(
    config: ProxyConfig, sock: socket.socket, say: Say | None, ready: Callable[[], None]
) -> None:
    """Serve until Ctrl-C (the command)."""
    server, proxy = _server(config, sock, say)

    async def main() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))  # type: ignore[attr-defined]
        while not server.started:  # type: ignore[attr-defined]
            await asyncio.sleep(0.01)
        # what the start made (modules, the app) lives as long as the process: out of the collector's
        # sight, so that a full collection walks only what requests left alive (the recorder's queue,
        # the routed path's memory: design 54), not every module's objects again
        gc.freeze()
        ready()
        await task

    try:
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(main())
    finally:
        if proxy.recorder is not None:
            proxy.recorder.close()


def _run_in_loop(coro: Any) -> None:
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(coro)


@dataclass
class Running:
    """A proxy served on its own thread (tests, the benchmark): ``url``, then :meth:`close`."""

    url: str
    proxy: Proxy
    server: object
    thread: threading.Thread

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until the recorder has handled every answer that has ended."""
        return self.proxy.recorder.drain(timeout) if self.proxy.recorder is not None else True

    def close(self) -> None:
        self.server.should_exit = True  # type: ignore[attr-defined]
        self.thread.join(timeout=10)
        if self.proxy.recorder is not None:
            self.proxy.recorder.close()

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(config: ProxyConfig, host: str = "127.0.0.1", port: int = 0, say: Say | None = None) -> Running:
    """Start a proxy on a thread of its own and wait until it listens."""
    sock = bind(host, port)
    server, proxy = _server(config, sock, say)
    thread = threading.Thread(
        target=lambda: _run_in_loop(server.serve(sockets=[sock])),  # type: ignore[attr-defined]
        name="toolreplay-proxy",
        daemon=True,
    )
    thread.start()
    while not server.started:  # type: ignore[attr-defined]
        if not thread.is_alive():
            raise RuntimeError("the proxy did not start")
        threading.Event().wait(0.01)
    h, p = sock.getsockname()[:2]
    return Running(f"http://{h}:{p}", proxy, server, thread)


__all__ = ["Running", "bind", "recorder_for", "serve_forever", "start"]

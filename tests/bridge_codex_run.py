"""Run inside a network namespace by test_bridge_responses_codex.py: Codex CLI against a loopback server
whose every answer is the Responses bridge writer's stream of a scripted reply (a free-form apply_patch
call, then a shell call with words before it, then words; reasoning on each), as a translating proxy
would write it. Writes what happened to ``<tmp>/result.json``.

Usage: ``python bridge_codex_run.py TMP``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agentlib.agents import setup
from agentlib.runner import loopback_up
from toolreplay.model import Issuer, Reasoning, Text, Usage
from toolreplay.testing._routes import frame
from toolreplay.wires.bridge import Outbound, reply_deltas, seal
from toolreplay.wires.openai_responses.bridge import BRIDGE
from toolreplay.wires.reply import ParsedCall, Reply

#: The reasoning shown to Codex is another wire's (Kimi's): Codex only ever sees our tokens for it.
KIMI = Issuer("openai-chat", "api.moonshot.ai", "kimi-k2-thinking")
PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n"


def scripted(step: int, work: Path) -> Reply:
    """The upstream's answer to the main loop's request that carries ``step`` tool results."""
    think = Reasoning(f"Step {step}: thinking.", {"openai-chat": {"reasoning_content": f"step {step}"}})
    if step == 0:
        call = ParsedCall("apply_patch", PATCH, "functions.apply_patch:0", kind="custom")
        return Reply("", (call,), "tool_calls", Usage(100, 10, 50), None, "kimi", (think,))
    if step == 1:
        cmd = {"cmd": "cat notes.txt", "workdir": str(work)}
        call = ParsedCall("exec_command", cmd, "functions.exec_command:1")
        said = (think, Text("Now reading."))
        return Reply("Now reading.", (call,), "tool_calls", Usage(200, 10, 150), None, "kimi", said)
    said = (think, Text("notes.txt holds hello."))
    return Reply("notes.txt holds hello.", (), "stop", Usage(300, 5, 250), None, "kimi", said)


def outbound(step: int, model: str) -> Outbound:
    return Outbound(
        model=model,
        answer_id=f"resp_tr{step}",
        thinking=True,
        seal=lambda piece: seal(KIMI, piece),
        call_id=lambda index, upstream, name: f"call_tr{step}_{index}",
        created=1_760_000_000,
    )


def answer(body: dict[str, Any], work: Path) -> bytes:
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    step = sum(i.get("type") in ("function_call_output", "custom_tool_call_output") for i in items)
    writer = BRIDGE.writer(outbound(step, str(body.get("model"))))
    events = [e for d in reply_deltas(scripted(step, work)) for e in writer.write(d)] + writer.close()
    return b"".join(frame("openai-responses", e) for e in events)


def serve(work: Path, log: list[dict[str, Any]]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.loads(raw or b"{}")
            log.append({"method": "POST", "path": self.path, "body": body})
            data = answer(body, work) if self.path.endswith("/responses") else b""
            self.send_response(200 if data else 404)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            log.append({"method": "GET", "path": self.path})
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # shutdown() waits for the loop's next poll: every 20 ms, not 0.5 s
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server


def main(tmp: Path) -> int:
    loopback_up()
    home, work = tmp / "home", tmp / "work"
    home.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    log: list[dict[str, Any]] = []
    server = serve(work, log)
    launch = setup("codex", f"http://127.0.0.1:{server.server_address[1]}/v1", home, work)
    done = subprocess.run(
        launch.argv,
        env=launch.env,
        cwd=launch.cwd,
        capture_output=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    server.shutdown()
    note = work / "notes.txt"
    result = {
        "exit": done.returncode,
        "stdout": done.stdout.decode("utf-8", "replace"),
        "stderr": done.stderr.decode("utf-8", "replace")[-4000:],
        "notes": note.read_text() if note.is_file() else None,
        "requests": log,
    }
    (tmp / "result.json").write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))

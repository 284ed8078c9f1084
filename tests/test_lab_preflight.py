"""Before a run spends a trial, a local server whose chat template drops the tools is named (design 43).

The real llama.cpp server (``/props`` with ``chat_template_caps``) is in tests/test_llama_cpp.py; here a
loopback server answers as an older llama.cpp build (``/props`` without capabilities, ``/apply-template``)
and as Ollama (``/api/version``, ``/api/show``) do, and a paid provider's address is never asked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import one_line_error, run
from helpers_common import loopback_server
from toolreplay._errors import ConfigError
from toolreplay._history import load_history
from toolreplay._lab.plan import LabConfig
from toolreplay._lab.preflight import is_local
from toolreplay._lab.runner import run_lab
from toolreplay._vessels import get_vessel


@contextmanager
def answering(routes: Mapping[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """A loopback server answering ``"GET /path"`` / ``"POST /path"`` with JSON (404 otherwise)."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            key = f"{method} {self.path}"
            seen.append(key)
            body = json.dumps(routes.get(key, {"error": "no route"})).encode()
            self.send_response(200 if key in routes else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def log_message(self, *args: Any) -> None:
            return None

    with loopback_server(Handler) as base:
        yield f"{base}", seen


def lab_config(demo: Path, vessel: str, base_url: str, **kw: Any) -> LabConfig:
    return LabConfig(
        history=load_history(demo), at="m10", vessels=(get_vessel(vessel),), modes=("native",), trials=1,
        expect_tool="coop", expect_action="close", base_url=base_url, **kw,
    )  # fmt: skip


def test_an_older_llama_cpp_is_judged_by_the_prompt_it_renders(demo_path: Path) -> None:
    routes = {"GET /props": {"chat_template": "..."}, "POST /apply-template": {"prompt": "<|user|>hi"}}
    with answering(routes) as (url, seen), pytest.raises(ConfigError) as exc:
        run_lab(lab_config(demo_path, "openai-compatible", url + "/v1"))
    assert (
        "--vessel openai-compatible: the server drops the tools: the prompt its chat template makes"
        in str(exc.value)
    )
    assert "nothing was sent" in str(exc.value) and "/v1/chat/completions" not in " ".join(seen)
    kept = {"GET /props": {}, "POST /apply-template": {"prompt": "tools: coop ..."}}
    with answering(kept) as (url, seen):
        outcome = run_lab(lab_config(demo_path, "openai-compatible", url + "/v1"), chart=False)
    assert outcome.errors and "POST /v1/chat/completions" in seen  # sent (and answered 404)


def test_ollama_says_which_models_take_tools(demo_path: Path) -> None:
    routes = {"GET /api/version": {"version": "0.12"}, "POST /api/show": {"capabilities": ["completion"]}}
    with answering(routes) as (url, _):
        res = run("lab", str(demo_path), "--at", "m10", "-v", "ollama", "-u", url, "--modes", "native",
                  "--trials", "1", "--expect", "coop:close", "--no-chart")  # fmt: skip
    line = one_line_error(res)
    assert "--vessel ollama: the server drops the tools: model qwen3's capabilities (/api/show)" in line


def test_an_unknown_server_is_not_judged_and_a_provider_never_asked(demo_path: Path) -> None:
    assert is_local("http://127.0.0.1:8080/v1") and is_local("http://192.168.1.9:11434")
    assert is_local("http://localhost:8000/v1") and not is_local("https://api.openai.com/v1")
    with answering({}) as (url, seen):  # a 404 everywhere: not judged, the trial is sent
        run_lab(lab_config(demo_path, "openai-compatible", url + "/v1"), chart=False)
    assert seen[0] == "GET /props" and "POST /apply-template" not in seen
    assert "POST /v1/chat/completions" in seen

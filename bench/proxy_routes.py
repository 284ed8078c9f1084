"""``python -m bench.proxy_routes``: what a routed (translated) request costs in ``toolreplay proxy``
(design 47), against LiteLLM's proxy doing the same translation, in one run (issue 26's benchmark).

A 200-message Claude Code-like Anthropic body (a system prompt, the task, then rounds of a call and its
result) goes to ``/v1/messages`` of each contender, all in front of one local OpenAI Chat upstream
(:mod:`bench.proxy_upstream`): ``toolreplay proxy --route 'claude-*=bench-chat'`` without recording (the
translation alone) and recording (the store read for the conversation, the exchange written beside it),
and ``litellm --config`` with the model mapped to ``openai/`` on that upstream, when LiteLLM is installed.
The upstream asked directly with the Chat body is the baseline: what a contender adds is its percentile
minus the upstream's, whole (time to the whole answer) and streamed (time to the first byte).

    python -m bench.proxy_routes            # the full run
    python -m bench.proxy_routes --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.proxy import ROOT, Contender, free_port, hello, one, pct, session_messages, spawned

MODEL = "claude-sonnet-4-5"
TOOL = {"name": "coop", "description": "the todo board",
        "input_schema": {"type": "object", "properties": {"action": {"type": "string"}}}}  # fmt: skip


def anthropic_messages(n: int) -> tuple[str, list[dict[str, Any]]]:
    """The Chat session of :func:`bench.proxy.session_messages` as Anthropic's system and messages."""
    chat = session_messages(n)
    system = str(chat[0]["content"])
    out: list[dict[str, Any]] = []
    for m in chat[1:]:
        if m["role"] == "user":
            out.append({"role": "user", "content": m["content"]})
        elif m["role"] == "assistant":
            call = m["tool_calls"][0]
            use = {"type": "tool_use", "id": call["id"], "name": "coop",
                   "input": json.loads(call["function"]["arguments"])}  # fmt: skip
            out.append({"role": "assistant", "content": [{"type": "text", "text": m["content"]}, use]})
        else:
            result = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            out.append({"role": "user", "content": [result]})
    return system, out


def routed_request(stream: bool) -> dict[str, Any]:
    system, messages = anthropic_messages(200)
    body = {"model": MODEL, "max_tokens": 1024, "system": system, "tools": [TOOL], "messages": messages}
    return body | ({"stream": True} if stream else {})


def direct_request(stream: bool) -> dict[str, Any]:
    from bench.proxy import TOOL as CHAT_TOOL

    body = {"model": "gpt-4.1", "tools": [CHAT_TOOL], "messages": session_messages(200)}
    return body | ({"stream": True} if stream else {})


Make = Callable[[bool], dict[str, Any]]


def latency_of(contenders: list[tuple[Contender, Make]], rounds: int, per: int) -> list[dict[str, Any]]:
    """Each contender's percentiles on its own request, alternately (the order rotates each round), the
    first contender the baseline (as :func:`bench.proxy.latency`)."""
    rows = []
    with httpx.Client(timeout=60, limits=httpx.Limits(max_keepalive_connections=20)) as client:
        for stream in (False, True):
            data = {c.name: json.dumps(make(stream)).encode() for c, make in contenders}
            times: dict[str, list[float]] = {c.name: [] for c, _ in contenders}
            for c, _ in contenders:  # warm up each (connections, imports, caches)
                for _ in range(20):
                    one(client, c.url, data[c.name], stream)
            order = [c for c, _ in contenders]
            for r in range(rounds):
                k = r % len(order)
                for c in order[k:] + order[:k]:
                    times[c.name] += [one(client, c.url, data[c.name], stream) for _ in range(per)]
            base = times[order[0].name]
            for c in order:
                t = times[c.name]
                rows.append({
                    "mode": "streamed (first byte)" if stream else "whole", "contender": c.name, "n": len(t),
                    "p50_ms": pct(t, 0.5) * 1000, "p99_ms": pct(t, 0.99) * 1000,
                    "added_p50_ms": (pct(t, 0.5) - pct(base, 0.5)) * 1000,
                    "added_p99_ms": (pct(t, 0.99) - pct(base, 0.99)) * 1000,
                })  # fmt: skip
    return rows


def _litellm_config(path: Path, upstream: str) -> None:
    path.write_text(
        f"model_list:\n  - model_name: {MODEL}\n    litellm_params:\n      model: openai/gpt-4.1\n"
        f"      api_base: {upstream}\n      api_key: sk-bench-0000\n"
        "litellm_settings:\n  telemetry: false\n  turn_off_message_logging: true\n"
    )


def _table(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| answer | contender | p50 ms | p99 ms | added p50 ms | added p99 ms |",
           "|---|---|---:|---:|---:|---:|"]  # fmt: skip
    out += [
        f"| {r['mode']} | {r['contender']} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | "
        f"{r['added_p50_ms']:.2f} | {r['added_p99_ms']:.2f} |"
        for r in rows
    ]
    return out


def _ratios(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for mode in dict.fromkeys(r["mode"] for r in rows):
        got = {r["contender"]: r["added_p50_ms"] for r in rows if r["mode"] == mode}
        ours, theirs = got.get("toolreplay routed"), got.get("litellm /v1/messages")
        if ours is not None and theirs is not None:
            ratio = f"{theirs / ours:.1f}x" if ours > 0 else "inf"
            out.append(f"- {mode}: routed adds {ours:.2f} ms at p50, LiteLLM {theirs:.2f} ms ({ratio})")
    return out


def run(quick: bool) -> list[str]:
    py = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="toolreplay-bench-routes-"))
    up, p_tr, p_rec, p_lite = free_port(), free_port(), free_port(), free_port()
    upstream = f"http://127.0.0.1:{up}/v1"
    (tmp / "vessels.toml").write_text(
        f'[vessels.bench-chat]\nwire = "openai-chat"\nbase_url = "{upstream}"\nmodel = "gpt-4.1"\n'
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TOOLREPLAY_VESSELS": str(tmp / "vessels.toml")}
    env |= {
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",
    }
    tr = [py, "-m", "toolreplay", "proxy", "-q", "--route", f"{MODEL}=bench-chat"]
    litellm = shutil.which("litellm") or str(Path(py).parent / "litellm")
    _litellm_config(tmp / "litellm.yaml", upstream)
    with (
        spawned([py, "-m", "bench.proxy_upstream", str(up)], f"http://127.0.0.1:{up}/", env),
        spawned([*tr, "--no-record", "-p", str(p_tr)], hello(p_tr), env),
        spawned([*tr, "--db", str(tmp / "bench.db"), "-p", str(p_rec)], hello(p_rec), env),
    ):  # fmt: skip
        contenders = [
            (Contender("upstream direct", f"http://127.0.0.1:{up}/v1/chat/completions"), direct_request),
            (Contender("toolreplay routed", f"http://127.0.0.1:{p_tr}/v1/messages"), routed_request),
            (
                Contender("toolreplay routed, recording", f"http://127.0.0.1:{p_rec}/v1/messages"),
                routed_request,
            ),
        ]
        if Path(litellm).exists():
            cmd = [
                litellm,
                "--config",
                str(tmp / "litellm.yaml"),
                "--port",
                str(p_lite),
                "--num_workers",
                "1",
            ]
            with spawned(cmd, f"http://127.0.0.1:{p_lite}/health/liveliness", env):
                lite = Contender("litellm /v1/messages", f"http://127.0.0.1:{p_lite}/v1/messages")
                rows = latency_of(
                    [*contenders, (lite, routed_request)], 2 if quick else 8, 10 if quick else 40
                )
        else:
            rows = latency_of(contenders, 2 if quick else 8, 10 if quick else 40)
    shutil.rmtree(tmp, ignore_errors=True)
    return [
        "### A routed 200-message Anthropic request, translated to Chat",
        "",
        *_table(rows),
        "",
        *_ratios(rows),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.proxy_routes")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    machine = f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, load {load}"
    head = [f"{machine}; Python {platform.python_version()}", ""]
    print("\n".join([*head, *run(args.quick)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

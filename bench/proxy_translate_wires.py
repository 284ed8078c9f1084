"""A continued turn on the other inbound wires (design 53): a Codex-shaped Responses request and an
opencode-shaped Chat request, some 200 body entries each, read as the routed path reads them.

Each body is built from a kept capture (``tests/data/agents/codex.json``, ``opencode-chat.json``: the
instructions or system prompt, the tools, the first messages, the settings) and grown, deterministically,
by rounds of what the agent does deep into a task: Codex's reasoning item (its ``encrypted_content``), a
call (now and then two, now and then free-form ``apply_patch``) and their outputs; opencode's assistant
message with its tool calls and the tool messages answering them; now and then the turn closes with words
and a new ask of the user's. :func:`lines` measures (``bench.caches``) request N+1 read and translated
after request N, through the memos, against the same request read whole with none.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "tests" / "data" / "agents"
#: How many continued requests each side reads (each one round more than the one before).
REQUESTS = 12


def _captured(name: str) -> dict[str, Any]:
    requests = json.loads((AGENTS / f"{name}.json").read_text(encoding="utf-8"))["requests"]
    body: dict[str, Any] = json.loads(requests[-1]["body_text"])
    return body


def _output(k: int, j: int) -> str:
    return "\n".join(f"{i + 1:>6}\t    value = compute({k}, {j}, {i})" for i in range(30))


def _codex_round(k: int) -> list[dict[str, Any]]:
    enc = "gAAAAAB" + orjson.dumps({"round": k, "pad": "x" * 900}).hex()[:1200]
    rs = {
        "type": "reasoning",
        "id": f"rs_bench{k:04d}",
        "summary": [],
        "content": None,
        "encrypted_content": enc,
    }
    if k % 11 == 10:
        words = [{"type": "output_text", "text": f"Done with part {k}.", "annotations": []}]
        said = {"type": "message", "id": f"msg_bench{k:04d}", "role": "assistant", "content": words}
        ask = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": f"Now part {k + 1}."}],
        }
        return [rs, said, ask]
    if k % 5 == 2:
        patch = (
            f"*** Begin Patch\n*** Update File: src/m{k}.py\n@@\n-    v = 1\n+    v = {k}\n*** End Patch\n"
        )
        call = {"type": "custom_tool_call", "id": f"ctc_bench{k:04d}", "status": "completed",
                "call_id": f"call_bench{k:04d}", "name": "apply_patch", "input": patch}  # fmt: skip
        return [
            rs,
            call,
            {"type": "custom_tool_call_output", "call_id": call["call_id"], "output": "Success."},
        ]
    calls = [
        {"type": "function_call", "id": f"fc_bench{k:04d}_{j}", "status": "completed", "name": "exec_command",
         "call_id": f"call_bench{k:04d}_{j}",
         "arguments": orjson.dumps({"cmd": f"sed -n 1,30p src/m{k}_{j}.py", "workdir": "/tmp/task"}).decode()}
        for j in range(2 if k % 4 == 3 else 1)
    ]  # fmt: skip
    outs = [
        {"type": "function_call_output", "call_id": c["call_id"], "output": _output(k, j)}
        for j, c in enumerate(calls)
    ]
    return [rs, *calls, *outs]


def _chat_round(k: int) -> list[dict[str, Any]]:
    if k % 11 == 10:
        return [
            {"role": "assistant", "content": f"Done with part {k}."},
            {"role": "user", "content": f"Now part {k + 1}."},
        ]
    args = [
        orjson.dumps({"filePath": f"/tmp/src/m{k}_{j}.py"}).decode() for j in range(2 if k % 4 == 3 else 1)
    ]
    calls = [
        {"id": f"call_bench{k:04d}_{j}", "type": "function", "function": {"name": "read", "arguments": a}}
        for j, a in enumerate(args)
    ]
    said = {"role": "assistant", "content": f"Reading module {k}.", "tool_calls": calls}
    return [
        said,
        *({"role": "tool", "tool_call_id": c["id"], "content": _output(k, j)} for j, c in enumerate(calls)),
    ]


def body(wire: str, n: int = 200) -> dict[str, Any]:
    """The agent's request of ``n`` entries (at least), grown round by round from its capture."""
    codex = wire == "openai-responses"
    out = copy.deepcopy(_captured("codex" if codex else "opencode-chat"))
    key, grow = ("input", _codex_round) if codex else ("messages", _chat_round)
    k = 0
    while len(out[key]) < n:
        out[key].extend(grow(k))
        k += 1
    return out


def continued(wire: str, n: int = 200) -> list[bytes]:
    """The bytes of the agent's last ``REQUESTS + 1`` requests of a conversation ``n`` entries deep at
    the end: each the one before and a round more (cut at a round's end)."""
    b = body(wire, n)
    key = "input" if wire == "openai-responses" else "messages"
    grow = _codex_round if wire == "openai-responses" else _chat_round
    ends, at, k = [], len(_captured("codex" if key == "input" else "opencode-chat")[key]), 0
    while at < len(b[key]):
        at += len(grow(k))
        ends.append(at)
        k += 1
    return [orjson.dumps({**b, key: b[key][:e]}) for e in ends[-REQUESTS - 1 :]]


Sides = dict[str, tuple[Callable[[], Any], Callable[[], object]]]


def _sides(wire: str, bodies: list[bytes], translate: bool) -> Sides:
    """Request N+1 on: read (and translated for Anthropic, encoded) as the routed path does after
    request N (read and translated beforehand, untimed), and parsed whole and read with no memo."""
    from dataclasses import replace

    from toolreplay import encode
    from toolreplay._issuers import host_of
    from toolreplay._proxy.bodies import json_value, sliced
    from toolreplay._proxy.translate import read_inbound, translate_request, unsliced
    from toolreplay._proxy.translate_renders import RENDERS
    from toolreplay._vessels import get_vessel
    from toolreplay.model import Issuer
    from toolreplay.wires import get_wire
    from toolreplay.wires.read_memo import READ_MEMO

    v = replace(get_vessel("anthropic"), base_url="http://127.0.0.1:9")
    issuer = Issuer(v.wire, host_of(v.base_url), v.model)
    inbound = get_wire(wire)
    parse = inbound.parse_request
    assert parse is not None

    def whole(raw: bytes) -> None:
        h = parse(json_value(raw))
        if translate:
            encode(translate_request(inbound, h, None, v, issuer=issuer).body)

    def routed(raw: bytes) -> None:
        top = sliced(raw)
        assert top is not None
        got = unsliced(inbound, top)
        h = read_inbound(inbound, got.body, raws=got.raws)
        if translate:
            encode(translate_request(inbound, h, None, v, issuer=issuer, renders=RENDERS).body)

    @contextmanager
    def primed() -> Iterator[None]:
        READ_MEMO.clear()  # the proxy has read and translated request N, and nothing since
        RENDERS.clear()
        routed(bodies[0])
        yield

    return {
        "without": (primed, lambda: [whole(b) for b in bodies[1:]]),
        "with": (primed, lambda: [routed(b) for b in bodies[1:]]),
    }


def lines(
    line: Callable[[str, dict[str, float]], str], compare: Callable[[Sides], dict[str, float]]
) -> list[str]:
    """Per wire: :data:`REQUESTS` continued requests read (then also translated), each after the one
    before, through the proxy's memos against none (``bench.caches``' ``line`` and ``compare``)."""
    out = []
    for wire, who in (("openai-responses", "Codex"), ("openai-chat", "opencode")):
        bodies = continued(wire)
        entries = len(json.loads(bodies[-1])["input" if wire == "openai-responses" else "messages"])
        for translate in (False, True):
            what = f"{who} ({wire}), {REQUESTS} continued requests ({entries} entries at the end), each read"
            what += ", translated for Anthropic, encoded" if translate else " into the history"
            kind = "ReadMemo + Renders (the proxy)" if translate else "ReadMemo alone"
            out.append(line(f"{kind}: {what}", compare(_sides(wire, bodies, translate))))
    return out


__all__ = ["REQUESTS", "body", "continued", "lines"]

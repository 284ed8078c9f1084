"""The translation benchmark's request and its check: a Claude Code request 199 messages deep (with its
system prompt, 200 messages once rendered for Chat), and whether a translated answer is a valid Anthropic
message carrying the upstream's text and call.

The request is built from a kept Claude Code capture (``tests/data/agents/claude.json``: its system prompt,
its tools, its first user message with the environment reminders, its settings) and grown, deterministically,
by rounds of what Claude Code does deep into a task: a sentence and a tool call (Read, Bash, Edit, Grep via
Bash, Write), then the tool's result; now and then the turn ends with a sentence and the user asks for more.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from bench.proxy_translate_upstream import CALL_ARGS, CALL_NAME, TEXT

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "tests" / "data" / "agents" / "claude.json"
TASK = "/tmp/toolreplay-claude-run/task"
MODEL = "claude-sonnet-4-5"
#: What Claude Code sends beside its body (its key aside); both proxies get the same.
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json",
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
    "user-agent": "claude-cli/2.1.332 (external, sdk-cli)",
    "x-app": "cli",
    "x-api-key": "sk-ant-bench-agent-0000",
}


def _captured() -> dict[str, Any]:
    requests = json.loads(CAPTURE.read_text(encoding="utf-8"))["requests"]
    body: dict[str, Any] = json.loads(requests[-1]["body_text"])
    return body


def tool_id(k: int) -> str:
    """An Anthropic-looking call id (``toolu_01`` and 22 letters and digits), the same on every run."""
    digest = hashlib.sha256(f"bench-{k}".encode()).hexdigest()
    return "toolu_01" + "".join(c if c.isdigit() or k % 2 else c.upper() for c in digest[:22])


def _file(k: int, lines: int) -> str:
    return "\n".join(
        f"{i + 1:>6}\t"
        + (f"def handler_{k}_{i}(request):" if i % 7 == 0 else f"    value = compute({k}, {i})")
        for i in range(lines)
    )


def _step(k: int) -> tuple[str, dict[str, Any], str]:
    """Round ``k``'s sentence, call and result (five kinds, in turn)."""
    path = f"{TASK}/src/module_{k % 17}.py"
    kind = k % 5
    if kind == 0:
        return (
            f"Let me read module_{k % 17}.py.",
            {"name": "Read", "input": {"file_path": path}},
            _file(k, 40),
        )
    if kind == 1:
        cmd = f"cd {TASK} && python -m pytest -q tests/test_module_{k % 17}.py"
        out = "\n".join(f"tests/test_module_{k % 17}.py::test_case_{i} PASSED" for i in range(12))
        return "Running the module's tests.", {"name": "Bash", "input": {"command": cmd,
                "description": "Run the module's tests"}}, out + "\n12 passed in 0.41s"  # fmt: skip
    if kind == 2:
        edit = {"file_path": path, "old_string": f"    value = compute({k}, 3)",
                "new_string": f"    value = compute({k}, 3) or default_{k}"}  # fmt: skip
        return (
            "Fixing the missing default.",
            {"name": "Edit", "input": edit},
            (
                f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet:\n"
                + _file(k, 12)
            ),
        )
    if kind == 3:
        cmd = f"grep -rn 'compute({k}' {TASK}/src"
        out = "\n".join(
            f"{TASK}/src/module_{j}.py:{3 * j + 1}:    value = compute({k}, {j})" for j in range(15)
        )
        return "Where else is it used?", {"name": "Bash", "input": {"command": cmd,
                "description": "Find the other uses"}}, out  # fmt: skip
    note = {"file_path": f"{TASK}/NOTES.md", "content": f"# Notes\n\nStep {k}: defaults added.\n" * 6}
    return (
        "Recording what changed.",
        {"name": "Write", "input": note},
        f"File created successfully at: {TASK}/NOTES.md",
    )


def messages(n: int = 199, session: int | None = None) -> list[dict[str, Any]]:
    """The first user message of the capture, then rounds of a call and its result up to ``n`` messages
    (odd: the request ends with the user's turn); every eleventh round ends the turn with a sentence and a
    new ask of the user's instead. ``session``: named in the first message (another conversation)."""
    first = _captured()["messages"][0]
    if session is not None:
        first = {**first, "content": [*first["content"], {"type": "text", "text": f"(session {session})"}]}
    out: list[dict[str, Any]] = [first]
    k = 0
    while len(out) < n:
        if k % 11 == 10:
            out.append({"role": "assistant", "content": [{"type": "text", "text": f"Done with part {k}."}]})
            out.append({"role": "user", "content": [{"type": "text", "text": f"Good. Now part {k + 1}."}]})
        else:
            said, call, result = _step(k)
            use = {"type": "tool_use", "id": tool_id(k), **call}
            out.append({"role": "assistant", "content": [{"type": "text", "text": said}, use]})
            answer = {"type": "tool_result", "tool_use_id": use["id"], "content": result}
            out.append({"role": "user", "content": [answer]})
        k += 1
    out = out[:n]
    last = out[-1]["content"][-1]
    out[-1]["content"][-1] = {**last, "cache_control": {"type": "ephemeral"}}  # where Claude Code puts it
    return out


def request(stream: bool, n: int = 199, session: int | None = None) -> dict[str, Any]:
    """The whole Anthropic request, as Claude Code sends it (its settings, thinking on, its tools), of
    ``n`` messages of conversation ``session`` (see :func:`messages`)."""
    cap = _captured()
    keep = ("system", "tools", "metadata", "max_tokens", "thinking", "context_management")
    msgs = messages(n, session)
    return {"model": MODEL, "messages": msgs, **{k: cap[k] for k in keep if k in cap}, "stream": stream}


def sessions(stream: bool, count: int, turns: int, first: int = 0) -> list[bytes]:
    """``count`` conversations one after the other, ``turns`` requests each, as an agent sends them: each
    request its conversation's last one and a call and its result more (the marker moved), the last one
    199 messages deep; conversations ``first`` on."""
    return [
        json.dumps(request(stream, 199 - 2 * (turns - 1 - t), first + s)).encode()
        for s in range(count)
        for t in range(turns)
    ]


# -- the answer's check ------------------------------------------------------------------------------


def sse_events(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    """``(event name, data)`` of each SSE event (a ``data:`` line that is not JSON is kept as text)."""
    out = []
    for block in data.replace(b"\r\n", b"\n").split(b"\n\n"):
        name, payload = "", b""
        for line in block.split(b"\n"):
            if line.startswith(b"event:"):
                name = line[6:].strip().decode()
            elif line.startswith(b"data:"):
                payload += line[5:].strip()
        if payload:
            try:
                out.append((name, json.loads(payload)))
            except ValueError:
                out.append((name, {"text": payload.decode("utf-8", "replace")}))
    return out


def accumulate(data: bytes) -> tuple[dict[str, Any], list[str]]:
    """The message a Messages stream builds, as a strict client builds it, and what is wrong with it."""
    problems: list[str] = []
    events = sse_events(data)
    if not events or events[0][1].get("type") != "message_start":
        return {}, ["the stream does not open with message_start"]
    msg = dict(events[0][1]["message"])
    blocks: list[dict[str, Any]] = []
    open_: set[int] = set()
    partial: dict[int, str] = {}
    for name, ev in events[1:]:
        kind = ev.get("type")
        if name and name != kind:
            problems.append(f"event {name!r} carries {kind!r}")
        i = ev.get("index", -1)
        if kind == "content_block_start":
            if i != len(blocks):
                problems.append(f"content_block_start index {i}, expected {len(blocks)}")
            blocks.append(dict(ev["content_block"]))
            open_.add(i)
        elif kind == "content_block_delta":
            if i not in open_:
                problems.append(f"content_block_delta for block {i}, which is not open")
                continue
            delta = ev["delta"]
            if delta.get("type") == "text_delta":
                blocks[i]["text"] = blocks[i].get("text", "") + delta["text"]
            elif delta.get("type") == "input_json_delta":
                partial[i] = partial.get(i, "") + delta["partial_json"]
        elif kind == "content_block_stop":
            if i not in open_:
                problems.append(f"content_block_stop for block {i}, which is not open")
            open_.discard(i)
            if i in partial:
                blocks[i]["input"] = json.loads(partial[i])
        elif kind == "message_delta":
            msg.update({k: v for k, v in ev.get("delta", {}).items()})
            msg["usage"] = {**msg.get("usage", {}), **ev.get("usage", {})}
        elif kind not in ("message_stop", "ping"):
            problems.append(f"unexpected event {kind!r}: {json.dumps(ev)[:200]}")
    if events[-1][1].get("type") != "message_stop":
        problems.append("the stream does not end with message_stop")
    if open_:
        problems.append(f"blocks never stopped: {sorted(open_)}")
    msg["content"] = blocks
    return msg, problems


def check_message(msg: dict[str, Any]) -> list[str]:
    """What is wrong with ``msg`` as the Anthropic answer to the upstream's text and call (nothing: [])."""
    problems = []
    try:  # the SDK's strict model, where it is installed (the test venv has it; the bench venv may not)
        import anthropic.types

        anthropic.types.Message.model_validate(msg, strict=False)
    except ImportError:
        pass
    except ValueError as exc:
        problems.append(f"not an anthropic Message: {str(exc)[:300]}")
    if msg.get("type") != "message" or msg.get("role") != "assistant":
        problems.append(f"type/role {msg.get('type')!r}/{msg.get('role')!r}")
    content = msg.get("content") or []
    texts = [b.get("text") for b in content if b.get("type") == "text"]
    uses = [b for b in content if b.get("type") == "tool_use"]
    if texts != [TEXT]:
        problems.append(f"text blocks {texts!r}, expected [{TEXT!r}]")
    if [(u.get("name"), u.get("input")) for u in uses] != [(CALL_NAME, json.loads(CALL_ARGS))]:
        problems.append(f"tool_use blocks {[(u.get('name'), u.get('input')) for u in uses]!r}")
    elif not str(uses[0].get("id", "")).replace("_", "").replace("-", "").isalnum():
        problems.append(f"tool_use id {uses[0].get('id')!r} is not a valid Anthropic id")
    if msg.get("stop_reason") != "tool_use":
        problems.append(f"stop_reason {msg.get('stop_reason')!r}, expected 'tool_use'")
    usage = msg.get("usage") or {}
    if (usage.get("input_tokens"), usage.get("output_tokens")) != (52100, 42):
        problems.append(f"usage {usage!r}: not the upstream's 52100 in / 42 out")
    return problems


def check_answer(data: bytes, stream: bool) -> list[str]:
    """What is wrong with a proxy's answer (its bytes) to :func:`request` (nothing: [])."""
    if not stream:
        try:
            return check_message(json.loads(data))
        except ValueError:
            return [f"not JSON: {data[:200]!r}"]
    msg, problems = accumulate(data)
    return problems + (check_message(msg) if msg else [])

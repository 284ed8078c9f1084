"""The harness of the routed real-agent runs (``agentlib.routed``, ``agentlib.upstream``), checked without
npm: the per-wire reading of what a request carries, on the kept agent runs; the token search; the
vessels file; the double's answers numbered by the plan's step, whatever order requests arrive in."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from agentlib import AGENTS, load_capture
from agentlib.agents import TASK
from agentlib.harness import package_of
from agentlib.responders import PLANS
from agentlib.routed import TARGETS, NumberedDouble, for_route, reasoning_of, write_vessels
from agentlib.upstream import carried, tokens_in
from toolreplay._vessels import BUILTIN, load_vessels
from toolreplay.wires.bridge import base64_token


@pytest.mark.parametrize("agent", AGENTS)
def test_carried_reads_each_kept_run_as_its_calls_answered_in_order(agent: str) -> None:
    capture = load_capture(agent)
    plan = [s.tool for s in PLANS[package_of(agent)]]
    for k, r in enumerate(capture.main):
        c = carried(capture.wire, r.body)
        assert [name for _, name in c.calls] == plan[:k]
        assert c.results == [cid or name for cid, name in c.calls]
        assert tokens_in(r.body) == []


def test_tokens_in_finds_a_token_plain_in_base64_or_inside_other_text() -> None:
    token = "toolreplay.r1.bkyWRopgDmsjPxHTsR_HaI8TFZf1d_B1MYYrUAB6FDg"
    body = {
        "a": [{"signature": token}],
        "b": {"thoughtSignature": base64_token(token)},
        "c": f"<thinking sig={token}>",
        "double": "dG9vbHJlcGxheS1kb3VibGU6MTAxOjA6Z2VtaW5pLTMtcHJvLXByZXZpZXc=",  # the double's own
    }
    assert tokens_in(body) == [token, base64_token(token), f"<thinking sig={token}>"]


def test_the_vessels_file_copies_each_builtin_profile_onto_the_double(tmp_path: Path) -> None:
    table = load_vessels(write_vessels(tmp_path / "vessels.toml"))
    for t in TARGETS.values():
        v, b = table[t.name], BUILTIN[t.builtin]
        assert (v.wire, v.id_policy, v.flags, v.key_env, v.max_id_len) == (
            b.wire, b.id_policy, b.flags, b.key_env, b.max_id_len
        )  # fmt: skip
        assert v.base_url.startswith(f"http://127.0.0.1:18080/vessel/{t.builtin}") and v.model == t.model


def _chat_body(results: int) -> bytes:
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object",
              "properties": {"file_path": {}, "content": {}}}}} for n in ("Write", "Read")]  # fmt: skip
    messages: list[dict[str, object]] = [{"role": "user", "content": TASK}]
    for k in range(results):
        call = {
            "id": f"functions.X:{k}",
            "type": "function",
            "function": {"name": "Write", "arguments": "{}"},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call],
                         "reasoning_content": reasoning_of("kimi", 1, k)})  # fmt: skip
        messages.append({"role": "tool", "tool_call_id": f"functions.X:{k}", "content": "ok"})
    body = {"model": "kimi-k2-thinking", "messages": messages, "tools": tools}
    return json.dumps(body).encode()


def _post(url: str, data: bytes) -> dict[str, object]:
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as answer:
        return json.loads(answer.read())  # type: ignore[no-any-return]


def test_the_numbered_double_answers_each_step_alike_whatever_came_before(tmp_path: Path) -> None:
    """A side request first, or not at all: the answer to step 0 has the same id and reasoning."""
    answers = []
    for side_first in (True, False):
        responder = for_route("claude", str(tmp_path))
        with NumberedDouble(responder=responder, default=None) as double:
            url = double.base_url_for("kimi") + "/chat/completions"
            if side_first:
                _post(url, json.dumps({"model": "kimi-k2-thinking", "messages": [{"role": "user",
                      "content": "title?"}]}).encode())  # fmt: skip
            answers.append(_post(url, _chat_body(0)))
    first, second = ({k: v for k, v in a.items() if k not in ("created", "usage")} for a in answers)
    assert first == second
    message = first["choices"][0]["message"]  # type: ignore[index]
    assert message["tool_calls"][0]["function"]["name"] == "Write"
    assert message["reasoning_content"] == reasoning_of("kimi", 1, 0)
    assert first["id"] == "chatcmpl-double101"  # turn 1, step 0


def test_a_later_turn_counts_its_steps_after_the_earlier_turns_answers(tmp_path: Path) -> None:
    """Turn 2's plan (read the file back) starts after turn 1's two answered calls."""
    responder = for_route("claude", str(tmp_path), "2")
    with NumberedDouble(responder=responder, default=None) as double:
        url = double.base_url_for("kimi") + "/chat/completions"
        step0 = _post(url, _chat_body(2))["choices"][0]["message"]  # type: ignore[index]
        done = _post(url, _chat_body(3))["choices"][0]["message"]  # type: ignore[index]
    assert step0["tool_calls"][0]["function"]["name"] == "Read"
    assert step0["reasoning_content"] == reasoning_of("kimi", 2, 0)
    assert "tool_calls" not in done and done["reasoning_content"] == reasoning_of("kimi", 2, 1)

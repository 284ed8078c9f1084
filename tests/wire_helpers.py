"""Helpers for the wire tests: transcripts into histories, generated histories, each wire's message list,
and the wire facts tests ask of a wire (its URL, its error body's message), read from its contract
(``get_wire``) rather than written again here."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from toolreplay._history import History, history_from_dict
from toolreplay._vessels import BUILTIN
from toolreplay.wires import get_wire
from toolreplay.wires.contract import Http

VESSELS = sorted(BUILTIN)


def message_list(wire: str, body: Mapping[str, Any]) -> list[Any]:
    """The rendered message list of ``body`` (the wire's own elements: messages / input / contents, or
    claude-prompt's transcript lines), as the wire compares them (Anthropic's without their prompt-cache
    markers, which move every turn: design 36)."""
    w = get_wire(wire)
    assert w.list_key in body, f"{wire}: no {w.list_key!r} in the body"
    return w.body_elements(body)


def http_of(wire: str) -> Http:
    """How ``wire`` travels over HTTP (a test of an HTTP wire: claude-prompt has none)."""
    http = get_wire(wire).http
    assert http is not None, f"{wire} is not sent over HTTP"
    return http


def is_http(wire: str) -> bool:
    """``wire`` is sent over HTTP (every built-in wire but the Claude Code CLI's)."""
    return get_wire(wire).http is not None


def wire_url(base: str, wire: str, model: str, stream: bool = False) -> str:
    """The request URL of ``wire`` under ``base`` (the wire's base URL: a double's ``base_url_for``)."""
    return http_of(wire).endpoint(base.rstrip("/"), model, stream)


def wire_path(wire: str, model: str, stream: bool = False) -> str:
    """The request path of ``wire`` from a server's root (``/v1/chat/completions``)."""
    http = http_of(wire)
    return http.endpoint(http.base_suffix, model, stream)


_MARK = "\x00message\x00"


def error_message(wire: str, payload: Any, status: int = 400, *, double: bool = False) -> str:
    """The message of an error body, checked to be ``wire``'s error body for ``status``: the provider's
    (``Http.error_body``: what the proxy answers), or with ``double`` its loopback double's."""
    if double:
        shape = get_wire(wire).double
        assert shape is not None, f"{wire} has no double"
        error_body = shape().error_body
    else:
        provider = http_of(wire).error_body
        assert provider is not None, f"{wire} has no error body"
        error_body = provider
    found = _message_at(error_body(status, _MARK), payload)
    assert isinstance(found, str) and payload == error_body(status, found), (wire, status, payload)
    return found


def _message_at(probe: Any, payload: Any) -> Any:
    """What ``payload`` holds where ``probe`` holds the marker (None: not there)."""
    if probe == _MARK:
        return payload
    if isinstance(probe, Mapping) and isinstance(payload, Mapping):
        for key, value in probe.items():
            got = _message_at(value, payload.get(key))
            if got is not None:
                return got
    return None


# --------------------------------------------------------------------------------------------------
# dev.jsonl transcripts (openai-chat and tau2-bench formats) -> History


def _call_input(call: Mapping[str, Any]) -> Any:
    fn = call.get("function")
    return fn.get("arguments") if isinstance(fn, Mapping) else call.get("arguments")


def _call_name(call: Mapping[str, Any]) -> str:
    fn = call.get("function")
    return str(fn.get("name") if isinstance(fn, Mapping) else call.get("name"))


def history_from_transcript(conv: Mapping[str, Any], conv_id: str = "t") -> History:
    """One agent turn (the assistant and tool messages between two user messages) = one reply.

    The reply's calls keep their order, each followed by its answer (paired by id); its text pieces are
    joined with a blank line (design 10). Calls a simulated user made (tau2 ``requestor: user``, or a
    user message's ``tool_calls``) and their results are left out (design 11).
    """
    out: list[dict[str, Any]] = []
    reply: dict[str, Any] | None = None

    def close() -> None:
        nonlocal reply
        if reply is not None:
            reply["text"] = "\n\n".join(reply.pop("_texts"))
            out.append(reply)
            reply = None

    user_ids: set[str] = set()
    for m in conv["messages"]:
        role, content = m.get("role"), m.get("content")
        if role in ("system", "user"):
            for c in m.get("tool_calls") or []:
                user_ids.add(str(c.get("id")))
            close()
            if role == "system" or content:
                out.append({"id": f"m{len(out)}", "role": role, "text": content or ""})
            continue
        if role == "tool":
            ref = m.get("tool_call_id", m.get("id"))
            if m.get("requestor") == "user" or str(ref) in user_ids or reply is None:
                continue
            entry = {"tool_name": "result", "tool_input": content or "", "tool_use_id": ref}
            if m.get("error"):
                entry["is_error"] = True
            reply["tool_uses"].append(entry)
            continue
        if reply is None:
            reply = {"id": f"m{len(out)}", "role": "assistant", "tool_uses": [], "_texts": []}
        if content:
            reply["_texts"].append(content)
        for c in m.get("tool_calls") or []:
            if c.get("requestor") == "user":
                user_ids.add(str(c.get("id")))
                continue
            reply["tool_uses"].append(
                {"tool_name": _call_name(c), "tool_input": _call_input(c), "id": c.get("id")}
            )
    close()
    return history_from_dict({"id": conv_id, "messages": out})


# --------------------------------------------------------------------------------------------------
# generated histories

TOOL_NAMES = ["coop", "get_user", "mcp__srv__lookup", "my.tool", "9lives", "x" * 70, "naïve"]
_json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.text(max_size=20),
    # floats whose repr has no exponent: orjson and the stdlib spell those alike (see jsonenc)
    st.floats(-1e6, 1e6, allow_nan=False).filter(lambda f: "e" not in repr(f)),
)
_json_value = st.recursive(
    _json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
_inputs = st.one_of(
    st.dictionaries(st.text(min_size=1, max_size=10), _json_value, max_size=4),
    st.text(max_size=40),  # raw text (replayed as an input_excerpt)
    st.just('{"cut": "short'),
    st.none(),
    st.text(min_size=600, max_size=700),  # long: cut at replay
)
_signatures = st.one_of(
    st.none(),
    st.binary(min_size=3, max_size=24).map(lambda b: base64.b64encode(b).decode()),
    st.just("not base64!"),
)


@st.composite
def _call(draw: st.DrawFn) -> list[dict[str, Any]]:
    call: dict[str, Any] = {"tool_name": draw(st.sampled_from(TOOL_NAMES)), "tool_input": draw(_inputs)}
    sig = draw(_signatures)
    if sig is not None:
        key = draw(st.sampled_from(["thoughtSignature", "thought_signature"]))
        call["provider_data"] = {"gemini": {key: sig}}
    entries = [call]
    if draw(st.integers(0, 9)) > 0:  # mostly answered
        res: dict[str, Any] = {"tool_name": "result", "tool_input": draw(st.text(max_size=60))}
        if draw(st.booleans()) and draw(st.booleans()):
            res["is_error"] = True
        entries.append(res)
    return entries


_texts = st.one_of(st.text(min_size=1, max_size=40).filter(str.strip), st.just(""), st.just("  "))
_ids = st.sampled_from(["m{}", "conversation-message-{:04d}", "ü{}", "a-b_{}"])


@st.composite
def histories(draw: st.DrawFn, *, min_messages: int = 1, max_messages: int = 12) -> History:
    """Histories with calls of every shape: raw-text, cut and long inputs, missing answers, errors,
    odd tool names, real and broken Gemini signatures, blank texts, replies in a row. Ends with a user
    message with words (the next turn's question) or an in-progress reply."""
    n = draw(st.integers(min_messages, max_messages))
    id_form = draw(_ids)
    msgs: list[dict[str, Any]] = []
    if draw(st.booleans()):
        msgs.append(
            {"id": id_form.format(0), "role": "system", "text": draw(st.text(min_size=1, max_size=30))}
        )
    for i in range(1, n + 1):
        role = draw(st.sampled_from(["user", "assistant", "assistant"]))
        m: dict[str, Any] = {"id": id_form.format(i), "role": role, "text": draw(_texts)}
        if role == "assistant" and draw(st.booleans()):
            m["tool_uses"] = [e for _ in range(draw(st.integers(1, 4))) for e in draw(_call())]
        msgs.append(m)
    if draw(st.booleans()):
        msgs.append(
            {
                "id": id_form.format(n + 1),
                "role": "assistant",
                "text": "",
                "status": "in_progress",
                "tool_uses": draw(_call()),
            }
        )
    else:
        text = draw(st.text(min_size=1, max_size=40).filter(str.strip))
        msgs.append({"id": id_form.format(n + 1), "role": "user", "text": text})
    return history_from_dict({"id": "gen", "messages": msgs})


def truncated(h: History, k: int) -> History:
    """The first ``k`` messages of ``h``."""
    return History(h.id, h.messages[:k], h.tools)


def big_history(n_messages: int) -> History:
    """A long conversation: user, reply with 2 calls, in turn."""
    msgs: list[dict[str, Any]] = []
    for i in range(n_messages):
        if i % 2 == 0:
            msgs.append({"id": f"u{i}", "role": "user", "text": f"Question {i}: what is open?"})
        else:
            uses = []
            for k in range(2):
                uses.append({"tool_name": "coop", "tool_input": {"action": "show", "id": i * 10 + k}})
                uses.append({"tool_name": "result", "tool_input": f"#{i * 10 + k} open"})
            msgs.append({"id": f"a{i}", "role": "assistant", "text": f"Answer {i}.", "tool_uses": uses})
    return history_from_dict({"id": "big", "messages": msgs})


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def same_prefix(short: Sequence[Any], long: Sequence[Any]) -> bool:
    """``short`` is an element-wise prefix of ``long``, byte for byte."""
    return len(short) <= len(long) and all(dumps(a) == dumps(b) for a, b in zip(short, long, strict=False))

"""Adding a wire is one package plus one registry line: a toy wire, defined here and registered at run
time, renders, parses, sniffs and validates through the public paths, with no other file touched.

The toy wire ``toy-lines`` sends ``{"model": ..., "lines": [...]}``: one line per message, ``who``
(``user``/``agent``), ``say``, and for a reply its ``calls`` (``id``, ``tool``, ``args``, ``result``).
Its answers are ``{"say": ..., "calls": [...]}``. Every path below reaches it only through the registry:
``toolreplay.render`` (and the render cache), the vessel file, the validator and ``check --offline``,
the audit's body detection and ``toolreplay audit``, ``import --from auto``, the transport's request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import toolreplay
from toolreplay import History, Message, ToolCall, TurnMessage, Vessel
from toolreplay._cli import cli
from toolreplay.wires import get_wire, parse_request, parse_response, register_wire, unregister_wire
from toolreplay.wires.common import IdMapper, RenderOptions
from toolreplay.wires.contract import Http, ImportForm, TurnPiece, Wire
from toolreplay.wires.evidence import Evidence, Proof
from toolreplay.wires.reply import ParsedCall, Reply

NAME = "toy-lines"
KEY = "lines"


def _line(t: TurnMessage, ids: IdMapper) -> dict[str, Any]:
    line: dict[str, Any] = {"who": "agent" if t.role == "assistant" else "user", "say": t.text}
    if t.calls:
        line["calls"] = [{"id": ids(c), "tool": c.name, "args": c.input, "result": c.answer} for c in t.calls]
    return line


def _turn_renderer(opts: RenderOptions, ids: IdMapper | None) -> TurnPiece:
    mapper = ids if ids is not None else IdMapper(opts)
    return lambda t, items: [] if t.role == "system" else [_line(t, mapper)]


def _render(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    piece = _turn_renderer(opts, None)
    lines: list[Any] = []
    for t in turns:
        lines.extend(piece(t, lines))
    return {"model": opts.model, KEY: lines}


def _parse_request(body: Any) -> History:
    lines = body.get(KEY) if isinstance(body, Mapping) else body
    messages = []
    for i, line in enumerate(lines or []):
        calls = tuple(
            ToolCall(c["tool"], c["args"], c["result"], call_id=c["id"]) for c in line.get("calls", [])
        )
        role = "assistant" if line["who"] == "agent" else "user"
        messages.append(Message(f"l{i}", role, line["say"], calls))
    return History("request", tuple(messages))


def _parse_response(body: Mapping[str, Any]) -> Reply:
    calls = tuple(ParsedCall(c["tool"], c["args"], c["id"]) for c in body.get("calls", []))
    return Reply(text=body["say"], calls=calls, finish_reason="calls" if calls else "stop")


class _Stream:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def feed(self, event: Mapping[str, Any]) -> str:
        self.parts.append(str(event.get("say", "")))
        return self.parts[-1]

    def mark_done(self) -> None:
        pass

    def finish(self) -> Reply:
        return Reply(text="".join(self.parts), finish_reason="stop")


def _sniff(body: Mapping[str, Any]) -> Evidence | None:
    return Evidence(Proof.KEY, (f"a {KEY!r} list",)) if isinstance(body.get(KEY), list) else None


def _rules(v: Vessel, body: Mapping[str, Any], out: list[str]) -> None:
    seen: set[str] = set()
    for i, line in enumerate(body.get(KEY) or []):
        if line.get("who") not in ("user", "agent"):
            out.append(f"{KEY}[{i}].who: must be user or agent")
        for k, c in enumerate(line.get("calls", [])):
            if c.get("id") in seen:
                out.append(f"{KEY}[{i}].calls[{k}].id: {c.get('id')!r} is used twice in this request")
            seen.add(c.get("id"))


def _marks(body: Any, els: Sequence[Any]) -> str | None:
    return None if isinstance(body, Mapping) and KEY in body else f"no {KEY!r}"


TOY = Wire(
    name=NAME,
    list_key=KEY,
    render=_render,
    render_turn=_turn_renderer,
    call_ids=IdMapper,
    parse_request=_parse_request,
    parse_response=_parse_response,
    stream_parser=_Stream,
    sniff=_sniff,
    rules=_rules,
    http=Http(
        endpoint=lambda base, model, stream: f"{base}/toy/lines",
        auth_headers=lambda vessel, key: {"x-toy-key": key} if key else {},
        stream_flag=lambda body, stream: body.update(stream=stream),
        framing="ndjson",
    ),
    url_endings=("/toy/lines",),
    importing=ImportForm(
        description="toy lines",
        rank=60,
        is_element=lambda v: isinstance(v, Mapping) and "who" in v,
        marks=_marks,
    ),
)


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Vessel]:
    """The toy wire registered, and a user vessel file naming it (``--vessel toy``)."""
    register_wire(TOY)
    vessels = tmp_path / "vessels.toml"
    vessels.write_text(
        '[vessels.toy]\nwire = "toy-lines"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "toy-1"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(vessels))
    try:
        yield toolreplay.get_vessel("toy")
    finally:
        unregister_wire(NAME)


def test_a_wire_not_sent_over_http_needs_a_driver_the_loop_has(tmp_path: Path) -> None:
    """Issue 23: "not HTTP" is not read as "the Claude Code CLI": a wire whose contract names another
    driver is refused by name before anything is stored (it was driven by the Claude driver)."""
    from dataclasses import replace

    from toolreplay._loop import run_turn
    from toolreplay._store.sqlite import SQLiteStore
    from toolreplay._vessels import Vessel

    register_wire(replace(TOY, name="toy-pigeon", http=None, driver="carrier pigeon"))
    try:
        with SQLiteStore(tmp_path / "t.db") as store:
            pigeon = Vessel("pigeon", "toy-pigeon", "", None, "toy-1")
            with pytest.raises(toolreplay.ConfigError, match="names the driver 'carrier pigeon', which the"):
                run_turn("c", "Hello.", pigeon, store=store)
            assert not store.exists("c")
    finally:
        unregister_wire("toy-pigeon")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_render_and_the_render_cache(toy: Vessel, demo_path: Path) -> None:
    from toolreplay._render_cache import RenderCache

    h = toolreplay.load_history(demo_path)
    body = toolreplay.render(h, "toy")
    assert body["model"] == "toy-1" and body[KEY][0]["who"] == "user"
    calls = [c for line in body[KEY] for c in line.get("calls", [])]
    assert len(calls) == sum(len(m.tool_uses) for m in h.messages if m.role == "assistant")
    cache = RenderCache()
    for n in range(1, len(h.messages) + 1):
        prefix = History(h.id, h.messages[:n], h.tools)
        assert toolreplay.encode(cache.render(prefix, "toy")) == toolreplay.encode(
            toolreplay.render(prefix, "toy")
        )
    result = CliRunner().invoke(cli, ["render", str(demo_path), "--vessel", "toy"], catch_exceptions=False)
    # stdout is the body; the demo's Gemini signature is not the toy's, which the warning on stderr says
    assert result.exit_code == 0 and json.loads(result.stdout) == json.loads(toolreplay.encode(body))
    assert "not replayed: made by gemini" in result.stderr


def test_parse_request_and_response(toy: Vessel, demo_path: Path) -> None:
    body = toolreplay.render(demo_path, "toy")
    back = parse_request(NAME, body)
    assert [m.text for m in back.messages] == [line["say"] for line in body[KEY]]
    reply = parse_response(NAME, {"say": "done", "calls": [{"id": "c1", "tool": "coop", "args": {"id": 3}}]})
    assert reply.text == "done" and reply.calls[0].input == {"id": 3}
    parser = get_wire(NAME).stream_parser()
    parser.feed({"say": "do"})
    parser.feed({"say": "ne"})
    assert parser.finish().text == "done"


def test_transport_request(toy: Vessel) -> None:
    from toolreplay._transport.request import prepare

    prep = prepare(toy, {"model": "toy-1", KEY: []}, stream=True)
    assert prep.url == "http://127.0.0.1:9/v1/toy/lines"
    assert prep.headers["accept"] == "application/json"  # NDJSON framing: no event-stream
    assert json.loads(prep.content) == {"model": "toy-1", KEY: [], "stream": True}


def test_sniffed_by_the_audit_and_the_importer(toy: Vessel, demo_path: Path, tmp_path: Path) -> None:
    from toolreplay._audit.body import detect_wire, load_request
    from toolreplay._importers import read_file

    body = toolreplay.render(demo_path, "toy")
    assert detect_wire(body) == NAME
    path = tmp_path / "toy-request.json"
    path.write_bytes(toolreplay.encode(body))
    request = load_request(path)
    assert (request.wire, request.wire_from) == (NAME, "shape")
    code, out = run("audit", str(path), "--history", str(demo_path))
    assert code == 0 and NAME in out, out
    batch = read_file(path)  # --from auto
    assert (batch.format, batch.detected) == (NAME, True)
    assert len(batch.conversations[0].messages) == len(body[KEY])


def test_validated_by_the_wire_rules(toy: Vessel, demo_path: Path) -> None:
    from toolreplay._audit.validate import validate_body

    body = toolreplay.render(demo_path, "toy")
    assert validate_body(toy, body) == []
    broken = {"model": "toy-1", KEY: [{"who": "robot", "say": "hi"}]}
    assert validate_body(toy, broken) == [f"{KEY}[0].who: must be user or agent"]
    code, out = run("check", "--offline", "--vessel", "toy")
    assert code == 0 and "valid" in out, out


def test_unregistered_the_wire_is_unknown(toy: Vessel) -> None:
    unregister_wire(NAME)
    from toolreplay._errors import ConfigError

    with pytest.raises(ConfigError, match="unknown wire 'toy-lines'"):
        get_wire(NAME)
    register_wire(TOY)

"""``toolreplay render`` and ``toolreplay vessels`` through the real entry point; the demo section."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import toolreplay
from toolreplay._cli import cli
from toolreplay._vessels import BUILTIN


def run(*args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout_bytes, result.stderr


def test_render_prints_the_exact_bytes(demo_path: Path) -> None:
    code, out, _ = run("render", str(demo_path), "--vessel", "anthropic")
    assert code == 0
    assert out == toolreplay.encode(toolreplay.render(demo_path, "anthropic"))


def test_render_options(demo_path: Path, tmp_path: Path) -> None:
    system = tmp_path / "system.txt"
    system.write_text("Be brief.", encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps([{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]),
        encoding="utf-8",
    )
    code, out, _ = run(
        "render", str(demo_path), "--vessel", "codex", "--mode", "plain", "--model", "gpt-x",
        "--system", f"@{system}", "--tools", str(tools), "--upto", "m04", "--pretty",
    )  # fmt: skip
    assert code == 0
    body = json.loads(out)
    assert body["model"] == "gpt-x"
    assert body["instructions"].startswith("Be brief.\n\n")
    assert [t["name"] for t in body["tools"]] == ["lookup", "coop"]  # coop: used by the history
    assert body["input"][-1] == {"role": "user", "content": "Close todo #12, the build is green."}
    assert not any(i.get("type") == "function_call" for i in body["input"])
    assert out.startswith(b"{\n  ")


def test_render_tools_coop(demo_path: Path) -> None:
    code, out, _ = run("render", str(demo_path), "--vessel", "gemini", "--tools", "coop")
    decls = json.loads(out)["tools"][0]["functionDeclarations"]
    assert code == 0 and [d["name"] for d in decls] == ["coop"]
    assert "status" in decls[0]["parametersJsonSchema"]["properties"]  # the coop board's own definition


def test_render_a_stored_conversation(demo_path: Path, tmp_path: Path) -> None:
    from toolreplay._store import open_store

    db = str(tmp_path / "t.db")
    store = open_store(db)
    try:
        store.import_history(toolreplay.load_history(demo_path))
    finally:
        store.close()
    code, out, _ = run("render", "demo-chief", "--vessel", "kimi", "--db", db)
    assert code == 0
    assert b"functions.coop:0" in out


def test_render_errors_are_one_line(demo_path: Path, tmp_path: Path) -> None:
    code, _, err = run("render", str(demo_path), "--vessel", "nope")
    assert code == 1 and "known vessels: codex" in err
    bad = tmp_path / "tools.json"
    bad.write_text("{", encoding="utf-8")
    code, _, err = run("render", str(demo_path), "--vessel", "openai", "--tools", str(bad))
    assert code == 1 and f"{bad}: not JSON" in err
    code, _, err = run("render", str(demo_path), "--vessel", "openai", "--system", "@/no/such/file")
    assert code == 1 and "--system @/no/such/file" in err
    code, _, err = run("render", str(demo_path), "--vessel", "openai", "--upto", "m99")
    assert code == 1 and "m99" in err


def test_render_warns_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    uses = [{"tool_name": "my.tool", "tool_input": {}}, {"tool_name": "result", "tool_input": "ok"}]
    msgs = [
        {"id": "u", "role": "user", "text": "go"},
        {"id": "a", "role": "assistant", "text": "done", "tool_uses": uses},
    ]
    path.write_text(json.dumps({"id": "h", "messages": msgs}), encoding="utf-8")
    code, out, err = run("render", str(path), "--vessel", "openai")
    assert code == 0 and "warning: tool name 'my.tool'" in err
    assert b"my.tool" not in out


def test_vessels_lists_every_vessel() -> None:
    code, out, _ = run("vessels")
    assert code == 0
    for name in BUILTIN:
        assert name in out.decode()
    code, out, _ = run("vessels", "--json")
    rows = [json.loads(line) for line in out.decode().splitlines()]
    assert [r["name"] for r in rows] == list(BUILTIN)
    gemini = next(r for r in rows if r["name"] == "gemini")
    assert gemini["endpoint"].endswith("/models/gemini-2.5-flash:generateContent")
    assert gemini["key_env"] == "GEMINI_API_KEY"


def test_demo_vessels_section(tmp_path: Path) -> None:
    from rich.console import Console

    from toolreplay._cli.demo import run_demo
    from toolreplay._cli.demo_vessels import demo_vessels_section

    console = Console(record=True, width=200)
    run_demo(str(tmp_path / "d.db"), console, sections=[demo_vessels_section])
    text = console.export_text()
    for name in BUILTIN:
        assert name in text
    assert "functions.coop:0" in text
    assert "plain (12 messages)" in text and "native (20 messages)" in text


def test_render_as_sent_prints_an_imported_body_back(tmp_path: Path) -> None:
    body = {
        "model": "gpt-5-mini",
        "max_tokens": 300,
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_7", "type": "function", "function": {"name": "weather", "arguments": "{ }"}}]},
            {"role": "tool", "tool_call_id": "call_7", "content": "sunny"},
        ],
    }  # fmt: skip
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    code, out, err = run("render", str(path), "--as-sent")
    assert code == 0, err
    assert json.loads(out) == body
    # a history with no recorded request cannot be rendered as sent, and says why
    result = CliRunner().invoke(cli, ["render", str(Path(toolreplay.__file__).parent / "data" / "demo.json"),
                                      "--as-sent"])  # fmt: skip
    assert result.exit_code != 0 and "no recorded request" in result.stderr

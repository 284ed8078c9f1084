"""Regression tests for the QA pass's findings (each test names its finding)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from toolreplay._cli import cli
from toolreplay._store import open_store


def _run(*args: str, **kwargs: Any) -> Result:
    return CliRunner().invoke(cli, list(args), **kwargs)


def _write(tmp_path: Path, name: str, value: Any) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(value), encoding="utf-8")
    return p


def _stored_ids(db: Path) -> list[str]:
    store = open_store(str(db))
    try:
        return [c.id for c in store.list_conversations()]
    finally:
        store.close()


# -- 1, 2: importers -------------------------------------------------------------------------------


def test_toolreplay_shaped_file_is_judged_by_its_own_reader(tmp_path: Path) -> None:
    """Finding 1: read as openai-chat, the user's words became "" and message 1 vanished, silently."""
    f = _write(
        tmp_path,
        "n.json",
        {
            "id": "c1",
            "messages": [{"id": "m1", "role": "user", "text": "hi"}, {"role": "assistant", "text": "x"}],
        },
    )
    db = tmp_path / "t.db"
    r = _run("import", str(f), "--db", str(db))
    assert r.exit_code == 1
    assert r.stderr.strip() == f"Error: {f}: message 1: id: missing or not a string"
    assert not db.exists() or _stored_ids(db) == []


def test_toolreplay_shaped_file_with_a_bad_role_names_one_reason(tmp_path: Path) -> None:
    """Finding 2: a ~900-character line listing all 10 formats; now the one format's reason."""
    f = _write(tmp_path, "r.json", {"id": "c2", "messages": [{"id": "m1", "role": "robot", "text": "hi"}]})
    r = _run("import", str(f), "--db", str(tmp_path / "t.db"))
    assert r.exit_code == 1
    line = r.stderr.strip()
    assert (
        line == f"Error: {f}: message 0 (id m1): role: 'robot' is not a role; use user, assistant or system"
    )
    assert "openai-chat" not in line and "\n" not in line


def test_toolreplay_shaped_file_with_a_wire_key_says_so(tmp_path: Path) -> None:
    f = _write(tmp_path, "w.json", {"messages": [{"id": "m1", "role": "user", "text": "hi", "content": "x"}]})
    r = _run("import", str(f), "--dry-run")
    assert r.exit_code == 1
    assert r.stderr.startswith(f"Error: {f}: looks like toolreplay but is not: messages[0] has 'content'")


def test_a_wire_never_detected_when_a_message_key_would_be_lost(tmp_path: Path) -> None:
    """Finding 1, generally: a Chat list with a Gemini 'parts' message is no format; named, it warns."""
    f = _write(
        tmp_path,
        "p.json",
        [{"role": "user", "content": "hi"}, {"role": "assistant", "parts": [{"text": "x"}]}],
    )
    auto = _run("import", str(f), "--dry-run")
    assert auto.exit_code == 1
    assert (
        "closest is openai-chat (messages[1] has 'parts', which openai-chat does not read (it would be lost))"
        in auto.stderr
    )
    named = _run("import", str(f), "--dry-run", "--from", "openai-chat")
    assert named.exit_code == 0, named.output
    assert f"warning: {f}: messages[1].parts: openai-chat does not read it; not kept" in named.stderr


def test_sqlite_not_llm_logs_names_llm_logs_only(tmp_path: Path) -> None:
    import sqlite3
    from contextlib import closing

    f = tmp_path / "x.db"
    with closing(sqlite3.connect(f)) as c:
        c.execute("CREATE TABLE a (b)")
        c.commit()
    r = _run("import", str(f), "--dry-run")
    assert r.exit_code == 1
    assert r.stderr.strip() == (
        f"Error: {f}: looks like llm-logs but is not: an SQLite database without llm's conversations, "
        "responses table(s)"
    )


def test_plain_chat_lists_and_the_demo_still_detect(tmp_path: Path, demo_path: Path) -> None:
    f = _write(
        tmp_path, "c.json", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    )
    r = _run("import", str(f), "--dry-run")
    assert r.exit_code == 0 and "openai-chat (detected)" in r.stdout
    r = _run("import", str(demo_path), "--dry-run")
    assert r.exit_code == 0 and "toolreplay (detected)" in r.stdout


@pytest.mark.parametrize("bad", ["robot", "tool"])
def test_jsonl_messages_shaped_as_toolreplay(tmp_path: Path, bad: str) -> None:
    f = tmp_path / "m.jsonl"
    f.write_text(
        json.dumps({"id": "m1", "role": "user", "text": "hi"})
        + "\n"
        + json.dumps({"id": "m2", "role": bad, "text": "x"})
        + "\n",
        encoding="utf-8",
    )
    r = _run("import", str(f), "--dry-run")
    assert r.exit_code == 1
    assert r.stderr.startswith(f"Error: {f}: message 1 (id m2): role: ")


# -- 3: import_cmd ---------------------------------------------------------------------------------


def test_import_empty_conversation_refused_before_reading(tmp_path: Path, demo_path: Path) -> None:
    db = tmp_path / "t.db"
    r = _run("import", str(demo_path), "--conversation", "", "--db", str(db))
    assert r.exit_code == 2
    assert r.stdout == ""  # no summary printed first
    assert "Invalid value for '--conversation': must not be empty" in r.stderr
    assert not db.exists()


def test_import_counts_are_singular_for_one(tmp_path: Path) -> None:
    f = _write(
        tmp_path,
        "one.json",
        [
            {"id": "u1", "role": "user", "text": "go"},
            {
                "id": "a1",
                "role": "assistant",
                "text": "",
                "tool_uses": [{"id": "c1", "name": "t", "input": {}, "result": "ok"}],
            },
        ],
    )
    r = _run("import", str(f), "--db", str(tmp_path / "t.db"))
    assert r.exit_code == 0, r.output
    assert f"{f}: toolreplay (detected), 1 conversation, 1 call\n" in r.stdout
    assert "  one: 2 messages, 1 call: 2 added" in r.stdout


def test_refused_conversation_and_main_fallback_print_click_style(
    tmp_path: Path, demo_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    assert _run("import", str(demo_path), "--db", str(db)).exit_code == 0
    changed = json.loads(demo_path.read_text(encoding="utf-8"))
    changed["messages"][0]["text"] = "something else"
    r = _run("import", str(_write(tmp_path, "changed.json", changed)), "--db", str(db))
    assert r.exit_code == 1
    assert r.stderr.startswith("Error: ") and "error:" not in r.stderr

    from toolreplay import _cli as cli_pkg
    from toolreplay._errors import ConfigError

    def boom(**_: Any) -> None:
        raise ConfigError("raised outside click")

    monkeypatch.setattr(cli_pkg.cli, "main", boom)
    with pytest.raises(SystemExit) as exc:
        cli_pkg.main([])
    assert exc.value.code == 1
    assert capsys.readouterr().err == "Error: raised outside click\n"


# -- 4, 8: a bad base URL; lab --at ----------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://[::1", "http://h:99999", "ftp://example.com", "http://"])
def test_a_bad_base_url_is_one_config_line(url: str) -> None:
    from toolreplay._errors import ConfigError
    from toolreplay._transport.request import is_loopback, prepare

    with pytest.raises(ConfigError, match=r"^kimi: base URL .* is not a"):
        prepare("kimi", {"messages": [{"role": "user", "content": "hi"}]}, base_url=url)
    assert is_loopback(url) is False


def test_turn_with_a_bad_base_url_stores_nothing(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    r = _run(
        "turn", "hi", "--vessel", "kimi", "--conversation", "x", "--base-url", "http://[::1", "--db", str(db)
    )
    assert r.exit_code == 1
    assert r.stderr == (
        "Error: kimi: base URL 'http://[::1' is not a valid URL (Invalid IPv6 URL) (nothing was stored)\n"
    )
    assert not db.exists() or _stored_ids(db) == []


def test_lab_with_a_bad_base_url_makes_no_out_dir(tmp_path: Path, demo_path: Path) -> None:
    out = tmp_path / "lab"
    args = ["lab", str(demo_path), "--vessel", "kimi", "--at", "m04", "--expect", "coop:close"]
    r = _run(*args, "--trials", "1", "--base-url", "http://[::1", "--out", str(out))
    assert r.exit_code == 1
    assert r.stderr == "Error: kimi: base URL 'http://[::1' is not a valid URL (Invalid IPv6 URL)\n"
    assert not out.exists()


def test_lab_unknown_at_names_the_option_without_a_blank_line(demo_path: Path) -> None:
    r = _run("lab", str(demo_path), "--vessel", "kimi", "--at", "nosuch", "--expect", "coop:close")
    assert r.exit_code == 1
    assert r.stderr == "Error: --at nosuch: no message with id 'nosuch' in conversation 'demo-chief'\n"


# -- 5: the missing-key message when --base-url was given -------------------------------------------


def test_missing_key_for_a_given_remote_base_url_does_not_suggest_base_url(tmp_path: Path) -> None:
    r = _run(
        "turn", "hi", "--vessel", "openai", "--conversation", "c", "--base-url", "https://example.com/v1",
        "--db", str(tmp_path / "t.db"),
    )  # fmt: skip
    assert r.exit_code == 1
    assert r.stderr == (
        "Error: openai: OPENAI_API_KEY is for api.openai.com, not example.com: pass --send-key to send it "
        "there, or set base_url in the vessel's profile (nothing was stored)\n"
    )
    r = _run(
        "turn", "hi", "--vessel", "openai", "--conversation", "c", "--base-url", "https://example.com/v1",
        "--send-key", "--db", str(tmp_path / "t.db"),
    )  # fmt: skip
    assert r.stderr == (
        "Error: openai: set OPENAI_API_KEY to send to https://example.com/v1 (a key is sent only to remote "
        "URLs; loopback URLs need none) (nothing was stored)\n"
    )
    default = _run("turn", "hi", "--vessel", "openai", "--conversation", "c", "--db", str(tmp_path / "t.db"))
    assert "set OPENAI_API_KEY or use --base-url for a local server" in default.stderr


# -- 6: audit of a history file --------------------------------------------------------------------


def test_audit_of_a_history_file_says_render_it_first(demo_path: Path, tmp_path: Path) -> None:
    r = _run("audit", str(demo_path))
    assert r.exit_code == 1
    assert r.stderr == (
        f"Error: {demo_path}: a toolreplay history (messages with 'text'/'tool_uses'), not a request body; "
        f"render it first: toolreplay render {demo_path} --vessel NAME > request.json, "
        "then audit request.json\n"
    )
    rendered = _run("render", str(demo_path), "--vessel", "kimi")
    assert rendered.exit_code == 0
    req = tmp_path / "request.json"
    req.write_text(rendered.stdout, encoding="utf-8")
    ok = _run("audit", str(req))
    assert ok.exit_code == 0 and "4 calls" in ok.stdout, ok.output


# -- 7: an explicitly named vessel file that does not exist -----------------------------------------


def test_a_missing_vessel_file_named_explicitly_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreplay._errors import ConfigError
    from toolreplay._vessels import BUILTIN, load_vessels

    missing = tmp_path / "missing.toml"
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(missing))
    r = _run("vessels")
    assert r.exit_code == 1
    assert r.stderr == f"Error: {missing}: no such vessel file (named by TOOLREPLAY_VESSELS)\n"
    with pytest.raises(ConfigError, match=r"missing\.toml: no such vessel file$"):
        load_vessels(missing)
    monkeypatch.delenv("TOOLREPLAY_VESSELS")
    assert load_vessels() == BUILTIN  # the default path is absent: the built-in table
    assert _run("vessels").exit_code == 0


# -- 9: the demo's vessel section at 80 columns ----------------------------------------------------


def test_demo_vessels_section_reads_at_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from toolreplay._cli import demo
    from toolreplay._cli.demo_vessels import demo_vessels_section

    monkeypatch.setattr(demo, "program_name", lambda: ".venv/bin/toolreplay")
    console = Console(record=True, width=80)
    demo.run_demo(str(tmp_path / "d.db"), console, sections=[demo_vessels_section])
    text = console.export_text().split("\nStored in ")[0]  # run_demo's own closing line is not the section's
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "functions.coop:0" in text and "replay_m03_0" in text  # ids whole, not cut
    for shown in (
        "asst coop(close 12 …)",
        "tool status: closed",
        "user [coop(close 12 …)]",
        "asst coop(list)",
    ):
        assert shown in text
    assert '{"role"' not in text  # summaries, not raw JSON cut at the column
    assert "try: .venv/bin/toolreplay render <file or id>" in " ".join(text.split())


# -- 10: help consistency --------------------------------------------------------------------------


def _help(*cmd: str) -> str:
    r = _run(*cmd, "--help", terminal_width=200)
    assert r.exit_code == 0, r.output
    return " ".join(r.stdout.split())


def test_help_uses_one_metavar_per_kind_of_value() -> None:
    for cmd in ("render", "turn", "chat", "check", "lab"):
        assert "--model NAME" in _help(cmd), cmd
    for cmd in ("render", "audit"):
        assert "--prompt-template FILE " in _help(cmd), cmd
        assert "tokenizer_config.json" in _help(cmd)
    for cmd in ("check", "lab"):
        assert "--vessel NAME[,NAME...]" in _help(cmd) and "repeat or comma-separate" in _help(cmd), cmd
    assert "--trials INTEGER RANGE" in _help("lab") and "--concurrency INTEGER RANGE" in _help("lab")
    for cmd in ("render", "lab"):
        assert "--tools coop|FILE.json|MODULE:ATTR" in _help(cmd) and "nothing is run" in _help(cmd), cmd
    for cmd in ("turn", "chat"):
        assert "--tools coop|MODULE:ATTR" in _help(cmd) and "run by toolreplay" in _help(cmd), cmd


def test_lab_trials_and_concurrency_must_be_positive(demo_path: Path) -> None:
    base = ["lab", str(demo_path), "--vessel", "ollama", "--at", "m12", "--expect", "coop:close"]
    for opt in ("--trials", "--concurrency"):
        r = _run(*base, opt, "0")
        assert r.exit_code == 2 and f"Invalid value for '{opt}': 0 is not in the range x>=1" in r.stderr


def test_lab_and_check_take_repeated_and_comma_separated_vessels(demo_path: Path) -> None:
    r = _run(
        "lab", str(demo_path), "--vessel", "kimi,openai", "--vessel", "ollama", "--at", "m12",
        "--expect", "coop:close", "--trials", "1", "--max-requests", "1", "--base-url", "http://127.0.0.1:9",
    )  # fmt: skip
    assert r.exit_code == 1
    assert "this run would send 9 requests" in r.stderr  # 3 vessels x 3 modes x 1 trial
    r = _run("check", "--offline", "--vessel", "kimi,openai", "--vessel", "gemini", "--vessel", "kimi")
    assert r.exit_code == 0, r.output
    assert [line.split()[0] for line in r.stdout.splitlines()[1:]] == ["kimi", "openai", "gemini"]


def test_render_and_lab_take_module_attr_tools(
    tmp_path: Path, demo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "qa_weather_tools.py").write_text(
        "from toolreplay._tools import tool\n\n"
        "SCHEMA = {'type': 'object', 'properties': {'city': {'type': 'string'}}}\n\n"
        "@tool('weather', 'Weather in a city', SCHEMA)\n"
        "def WEATHER(args):\n    return 'sunny'\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    r = _run("render", str(demo_path), "--vessel", "openai", "--tools", "qa_weather_tools:WEATHER,coop")
    assert r.exit_code == 0, r.output
    names = [t["function"]["name"] for t in json.loads(r.stdout)["tools"]]
    assert names[:2] == ["weather", "coop"]
    defs = _write(tmp_path, "defs.json", [{"name": "lookup", "parameters": {"type": "object"}}])
    r = _run(
        "render",
        str(demo_path),
        "--vessel",
        "openai",
        "--tools",
        str(defs),
        "--tools",
        "qa_weather_tools:WEATHER",
    )
    assert r.exit_code == 0, r.output
    assert [t["function"]["name"] for t in json.loads(r.stdout)["tools"]][:2] == ["lookup", "weather"]
    r = _run("render", str(demo_path), "--vessel", "openai", "--tools", "qa_weather_tools:NOPE")
    assert r.exit_code == 1 and "qa_weather_tools has no attribute 'NOPE'" in r.stderr


# -- 11: check of a vessel named explicitly --------------------------------------------------------


def test_check_of_a_named_vessel_that_cannot_be_checked_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    r = _run("check", "--vessel", "openai")
    assert r.exit_code == 1
    assert (
        "openai  cannot be checked: openai: set OPENAI_API_KEY or use --base-url for a local server"
        in r.stdout
    )
    # chosen because its key is set: a vessel that cannot be sent to is skipped, as before
    monkeypatch.setenv("MOONSHOT_API_KEY", "sk-test-not-real")
    r = _run("check", "--base-url", "http://[::1")
    assert r.exit_code == 0, r.output
    assert "kimi  skipped: kimi: base URL 'http://[::1' is not a valid URL (Invalid IPv6 URL)" in r.stdout

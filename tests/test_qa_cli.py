"""The CLI as a demanding user meets it: bad input gives one clear line and stores nothing, help is accurate,
errors say what a failed turn left behind, and ``import toolreplay`` stays light.

Most tests use click's CliRunner; a few run the real entry point (``python -m toolreplay``) in a child
process, where a traceback or a stray warning would show.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from toolreplay._cli import COMMANDS, cli
from toolreplay._errors import ConfigError, HistoryError, StoreError
from toolreplay._history import load_history, normalize_tool_uses
from toolreplay._store.sqlite import SQLiteStore
from toolreplay.testing import Error, ProviderDouble, Text

GOOD = {
    "id": "c1",
    "messages": [
        {"id": "m1", "role": "user", "text": "Close #12."},
        {
            "id": "m2",
            "role": "assistant",
            "text": "Closed #12.",
            "tool_uses": [
                {"tool_name": "coop", "tool_input": {"action": "close", "id": 12}},
                {"tool_name": "result", "tool_input": "status: closed"},
            ],
        },
    ],
}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="toolreplay")


def one_line_error(res: Result) -> str:
    """The error of a failed command: exit 1, no traceback, one ``Error: ...`` line on stderr."""
    assert res.exit_code == 1, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    return lines[0]


def conversations(db: Path) -> list[str]:
    if not db.exists():
        return []
    with SQLiteStore(db) as s:
        return [c.id for c in s.list_conversations()]


@pytest.fixture(scope="module")
def _server() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


@pytest.fixture
def double(_server: ProviderDouble) -> ProviderDouble:
    _server.clear()
    return _server


# -- bad history files: one line naming the file, the message and the field; nothing stored ------------


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _with(**message: object) -> str:
    bad = json.loads(json.dumps(GOOD))
    bad["messages"][1] = {**bad["messages"][1], **message}
    return json.dumps(bad)


BAD_FILES = [
    ("empty.json", "", "empty.json: the file is empty"),
    ("blank.json", "  \n\n", "blank.json: the file is empty"),
    ("notjson.json", "not json {", "notjson.json: not JSON"),
    ("noid.json", json.dumps({"messages": [{"role": "user", "text": "a"}]}), "noid.json: message 0: id:"),
    ("dup.json", _with(id="m1"), "dup.json: message 1 (id m1): id: duplicate id"),
    ("role.json", _with(role="robot"), "role.json: message 1 (id m2): role: 'robot' is not a role"),
    ("tu.json", _with(tool_uses=5), "tu.json: message 1 (id m2): tool_uses: must be a list, not int"),
    (
        "tuobj.json",
        _with(tool_uses={"a": 1}),
        "tuobj.json: message 1 (id m2): tool_uses: must be a list, not an object (keys: a)",
    ),
    ("cid.json", json.dumps({**GOOD, "id": ""}), "cid.json: id: must be a non-empty string"),
]


@pytest.mark.parametrize(("name", "content", "expected"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
@pytest.mark.parametrize("command", ["replay", "render", "import"])
def test_a_bad_history_file_is_one_line_and_stores_nothing(
    tmp_path: Path, name: str, content: str, expected: str, command: str
) -> None:
    path = _write(tmp_path, name, content)
    db = tmp_path / "t.db"
    args = [command, str(path), "--db", str(db)]
    if command == "render":
        args += ["--vessel", "openai"]
    if command == "import":
        args += ["--from", "toolreplay"]
    line = one_line_error(run(*args))
    if command == "import" and name in ("noid.json", "role.json"):
        # the importer's own wording (it checks the shape before the loader does); it names the place
        assert line.startswith(f"Error: {path}: not toolreplay: messages[")
    else:
        assert line.replace("not toolreplay: ", "").startswith(f"Error: {tmp_path}/{expected}")
    assert conversations(db) == []


def test_a_history_file_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, "bom.json", b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    assert load_history(path).messages[1].tool_uses[0].answer == "status: closed"
    jsonl = b"\xef\xbb\xbf" + b"\n".join(json.dumps(m).encode() for m in GOOD["messages"])  # type: ignore[attr-defined]
    assert len(load_history(_write(tmp_path, "bom.jsonl", jsonl)).messages) == 2
    res = run("replay", str(path))
    assert res.exit_code == 0 and json.loads(res.stdout)[1]["calls"][0]["answer"] == "status: closed"


def test_a_directory_is_not_a_history_file(tmp_path: Path) -> None:
    line = one_line_error(run("replay", str(tmp_path)))
    assert line == f"Error: {tmp_path}: is a directory, not a history file"


def test_a_single_tool_use_without_its_list_still_reads() -> None:
    entries = normalize_tool_uses({"name": "coop", "input": {"action": "list"}, "answer": "none"})
    assert [e["tool_name"] for e in entries] == ["coop", "result"]
    with pytest.raises(HistoryError, match=r"^tool_uses: must be a list, not an object \(keys: a, b\)$"):
        normalize_tool_uses({"b": 1, "a": 2})


def test_an_empty_conversation_id_is_refused_everywhere(tmp_path: Path, demo_path: Path) -> None:
    with pytest.raises(HistoryError, match="must not be empty"):
        load_history(demo_path, conversation_id="")
    db = tmp_path / "t.db"
    res = run("import", str(demo_path), "--conversation", "", "--db", str(db))
    assert res.exit_code == 2 and "'--conversation': must not be empty" in res.stderr and res.stdout == ""
    with SQLiteStore(db) as s:
        h = load_history(demo_path)
        with pytest.raises(StoreError, match="a conversation id must be a non-empty string"):
            s.import_history(type(h)("", h.messages))
        with pytest.raises(StoreError, match="non-empty"):
            s.append_message("", h.messages[0])
    assert conversations(db) == []


def test_unknown_conversation_upto_and_vessel(tmp_path: Path, demo_path: Path) -> None:
    db = str(tmp_path / "t.db")
    assert "no conversation 'nope'" in one_line_error(run("history", "show", "nope", "--db", db))
    line = one_line_error(run("replay", "nope", "--db", db))
    assert line == f"Error: nope: neither a history file nor a stored conversation in {db}"
    line = one_line_error(run("replay", str(demo_path), "--upto", "m99"))
    assert "no message with id 'm99'" in line
    line = one_line_error(run("render", str(demo_path), "--vessel", "nosuch"))
    assert line.startswith("Error: unknown vessel 'nosuch'; known vessels: ") and "kimi" in line


# -- the database: a directory, read-only, another program's file, a corrupt file -----------------------


def test_a_directory_as_the_database(tmp_path: Path) -> None:
    line = one_line_error(run("history", "list", "--db", str(tmp_path)))
    assert line == f"Error: {tmp_path}: is a directory, not a database file (e.g. {tmp_path}/toolreplay.db)"


@pytest.mark.parametrize(("cut", "problem"), [(0, "file is not a database"), (3000, "malformed")])
def test_a_corrupt_database_is_one_line(tmp_path: Path, demo_path: Path, cut: int, problem: str) -> None:
    real = tmp_path / "real.db"
    with SQLiteStore(real) as s:
        s.import_history(load_history(demo_path))
    content = real.read_bytes()[:cut] if cut else b"garbage " * 100
    db = _write(tmp_path, "bad.db", content)
    line = one_line_error(run("history", "list", "--db", str(db)))
    assert line.startswith(f"Error: {db}: not a usable SQLite database (") and problem in line
    assert db.read_bytes() == content  # left as it was


def test_another_programs_sqlite_file_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "logs.db"  # llm's logs.db has a conversations table too
    with closing(sqlite3.connect(db)) as c, c:
        c.execute("CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT)")
        c.execute("CREATE TABLE responses (id TEXT)")
    line = one_line_error(run("history", "list", "--db", str(db)))
    assert line == (
        f"Error: {db}: not a toolreplay database (it holds other tables: conversations, responses); "
        f"name another --db, or bring its conversations in with: toolreplay import {db}"
    )
    with closing(sqlite3.connect(db)) as c:
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        mode = c.execute("PRAGMA journal_mode").fetchone()[0]
    assert tables == {"conversations", "responses"} and mode == "delete"  # not touched


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` made unwritable, for root too: root ignores permission bits but not the immutable flag
    (``chattr +i``, which only root may set); anyone else gets ``chmod a-w``."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & 0o555)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    assert made.returncode == 0, f"root needs chattr +i to make {path} read-only: {made.stderr.strip()}"
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="chattr and /proc are Linux's")
def test_a_read_only_database_and_directory(tmp_path: Path, demo_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    db = ro / "t.db"
    assert run("import", str(demo_path), "--db", str(db)).exit_code == 0
    with read_only(db), read_only(ro):
        line = one_line_error(run("history", "list", "--db", str(db)))
        assert "cannot open the database for writing (the file is read-only)" in line
        line = one_line_error(run("import", str(demo_path), "--db", str(ro / "new.db")))
        assert f"cannot create the database (its directory {ro} is not writable)" in line
    # a directory no one may create files in, root included
    line = one_line_error(run("import", str(demo_path), "--db", "/proc/self/new.db"))
    assert "cannot create the database (its directory /proc/self is not writable)" in line
    assert run("history", "list", "--db", str(db)).exit_code == 0  # writable again: nothing was left broken


# -- turn and chat: refused before storing; a failed turn says what it left ----------------------------


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["", "--conversation", "c"], "Invalid value for 'TEXT': must not be empty"),
        (["  ", "--conversation", "c"], "Invalid value for 'TEXT': must not be empty"),
        (["hi", "--conversation", " "], "Invalid value for '--cid' / '--conversation': must not be empty"),
    ],
)
def test_turn_refuses_empty_text_or_conversation(tmp_path: Path, args: list[str], problem: str) -> None:
    db = tmp_path / "t.db"
    res = run("turn", *args, "--vessel", "kimi", "--db", str(db), "--base-url", "http://127.0.0.1:9")
    assert res.exit_code == 2 and problem in res.stderr
    assert conversations(db) == []


def test_run_turn_refuses_empty_text_before_storing(tmp_path: Path) -> None:
    from toolreplay._loop import run_turn

    with SQLiteStore(tmp_path / "t.db") as s:
        with pytest.raises(ConfigError, match="needs the user's text"):
            run_turn("c", " \n", "kimi", store=s)
        with pytest.raises(ConfigError, match="needs a conversation id"):
            run_turn("", "hi", "kimi", store=s)
        assert s.list_conversations() == []


def test_a_turn_refused_before_sending_says_nothing_was_stored(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    res = run("turn", "hi", "--vessel", "openai", "--conversation", "c", "--db", str(db))
    line = one_line_error(res)
    assert (
        line == "Error: openai: set OPENAI_API_KEY or use --base-url for a local server (nothing was stored)"
    )
    assert conversations(db) == []


def test_a_failed_turn_says_its_reply_is_stored_interrupted(double: ProviderDouble, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    double.script(Error(400, "messages: bad shape"))
    res = run(
        "turn", "hi", "--vessel", "anthropic", "--conversation", "c", "--db", str(db),
        "--base-url", double.base_url_for("anthropic"),
    )  # fmt: skip
    line = one_line_error(res)
    assert "messages: bad shape" in line and line.endswith("(the reply a2 is stored as interrupted)")
    with SQLiteStore(db) as s:
        assert [(m.id, m.status) for m in s.load("c").messages] == [("u1", "complete"), ("a2", "interrupted")]


def test_chat_says_what_a_failed_turn_left_and_where_a_switch_sends(
    double: ProviderDouble, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    url = double.base_url_for("kimi")
    double.script(Text("Hello."))
    script = "hi\n/vessel gemini\nhello\n/vessel kimi " + url + "\n/exit\n"
    res = CliRunner().invoke(
        cli,
        ["chat", "--vessel", "kimi", "--conversation", "c", "--db", str(db), "--base-url", url],
        input=script,
    )
    out = res.output
    assert res.exit_code == 0, out
    assert "kimi> Hello." in out
    # The chat's base URL is kept across a switch (the double serves every wire on it).
    assert f"vessel: gemini at {url}" in out
    assert "gemini> ok" in out
    assert f"vessel: kimi at {url}" in out
    with SQLiteStore(db) as s:
        assert [m.vessel for m in s.load("c").messages] == [None, "kimi", None, "gemini"]


def test_chat_refuses_an_empty_conversation_id(tmp_path: Path) -> None:
    res = run("chat", "--vessel", "kimi", "--conversation", "", "--db", str(tmp_path / "t.db"))
    assert res.exit_code == 2 and "'--conversation': must not be empty" in res.stderr


# -- what a person reads ---------------------------------------------------------------------------------


def test_history_show_counts_and_error_answers(tmp_path: Path) -> None:
    hist = {
        "id": "h",
        "messages": [
            {"id": "m1", "role": "user", "text": "Close #99."},
            {
                "id": "m2",
                "role": "assistant",
                "text": "There is no #99.",
                "tool_uses": [
                    {"name": "coop", "input": {"action": "close", "id": 99}, "answer": "error: no todo #99",
                     "is_error": True},
                    {"name": "other", "input": {}, "answer": "boom", "is_error": True},
                ],
            },
        ],
    }  # fmt: skip
    path = _write(tmp_path, "h.json", json.dumps(hist))
    db = str(tmp_path / "t.db")
    assert run("import", str(path), "--db", db).exit_code == 0
    out = run("history", "show", "h", "--db", db).stdout
    assert "h: 2 messages, 2 calls" in out
    assert "    -> error: no todo #99" in out and "error error" not in out
    assert "    -> error: boom" in out
    single = {"id": "s", "messages": [hist["messages"][0]]}  # type: ignore[index]
    assert run("import", str(_write(tmp_path, "s.json", json.dumps(single))), "--db", db).exit_code == 0
    assert "s: 1 message, 0 calls" in run("history", "show", "s", "--db", db).stdout


def test_coop_by_hand_refuses_empty_text(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    res = run("coop", "add", " ", "--db", db)
    assert res.exit_code == 2 and "Invalid value for 'TEXT': must not be empty" in res.stderr
    assert run("coop", "add", "a todo", "--db", db).stdout == "status: added #1\n"
    res = run("coop", "note", "1", "", "--db", db)
    assert res.exit_code == 2 and "must not be empty" in res.stderr
    assert one_line_error(run("coop", "close", "7", "--db", db)) == "Error: there is no todo #7"


def test_every_command_has_help_and_consistent_tool_options() -> None:
    top = run("--help")
    assert top.exit_code == 0
    for name, (_, _, short) in COMMANDS.items():
        assert f"{name}" in top.stdout and short in top.stdout.replace("\n ", " ")
        res = run(name, "--help")
        assert res.exit_code == 0, (name, res.output)
        assert res.stdout.startswith(f"Usage: toolreplay {name} ")
    for name in ("turn", "chat", "mcp"):
        assert "--tools coop|MODULE:ATTR" in run(name, "--help").stdout
    # short help in the group listing is a whole sentence, not cut with "..."
    assert "...\n" not in run("history", "--help").stdout.split("Commands:")[1]


def test_demo_tells_the_command_that_runs_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from toolreplay._cli.demo import program_name

    monkeypatch.setattr(sys, "argv", ["/somewhere/not/on/path/toolreplay", "demo"])
    monkeypatch.setenv("PATH", str(tmp_path))
    assert program_name() == "/somewhere/not/on/path/toolreplay"  # outside the working directory
    exe = tmp_path / "bin" / "toolreplay"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(exe), "demo"])
    monkeypatch.chdir(tmp_path)
    assert program_name() == "bin/toolreplay"  # python3 scripts/dev.py demo: .venv/bin/toolreplay
    monkeypatch.setenv("PATH", str(exe.parent))
    assert program_name() == "toolreplay"
    monkeypatch.setattr(sys, "argv", ["-c"])
    assert program_name() == "toolreplay"


# -- the real entry point and the import cost -----------------------------------------------------------


def _entry(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_entry_point_bad_input_is_one_line_without_traceback(tmp_path: Path) -> None:
    bad = _write(tmp_path, "bad.json", _with(tool_uses={"a": 1}))
    db = tmp_path / "t.db"
    for args in (["replay", str(bad)], ["import", str(bad), "--db", str(db)], ["history", "show", "x"]):
        proc = _entry(*args, env={"TOOLREPLAY_DB": str(db)})
        assert proc.returncode == 1, proc
        assert proc.stdout == "" and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("Error: "), proc.stderr
    assert conversations(db) == []


def test_entry_point_demo_runs_offline_and_says_what_next(tmp_path: Path) -> None:
    proc = _entry("demo", "--db", str(tmp_path / "d.db"), env={"COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "Try next:" in proc.stdout and "history show demo-chief" in proc.stdout
    assert conversations(tmp_path / "d.db") == ["demo-chief"]


HEAVY = ("httpx", "rich", "click", "pydantic", "jinja2", "scipy", "matplotlib", "psycopg", "mcp", "anthropic")


def test_import_toolreplay_stays_light() -> None:
    code = (
        "import sys, toolreplay\n"
        "from toolreplay import load_history, prepare_turn_messages, History, ToolreplayError\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"import toolreplay loaded: {proc.stdout.strip()}"


# -- the claude vessel: no tools means none; tools need the mcp SDK -------------------------------------


def test_claude_without_tools_gets_no_mcp_server() -> None:
    from toolreplay._loop.claude_cli import ClaudeRun, command

    argv = command(ClaudeRun(prompt="p", model="sonnet", tools=(), db="/data/t.db"), [])
    assert "--mcp-config" not in argv and "--allowedTools" not in argv
    assert "--strict-mcp-config" in argv and argv[argv.index("--tools") + 1] == ""  # nor the user's own
    argv = command(ClaudeRun(prompt="p", model="sonnet", tools=("coop",), db="/data/t.db"), ["coop"])
    assert "--mcp-config" in argv and argv[argv.index("--allowedTools") + 1] == "mcp__coop__coop"


def test_claude_with_tools_needs_the_mcp_sdk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    from toolreplay._loop import claude_cli

    monkeypatch.setattr(claude_cli, "require_cli", lambda exe=None: None)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=r"pip install 'toolreplay\[mcp\]'"):
        claude_cli.preflight(["coop"], str(tmp_path / "t.db"))
    claude_cli.preflight([], str(tmp_path / "t.db"))  # no tools: no server, no SDK needed


@pytest.mark.parametrize(
    "spec", ["os.path:join", "toolreplay._tools:Tool", "toolreplay._tools.coop:coop_tool"]
)
def test_tools_naming_a_function_with_arguments_is_one_line(tmp_path: Path, spec: str) -> None:
    db = tmp_path / "t.db"
    res = run("turn", "hi", "--vessel", "kimi", "--conversation", "c", "--tools", spec, "--db", str(db))
    assert one_line_error(res) == (
        f"Error: --tools {spec}: a function that needs arguments; name a Tool, a list of tools, a "
        "ToolRegistry or a function of no argument that returns one"
    )
    assert conversations(db) == []


CRASHING_TOOL = """
from toolreplay._tools import tool

@tool("coop", "crashes", {"type": "object", "properties": {}})
def boom(args):
    raise RuntimeError("disk on fire")
"""


def test_a_crashing_tool_does_not_end_the_chat(
    double: ProviderDouble, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreplay.testing import Call, Calls

    (tmp_path / "qa_crashing_tools.py").write_text(CRASHING_TOOL, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    double.script(Calls([Call("coop", {"action": "close", "id": 1})]), Text("Still here."))
    db = tmp_path / "t.db"
    res = CliRunner().invoke(
        cli,
        ["chat", "--vessel", "kimi", "--conversation", "c", "--db", str(db),
         "--tools", "qa_crashing_tools:boom", "--base-url", double.base_url_for("kimi")],
        input="Close #1.\nAnd now?\n",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert (
        "error: RuntimeError: disk on fire at qa_crashing_tools.py:6 (the reply a2 is stored as interrupted)"
        in res.output
    )
    assert "kimi> Still here." in res.output  # the session went on
    with SQLiteStore(db) as s:
        reply = s.load("c").messages[1]
    assert reply.status == "interrupted" and [(c.name, c.answer) for c in reply.tool_uses] == [("coop", None)]


def test_a_dump_directory_that_cannot_be_made_is_refused_before_storing(tmp_path: Path) -> None:
    blocker = _write(tmp_path, "a-file", "x")
    db = tmp_path / "t.db"
    res = run(
        "turn", "hi", "--vessel", "kimi", "--conversation", "c", "--db", str(db),
        "--base-url", "http://127.0.0.1:9", "--dump-requests", str(blocker / "dumps"),
    )  # fmt: skip
    line = one_line_error(res)
    assert line.startswith(f"Error: {blocker / 'dumps'}: cannot create the dump directory")
    assert line.endswith("(nothing was stored)")
    assert conversations(db) == []

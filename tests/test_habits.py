"""llm-style habits: the default vessel, -c/--cid, short options, the prompt from stdin, stored keys."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from toolreplay._cli import cli
from toolreplay._config import default_vessel, key_for, keys_path
from toolreplay._store.sqlite import SQLiteStore
from toolreplay.testing import ProviderDouble, Text


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="toolreplay", input=input)


@pytest.fixture
def double() -> ProviderDouble:
    with ProviderDouble() as d:
        yield d  # type: ignore[misc]


def test_default_vessel_is_written_to_the_config_file_and_used(
    double: ProviderDouble, tmp_path: Path
) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "toolreplay" / "vessels.toml"
    config.parent.mkdir(parents=True)
    config.write_text('# mine\n[vessels.kimi]\nmodel = "k2"\n', encoding="utf-8")
    assert run("default").output.strip() == "no default vessel (set one: toolreplay default NAME)"
    assert run("default", "nope").exit_code == 1
    res = run("default", "gemini")
    assert res.exit_code == 0 and res.output == f"default vessel: gemini (in {config})\n"
    assert run("default", "kimi").exit_code == 0
    assert (
        config.read_text(encoding="utf-8")
        == 'default_vessel = "kimi"\n# mine\n[vessels.kimi]\nmodel = "k2"\n'
    )
    assert default_vessel() == "kimi" and run("default").output == "kimi\n"
    db = str(tmp_path / "t.db")
    double.script(Text("one"), Text("two"))
    res = run("turn", "hi", "--cid", "a", "-u", double.url, "--db", db)
    assert res.exit_code == 0, res.output
    assert double.requests[-1].wire == "openai-chat"  # kimi, from the configuration file
    assert double.requests[-1].body["model"] == "k2"


def test_lab_without_vessel_asks_the_default_one(
    double: ProviderDouble, tmp_path: Path, demo_path: Path
) -> None:
    base = ["lab", str(demo_path), "--at", "m12", "--expect", "coop:close", "--trials", "1"]
    res = run(*base, "--modes", "native", "--no-chart", "-u", double.url, "--out", str(tmp_path / "o"))
    assert res.exit_code == 1 and "no vessel: pass --vessel NAME" in res.output, res.output
    assert double.requests == []
    assert run("default", "gemini").exit_code == 0
    double.script(Text("Closed it."))
    res = run(*base, "--modes", "native", "--no-chart", "-u", double.url, "--out", str(tmp_path / "o"))
    assert res.exit_code == 0, res.output
    assert [r.wire for r in double.requests] == ["gemini"] and "gemini" in res.output


def test_no_vessel_anywhere_says_how_to_set_one(tmp_path: Path) -> None:
    res = run("turn", "hi", "--db", str(tmp_path / "t.db"))
    assert res.exit_code == 1
    assert (
        "no vessel: pass --vessel NAME (-v NAME), or set a default with `toolreplay default NAME`"
        in res.output
    )
    assert not (tmp_path / "t.db").exists() or SQLiteStore(tmp_path / "t.db").list_conversations() == []


def test_continue_takes_the_latest_conversation_and_its_vessel(
    double: ProviderDouble, tmp_path: Path
) -> None:
    db = str(tmp_path / "t.db")
    double.script(Text("a"), Text("b"), Text("c"))
    assert run("turn", "first", "-v", "gemini", "--cid", "old", "-u", double.url, "--db", db).exit_code == 0
    res = run("turn", "new one", "-v", "anthropic", "-u", double.url, "--db", db)
    assert res.exit_code == 0, res.output
    res = run("turn", "-c", "and then?", "-u", double.url, "--db", db)
    assert res.exit_code == 0 and res.output == "c\n", res.output
    assert double.requests[-1].wire == "anthropic"  # the conversation's last vessel
    with SQLiteStore(db) as s:
        rows = {r.id: r.messages for r in s.list_conversations()}
    assert rows.pop("old") == 2
    [(new_id, count)] = rows.items()
    assert new_id.startswith("turn-") and count == 4
    res = run("turn", "-c", "x", "--cid", "old", "--db", db)
    assert res.exit_code == 2 and "name the conversation twice" in res.output
    res = run("turn", "-c", "x", "--db", str(tmp_path / "empty.db"))
    assert res.exit_code == 2 and "no conversation stored" in res.output


def test_prompt_from_stdin_when_dash_or_piped(double: ProviderDouble, tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    res = run("turn", "-", "-v", "kimi", "--cid", "p", "-u", double.url, "--db", db, input="from stdin\n")
    assert res.exit_code == 0, res.output
    # CliRunner's stdin is not a terminal: TEXT left out reads it.
    res = run(
        "turn", "-v", "kimi", "--cid", "p", "-s", "Be brief.", "-u", double.url, "--db", db, input="piped"
    )
    assert res.exit_code == 0, res.output
    with SQLiteStore(db) as s:
        texts = [m.text for m in s.load("p").messages if m.role == "user"]
    assert texts == ["from stdin", "piped"]
    assert double.requests[-1].body["messages"][0] == {"role": "system", "content": "Be brief."}
    res = run("turn", "-v", "kimi", "--cid", "p", "--db", db, input="  \n")
    assert res.exit_code == 2 and "the prompt read from stdin is empty" in res.output


@pytest.mark.keyless  # needs the key unset
def test_keys_set_list_path_and_the_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = keys_path()
    assert run("keys", "path").output == f"{path}\n"
    res = run("keys", "set", "kimi", input="sk-stored-key-123456\n")
    assert (
        res.exit_code == 0
        and res.output
        == f"MOONSHOT_API_KEY stored in {path} (used by every vessel reading MOONSHOT_API_KEY)\n"
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "sk-stored" not in run("keys", "list").output
    listed = {line.split()[0]: line for line in run("keys", "list").output.splitlines()}
    assert "keys file" in listed["MOONSHOT_API_KEY"] and "kimi" in listed["MOONSHOT_API_KEY"]
    assert "not set" in listed["GEMINI_API_KEY"]
    assert key_for("MOONSHOT_API_KEY") == "sk-stored-key-123456"
    monkeypatch.setenv("MOONSHOT_API_KEY", "sk-from-env-99999999")
    assert key_for("MOONSHOT_API_KEY") == "sk-from-env-99999999"
    assert "environment (wins over the keys file)" in run("keys", "list").output
    assert (
        run("keys", "set", "ollama", input="x").output.strip()
        == "Error: ollama takes no key (its wire is ollama)"
    )
    assert run("keys", "set", "kimi", input="\n").exit_code == 1


@pytest.mark.keyless  # needs the key unset
def test_a_stored_key_is_sent_to_its_own_vessel(double: ProviderDouble, tmp_path: Path) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "toolreplay" / "vessels.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f'[vessels.mine]\nwire = "openai-chat"\nbase_url = "{double.url}/v1"\nmodel = "m"\n'
        'key_env = "MINE_KEY"\n',
        encoding="utf-8",
    )
    assert run("keys", "set", "mine", input="sk-mine-0123456789").exit_code == 0
    res = run("turn", "hi", "-v", "mine", "--cid", "k", "--db", str(tmp_path / "t.db"))
    assert res.exit_code == 0, res.output
    assert double.requests[-1].headers["authorization"] != ""
    assert double.requests[-1].has_key()


def test_help_names_the_short_options() -> None:
    for command, names in {
        "turn": [
            "-v, --vessel",
            "-c, --continue",
            "--cid, --conversation",
            "-T, --tools",
            "-s, --system",
            "-m, --model",
            "-u, --base-url",
        ],
        "chat": ["-v, --vessel", "-c, --continue", "--cid, --conversation"],
        "check": ["-v, --vessel", "--offline"],
        "double": ["-p, --port", "--script", "--stand-in"],
        "history list": ["-n INTEGER", "-q, --query", "--json"],
        "history rm": ["-y, --yes"],
        "keys": ["set", "list", "path"],
        "lab": ["-v, --vessel", "-T, --tools", "-s, --system", "-m, --model", "-u, --base-url"],
    }.items():
        out = run(*command.split(), "--help").output
        for name in names:
            assert name in out, (command, name)
    # the top-level help names the commands and the habits they share
    out = " ".join(run("--help").output.split())
    for name in ("double ", "default ", "keys ", "-v vessel", "-m model", "-s system prompt", "-T tools"):
        assert name in out, name
    for name in ("-u base URL", "-c continue", "--cid ID", "-p the double's port", "stdin"):
        assert name in out, name

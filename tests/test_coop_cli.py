"""`toolreplay coop ...` by hand: the same words the model gets from the tool."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from toolreplay._cli import cli


def run(db: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["coop", *args, "--db", str(db)])
    return res.exit_code, res.output


def test_coop_by_hand(tmp_path: Path) -> None:
    db = tmp_path / "board.db"
    assert run(db, "add", "fix the flaky build") == (0, "status: added #1\n")
    assert run(db, "add", "update the README") == (0, "status: added #2\n")
    assert run(db, "list") == (0, "#1 open  fix the flaky build\n#2 open  update the README\n")
    assert run(db, "close", "1", "--note", "green") == (0, "status: closed\n")
    assert run(db, "show", "1") == (0, "#1 closed  fix the flaky build\nnote: green\n")
    assert run(db, "list", "--status", "closed") == (0, "#1 closed  fix the flaky build\n")
    assert run(db, "reopen", "1") == (0, "status: open\n")
    assert run(db, "note", "2", "needs review") == (0, "status: noted on #2\n")
    assert run(db, "edit", "2", "update the docs") == (0, "status: edited #2\n")
    assert run(db, "list", "--status", "all")[1].count("#") == 2


def test_coop_errors_exit_1_with_one_line(tmp_path: Path) -> None:
    code, out = run(tmp_path / "b.db", "close", "7")
    assert code == 1
    assert out == "Error: there is no todo #7\n"
    code, out = run(tmp_path / "b.db", "add", "  ")
    assert code == 2 and "Invalid value for 'TEXT': must not be empty" in out


def test_coop_uses_toolreplay_db(tmp_path: Path) -> None:
    import os

    db = tmp_path / "env.db"
    env = {**os.environ, "TOOLREPLAY_DB": str(db)}
    res = CliRunner(env=env).invoke(cli, ["coop", "add", "from the environment"])
    assert res.exit_code == 0, res.output
    assert db.exists()

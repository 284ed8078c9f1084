"""Keys never land anywhere: the database, request dumps, lab output, logs, error messages, any output.

A recognisable fake key is set in every key variable the vessels read. Then, as a user would, through the
real command line against a provider double on 127.0.0.1 (so the key is really sent, in its header):
a successful turn with a tool call, turns failing with 401 and 400 whose provider messages quote the key
back (as OpenAI's "Incorrect API key provided: ..." does), a turn retried after a 429, ``check``, a lab
run, all with request dumps. In process, with every logger at DEBUG: a stream whose error event quotes
the key, and the same turns again. Then every file written (database and its WAL, dumps, lab output,
the home directory) and every captured output and log record is searched for the key, and for a
distinctive part of it: it must be nowhere. On PostgreSQL too when TOOLREPLAY_TEST_PG is set.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from store_fixtures import _fresh_pg_database
from toolreplay._errors import ProviderError
from toolreplay._loop import TurnOptions, run_turn_async
from toolreplay._store import open_store
from toolreplay._tools import build_registry
from toolreplay._transport.client import RetryPolicy, Transport
from toolreplay._vessels import BUILTIN
from toolreplay.testing import Call, Calls, Error, ProviderDouble, Text

KEY = "sk-test-SECRET-canary-123-9f8e7d6c5b4a"
NEEDLES = (KEY.encode(), b"SECRET-canary")  # the whole key, and a part that any cut of it would keep
KEY_VARS = sorted({v.key_env for v in BUILTIN.values() if v.key_env})
DEMO = Path(__file__).resolve().parent.parent / "src" / "toolreplay" / "data" / "demo.json"


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for var in KEY_VARS:
        monkeypatch.setenv(var, KEY)
    return dict(os.environ)


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def leaks_in_files(root: Path) -> list[str]:
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path}: {n.decode()}" for n in NEEDLES if n in data]
    return found


def leaks_in(text: str, where: str) -> list[str]:
    return [f"{where}: {n.decode()}" for n in NEEDLES if n.decode() in text]


def pg_text(url: str) -> str:
    """Every value of every toolreplay table of a PostgreSQL database, as text."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = []
        for table in ("conversations", "messages", "tool_uses", "todos", "schema_migrations"):
            rows += conn.execute(f"SELECT * FROM {table}").fetchall()  # type: ignore[arg-type]
    return "\n".join(repr(r) for r in rows)


class Cli:
    """Runs ``toolreplay`` as a user would and keeps everything it printed."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.outputs: list[tuple[str, str]] = []

    def __call__(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "toolreplay", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        self.outputs.append((" ".join(args[:2]), done.stdout + done.stderr))
        assert (done.returncode == 0) == ok, done.stdout + done.stderr
        return done

    def leaks(self) -> list[str]:
        return [leak for where, text in self.outputs for leak in leaks_in(text, where)]


def run_everything(cli: Cli, double: ProviderDouble, db: str, work: Path) -> None:
    dump = str(work / "dumps")
    kimi = double.base_url_for("kimi")
    turn = [
        "--vessel",
        "kimi",
        "--conversation",
        "c",
        "--base-url",
        kimi,
        "--db",
        db,
        "--dump-requests",
        dump,
        "--send-key",
    ]
    # a successful turn with a tool call
    double.script(Calls([Call("coop", {"action": "add", "text": "rotate the keys"})]), Text("Added #1."))
    cli("turn", "Add a todo to rotate the keys.", *turn, "--tools", "coop")
    # failing turns whose provider messages quote the key back
    double.script(Error(401, f"Incorrect API key provided: {KEY}. Find your key at ..."))
    assert "HTTP 401" in cli("turn", "Again.", *turn, ok=False).stderr
    double.script(Error(400, f"Invalid request for key {KEY}: messages[0] is empty"))
    assert "HTTP 400" in cli("turn", "Once more.", *turn, ok=False).stderr
    # a 429 with the key in its message, retried, then an answer (a short Retry-After)
    double.script(Error(429, f"Rate limit reached for {KEY}", retry_after=0.05), Text("Fine now."))
    cli("turn", "And now?", *turn)
    # the anthropic wire (x-api-key header) and gemini (x-goog-api-key), each answering
    for vessel in ("anthropic", "gemini"):
        double.script(Text(f"Hello from {vessel}."))
        base = double.base_url_for(vessel)
        cli("turn", "Hi.", "--vessel", vessel, "--conversation", "c", "--base-url", base, "--db", db,
            "--dump-requests", dump, "--send-key")  # fmt: skip
    # check, online against the double
    double.script(Text("accepted"))
    cli("check", "--vessel", "kimi", "--base-url", kimi, "--dump-requests", dump, "--send-key")
    # a lab run, its output directory and its dumps
    cli("lab", str(DEMO), "--at", "m10", "--vessel", "kimi", "--trials", "2", "--expect", "coop:close",
        "--out", str(work / "lab"), "--base-url", kimi, "--no-chart", "--db", db, "--send-key")  # fmt: skip
    assert (work / "lab" / "trials.jsonl").is_file()
    assert sum(1 for r in double.requests if r.has_key()) >= 10  # the key really was sent, each time
    assert any((work / "dumps").glob("*-meta.json"))


async def _error_event_stream(store: Any, dump: Path) -> str:
    """A streamed answer whose error event quotes the key, through the loop (in process)."""

    def handler(request: httpx.Request) -> httpx.Response:
        async def body() -> AsyncIterator[bytes]:
            yield b'data: {"error": {"message": "Invalid API key ' + KEY.encode() + b'", "type": "auth"}}\n\n'

        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    async def no_wait(_: float) -> None:
        return None

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        transport = Transport(client=client, retry=RetryPolicy(max_attempts=2, sleep=no_wait), dump=dump)
        with pytest.raises(ProviderError) as err:
            await run_turn_async(
                "inproc", "hello", "kimi", build_registry(["coop"], store), store=store, transport=transport,
                options=TurnOptions(base_url="http://127.0.0.1:9/v1", send_key=True),
            )  # fmt: skip
    return str(err.value)


def in_process(double: ProviderDouble, db: str, work: Path, caplog: pytest.LogCaptureFixture) -> list[str]:
    """The loop and transport in this process, every logger at DEBUG; returns the leaks in what it said."""
    caplog.set_level(logging.DEBUG)
    said: list[str] = []
    with open_store(db) as store:  # type: ignore[attr-defined]
        said.append(asyncio.run(_error_event_stream(store, work / "dumps-inproc")))
        double.script(Error(429, f"slow down {KEY}", retry_after=0), Error(500, f"oops {KEY}"), Text("ok"))

        async def no_wait(_: float) -> None:
            return None

        async def retried() -> str:
            async with Transport(retry=RetryPolicy(sleep=no_wait), dump=work / "dumps-inproc") as t:
                res = await run_turn_async(
                    "inproc", "again", double.vessel("kimi"), store=store, transport=t,
                    options=TurnOptions(send_key=True),
                )  # fmt: skip
            return res.reply.text

        said.append(asyncio.run(retried()))
    said += [r.getMessage() for r in caplog.records]
    said += [str(r.args) for r in caplog.records]
    return [leak for text in said for leak in leaks_in(text, "in-process output or log")]


@pytest.mark.slow
def test_the_key_is_nowhere_sqlite(
    keyed: dict[str, str], double: ProviderDouble, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cli = Cli(keyed)
    db = str(tmp_path / "db" / "toolreplay.db")
    run_everything(cli, double, db, tmp_path)
    leaks = cli.leaks() + in_process(double, db, tmp_path, caplog)
    home = Path(keyed["XDG_DATA_HOME"]).parent  # the test's home: config, data, anything written there
    leaks += leaks_in_files(tmp_path) + leaks_in_files(home)
    assert (tmp_path / "db" / "toolreplay.db").stat().st_size > 0
    assert not leaks, leaks


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    yield from _fresh_pg_database(request)


@pytest.mark.slow
def test_the_key_is_nowhere_postgres(
    keyed: dict[str, str],
    double: ProviderDouble,
    tmp_path: Path,
    pg_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cli = Cli(keyed)
    run_everything(cli, double, pg_url, tmp_path)
    leaks = cli.leaks() + in_process(double, pg_url, tmp_path, caplog)
    leaks += leaks_in_files(tmp_path) + leaks_in(pg_text(pg_url), "the PostgreSQL tables")
    assert "Added #1." in pg_text(pg_url)  # the search did read the stored conversation
    assert not leaks, leaks

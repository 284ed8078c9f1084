"""A key goes only to its vessel's own host (issue 15, item 1).

A ``--base-url`` on another host gets no key unless the user says so (``--send-key``, or the vessel's own
profile names that URL); a key never travels over plain http to a host that is not loopback; ``check``
never sends one vessel's key to another vessel's URL. Each refusal happens before anything is sent or
stored, in one line that says what to do.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from toolreplay._cli import cli
from toolreplay._errors import ConfigError
from toolreplay._transport.client import Transport
from toolreplay._transport.request import prepare, resolve_key
from toolreplay._vessels import BUILTIN, get_vessel
from toolreplay.testing import ProviderDouble, Text

KEY = "sk-fake-hostrule-0123456789abcdef"
KEY_VARS = sorted({v.key_env for v in BUILTIN.values() if v.key_env})
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in KEY_VARS:
        monkeypatch.setenv(var, KEY)


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _rows(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])


# -- the rule, where a request is built ------------------------------------------------------------------


def test_own_host_gets_the_key(keyed: None) -> None:
    assert prepare("kimi", CHAT).headers["authorization"] == f"Bearer {KEY}"
    # another path on the same host is still the vessel's own host
    assert resolve_key(get_vessel("kimi"), "https://api.moonshot.ai/v2/") == KEY


def test_loopback_base_url_gets_no_key_unless_asked(keyed: None) -> None:
    prep = prepare("kimi", CHAT, base_url="http://127.0.0.1:9/v1")
    assert "authorization" not in prep.headers
    assert "x-api-key" not in prepare("anthropic", {}, base_url="http://localhost:9").headers
    assert "x-goog-api-key" not in prepare("gemini", {}, base_url="http://[::1]:9/v1beta").headers
    asked = prepare("kimi", CHAT, base_url="http://127.0.0.1:9/v1", send_key=True)
    assert asked.headers["authorization"] == f"Bearer {KEY}"


def test_another_remote_host_is_refused_without_send_key(keyed: None) -> None:
    with pytest.raises(ConfigError) as err:
        prepare("kimi", CHAT, base_url="https://proxy.example.com/v1")
    assert str(err.value) == (
        "kimi: MOONSHOT_API_KEY is for api.moonshot.ai, not proxy.example.com: pass send_key=True "
        "(--send-key) to send it there, or set base_url in the vessel's profile"
    )
    sent = prepare("kimi", CHAT, base_url="https://proxy.example.com/v1", send_key=True)
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    # a different port of the same host is another server
    with pytest.raises(ConfigError, match=r"pass send_key=True \(--send-key\)"):
        prepare("kimi", CHAT, base_url="https://api.moonshot.ai:8443/v1")


def test_plain_http_to_a_remote_host_is_refused_even_when_asked(keyed: None) -> None:
    for ask in (False, True):
        with pytest.raises(ConfigError) as err:
            prepare("openai", CHAT, base_url="http://10.1.2.3:8000/v1", send_key=ask)
        assert "10.1.2.3" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ConfigError) as err:
        prepare("openai", CHAT, base_url="http://10.1.2.3:8000/v1", send_key=True)
    assert str(err.value) == (
        "openai: http://10.1.2.3:8000/v1 is plain http: OPENAI_API_KEY is sent to a host that is not "
        "loopback only over https"
    )


def test_the_vessel_profile_may_name_its_own_url(
    keyed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = tmp_path / "vessels.toml"
    conf.write_text('[vessels.kimi]\nbase_url = "https://gateway.example.org/kimi/v1"\n', encoding="utf-8")
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(conf))
    assert prepare("kimi", CHAT).headers["authorization"] == f"Bearer {KEY}"
    # the built-in host is no longer this vessel's host
    with pytest.raises(ConfigError, match=r"is for gateway\.example\.org, not api\.moonshot\.ai"):
        prepare("kimi", CHAT, base_url="https://api.moonshot.ai/v1")
    conf.write_text('[vessels.kimi]\nbase_url = "http://gateway.example.org/v1"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="plain http"):
        prepare("kimi", CHAT)


def test_send_key_through_the_transport(keyed: None) -> None:
    seen: list[httpx.Headers] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return httpx.Response(
            200, json={"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}
        )

    async def go(send_key: bool) -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            t = Transport(client=client)
            await t.send(
                "kimi", CHAT, base_url="https://proxy.example.com/v1", stream=False, send_key=send_key
            )

    with pytest.raises(ConfigError):
        asyncio.run(go(False))
    assert not seen  # refused before anything was sent
    asyncio.run(go(True))
    assert seen[0]["authorization"] == f"Bearer {KEY}"


# -- through the commands ---------------------------------------------------------------------------------


def test_turn_to_another_remote_host_is_refused_before_storing(keyed: None, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    r = _run("turn", "hi", "--vessel", "kimi", "--conversation", "c", "--base-url", "https://evil.example/v1",
             "--db", str(db))  # fmt: skip
    assert r.exit_code == 1
    assert (
        r.stderr.count("\n") == 1
        and "pass send_key=True (--send-key)" in r.stderr
        and "nothing was stored" in r.stderr
    )
    assert _rows(db) == 0
    r = _run("turn", "hi", "--vessel", "kimi", "--conversation", "c", "--base-url", "http://evil.example/v1",
             "--send-key", "--db", str(db))  # fmt: skip
    assert r.exit_code == 1 and "plain http" in r.stderr and _rows(db) == 0


def test_turn_and_lab_to_a_loopback_double_send_no_key_unless_asked(
    keyed: None, double: ProviderDouble, tmp_path: Path, demo_path: Path
) -> None:
    db = str(tmp_path / "t.db")
    base = double.base_url_for("kimi")
    double.script(Text("one"), Text("two"))
    assert (
        _run(
            "turn", "hi", "--vessel", "kimi", "--conversation", "c", "--base-url", base, "--db", db
        ).exit_code
        == 0
    )
    assert _run("turn", "hi", "--vessel", "kimi", "--conversation", "c", "--base-url", base, "--db", db,
                "--send-key").exit_code == 0  # fmt: skip
    assert [r.has_key() for r in double.requests] == [False, True]
    r = _run("lab", str(demo_path), "--at", "m10", "--vessel", "kimi", "--trials", "1",
             "--expect", "coop:close", "--out", str(tmp_path / "lab"), "--base-url", base, "--no-chart",
             "--db", db)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert len(double.requests) > 2 and not any(r.has_key() for r in double.requests[2:])


def test_check_with_a_base_url_sends_no_key_to_it(keyed: None, double: ProviderDouble) -> None:
    double.script(*[Text("accepted")] * 20)
    r = _run("check", "--base-url", double.base_url_for("kimi"))
    assert double.requests and not any(req.has_key() for req in double.requests), r.output
    # a remote URL: every vessel is skipped before anything is sent (the test guard refuses connections)
    r = _run("check", "--base-url", "http://198.51.100.7:8080/v1")
    assert "Traceback" not in r.output and "tests must not reach" not in r.output
    assert "pass send_key=True (--send-key)" in r.output or "plain http" in r.output


def test_check_send_key_needs_one_key(keyed: None, double: ProviderDouble) -> None:
    r = _run("check", "--base-url", double.base_url_for("kimi"), "--send-key")
    assert r.exit_code == 2 and "--send-key" in r.stderr and not double.requests
    r = _run("check", "--vessel", "kimi,anthropic", "--base-url", double.base_url_for("kimi"), "--send-key")
    assert r.exit_code == 2 and not double.requests
    double.script(Text("accepted"))
    r = _run("check", "--vessel", "kimi", "--base-url", double.base_url_for("kimi"), "--send-key")
    assert r.exit_code == 0, r.output
    assert [req.has_key() for req in double.requests] == [True]


def test_chat_switch_to_another_url_drops_the_consent(
    keyed: None, double: ProviderDouble, tmp_path: Path
) -> None:
    base = double.base_url_for("kimi")
    double.script(Text("one"), Text("two"), Text("three"))
    lines = f"hi\n/vessel kimi {base}\nagain\n/vessel kimi {base} --send-key\nthird\n/exit\n"
    r = CliRunner().invoke(
        cli, ["chat", "--vessel", "kimi", "--base-url", base, "--send-key", "--db", str(tmp_path / "c.db")],
        input=lines,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert [req.has_key() for req in double.requests] == [True, False, True]


def test_a_vessel_given_another_url_keeps_its_profiles_host(keyed: None) -> None:
    """The rule reads the host the resolved vessel carries (``home_url``), not a lookup by name: a vessel
    in no table, given another URL (``resolve_vessel`` as a turn does, or ``dataclasses.replace``), does
    not take its key there unasked; a profile of the same name elsewhere does not change that."""
    from dataclasses import replace

    from toolreplay._vessels import Vessel, resolve_vessel

    mine = Vessel("mine", "openai-chat", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY", "m")
    proxy = "https://proxy.example.com/v1"
    for moved in (resolve_vessel(mine, base_url=proxy, model="m2"), replace(mine, base_url=proxy)):
        assert moved.base_url == proxy and moved.home_url == mine.base_url
        with pytest.raises(ConfigError, match="send_key"):
            resolve_key(moved, moved.base_url)
        with pytest.raises(ConfigError, match="send_key"):
            prepare(moved, CHAT)
        assert prepare(moved, CHAT, send_key=True).headers["authorization"] == f"Bearer {KEY}"
    # a built-in one the same way; its own host still gets the key
    kimi = resolve_vessel("kimi", base_url=proxy)
    assert kimi.home_url == get_vessel("kimi").base_url
    with pytest.raises(ConfigError, match="send_key"):
        resolve_key(kimi, kimi.base_url)
    assert resolve_key(resolve_vessel("kimi", model="k3"), get_vessel("kimi").base_url) == KEY

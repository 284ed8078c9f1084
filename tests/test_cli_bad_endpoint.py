"""A vessel that cannot be reached as given (a bad base URL, a missing key, a vessel file or a check
that cannot work) is refused before anything is stored or sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers_cli import conversations, invoke
from toolreplay._errors import ConfigError

# -- a bad base URL is one line and stores nothing; lab --at names its option -----------------


@pytest.mark.parametrize("url", ["http://[::1", "http://h:99999", "ftp://example.com", "http://"])
def test_a_bad_base_url_is_one_config_line(url: str) -> None:
    from toolreplay._transport.request import is_loopback, prepare

    with pytest.raises(ConfigError, match=r"^kimi: base URL .* is not a"):
        prepare("kimi", {"messages": [{"role": "user", "content": "hi"}]}, base_url=url)
    assert is_loopback(url) is False


def test_turn_with_a_bad_base_url_stores_nothing(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    r = invoke(
        "turn", "hi", "--vessel", "kimi", "--conversation", "x", "--base-url", "http://[::1", "--db", str(db)
    )
    assert r.exit_code == 1
    assert r.stderr == (
        "Error: kimi: base URL 'http://[::1' is not a valid URL (Invalid IPv6 URL) (nothing was stored)\n"
    )
    assert not db.exists() or conversations(db) == []


def test_lab_with_a_bad_base_url_makes_no_out_dir(tmp_path: Path, demo_path: Path) -> None:
    out = tmp_path / "lab"
    args = ["lab", str(demo_path), "--vessel", "kimi", "--at", "m04", "--expect", "coop:close"]
    r = invoke(*args, "--trials", "1", "--base-url", "http://[::1", "--out", str(out))
    assert r.exit_code == 1
    assert r.stderr == "Error: kimi: base URL 'http://[::1' is not a valid URL (Invalid IPv6 URL)\n"
    assert not out.exists()


def test_lab_unknown_at_names_the_option_without_a_blank_line(demo_path: Path) -> None:
    r = invoke("lab", str(demo_path), "--vessel", "kimi", "--at", "nosuch", "--expect", "coop:close")
    assert r.exit_code == 1
    assert r.stderr == "Error: --at nosuch: no message with id 'nosuch' in conversation 'demo-chief'\n"


# -- the missing-key message when --base-url was given -------------------------------------------


@pytest.mark.keyless  # needs the key unset
def test_missing_key_for_a_given_remote_base_url_does_not_suggest_base_url(tmp_path: Path) -> None:
    r = invoke(
        "turn", "hi", "--vessel", "openai", "--conversation", "c", "--base-url", "https://example.com/v1",
        "--db", str(tmp_path / "t.db"),
    )  # fmt: skip
    assert r.exit_code == 1
    assert r.stderr == (
        "Error: openai: OPENAI_API_KEY is for api.openai.com, not example.com: pass send_key=True "
        "(--send-key) to send it there, or set base_url in the vessel's profile (nothing was stored)\n"
    )
    r = invoke(
        "turn", "hi", "--vessel", "openai", "--conversation", "c", "--base-url", "https://example.com/v1",
        "--send-key", "--db", str(tmp_path / "t.db"),
    )  # fmt: skip
    assert r.stderr == (
        "Error: openai: set OPENAI_API_KEY to send to https://example.com/v1 (a key is sent only to remote "
        "URLs; loopback URLs need none) (nothing was stored)\n"
    )
    default = invoke(
        "turn", "hi", "--vessel", "openai", "--conversation", "c", "--db", str(tmp_path / "t.db")
    )
    assert "set OPENAI_API_KEY or point base_url (--base-url) at a local server" in default.stderr


# -- an explicitly named vessel file that does not exist ---------------------------------------


def test_a_missing_vessel_file_named_explicitly_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreplay._vessels import BUILTIN, load_vessels

    missing = tmp_path / "missing.toml"
    monkeypatch.setenv("TOOLREPLAY_VESSELS", str(missing))
    r = invoke("vessels")
    assert r.exit_code == 1
    assert r.stderr == f"Error: {missing}: no such vessel file (named by TOOLREPLAY_VESSELS)\n"
    with pytest.raises(ConfigError, match=r"missing\.toml: no such vessel file$"):
        load_vessels(missing)
    monkeypatch.delenv("TOOLREPLAY_VESSELS")
    assert load_vessels() == BUILTIN  # the default path is absent: the built-in table
    assert invoke("vessels").exit_code == 0


# -- check of a vessel named explicitly ----------------------------------------------------------


@pytest.mark.keyless  # needs the key unset
def test_check_of_a_named_vessel_that_cannot_be_checked_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    r = invoke("check", "--vessel", "openai")
    assert r.exit_code == 1
    assert (
        "openai  cannot be checked: openai: set OPENAI_API_KEY or point base_url (--base-url) at a local "
        "server" in r.stdout
    )
    # chosen because its key is set: a vessel that cannot be sent to is skipped, as before
    monkeypatch.setenv("MOONSHOT_API_KEY", "sk-test-not-real")
    r = invoke("check", "--base-url", "http://[::1")
    assert r.exit_code == 0, r.output
    assert "kimi  skipped: kimi: base URL 'http://[::1' is not a valid URL (Invalid IPv6 URL)" in r.stdout

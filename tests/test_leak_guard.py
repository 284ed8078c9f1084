"""The suite's own key-leak check really catches a leak: a test that prints, writes or echoes (escaped) a
piece of a fake key fails, and one that does not passes. Run in a pytester session with the same
``leak_guard`` plugin the suite uses."""

from __future__ import annotations

import os

import pytest

from leak_guard import FAKE_KEYS, leaks

KEY = FAKE_KEYS["OPENAI_API_KEY"]


def test_every_provider_has_its_fake_key_set() -> None:
    for var, value in FAKE_KEYS.items():
        assert os.environ[var] == value


def test_a_piece_and_an_escaped_piece_are_found() -> None:
    assert leaks(f"bad key {KEY[3:15]}...", "x") == [f"x: {KEY[3:15]}"]
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY[:14])
    assert leaks(f'{{"k": "{escaped}"}}', "y")
    assert leaks(f"{KEY[:11]} and {KEY[-11:]}", "z") == []


@pytest.mark.keyless  # its own output holds the leak it plants: not searched (the inner run sets keys)
@pytest.mark.parametrize(
    ("body", "leaked"),
    [
        ("print('bad key', os.environ['OPENAI_API_KEY'][2:20])", True),
        ("(tmp_path / 'dump.json').write_text(os.environ['GEMINI_API_KEY'])", True),
        ("logging.getLogger('x').warning('key %s', os.environ['ZAI_API_KEY'][-13:])", True),
        ("print('nothing secret here'); (tmp_path / 'a.txt').write_text('fine')", False),
    ],
)
def test_the_guard_fails_a_leaking_test(pytester: pytest.Pytester, body: str, leaked: bool) -> None:
    pytester.makeconftest(
        "import pytest\n"
        "from leak_guard import set_fake_keys\n"
        "pytest_plugins = ['leak_guard']\n"
        "@pytest.fixture(autouse=True)\n"
        "def keys(monkeypatch):\n"
        "    set_fake_keys(monkeypatch, keyless=False)\n"
    )
    pytester.makepyfile(f"import logging, os\n\ndef test_it(tmp_path):\n    {body}\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    if leaked:
        assert "key leak" in result.stdout.str()
        assert result.ret != 0
    else:
        assert result.ret == 0, result.stdout.str()

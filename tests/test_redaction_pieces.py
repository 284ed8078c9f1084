"""Redaction covers pieces of a key and escaped echoes (issue 15, item 9): an error quoting most of the
key, or a ``\\u``-escaped echo of it, leaves no 12-character piece of the key in the terminal, the dumps
or the stored error."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from toolreplay._errors import ProviderError
from toolreplay._loop import TurnOptions, run_turn_async
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._transport.client import NO_RETRY, Transport
from toolreplay._transport.dump import redact, redact_bytes

KEY = "sk-proj-Q7wErTy9UiOp3AsDfGh5JkLz"


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def _pieces(text: str) -> list[str]:
    return [KEY[i : i + 12] for i in range(len(KEY) - 11) if KEY[i : i + 12] in text]


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


@pytest.mark.parametrize(
    "said",
    [
        f"bad key {KEY[:-3]}...",  # most of it, from the start
        f"bad key ...{KEY[5:]}",  # most of it, to the end
        f"bad key {KEY[4:20]}",  # a middle piece of 16
        f'{{"error": "bad key {_escaped(KEY)}"}}',  # a \\u-escaped echo
        f'{{"error": "bad key {_escaped(KEY[:14])}{KEY[14:]}"}}',  # half escaped
    ],
)
def test_pieces_and_escaped_echoes_are_redacted(said: str) -> None:
    out = redact(said)
    assert "[redacted]" in out
    decoded = json.loads(out) if out.startswith("{") else out
    assert not _pieces(out) and not _pieces(json.dumps(decoded)) and not _pieces(str(decoded))
    assert not _pieces(redact_bytes(said.encode()).decode())


def test_text_without_a_piece_is_untouched() -> None:
    text = f"model {KEY[:11]} and {KEY[-11:]}: short pieces are not keys"
    assert redact(text) == text
    data = text.encode()
    assert redact_bytes(data) is data


@pytest.mark.parametrize("status", [401, 500])
def test_an_error_quoting_most_of_the_key_leaves_no_piece_anywhere(tmp_path: Path, status: int) -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {KEY[:-4]}****. Or {_escaped(KEY)}"}}
    raw = json.dumps(echo).replace("\\\\u", "\\u").encode()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=raw, headers={"content-type": "application/json"})

    async def go(store: SQLiteStore) -> str:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            t = Transport(client=client, retry=NO_RETRY, dump=tmp_path / "dumps")
            with pytest.raises(ProviderError) as err:
                await run_turn_async("c", "hi", "openai", store=store, transport=t, options=TurnOptions())
        return str(err.value)

    with SQLiteStore(tmp_path / "t.db") as store:
        said = asyncio.run(go(store))
        # refused (401) or failed (5xx) before anything was answered: nothing is stored at all (design 28)
        assert not store.exists("c")
    assert not _pieces(said)
    for f in (tmp_path / "dumps").iterdir():
        text = f.read_text(encoding="utf-8")
        assert not _pieces(text) and not _pieces(text.encode().decode("unicode_escape")), f.name

"""cache-diff on identical, prefix and diverging request pairs, on every wire."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolreplay._api import render
from toolreplay._audit.body import load_request
from toolreplay._audit.cache_diff import cache_diff, cache_diff_files, common_prefix, format_cache_diff
from toolreplay._cli import cli
from toolreplay._history import load_history
from toolreplay._jsonenc import encode
from toolreplay.testing import ProviderDouble

VESSELS = ("openai", "kimi", "codex", "anthropic", "gemini", "ollama", "claude")


def _conversation(turns: int) -> dict[str, Any]:
    """A history of ``turns`` user/assistant pairs, each reply closing a todo with coop."""
    messages: list[dict[str, Any]] = [{"id": "s0", "role": "system", "text": "Keep the board."}]
    for i in range(1, turns + 1):
        messages.append({"id": f"u{i}", "role": "user", "text": f"Close #{i}."})
        messages.append(
            {
                "id": f"a{i}",
                "role": "assistant",
                "text": f"Closed #{i}.",
                "tool_uses": [
                    {"tool_name": "coop", "tool_input": {"action": "close", "id": i}},
                    {"tool_name": "result", "tool_input": "status: closed"},
                ],
            }
        )
    messages.append({"id": f"u{turns + 1}", "role": "user", "text": "And now?"})
    coop = {"name": "coop", "description": "The todo board.", "parameters": {"type": "object"}}
    return {"id": "ten", "tools": [coop], "messages": messages}


def _write(path: Path, body: Any) -> Path:
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


@pytest.mark.parametrize("vessel", VESSELS)
def test_ten_turns_keep_the_prefix(vessel: str) -> None:
    history = load_history(_conversation(10))
    ids = [m.id for m in history.messages if m.role == "user"]
    # from the second turn on: the first request of claude-prompt has no transcript yet
    bodies = [render(history, vessel, upto=mid) for mid in ids[1:]]
    assert len(bodies) == 10
    for before, after in itertools.pairwise(bodies):
        d = cache_diff(load_request(before), load_request(after))
        assert d.is_prefix, format_cache_diff(d)
        assert d.element_reuse == 100.0
        assert d.shared_elements == d.earlier_elements > 0
        assert d.later_elements > d.earlier_elements
        assert d.changed_fields == ()
        assert 0 < d.shared_bytes < d.earlier_bytes


def test_identical(tmp_path: Path, demo_path: Path) -> None:
    body = render(demo_path, "openai")
    d = cache_diff_files(_write(tmp_path / "a.json", body), _write(tmp_path / "b.json", body))
    assert d.is_prefix and d.element_reuse == 100.0 and d.byte_reuse == 100.0
    assert d.diverge_offset is None and d.shared_bytes == d.earlier_bytes
    assert "identical requests" in format_cache_diff(d)


def test_diverging(demo_path: Path) -> None:
    before = render(demo_path, "openai", upto="m10")
    after = json.loads(json.dumps(render(demo_path, "openai")))
    # an earlier message rewritten (what a words-only summary or a changed id does to the cache)
    at = next(i for i, m in enumerate(after["messages"]) if m["content"] == "Closed #12.")
    after["messages"][at]["content"] = "Closed #12 (rewritten)."
    d = cache_diff(load_request(before), load_request(after))
    assert not d.is_prefix
    assert d.first_changed == at and d.shared_elements == at
    assert d.element_reuse == round(100 * at / len(before["messages"]), 1)
    assert d.diverge_offset is not None and d.diverge_offset == d.shared_bytes
    assert "Closed #12" in d.earlier_excerpt and "rewritten" in d.later_excerpt
    text = format_cache_diff(d)
    assert f"NOT a prefix: element {at}" in text and "diverge at byte" in text


def test_changed_fields(demo_path: Path) -> None:
    before = render(demo_path, "anthropic", upto="m10")
    after = render(demo_path, "anthropic", system="A new system prompt.")
    d = cache_diff(load_request(before), load_request(after))
    assert "system" in d.changed_fields
    assert "other fields changed: system" in format_cache_diff(d)


def test_plain_words_lose_nothing_but_native_vs_plain_diverge(demo_path: Path) -> None:
    native = render(demo_path, "gemini", upto="m10")
    plain = render(demo_path, "gemini", mode="plain")
    d = cache_diff(load_request(native), load_request(plain))
    assert not d.is_prefix and d.first_changed is not None


def test_dump_records_and_raw_bytes(tmp_path: Path, demo_path: Path) -> None:
    before = render(demo_path, "ollama", upto="m10")
    after = render(demo_path, "ollama")
    a = _write(tmp_path / "a.json", {"vessel": "ollama", "url": "http://x/api/chat", "request": before})
    b = _write(tmp_path / "b.json", {"vessel": "ollama", "request": {"body": json.dumps(after)}})
    d = cache_diff_files(a, b)
    assert d.wire == "ollama" and d.is_prefix
    # raw compares the files as written: pretty-printed files diverge early
    pa, pb = tmp_path / "pa.json", tmp_path / "pb.json"
    pa.write_text(json.dumps(before, indent=2), encoding="utf-8")
    pb.write_text(json.dumps(after), encoding="utf-8")
    assert cache_diff_files(pa, pb, raw=True).shared_bytes < 5
    assert cache_diff_files(pa, pb).shared_bytes == common_prefix(encode(before), encode(after)) > 1000


def test_common_prefix() -> None:
    assert common_prefix(b"", b"abc") == 0
    assert common_prefix(b"abc", b"abc") == 3
    assert common_prefix(b"abcd", b"abxd") == 2
    assert common_prefix(b"ab", b"abc") == 2


def test_cli(tmp_path: Path, demo_path: Path) -> None:
    a = _write(tmp_path / "turn1.json", render(demo_path, "codex", upto="m10"))
    b = _write(tmp_path / "turn2.json", render(demo_path, "codex"))
    runner = CliRunner()
    out = runner.invoke(cli, ["cache-diff", str(a), str(b)])
    assert out.exit_code == 0, out.output
    assert "100.0% of the earlier input reused" in out.output
    out = runner.invoke(cli, ["cache-diff", str(a), str(b), "--json"])
    assert json.loads(out.output)["is_prefix"] is True
    out = runner.invoke(cli, ["cache-diff", str(b), str(a), "--check"])
    assert out.exit_code == 1
    out = runner.invoke(cli, ["cache-diff", str(a), str(tmp_path / "missing.json")])
    assert out.exit_code == 1 and "no such file" in out.output


@pytest.fixture(scope="module")
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:  # one server for the module: stopping one takes half a second
        yield d


@pytest.mark.slow
@pytest.mark.parametrize("vessel", ["openai", "kimi", "codex", "anthropic", "gemini", "ollama"])
def test_ten_turns_through_the_doubles_keep_the_prefix(
    vessel: str, tmp_path: Path, double: ProviderDouble
) -> None:
    """Real turns (the turn loop, the transport, --dump-requests) on every wire: each request's message
    list is an element-wise prefix of the next one's, within a turn and from turn to turn."""
    from toolreplay._loop import TurnOptions, run_turn
    from toolreplay._store.sqlite import SQLiteStore
    from toolreplay._tools import build_registry
    from toolreplay.testing import Call, Calls, Text

    double.clear()
    dump = tmp_path / "dump"
    store = SQLiteStore(tmp_path / "ten.db")
    try:
        for n in range(1, 11):
            double.script(Calls([Call("coop", {"action": "close", "id": n})]), Text(f"Closed #{n}."))
            run_turn(
                "ten",
                f"Todo #{n} is done, close it.",
                double.vessel(vessel),
                build_registry(["coop"], store),
                store=store,
                options=TurnOptions(dump_requests=dump, dry_tools=True),
            )
    finally:
        store.close()
    files = sorted(dump.glob("*-request.json"))
    assert len(files) == 20
    for before, after in itertools.pairwise(files):
        d = cache_diff_files(before, after)
        assert d.wire == load_request(before).wire and load_request(before).wire_from == "dump"
        assert d.is_prefix and d.element_reuse == 100.0, format_cache_diff(d)
        assert d.changed_fields == (), format_cache_diff(d)

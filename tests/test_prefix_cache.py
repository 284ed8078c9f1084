"""The doubles' simulated prompt cache: the longest prefix shared with an earlier request, reported in each
provider's own usage fields, read back by the parsers and stored per step by the turn loop."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolreplay._budget import ContextBudget
from toolreplay._loop import TurnOptions, run_turn
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import build_registry
from toolreplay.testing import Call, Calls, ProviderDouble, Text
from toolreplay.testing.prefix_cache import PrefixCache, common_prefix, pieces


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def test_common_prefix_counts_whole_pieces_then_bytes() -> None:
    assert common_prefix([b"ab", b"cd", b"ef"], [b"ab", b"cd", b"eX"]) == 5
    assert common_prefix([b"ab"], [b"ab", b"cd"]) == 2
    assert common_prefix([b"xb"], [b"ab"]) == 0
    assert common_prefix([], [b"ab"]) == 0


def test_the_cache_remembers_per_wire_and_model() -> None:
    cache = PrefixCache()
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 3000}]}
    first = cache.count("openai-chat", "m", body)
    assert first.cached_tokens == 0 and first.prompt_tokens > 1000
    longer = {"model": "m", "messages": [*body["messages"], {"role": "assistant", "content": "ok"}]}
    again = cache.count("openai-chat", "m", longer)
    assert again.cached_tokens == sum(len(p) for p in pieces("openai-chat", body)) // 3
    assert cache.count("openai-chat", "other", longer).cached_tokens == 0
    assert cache.count("anthropic", "m", longer).cached_tokens == 0
    changed = {"model": "m", "stream": True, "messages": longer["messages"]}
    assert cache.count("openai-chat", "m", changed).cached_tokens < 10  # a changed head misses


SYSTEM = "You keep the todo board: close what is done, say what is open. " * 60


@pytest.mark.parametrize("vessel", ["openai", "codex", "anthropic", "gemini", "kimi"])
def test_native_replay_keeps_the_cache_hitting_and_the_loop_stores_it(
    vessel: str, tmp_path: Path, double: ProviderDouble
) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    try:
        for n in range(1, 7):
            double.script(Calls([Call("coop", {"action": "close", "id": n})]), Text(f"Closed #{n}. " * 40))
            run_turn(
                "c",
                f"Todo #{n} is done, close it. " * 20,
                double.vessel(vessel),
                build_registry(["coop"], store),
                store=store,
                # a system prompt above Anthropic's smallest cacheable prefix (1,024 tokens), so every
                # request is long enough to be cached from the first (design 36)
                options=TurnOptions(system=SYSTEM, dry_tools=True, context=ContextBudget(max_tokens=10**6)),
            )
        records = store.load_usage("c")
    finally:
        store.close()
    assert [(r.message_id, r.step) for r in records[:4]] == [("a2", 1), ("a2", 2), ("a4", 1), ("a4", 2)]
    for before, r in itertools.pairwise(records):
        u = r.usage
        assert u.input_tokens and u.cached_tokens is not None and before.usage.input_tokens
        # the whole earlier request was sent again, byte for byte, at the head of this one
        assert u.cached_tokens >= before.usage.input_tokens - 2, (before, r)
        if vessel == "anthropic":  # written up to the last marker, the end of the prompt (rounded down)
            assert 0 <= u.input_tokens - u.cached_tokens - (u.cache_write_tokens or 0) <= 1
    assert not records[0].usage.cached_tokens  # Gemini leaves a zero count out
    late = records[-1].usage
    assert (
        late.cached_tokens is not None and late.input_tokens and late.cached_tokens / late.input_tokens > 0.9
    )

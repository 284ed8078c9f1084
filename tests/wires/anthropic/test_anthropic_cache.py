"""Anthropic's prompt cache (design 36): the breakpoints placed on the body, the double's simulation of
Anthropic's caching rules, and the cache hitting turn after turn in the loop (and never without markers)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import toolreplay
from helpers_common import ROOT
from toolreplay._budget import ContextBudget
from toolreplay._cli import cli
from toolreplay._errors import ConfigError
from toolreplay._history import History, load_history
from toolreplay._jsonenc import encode
from toolreplay._loop import TurnOptions, run_turn
from toolreplay._render_cache import RenderCache
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tools import build_registry
from toolreplay._vessels import BUILTIN, get_vessel, load_vessels
from toolreplay.testing import Call, Calls, ProviderDouble, Text
from toolreplay.wires import get_wire
from toolreplay.wires.anthropic.breakpoints import count_markers, finish, unmarked
from toolreplay.wires.anthropic.prompt_cache import (
    DEFAULT_MINIMUM,
    AnthropicPromptCache,
    minimum_tokens,
)
from toolreplay.wires.anthropic.rules import TOO_MANY_MARKERS
from toolreplay.wires.common import RenderOptions
from toolreplay.wires.contract import first_refusal

CHIEF = ROOT / "examples" / "chief.json"
MARK = {"type": "ephemeral"}
#: A system prompt above Anthropic's smallest cacheable prefix (1,024 tokens for Claude Sonnet 4.5).
SYSTEM = "You keep the todo board: close what is done, say what is open, never guess. " * 50


def marked_places(body: dict[str, Any]) -> list[str]:
    """Where the body's markers are: ``system``, ``tools[i]``, ``messages[i][j]``."""
    out = [f"tools[{i}]" for i, t in enumerate(body.get("tools", [])) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        out += [f"system[{i}]" for i, b in enumerate(system) if "cache_control" in b]
    for i, m in enumerate(body["messages"]):
        if isinstance(m["content"], list):
            out += [f"messages[{i}][{j}]" for j, b in enumerate(m["content"]) if "cache_control" in b]
    return out


def prefixes(h: History) -> Iterator[History]:
    for k in range(1, len(h.messages) + 1):
        yield History(h.id, h.messages[:k], h.tools, h.warnings)


# --------------------------------------------------------------------------------------------------
# the breakpoints placed


def test_the_profile_places_four_and_glm_none() -> None:
    assert BUILTIN["anthropic"].cache_breakpoints == 4
    assert all(v.cache_breakpoints == 0 for name, v in BUILTIN.items() if name != "anthropic")
    body = toolreplay.render(CHIEF, "glm")
    assert "cache_control" not in encode(body).decode()


def test_the_tail_the_head_and_the_earlier_request_ends() -> None:
    h = load_history(CHIEF)
    body = toolreplay.render(h, "anthropic")
    msgs = body["messages"]
    users = [i for i, m in enumerate(msgs) if m["role"] == "user"]
    last = len(msgs) - 1
    assert msgs[last]["role"] == "user"
    expected = {f"messages[{last}][{len(msgs[last]['content']) - 1}]", "system[0]"}
    expected |= {f"messages[{i}][{len(msgs[i]['content']) - 1}]" for i in users[-3:-1]}
    assert set(marked_places(body)) == expected and count_markers(body) == 4
    assert body["system"][0]["text"].startswith("You are the chief")
    for n in range(5):  # fewer: the tail first, then the head, then the earlier ends
        fewer = toolreplay.render(h, "anthropic", cache_breakpoints=n)
        assert count_markers(fewer) == n
        if n:
            assert marked_places(fewer)[-1] == f"messages[{last}][{len(msgs[last]['content']) - 1}]"
        if n >= 2:
            assert fewer["system"][0]["cache_control"] == MARK


def test_off_gives_the_bytes_without_markers() -> None:
    h = load_history(CHIEF)
    off = toolreplay.render(h, "anthropic", cache_breakpoints=0)
    assert "cache_control" not in encode(off).decode()
    assert isinstance(off["system"], str) and isinstance(off["messages"][0]["content"], str)
    # the same body as a vessel file's "cache_breakpoints = 0"
    assert encode(off) == encode(toolreplay.render(h, replace(get_vessel("anthropic"), cache_breakpoints=0)))
    with pytest.raises(ConfigError):
        toolreplay.render(h, "anthropic", cache_breakpoints=5)


def test_no_system_marks_the_last_tool_and_thinking_is_never_marked() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "tools": [{"name": "a", "input_schema": {}}, {"name": "b", "input_schema": {}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
        ],
    }
    before = encode(body)
    out = finish(dict(body), RenderOptions(model="m", cache_breakpoints=4))
    assert encode(body) == before  # the input's elements are copied, never changed
    assert marked_places(out) == ["tools[1]", "messages[0][0]"]  # the thinking-only message is skipped
    last = {"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "thinking"}]}
    out = finish({"messages": [last]}, RenderOptions(model="m", cache_breakpoints=1))
    assert marked_places(out) == ["messages[0][0]"]
    untouched = {"messages": [last]}
    assert finish(untouched, RenderOptions(model="m")) is untouched


def test_consecutive_requests_differ_only_by_the_markers() -> None:
    h = load_history(CHIEF)
    cache = RenderCache()
    earlier: list[tuple[dict[str, Any], bytes]] = []
    for part in prefixes(h):
        body = cache.render(part, "anthropic")
        assert encode(body) == encode(toolreplay.render(part, "anthropic"))  # incremental == cold
        for old, old_bytes in earlier:
            assert encode(old) == old_bytes  # the cached elements were never marked in place
        if earlier:
            before = unmarked(earlier[-1][0])
            assert unmarked(body)[: len(before)] == before
        earlier.append((body, encode(body)))


def test_more_than_four_markers_are_refused_as_anthropic_does() -> None:
    body = toolreplay.render(CHIEF, "anthropic")
    msgs = body["messages"]
    msgs[0] = {"role": "user", "content": [{**msgs[0]["content"][0], "cache_control": MARK}]}
    out: list[str] = []
    get_wire("anthropic").rules(get_vessel("anthropic"), body, out)
    assert first_refusal(out) == TOO_MANY_MARKERS.format(n=5)
    out.clear()
    get_wire("anthropic").rules(get_vessel("anthropic"), toolreplay.render(CHIEF, "anthropic"), out)
    assert not out


def test_a_vessel_file_sets_the_count(tmp_path: Path) -> None:
    path = tmp_path / "v.toml"
    path.write_text("[vessels.glm]\ncache_breakpoints = 2\n[vessels.anthropic]\ncache_breakpoints = 0\n")
    table = load_vessels(path)
    assert table["glm"].cache_breakpoints == 2 and table["anthropic"].cache_breakpoints == 0
    path.write_text("[vessels.anthropic]\ncache_breakpoints = 5\n")
    with pytest.raises(ConfigError, match="cache_breakpoints must be an integer from 0 to 4"):
        load_vessels(path)


def test_every_way_to_set_the_count_meets_one_check() -> None:
    """Issue 23: ``cache_breakpoints`` is checked in one place (``_vessels.checked_breakpoints``) against
    one limit, the wires' own (``Wire.max_breakpoints``): the vessel file, ``render()``, a turn's options
    and ``--cache-breakpoints`` refuse 5 in the same words."""
    from toolreplay.wires import wire_names

    assert max(get_wire(w).max_breakpoints for w in wire_names()) == get_wire("anthropic").max_breakpoints
    refused = "cache_breakpoints must be an integer from 0 to 4, not 5"
    with pytest.raises(ConfigError, match=refused):
        toolreplay.render(CHIEF, "anthropic", cache_breakpoints=5)
    options = TurnOptions(cache_breakpoints=5)  # a value, checked where the turn folds it into its vessel
    with pytest.raises(ConfigError, match=refused):
        run_turn("c", "Hello.", "anthropic", options=options)  # refused before any store is opened
    res = CliRunner().invoke(cli, ["render", str(CHIEF), "-v", "anthropic", "--cache-breakpoints", "5"])
    assert res.exit_code == 1 and refused in res.output


def test_the_cli_turns_it_off_and_on() -> None:
    runner = CliRunner()
    on = runner.invoke(cli, ["render", str(CHIEF), "-v", "anthropic"])
    off = runner.invoke(cli, ["render", str(CHIEF), "-v", "anthropic", "--cache-breakpoints", "0"])
    glm = runner.invoke(cli, ["render", str(CHIEF), "-v", "glm", "--cache-breakpoints", "3"])
    assert on.exit_code == off.exit_code == glm.exit_code == 0, (on.output, off.output, glm.output)
    assert on.output.count('"cache_control"') == 4 and '"cache_control"' not in off.output
    assert glm.output.count('"cache_control"') == 3


# --------------------------------------------------------------------------------------------------
# the double's simulated cache


def _user(text: str, marked: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if marked:
        block["cache_control"] = MARK
    return {"role": "user", "content": [block]}


def _exchange(n: int, marked_last: bool) -> list[dict[str, Any]]:
    """``n`` blocks after the first: alternating assistant and user messages of one block each."""
    out = [
        {"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]}
        if k % 2 == 0
        else _user(f"q {k}")
        for k in range(n)
    ]
    if marked_last:
        out[-1] = {**out[-1], "content": [{**out[-1]["content"][0], "cache_control": MARK}]}
    return out


def test_the_double_reads_only_up_to_a_marker_an_earlier_request_wrote() -> None:
    cache = AnthropicPromptCache()
    model = "claude-sonnet-4-5"
    big = "word " * 1000  # about 1,700 tokens by the estimate: above the minimum
    plain = {"model": model, "max_tokens": 9, "messages": [_user(big), *_exchange(9, False)]}
    assert cache.count(model, plain).cached_tokens == 0
    again = cache.count(model, plain)
    assert (again.cached_tokens, again.written_tokens) == (0, 0)  # no marker: nothing read or written
    first = {**plain, "messages": [_user(big), *_exchange(9, True)]}
    wrote = cache.count(model, first)
    assert wrote.cached_tokens == 0 and wrote.written_tokens > 1000
    # 19 blocks later, the marker moved (the old one gone): the entry is found by the look-back
    near = {**plain, "messages": [_user(big), *_exchange(9, False), *_exchange(19, True)]}
    got = cache.count(model, near)
    assert got.cached_tokens == wrote.written_tokens
    # 21 blocks after that entry, no marker reaches back to it: nothing is read
    far = {**plain, "messages": [_user(big), *_exchange(9, False), *_exchange(21, True)]}
    assert AnthropicPromptCache().count(model, first).cached_tokens == 0
    fresh = AnthropicPromptCache()
    fresh.count(model, first)
    assert fresh.count(model, far).cached_tokens == 0
    # another model's cache is its own
    assert cache.count("claude-opus-4-1", near).cached_tokens == 0


def test_the_double_caches_nothing_below_the_models_minimum() -> None:
    assert minimum_tokens("claude-sonnet-4-5") == DEFAULT_MINIMUM == 1024
    assert minimum_tokens("claude-haiku-4-5") == minimum_tokens("claude-opus-4-6") == 4096
    assert minimum_tokens("claude-3-5-haiku-latest") == 2048
    cache = AnthropicPromptCache()
    body = {"model": "m", "max_tokens": 9, "messages": [_user("word " * 500, marked=True)]}  # ~840 tokens
    for _ in range(2):
        count = cache.count("claude-sonnet-4-5", body)
        assert (count.cached_tokens, count.written_tokens) == (0, 0) and count.prompt_tokens > 800


# --------------------------------------------------------------------------------------------------
# the loop against the double


def _turns(
    double: ProviderDouble,
    tmp_path: Path,
    n: int,
    *,
    calls: int = 1,
    options: TurnOptions,
) -> list[Any]:
    """``n`` turns (each ``calls`` calls, then a text answer); the stored usage of every request."""
    store = SQLiteStore(tmp_path / "c.db")
    try:
        for t in range(1, n + 1):
            made = [Call("coop", {"action": "close", "id": 100 * t + k}) for k in range(calls)]
            double.script(Calls(made), Text(f"Closed {calls} todos. " * 30))
            run_turn("c", f"Todo #{t} is done, close it. " * 20, double.vessel("anthropic"),
                     build_registry(["coop"], store), store=store, options=options)  # fmt: skip
        return [r.usage for r in store.load_usage("c")]
    finally:
        store.close()


@pytest.fixture
def double() -> Iterator[ProviderDouble]:
    with ProviderDouble() as d:
        yield d


def test_native_replay_hits_turn_after_turn(double: ProviderDouble, tmp_path: Path) -> None:
    base = TurnOptions(system=SYSTEM, dry_tools=True, context=ContextBudget(max_tokens=10**6))
    usage = _turns(double, tmp_path, 8, options=base)
    assert usage[0].cached_tokens == 0 and usage[0].cache_write_tokens
    for before, u in itertools.pairwise(usage):
        # every request reads all of the one before it, and writes the rest
        assert u.cached_tokens >= before.input_tokens - 2, (before, u)
        assert 0 <= u.input_tokens - u.cached_tokens - u.cache_write_tokens <= 1
    assert usage[-1].cached_tokens / usage[-1].input_tokens > 0.9


def test_without_breakpoints_nothing_hits(double: ProviderDouble, tmp_path: Path) -> None:
    off = TurnOptions(system=SYSTEM, dry_tools=True, cache_breakpoints=0, context=ContextBudget(10**6))
    usage = _turns(double, tmp_path, 5, options=off)
    assert len(usage) == 10 and all(u.cached_tokens == 0 and not u.cache_write_tokens for u in usage)
    assert all(u.input_tokens > 1500 for u in usage)  # long enough to be cached, had it been marked


@pytest.mark.parametrize(("marks", "reads_the_turn"), [(2, False), (3, True), (4, True)])
def test_a_tool_heavy_step_reads_the_turn_through_the_earlier_end_marker(
    double: ProviderDouble, tmp_path: Path, marks: int, reads_the_turn: bool
) -> None:
    # 12 calls in one step: the continuation request adds 24 blocks after the turn's user message, more
    # than the 20-block look-back of its tail marker
    options = TurnOptions(
        system=SYSTEM, dry_tools=True, cache_breakpoints=marks, context=ContextBudget(10**6)
    )
    first, step = _turns(double, tmp_path, 1, calls=12, options=options)
    assert step.cached_tokens > 0  # the system prompt's entry at least (the head marker)
    assert (step.cached_tokens >= first.input_tokens - 2) is reads_the_turn, (first, step)


@pytest.mark.slow
def test_the_budgets_large_steps_keep_it_hitting(double: ProviderDouble, tmp_path: Path) -> None:
    options = TurnOptions(system=SYSTEM, dry_tools=True, context=ContextBudget(max_tokens=9000))
    usage = _turns(double, tmp_path, 24, options=options)
    firsts = usage[::2]  # each turn's first request
    rates = [u.cached_tokens / u.input_tokens for u in firsts]
    moved = [k for k, (a, b) in enumerate(itertools.pairwise(firsts), 1) if b.input_tokens < a.input_tokens]
    assert moved, "the window never moved: the budget is too large for this test"
    for k, (before, u) in enumerate(itertools.pairwise(firsts), 1):
        if k in moved:  # the window moved: the tools and the system prompt still hit
            assert u.cached_tokens >= len(SYSTEM) // 3 - 10
        else:
            assert u.cached_tokens >= before.input_tokens - 2 and rates[k] > 0.7

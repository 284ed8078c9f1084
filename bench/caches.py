"""What each cache on the render and turn path buys, end to end (issue 23): ``python -m bench.caches``.

A cache keeps its place only with a line here (or in ``bench/RESULTS.md``) showing what it buys on the
whole path it sits on, not on the function it speeds up. Each is measured with and without, alternately in
one process (CPU time of the process, medians): without is the cached function's own body put in its
place in every module that holds it (``functools`` keeps it as ``__wrapped__``), or, for the render cache,
a new cache per request.

* ``RenderCache`` within one turn: a turn of four requests (the reply in progress gains a call each time),
  load + render + encode of each request through one cache, against a new cache per request; and a loop
  that keeps its conversation in memory, ten turns appended, one render each.
* ``part_tokens``: a render within a context budget of a history whose user messages carry PDFs.
* ``counter_for``: a render within a context budget on an OpenAI model (its tokenizer looked up).
* The proxy's translation memos (design 53: ``ReadMemo``, ``Renders`` and the ``ByIdentity`` values on the
  replies they give again): a Claude Code conversation's last requests, each read, translated for Chat and
  encoded, through fresh memos (the first request of the run pays for filling them), against none; and
  ``Renders`` on the translation step to the Anthropic-wire vessels (``anthropic``, ``glm``), where Claude
  Code's system prompt of blocks renders through the skeleton (design 29).

* The read memo on the Responses and Chat wires (:mod:`bench.proxy_translate_wires`): a Codex-shaped
  and an opencode-shaped conversation of some 200 entries, each continued request read from its bytes
  (and translated for Anthropic) after the one before, against the same request parsed and read whole.

``wire_tool_name`` and ``issued_of`` were measured here too (a render with names that fit and names that
must be mapped; a CLI turn on a stored reasoning-heavy history) and lost their memos (bench/RESULTS.md).
"""

from __future__ import annotations

import base64
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from typing import Any

from bench.histories import next_turn, synthetic_history
from toolreplay import ContextBudget, encode, render
from toolreplay._history import History, Message, Part, ToolCall
from toolreplay._render_cache import RenderCache
from toolreplay._render_options import render_options
from toolreplay._store.sqlite import SQLiteStore
from toolreplay._tokens import counter_for, part_tokens
from toolreplay._vessels import get_vessel

ROUNDS = 9
Side = tuple[Callable[[], AbstractContextManager[object]], Callable[[], object]]


@contextmanager
def uncached(fn: Any) -> Iterator[None]:
    """``fn``'s own body (``fn.__wrapped__``) in its place in every loaded module, for the block."""
    raw, held = fn.__wrapped__, []
    for mod in list(sys.modules.values()):
        d = getattr(mod, "__dict__", None)
        if isinstance(d, dict):
            held += [(d, k) for k, v in list(d.items()) if v is fn]
    for d, k in held:
        d[k] = raw
    try:
        yield
    finally:
        for d, k in held:
            d[k] = fn


def compare(sides: dict[str, Side], rounds: int = ROUNDS) -> dict[str, float]:
    """Median CPU seconds of each side's work, alternately (order rotated each round), gc off while timed."""
    names = list(sides)
    out: dict[str, list[float]] = {n: [] for n in names}
    for n in names:  # warm up
        with sides[n][0]():
            sides[n][1]()
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            state, work = sides[n]
            with state():
                gc.collect()
                gc.disable()
                t0 = time.process_time()
                work()
                out[n].append(time.process_time() - t0)
                gc.enable()
    return {n: statistics.median(v) for n, v in out.items()}


def line(what: str, s: dict[str, float]) -> str:
    a, b = s["without"], s["with"]
    return f"| {what} | {a * 1e3:.2f} ms | {b * 1e3:.2f} ms | **{a / b:.2f}x** |"


def _growing(h: History, n: int) -> list[tuple[Message, ...]]:
    """The messages of ``n`` requests of one turn: ``h``, a user message, the reply gaining a call each."""
    user = Message("u-new", "user", "Go on.")
    calls = [ToolCall("search", {"q": f"step {k}"}, f"found {k}", f"c{k}") for k in range(n)]
    return [
        (*h.messages, user, Message("a-new", "assistant", "", tuple(calls[:k]), status="in_progress"))
        for k in range(n)
    ]


def render_cache_lines(turns: int) -> list[str]:
    store = SQLiteStore(":memory:")
    h = synthetic_history(turns)
    store.import_history(h)
    v = get_vessel("anthropic")
    opts = render_options(v, tools=h.tools or ())

    def turn(one: bool) -> None:
        loaded = store.load(h.id)
        cache = RenderCache()
        for msgs in _growing(loaded, 4):
            encode((cache if one else RenderCache()).render_body(msgs, v.wire, opts))

    what = f"RenderCache: a turn of 4 requests, {turns:,} turns stored (load + 4 x render + encode)"
    out = [line(what, _sides(lambda: turn(False), lambda: turn(True)))]
    grown = [h]
    for _ in range(10):
        u, a = next_turn(grown[-1])
        grown.append(replace(grown[-1], messages=(*grown[-1].messages, u, a)))

    def loop(one: bool) -> None:
        cache = RenderCache()
        for g in grown[1:]:
            encode(cache.render(g, "anthropic") if one else render(g, "anthropic"))

    what = f"RenderCache: an in-memory loop, {turns:,} turns then 10 appended, one render + encode each"
    out.append(line(what, _sides(lambda: loop(False), lambda: loop(True))))
    store.close()
    return out


def _sides(without: Callable[[], object], with_: Callable[[], object]) -> dict[str, float]:
    return compare({"without": (nullcontext, without), "with": (nullcontext, with_)})


def _cached_or_not(fn: Any, work: Callable[[], object]) -> dict[str, float]:
    return compare({"without": (lambda: uncached(fn), work), "with": (nullcontext, work)})


def _pdf(pages: int, k: int) -> str:
    body = b"%PDF-1.4\n" + b"".join(b"%d 0 obj << /Type /Page >> endobj\n" % i for i in range(pages))
    return base64.b64encode(body + b"x" * 200_000 + str(k).encode()).decode("ascii")


def part_lines() -> list[str]:
    h = synthetic_history(200)
    msgs = list(h.messages)
    for i in range(0, len(msgs), 20):
        pdf = Part("document", media_type="application/pdf", data=_pdf(30, i), name=f"doc{i}.pdf")
        msgs[i] = replace(msgs[i], parts=(Part("text", text=msgs[i].text), pdf))
    docs = replace(h, messages=tuple(msgs))
    budget = ContextBudget(60_000)
    return [
        line("part_tokens: render within a 60,000-token budget, 200 turns, a 270 KB PDF every 10th turn",
             _cached_or_not(part_tokens, lambda: encode(render(docs, "anthropic", context=budget)))),
        line("counter_for: render within a 60,000-token budget, 200 turns, on codex (gpt-5)",
             _cached_or_not(counter_for, lambda: encode(render(h, "codex", context=budget)))),
    ]  # fmt: skip


def _claude_requests(requests: int) -> tuple[list[dict[str, Any]], int]:
    """The last ``requests`` requests of the benchmark's Claude Code conversation (each a reply and its
    result more than the one before, the prompt-cache marker moved), and its length in messages."""
    from bench.proxy_translate_body import request
    from bench.proxy_translate_steps import _grown

    body = request(True)
    n = len(body["messages"])
    return [_grown(body, k) for k in range(n - 2 * requests + 2, n + 1, 2)], n


def translation_lines(requests: int = 12) -> list[str]:
    """The proxy's translation memos (design 53): a Claude Code conversation's last ``requests`` requests
    (each a reply and its result more than the one before, the prompt-cache marker moved), each read,
    translated for OpenAI's Chat and encoded as the proxy does, from fresh memos."""
    from bench.proxy_translate_body import request
    from toolreplay._issuers import host_of
    from toolreplay._proxy.translate import translate_request
    from toolreplay._proxy.translate_renders import Renders
    from toolreplay.model import Issuer
    from toolreplay.wires import get_wire
    from toolreplay.wires.anthropic.request import parse_request
    from toolreplay.wires.read_memo import ReadMemo

    body = request(True)
    bodies, n = _claude_requests(requests)
    inbound, v = get_wire("anthropic"), replace(get_vessel("openai"), base_url="http://127.0.0.1:9/v1")
    issuer = Issuer(v.wire, host_of(v.base_url), v.model)

    def conversation(read: bool, renders: bool) -> None:
        memo, cache = ReadMemo() if read else None, Renders() if renders else None
        for b in bodies:
            h = parse_request(dict(b), memo=memo)
            encode(translate_request(inbound, h, None, v, issuer=issuer, renders=cache).body)

    what = f"a Claude Code conversation's last {requests} requests ({n} messages at the end), each read, "
    what += "translated, encoded"
    none = lambda: conversation(False, False)  # noqa: E731
    from bench.proxy_translate_steps import _stored
    from toolreplay._proxy.translate import read_inbound

    h = read_inbound(inbound, body)
    _, load = _stored(h)
    cache = Renders()

    memo = ReadMemo()
    read = [parse_request(dict(b), memo=memo) for b in bodies]

    def translated(renders: Renders | None) -> None:
        for r in read:
            translate_request(inbound, r, None, v, issuer=issuer, renders=renders)

    def recorded(renders: Renders | None) -> None:
        for _ in range(requests):  # the recording proxy: the conversation loaded anew for each request
            encode(translate_request(inbound, h, load(), v, issuer=issuer, renders=renders).body)

    return [
        line(f"ReadMemo alone: {what}", _sides(none, lambda: conversation(True, False))),
        line(f"Renders alone: {what}", _sides(none, lambda: conversation(False, True))),
        line(f"ReadMemo + Renders (the proxy): {what}", _sides(none, lambda: conversation(True, True))),
        line(f"Renders, recording: {requests} requests continuing a stored conversation of {n - 1} "
             "messages, each loaded, merged, translated, encoded",
             _sides(lambda: recorded(None), lambda: recorded(cache))),
        line(f"Renders on the translation step: the same {requests} requests read through a ReadMemo "
             "beforehand, each translated (translate_request)",
             _sides(lambda: translated(None), lambda: translated(Renders()))),
    ]  # fmt: skip


def anthropic_lines(requests: int = 12) -> list[str]:
    """``Renders`` on the translation step to an Anthropic vessel (design 29): Claude Code's system prompt
    is a list of blocks whose layout the reader keeps, rendered through the skeleton; the conversation's
    last ``requests`` requests, read through a ReadMemo beforehand, each translated."""
    from toolreplay._issuers import host_of
    from toolreplay._proxy.translate import translate_request
    from toolreplay._proxy.translate_renders import Renders
    from toolreplay.model import Issuer
    from toolreplay.wires import get_wire
    from toolreplay.wires.anthropic.request import parse_request
    from toolreplay.wires.read_memo import ReadMemo

    bodies, n = _claude_requests(requests)
    inbound, memo = get_wire("anthropic"), ReadMemo()
    read = [parse_request(dict(b), memo=memo) for b in bodies]
    out = []
    for name in ("anthropic", "glm"):
        v = replace(get_vessel(name), base_url="http://127.0.0.1:9")
        issuer = Issuer(v.wire, host_of(v.base_url), v.model)

        def translated(renders: Renders | None, v: Any = v, issuer: Issuer = issuer) -> None:
            for r in read:
                translate_request(inbound, r, None, v, issuer=issuer, renders=renders)

        out.append(line(f"Renders on the translation step to `{name}` (Anthropic wire): {requests} Claude "
                        f"Code requests ({n} messages at the end), each translated",
                        _sides(lambda t=translated: t(None), lambda t=translated: t(Renders()))))  # fmt: skip
    return out


def wire_lines() -> list[str]:
    """The read memo on the other inbound wires: a Codex and an opencode request continued."""
    from bench.proxy_translate_wires import lines

    return lines(line, compare)


def main(argv: list[str]) -> None:
    """``python -m bench.caches [TURNS]`` (every line), or ``python -m bench.caches wires`` (the read
    memo's lines of the Responses and Chat wires only)."""
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench-key-not-sent")
    print(f"load {', '.join(f'{x:.1f}' for x in os.getloadavg())}; CPU time, medians of {ROUNDS} rounds")
    print("| cache: the path measured | without | with | gain |\n|---|---|---|---|")
    if argv[:1] == ["wires"]:
        rows = wire_lines()
    else:
        turns = int(argv[0]) if argv else 1000
        rows = [
            *render_cache_lines(turns),
            *part_lines(),
            *translation_lines(),
            *anthropic_lines(),
            *wire_lines(),
        ]
    for r in rows:
        print(r, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

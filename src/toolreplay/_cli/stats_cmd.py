"""``toolreplay stats CONVERSATION [--json]``: the prompt-cache hit rate per turn and in total.

Read from the usage the turn loop stores for each response (the provider's own figures: OpenAI
``cached_tokens``, Anthropic ``cache_read_input_tokens``, Gemini ``cachedContentTokenCount``, ...). A
turn's rate is its cached prompt tokens over its prompt tokens, over every request of the turn; replies
whose provider reported no prompt count are listed without a rate.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from toolreplay._cli._common import db_option, friendly

if TYPE_CHECKING:
    from toolreplay._store.window import UsageRecord

FIELDS = ("input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens")


@dataclass(frozen=True, slots=True)
class TurnStats:
    """The summed usage of one reply's requests."""

    reply: str
    requests: int
    input_tokens: int | None
    cached_tokens: int | None
    cache_write_tokens: int | None
    output_tokens: int | None

    @property
    def hit_rate(self) -> float | None:
        if not self.input_tokens or self.cached_tokens is None:
            return None
        return self.cached_tokens / self.input_tokens

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reply": self.reply, "requests": self.requests}
        out.update({k: getattr(self, k) for k in FIELDS})
        out["hit_rate"] = None if self.hit_rate is None else round(self.hit_rate, 4)
        return out


def _sum(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def turn_stats(records: Sequence[UsageRecord]) -> list[TurnStats]:
    """Per reply, in stored order: its requests' usage summed (a figure no request reported stays None)."""
    groups: dict[str, list[UsageRecord]] = {}
    for r in records:
        groups.setdefault(r.message_id, []).append(r)
    return [
        TurnStats(mid, len(rs), *(_sum([getattr(r.usage, k) for r in rs]) for k in FIELDS))
        for mid, rs in groups.items()
    ]


def total_stats(turns: Sequence[TurnStats]) -> TurnStats:
    return TurnStats(
        "total", sum(t.requests for t in turns), *(_sum([getattr(t, k) for t in turns]) for k in FIELDS)
    )


def _cell(v: int | None) -> str:
    return "-" if v is None else f"{v:,}"


def _rate(t: TurnStats) -> str:
    return "-" if t.hit_rate is None else f"{100 * t.hit_rate:.1f}%"


@click.command("stats")
@click.argument("conversation_id", metavar="CONVERSATION")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the turns and the total.")
@db_option
@friendly
def stats_cmd(conversation_id: str, as_json: bool, db: str | None) -> None:
    """Print the prompt-cache hit rate of CONVERSATION per turn and in total.

    From the usage each provider reported (cached prompt tokens over prompt tokens, every request of a
    turn counted); stored by toolreplay turn and chat since this version.
    """
    from toolreplay._store import open_store

    store = open_store(db)
    try:
        store.load_range(conversation_id, 0, 0)  # the store's own error for an unknown conversation
        turns = turn_stats(store.load_usage(conversation_id))
    finally:
        store.close()
    total = total_stats(turns)
    if as_json:
        record = {
            "conversation": conversation_id,
            "turns": [t.as_json() for t in turns],
            "total": total.as_json(),
        }
        click.echo(json.dumps(record, ensure_ascii=False))
        return
    if not turns:
        click.echo(f"{conversation_id}: no usage stored (turns run by toolreplay turn or chat store it)")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{conversation_id}: prompt cache", title_justify="left")
    for name in ("reply", "requests", "prompt", "cached", "hit rate", "written", "output"):
        table.add_column(name, justify="left" if name == "reply" else "right")
    for t in [*turns, total]:
        table.add_row(
            t.reply, str(t.requests), _cell(t.input_tokens), _cell(t.cached_tokens), _rate(t),
            _cell(t.cache_write_tokens), _cell(t.output_tokens),
            style="bold" if t is total else None,
        )  # fmt: skip
    Console().print(table)

"""How long and how often the transport tries: the retry policy, the attempt budget, the deadline."""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from toolreplay._errors import ConfigError, ProviderError, ProviderTimeout


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When and how long to wait before trying again.

    Attempt ``n`` (1-based) that failed with a retryable error waits ``Retry-After`` when the provider
    gave one (a wait longer than ``max_retry_after`` is not waited: the error is raised at once), else
    ``min(max_delay, base_delay * 2 ** (n - 1))`` scaled by a random factor in ``[1 - jitter, 1]``.
    ``sleep`` is injectable so tests run without waiting.
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    jitter: float = 0.5
    max_retry_after: float = 120.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be at least 1, not {self.max_attempts}")
        if not 0 <= self.jitter <= 1:
            raise ConfigError(f"jitter must be between 0 and 1, not {self.jitter}")

    def delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait after failed attempt ``attempt``, or None when no retry should follow."""
        if not error.retryable or attempt >= self.max_attempts:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_retry_after else None
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return backoff * (1 - self.jitter * self.rng.random())


NO_RETRY = RetryPolicy(max_attempts=1)


class BudgetSpent(ProviderError):
    """The :class:`AttemptBudget` is spent: this attempt was not sent (never retried)."""


class AttemptBudget:
    """At most ``limit`` HTTP attempts across many sends, retries included (the lab's --max-requests:
    a budget that counted only first attempts let cut streams send four times as many)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self, vessel: str) -> None:
        """Count one attempt, or raise :class:`BudgetSpent` when none is left."""
        with self._lock:
            if self.used >= self.limit:
                raise BudgetSpent(f"{vessel}: not sent: the budget of {self.limit} requests is spent")
            self.used += 1


@contextlib.asynccontextmanager
async def within(seconds: float | None, vessel: str, what: str) -> AsyncIterator[None]:
    """Cancel what runs inside after ``seconds`` (None: no limit) and raise a one-line
    :class:`ProviderTimeout` naming ``what`` took too long."""
    if seconds is None:
        yield
        return
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError:
        raise ProviderTimeout(
            f"{vessel}: {what} took longer than {seconds:g} s (--timeout)", vessel=vessel
        ) from None


__all__ = ["NO_RETRY", "AttemptBudget", "BudgetSpent", "RetryPolicy", "within"]

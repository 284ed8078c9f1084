"""The limits of a turn, a lab run and a request: each default written once here, each range checked once.

The CLI's options show these defaults and hand their values on unchecked; the values that hold them
(``TurnOptions``, ``ContextBudget``, ``LabConfig``, ``Transport``, ``ProxyConfig``) call the check here, so a
bad value is refused with the same line (naming the field, which is the flag without its dashes) whether
it came from a flag or from code, and the command exits 1 as on any other bad setting. Only the error
tree is imported: the CLI reads this module to build its options, and each command's ``--help`` must stay
fast (design 31).

The retry policy's numbers (attempts, backoff, ``Retry-After``) have their one owner in
``_transport/policy.py`` (``RetryPolicy``): no command sets them.
"""

from __future__ import annotations

from toolreplay.errors import ConfigError

# -- a turn (turn, chat; the API's TurnOptions) --------------------------------------------------------

#: Requests one turn may send at most (``--max-requests``; the claude vessel's ``--max-turns``).
MAX_REQUESTS = 8
#: Seconds a turn may take, every request, retry and tool run included (``--timeout``; for ``check`` each
#: vessel's request, for ``lab`` each trial): a server that accepts and never answers held a turn for
#: 20 minutes (four attempts of :data:`READ_TIMEOUT`) without it.
TIMEOUT = 600.0

# -- one request (the transport) -----------------------------------------------------------------------

#: Seconds the transport waits for each read (a whole answer, or the next piece of a stream) and each write.
READ_TIMEOUT = 300.0
#: Seconds the transport waits for a connection (capped by its read timeout): connecting never
#: legitimately takes long, waiting for a long generation can.
CONNECT_TIMEOUT = 15.0

# -- the proxy -----------------------------------------------------------------------------------------

#: Seconds the upstream may take for its headers, and between two pieces of its answer: longer than the
#: transport's, since the agent in front keeps its own time limits and the proxy must not cut it first.
PROXY_READ_TIMEOUT = 600.0
#: Seconds the proxy waits for a connection to the upstream.
PROXY_CONNECT_TIMEOUT = 30.0
#: Bytes of a request body the proxy takes, before and after decompression (a zstd bomb is refused), and
#: of an answer its recorder reads (``--max-body``).
PROXY_MAX_BODY = 32 * 1024 * 1024

# -- a lab run ------------------------------------------------------------------------------------------

#: Trials per vessel and mode (``--trials``).
LAB_TRIALS = 20
#: Requests in flight at once (``--concurrency``).
LAB_CONCURRENCY = 4
#: The replay modes compared, in the CLI's form (``--modes``).
LAB_MODES = "plain,prose,native"
#: The requests a run may send at most, retries included (``--max-requests``): a typo like
#: ``--trials 2000`` should not run.
LAB_MAX_REQUESTS = 2000


# -- the checks -----------------------------------------------------------------------------------------


def _at_least_one(name: str, value: int) -> int:
    if value < 1:
        raise ConfigError(f"{name} must be at least 1, not {value}")
    return value


def check_max_requests(max_requests: int) -> int:
    """A turn's ``max_requests``."""
    return _at_least_one("max_requests", max_requests)


def check_timeout(timeout: float | None) -> float | None:
    """Any time limit in seconds (a turn's, a trial's, a request's, the proxy's); None: no limit. NaN is
    refused too (it compares false)."""
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"timeout must be more than 0 seconds, not {timeout:g}")
    return timeout


def check_context_tokens(max_context_tokens: int | None) -> int | None:
    """A context budget's tokens (``--max-context-tokens``); None: the vessel's context window."""
    if max_context_tokens is not None:
        _at_least_one("max_context_tokens", max_context_tokens)
    return max_context_tokens


def check_max_body(max_body: int) -> int:
    """The proxy's ``max_body`` (bytes)."""
    return _at_least_one("max_body", max_body)


def check_trials(trials: int) -> int:
    return _at_least_one("trials", trials)


def check_concurrency(concurrency: int) -> int:
    return _at_least_one("concurrency", concurrency)


__all__ = [
    "CONNECT_TIMEOUT",
    "LAB_CONCURRENCY",
    "LAB_MAX_REQUESTS",
    "LAB_MODES",
    "LAB_TRIALS",
    "MAX_REQUESTS",
    "PROXY_CONNECT_TIMEOUT",
    "PROXY_MAX_BODY",
    "PROXY_READ_TIMEOUT",
    "READ_TIMEOUT",
    "TIMEOUT",
    "check_concurrency",
    "check_context_tokens",
    "check_max_body",
    "check_max_requests",
    "check_timeout",
    "check_trials",
]

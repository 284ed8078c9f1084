"""What one ``toolreplay proxy`` serves: its upstreams, limits, token, and what it records and logs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolreplay._errors import ConfigError
from toolreplay._limits import PROXY_MAX_BODY, PROXY_READ_TIMEOUT, check_max_body, check_timeout

if TYPE_CHECKING:
    from toolreplay._proxy.model_routes import ModelRoute


def served_wires() -> list[str]:
    """The wires a proxy serves: every registered wire with a provider path (its ``Http.path``)."""
    from toolreplay.wires import all_wires

    return [w.name for w in all_wires() if w.http is not None and w.http.path is not None]


def default_upstreams() -> dict[str, str]:
    """Each served wire's own provider (its public vessel's base URL)."""
    from toolreplay._vessels import public_base_url

    return {w: public_base_url(w) for w in served_wires() if public_base_url(w)}


def parse_upstreams(values: Iterable[str]) -> dict[str, str]:
    """``--upstream WIRE=URL`` values over the defaults; a wire not served or a URL that is not http(s)
    is refused with a line naming it."""
    out = default_upstreams()
    served = served_wires()
    for value in values:
        wire, sep, url = value.partition("=")
        wire, url = wire.strip(), url.strip().rstrip("/")
        if not sep or not url:
            raise ConfigError(f"--upstream {value!r}: give WIRE=URL, e.g. anthropic=http://127.0.0.1:9000")
        if wire not in served:
            raise ConfigError(
                f"--upstream {value!r}: unknown wire {wire!r}; served wires: {', '.join(served)}"
            )
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"--upstream {value!r}: the URL must start with http:// or https://")
        out[wire] = url
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyConfig:
    """One proxy's settings (the command's options, resolved once)."""

    upstreams: Mapping[str, str] = field(default_factory=default_upstreams)
    #: Record each exchange into the store (``--no-record``: pass-through only).
    record: bool = True
    db: str | None = None
    #: One JSON line per request (``--log FILE``).
    log: Path | None = None
    #: The limit on a request body, before and after decompression (``--max-body``).
    max_body: int = PROXY_MAX_BODY
    #: What a client must present when the proxy listens beyond loopback (``--token``).
    token: str | None = None
    #: Put back what the provider needs and the agent dropped (``--repair``).
    repair: bool = False
    #: Seconds the upstream may take for its headers, and between two pieces of its answer.
    timeout: float = PROXY_READ_TIMEOUT
    #: Print one line per audit problem on the console.
    console: bool = True
    #: Models translated for another vessel (``--route``, ``--routes``; design 47), tried in order.
    routes: tuple[ModelRoute, ...] = ()
    #: A routed request continues a conversation answered lately from memory, where the memory answers
    #: as the store would (design 54); off: always from the store, once the recorder has written it.
    remember: bool = True

    def __post_init__(self) -> None:
        check_max_body(self.max_body)
        check_timeout(self.timeout)


__all__ = [
    "ProxyConfig",
    "default_upstreams",
    "parse_upstreams",
    "served_wires",
]

"""Building a vessel's HTTP request: URL, headers with the key, exact body bytes, stream flag. Pure (reads
the key variable from the environment, sends nothing).

Each wire's :class:`~toolreplay.wires.contract.Http` says its URL, key headers and stream flag; the
transport only asks. For example (``base`` is the vessel's ``base_url`` or the caller's ``base_url``):

=================  ==========================================================  =========================
wire               request                                                     key header
=================  ==========================================================  =========================
openai-chat        POST {base}/chat/completions (``"stream": true`` + usage)   Authorization: Bearer
openai-responses   POST {base}/responses (``"stream": true``)                  Authorization: Bearer
anthropic          POST {base}/v1/messages (``"stream": true``)                x-api-key + anthropic-version
gemini             POST {base}/models/{model}:generateContent                  x-goog-api-key (never ?key=)
                   or :streamGenerateContent?alt=sse
ollama             POST {base}/api/chat (``"stream"`` true/false: NDJSON)      Authorization: Bearer, if any
=================  ==========================================================  =========================

The key comes from the vessel's ``key_env`` and goes only to the vessel's own host (the key-host rule of
SECURITY.md, :func:`resolve_key`): the scheme, host and port of the base URL its profile names. Another
loopback URL gets no key (local servers need none); another remote URL is refused unless the caller passes
``send_key`` (``--send-key``); a key never travels over plain http to a host that is not loopback. When
the variable is unset, a loopback base URL gets no key and any other URL is refused. Every refusal is a
:class:`ConfigError` raised before anything is sent. A ``stream_only`` vessel (Codex) always streams.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError
from toolreplay._transport.dump import register_secret
from toolreplay._version import __version__
from toolreplay._vessels import Vessel, get_vessel
from toolreplay.wires import get_wire


@dataclass(frozen=True, slots=True)
class Prepared:
    """One request ready to go: what :func:`prepare` built (headers hold the key: never log them raw)."""

    vessel: Vessel
    url: str
    headers: Mapping[str, str]
    content: bytes
    stream: bool


@functools.lru_cache(maxsize=256)
def is_loopback(url: str) -> bool:
    """True for http(s) URLs on localhost, 127.0.0.0/8 or ::1 (False for a URL that does not parse)."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:  # 'http://[::1' (urlsplit: Invalid IPv6 URL)
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_base_url(vessel: Vessel, base_url: str) -> None:
    """ConfigError naming ``base_url`` when it is not an http(s) URL with a host (and a valid port)."""
    try:
        parts = _checked(base_url.rstrip("/"))
    except ValueError as exc:
        raise ConfigError(f"{vessel.name}: base URL {base_url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{vessel.name}: base URL {base_url!r} is not an http(s) URL")


@functools.lru_cache(maxsize=256)
def _checked(url: str) -> SplitResult:
    """``url`` split, its port read (a port that is not a number in range raises here, not at send
    time). Pure: a proxy asks it of the same few URLs on every request."""
    parts = urlsplit(url)
    _ = parts.port
    return parts


def _configured_url(vessel: Vessel) -> str:
    """The vessel's own base URL: its profile's (``home_url``), which a vessel given ``--base-url``
    keeps; the vessel is not looked up again by its name (the value given is the one used)."""
    return vessel.home_url


@functools.lru_cache(maxsize=256)
def _origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port: what decides which server a request (and a key) reaches."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ("", url, None)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def _host(url: str) -> str:
    scheme, host, port = _origin(url)
    default = {"http": 80, "https": 443}.get(scheme)
    return host if port in (None, default) else f"{host}:{port}"


def key_value(vessel: Vessel) -> str | None:
    """The vessel's key from where the user keeps it (its variable, else the keys file), None when unset.

    A key that is not printable ASCII (a line break or a non-ASCII letter from a copy-paste) could not go
    in a header: refused here, before anything is stored, without quoting it.
    """
    if vessel.key_env is None:
        return None
    from toolreplay._config import key_for

    key = key_for(vessel.key_env)  # the environment, else the keys file (`toolreplay keys set`)
    if not key:
        return None
    register_secret(key)
    if not (key.isascii() and key.isprintable()):
        raise ConfigError(
            f"{vessel.name}: {vessel.key_env} holds a character that is not printable ASCII "
            "(a line break or a letter from a copy-paste?): set it again"
        )
    return key


def _may_carry_key(vessel: Vessel, base_url: str, send_key: bool) -> bool:
    """Whether a key may go to ``base_url``: the vessel's own host, or the user said so. Raises for a
    remote host the user did not name, and for plain http to a remote host (the key would travel in
    clear): the key-host rule."""
    own_url = _configured_url(vessel)
    own = _origin(base_url) == _origin(own_url)
    loopback = is_loopback(base_url)
    if not own and not send_key:
        if loopback:
            return False  # a local server needs no key, and another vessel's server gets none
        raise ConfigError(
            f"{vessel.name}: {vessel.key_env} is for {_host(own_url)}, not {_host(base_url)}: pass "
            "send_key=True (--send-key) to send it there, or set base_url in the vessel's profile"
        )
    if not loopback and _origin(base_url)[0] != "https":
        raise ConfigError(
            f"{vessel.name}: {base_url} is plain http: {vessel.key_env} is sent to a host that is not "
            "loopback only over https"
        )
    return True


def resolve_key(vessel: Vessel, base_url: str, *, send_key: bool = False) -> str | None:
    """The key to send to ``base_url``, None when it needs or gets none (the key-host rule: module
    docstring); ConfigError when the key may not go there, or a remote URL would go keyless."""
    if vessel.key_env is None:
        return None
    check_base_url(vessel, base_url)  # a bad URL is that, not a missing key
    if not _may_carry_key(vessel, base_url, send_key):
        return None
    key = key_value(vessel)
    if key:
        return key
    if is_loopback(base_url):
        return None
    if base_url.rstrip("/") != _configured_url(vessel).rstrip("/"):  # the caller chose it (--base-url)
        raise ConfigError(
            f"{vessel.name}: set {vessel.key_env} to send to {base_url} "
            "(a key is sent only to remote URLs; loopback URLs need none)"
        )
    raise ConfigError(f"{vessel.name}: set {vessel.key_env} or point base_url (--base-url) at a local server")


def one_key_per_url(vessels: Iterable[Vessel]) -> None:
    """``--send-key`` with one base URL for several vessels: refused when they hold different keys (one
    vessel's key must never reach another vessel's URL)."""
    held = sorted({v.key_env for v in vessels if v.key_env})
    if len(held) > 1:
        raise ConfigError(
            f"--send-key sends a key to one URL: name only vessels that share one key (not {', '.join(held)})"
        )


def endpoint(vessel: Vessel, base_url: str, model: str, stream: bool) -> str:
    """The URL a request of ``vessel`` goes to (the wire's own endpoint under the base URL)."""
    wire = get_wire(vessel.wire)
    if wire.http is None:
        raise ConfigError(
            f"{vessel.name}: the {wire.name} wire drives the {wire.driver}, not HTTP (use the turn loop)"
        )
    check_base_url(vessel, base_url)
    return wire.http.endpoint(base_url.rstrip("/"), model, stream)


def _headers(vessel: Vessel, key: str | None, stream: bool) -> dict[str, str]:
    http = get_wire(vessel.wire).http
    sse = http is not None and http.framing == "sse"
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream" if stream and sse else "application/json",
        "user-agent": f"toolreplay/{__version__}",
    }
    if http is not None:
        headers.update(http.auth_headers(vessel, key))
    return headers


def _stream_body(wire: str, body: Mapping[str, Any], stream: bool, model: str | None) -> dict[str, Any]:
    out = dict(body)
    http = get_wire(wire).http
    if http is None:
        return out
    if model and http.model_in_body:
        out["model"] = model
    http.stream_flag(out, stream)
    return out


def prepare(
    vessel: Vessel | str,
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    base_url: str | None = None,
    stream: bool | None = None,
    send_key: bool = False,
) -> Prepared:
    """The request for ``body`` on ``vessel``: URL, headers (with the key), exact body bytes, stream flag.

    ``model`` overrides the body's ``model`` (Gemini: the model in the URL); ``stream`` None follows the
    body's own ``stream`` flag; a ``stream_only`` vessel always streams. ``send_key``: the user allowed the
    key to go to a ``base_url`` that is not the vessel's own host (``--send-key``).
    """
    v = get_vessel(vessel)
    base = base_url or v.base_url
    streamed = v.has("stream_only") or (bool(body.get("stream")) if stream is None else stream)
    use_model = model or str(body.get("model") or v.model)
    url = endpoint(v, base, use_model, streamed)
    key = resolve_key(v, base, send_key=send_key)
    content = jsonenc.encode(_stream_body(v.wire, body, streamed, model))
    return Prepared(v, url, _headers(v, key, streamed), content, streamed)


__all__ = [
    "Prepared",
    "check_base_url",
    "endpoint",
    "is_loopback",
    "key_value",
    "one_key_per_url",
    "prepare",
    "resolve_key",
]

"""Building a vessel's HTTP request: URL, headers with the key, exact body bytes, stream flag. Pure (reads
the key variable from the environment, sends nothing).

Per wire (``base`` is the vessel's ``base_url`` or the caller's ``base_url``):

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

The key comes from the vessel's ``key_env``. When that variable is unset, a loopback base URL gets no key
(local servers need none) and any other URL is refused with a :class:`ConfigError` before anything is sent.
A ``stream_only`` vessel (Codex) always streams.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from toolreplay import __version__
from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError
from toolreplay._transport.dump import register_secret
from toolreplay._vessels import Vessel, get_vessel

ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True, slots=True)
class Prepared:
    """One request ready to go: what :func:`prepare` built (headers hold the key: never log them raw)."""

    vessel: Vessel
    url: str
    headers: Mapping[str, str]
    content: bytes
    stream: bool


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
        parts = urlsplit(base_url.rstrip("/"))
        _ = parts.port  # a port that is not a number in range raises here, not at send time
    except ValueError as exc:
        raise ConfigError(f"{vessel.name}: base URL {base_url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{vessel.name}: base URL {base_url!r} is not an http(s) URL")


def _configured_url(vessel: Vessel) -> str:
    """The vessel's own base URL from the table (callers pass --base-url as a replaced vessel)."""
    try:
        return get_vessel(vessel.name).base_url
    except ConfigError:  # a vessel built in code, in no table
        return vessel.base_url


def resolve_key(vessel: Vessel, base_url: str) -> str | None:
    """The vessel's key, None when it needs or gets none; ConfigError when a remote URL would go keyless."""
    if vessel.key_env is None:
        return None
    check_base_url(vessel, base_url)  # a bad URL is that, not a missing key
    key = os.environ.get(vessel.key_env, "").strip()
    if key:
        register_secret(key)
        return key
    if is_loopback(base_url):
        return None
    if base_url.rstrip("/") != _configured_url(vessel).rstrip("/"):  # the caller chose it (--base-url)
        raise ConfigError(
            f"{vessel.name}: set {vessel.key_env} to send to {base_url} "
            "(a key is sent only to remote URLs; loopback URLs need none)"
        )
    raise ConfigError(f"{vessel.name}: set {vessel.key_env} or use --base-url for a local server")


def endpoint(vessel: Vessel, base_url: str, model: str, stream: bool) -> str:
    """The URL a request of ``vessel`` goes to."""
    wire = vessel.wire
    if wire == "claude-prompt":
        raise ConfigError(
            f"{vessel.name}: the claude-prompt wire drives the Claude Code CLI, not HTTP (use the turn loop)"
        )
    check_base_url(vessel, base_url)
    base = base_url.rstrip("/")
    if wire == "openai-chat":
        return f"{base}/chat/completions"
    if wire == "openai-responses":
        return f"{base}/responses"
    if wire == "anthropic":
        return f"{base}/v1/messages"
    if wire == "gemini":
        name = quote(model.removeprefix("models/"), safe="-._")
        return f"{base}/models/{name}:" + ("streamGenerateContent?alt=sse" if stream else "generateContent")
    if wire == "ollama":
        return f"{base}/api/chat"
    raise ConfigError(f"{vessel.name}: wire {wire} is not sent over HTTP")


def _headers(vessel: Vessel, key: str | None, stream: bool) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream" if stream and vessel.wire != "ollama" else "application/json",
        "user-agent": f"toolreplay/{__version__}",
    }
    if vessel.wire == "anthropic":
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if key:
            headers["x-api-key"] = key
    elif vessel.wire == "gemini":
        if key:
            # A header, never a ?key= query: keys must not land in URLs, logs or dumps.
            headers["x-goog-api-key"] = key
    elif key:
        headers["authorization"] = f"Bearer {key}"
    return headers


def _stream_body(wire: str, body: Mapping[str, Any], stream: bool, model: str | None) -> dict[str, Any]:
    out = dict(body)
    if model and wire != "gemini":
        out["model"] = model
    if wire == "openai-chat":
        if stream:
            out["stream"] = True
            out.setdefault("stream_options", {"include_usage": True})
        else:
            # OpenAI refuses stream_options without stream.
            out.pop("stream", None)
            out.pop("stream_options", None)
    elif wire in ("openai-responses", "anthropic"):
        if stream:
            out["stream"] = True
        else:
            out.pop("stream", None)
    elif wire == "ollama":
        out["stream"] = stream  # Ollama streams when the flag is absent
    return out


def prepare(
    vessel: Vessel | str,
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    base_url: str | None = None,
    stream: bool | None = None,
) -> Prepared:
    """The request for ``body`` on ``vessel``: URL, headers (with the key), exact body bytes, stream flag.

    ``model`` overrides the body's ``model`` (Gemini: the model in the URL); ``stream`` None follows the
    body's own ``stream`` flag; a ``stream_only`` vessel always streams.
    """
    v = get_vessel(vessel)
    base = base_url or v.base_url
    streamed = v.has("stream_only") or (bool(body.get("stream")) if stream is None else stream)
    use_model = model or str(body.get("model") or v.model)
    url = endpoint(v, base, use_model, streamed)
    key = resolve_key(v, base)
    content = jsonenc.encode(_stream_body(v.wire, body, streamed, model))
    return Prepared(v, url, _headers(v, key, streamed), content, streamed)


__all__ = [
    "ANTHROPIC_VERSION",
    "Prepared",
    "check_base_url",
    "endpoint",
    "is_loopback",
    "prepare",
    "resolve_key",
]

"""Keys out of everything written, and the request dumps of ``--dump-requests DIR``.

:func:`redact` replaces every API key toolreplay knows of (the values of the built-in vessels' key
variables, plus every key the transport has sent) with ``[redacted]``, spelled as it is, ``\\u``-escaped
or base64-encoded; it also masks ``Bearer`` tokens and ``key=`` query values. Use it on anything that
may hold a key before it is logged, raised or stored.

Dump layout (one directory; the audit and ``cache-diff`` read it). Every HTTP attempt gets the next free
four-digit number ``NNNN`` (numbering continues after the highest number already in the directory; a
retried request is dumped once per attempt). A number is claimed by creating its request file
exclusively (``O_EXCL``), so runs sharing a directory, in parallel too, never overwrite each other's
files and each answer stays beside its own request. Two processes dumping different vessels at the same
moment may both use one number: the vessel in the name keeps their files apart.

* ``NNNN-<vessel>-request.json``: the exact body bytes sent (keys redacted, which never touches a body
  that holds none);
* ``NNNN-<vessel>-response.json``: the answer body as received (non-streamed, any status); for a stream,
  ``NNNN-<vessel>-response.sse`` (the raw SSE text) or ``.ndjson`` (Ollama);
* ``NNNN-<vessel>-error.json`` when the attempt failed: ``{"error": class name, "message", "status",
  "retryable"}``;
* ``NNNN-<vessel>-meta.json``: ``{"n", "vessel", "wire", "method", "url", "headers" (keys redacted),
  "stream", "attempt", "status", "latency_s", "request_bytes"}``.
"""

from __future__ import annotations

import base64
import functools
import os
import re
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import ConfigError, ProviderError

REDACTED = "[redacted]"
#: Shorter values are not treated as keys: local servers take dummy keys such as ``ollama`` or
#: ``lm-studio``, and redacting those everywhere would garble model names in bodies and errors. Real
#: provider keys are 39 characters (Gemini) or longer.
MIN_SECRET_LEN = 12
#: Request headers that carry a key on some wire.
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization"})

_registered: set[str] = set()
_lock = threading.Lock()
_PATTERNS = (
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{6,}"), r"\1" + REDACTED),
    (re.compile(r"(?i)([?&](?:key|api_key|apikey)=)[^&\s\"']+"), r"\1" + REDACTED),
)


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a key: :func:`redact` removes it from now on (process-wide)."""
    if value and len(value) >= MIN_SECRET_LEN:
        with _lock:
            _registered.add(value)


def known_secrets() -> set[str]:
    """Every key value to redact: registered ones and the values of the built-in key variables."""
    from toolreplay._vessels import BUILTIN

    found = {os.environ.get(v.key_env, "") for v in BUILTIN.values() if v.key_env}
    with _lock:
        found |= _registered
    return {s for s in found if len(s) >= MIN_SECRET_LEN}


def _base64_runs(secret: str) -> set[str]:
    """The base64 text that spells ``secret`` inside any longer encoded string, standard and url-safe:
    an echoed ``Authorization: Basic`` header is ``user:KEY`` encoded, and the key's characters fall on
    one of three alignments (its offset in the string, modulo 3). A character made only of the key's
    bits is the same whatever surrounds it; the one or two at each end that mix in a neighbour's bits
    are left out."""
    raw = secret.encode("utf-8", "surrogateescape")
    runs = set()
    for offset in range(3):
        text = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        first, end = -(-8 * offset // 6), 8 * (offset + len(raw)) // 6  # 6 bits per character
        run = text[first:end]
        runs |= {run, run.replace("+", "-").replace("/", "_")}
    return runs


@functools.lru_cache(maxsize=8)
def _spellings(secrets: frozenset[str]) -> frozenset[str]:
    """Every key, and every base64 run of one (:func:`_base64_runs`)."""
    return secrets.union(*(_base64_runs(s) for s in secrets))


@functools.lru_cache(maxsize=8)
def _pieces_pattern(secrets: frozenset[str]) -> re.Pattern[str]:
    """Any piece of ``MIN_SECRET_LEN`` characters of any key: an echo that cuts a key ("sk-...9f8e")
    still holds one, and a piece that long identifies the key as well as the whole."""
    grams = {s[i : i + MIN_SECRET_LEN] for s in secrets for i in range(len(s) - MIN_SECRET_LEN + 1)}
    return re.compile(_trie(grams))


def _trie(words: Iterable[str]) -> str:
    """A pattern matching any of ``words`` (all of one length), their common prefixes written once: the
    plain alternation of a few hundred pieces (base64 runs included) scanned a body 9x slower."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items())]
        if len(alts) <= 1:
            return "".join(alts)
        return "(?:" + "|".join(alts) + ")"

    return emit(root) if root else "(?!)"  # no words: a pattern that never matches


def _cut_pieces(text: str, secrets: frozenset[str]) -> str:
    """``text`` with every run of characters that holds a piece of a key (:func:`_pieces_pattern`),
    stretched to the whole run the key shares with the text, replaced by ``[redacted]``."""
    pattern = _pieces_pattern(secrets)
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        if m.start() < pos:
            continue
        end = m.end()
        for s in secrets:  # stretch to the right while the text goes on following this key
            at = s.find(m.group())
            if at >= 0:
                j = end
                while j < len(text) and at + (j - m.start()) < len(s) and text[j] == s[at + j - m.start()]:
                    j += 1
                end = max(end, j)
        out += [text[pos : m.start()], REDACTED]
        pos = end
    return "".join(out) + text[pos:] if out else text


# A run of key characters and JSON escapes (\u0073, or \/ from encoders that escape the slash: base64
# holds slashes), matched whole: a pattern that asks for an escape inside the run scanned the rest of a
# long run again from each of its characters (a 50 KB base64 string beside one escape took 90 s).
_ESCAPED_RUN = re.compile(r"(?:[A-Za-z0-9._~+/=-]|\\u[0-9a-fA-F]{4}|\\/)++")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\/")


def _escaped(text: str) -> bool:
    return "\\u" in text or "\\/" in text


def _cut_escaped(text: str, secrets: frozenset[str]) -> str:
    """``text`` with every escaped run (a JSON echo: ``\\u0073\\u006b...``, or base64 with its slashes
    written ``\\/``) that spells a piece of a key replaced by ``[redacted]``."""
    pattern = _pieces_pattern(secrets)

    def one(m: re.Match[str]) -> str:
        if "\\" not in m.group():
            return m.group()
        plain = _ESCAPE.sub(lambda e: chr(int(e.group(1), 16)) if e.group(1) else "/", m.group())
        return REDACTED if pattern.search(plain) else m.group()

    return _ESCAPED_RUN.sub(one, text)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every known key (and ``secrets``), any piece of one of at least ``MIN_SECRET_LEN``
    characters, any such piece of its base64 encodings, and any JSON-escaped spelling of those replaced
    by ``[redacted]``."""
    given = frozenset(known_secrets() | {s for s in (secrets or ()) if s and len(s) >= MIN_SECRET_LEN})
    if given:
        values = _spellings(given)
        if _escaped(text):
            text = _cut_escaped(text, values)
        text = _cut_pieces(text, values)
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def redact_bytes(data: bytes) -> bytes:
    """Bytes with every known key (pieces, base64 runs and escaped echoes too) redacted; bytes that hold
    none come back unchanged (the same object)."""
    given = frozenset(known_secrets())
    if not given:
        return data
    values = _spellings(given)
    text = data.decode("utf-8", "surrogateescape")
    if not (_pieces_pattern(values).search(text) or (_escaped(text) and _cut_escaped(text, values) != text)):
        return data
    out = _cut_pieces(_cut_escaped(text, values), values)
    return out.encode("utf-8", "surrogateescape")


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers with the value of every key-carrying header replaced (its name kept, so presence shows)."""
    return {k: (REDACTED if k.lower() in SECRET_HEADERS else redact(v)) for k, v in headers.items()}


_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")
_NUMBERED = re.compile(r"^(\d{4,})-")


class RequestDump:
    """Writes every request sent, and its answer or error, as numbered files in one directory.

    See the module docstring for the naming. Thread-safe: numbers are handed out under a lock.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{self.directory}: cannot create the dump directory ({exc})") from None
        self._next = self._after_highest()
        self._lock = threading.Lock()

    def _after_highest(self) -> int:
        highest = 0
        for entry in self.directory.iterdir():
            m = _NUMBERED.match(entry.name)
            if m:
                highest = max(highest, int(m.group(1)))
        return highest + 1

    def path(self, n: int, vessel: str, part: str) -> Path:
        """The file for attempt ``n``: ``NNNN-<vessel>-<part>`` (``part`` like ``request.json``)."""
        return self.directory / f"{n:04d}-{_SAFE_NAME.sub('_', vessel)}-{part}"

    def request(self, vessel: str, body: bytes) -> int:
        """Write the body of the next request; returns its number (claimed by creating the file)."""
        data = redact_bytes(body)
        with self._lock:
            while True:
                n = self._next
                self._next += 1
                path = self.path(n, vessel, "request.json")
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                except FileExistsError:  # another run took it: continue after the highest number now
                    self._next = max(self._next, self._after_highest())
                    continue
                except OSError as exc:
                    raise ConfigError(f"{path}: cannot write the request dump ({exc})") from None
                break
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot write the request dump ({exc})") from None
        return n

    def response(self, n: int, vessel: str, data: bytes, *, suffix: str = "json") -> None:
        """Write the answer of request ``n`` (``suffix``: json, sse or ndjson)."""
        self._write(self.path(n, vessel, f"response.{suffix}"), redact_bytes(data))

    def error(self, n: int, vessel: str, error: ProviderError) -> None:
        """Write why request ``n`` failed."""
        record = {
            "error": type(error).__name__,
            "message": redact(str(error)),
            "status": error.status,
            "retryable": error.retryable,
        }
        self._write(self.path(n, vessel, "error.json"), jsonenc.encode(record))

    def meta(self, n: int, vessel: str, meta: Mapping[str, Any]) -> None:
        """Write what else is known of request ``n`` (URL, redacted headers, status, latency)."""
        record = {"n": n, "vessel": vessel, **meta}
        self._write(self.path(n, vessel, "meta.json"), redact_bytes(jsonenc.encode(record)))

    def _write(self, path: Path, data: bytes) -> None:
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot write the request dump ({exc})") from None


__all__ = [
    "REDACTED",
    "RequestDump",
    "known_secrets",
    "redact",
    "redact_bytes",
    "redact_headers",
    "register_secret",
]

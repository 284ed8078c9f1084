"""Request and answer bodies as the proxy reads them: compressed as they came, decompressed only to read,
with the size limit applied to what decompression yields (a small zstd or gzip bomb is refused).

The proxy forwards the bytes it received; what is decompressed here is only read (the JSON check before a
request goes upstream, and the recording after it).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from toolreplay import _jsonenc as jsonenc
from toolreplay._proxy.continued import LAYOUTS, Layout

try:  # the proxy extra brings it: a JSON object checked without building it
    import msgspec

    _OBJECT: msgspec.json.Decoder[dict[str, msgspec.Raw]] | None = msgspec.json.Decoder(
        dict[str, msgspec.Raw]
    )
    _LIST: msgspec.json.Decoder[list[msgspec.Raw]] | None = msgspec.json.Decoder(list[msgspec.Raw])
except ImportError:  # pragma: no cover - without it every body is parsed whole
    _OBJECT = _LIST = None


class BodyError(ValueError):
    """A body the proxy refuses: ``status`` is what it answers (413: too large, 400: not readable)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _limit_note(limit: int) -> str:
    return f"{limit:,} bytes" if limit % (1024 * 1024) else f"{limit // (1024 * 1024)} MB"


def _gunzip(data: bytes, limit: int, wbits: int) -> bytes:
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as exc:
        raise BodyError(400, f"the request body is not valid gzip or deflate data ({exc})") from None
    if len(out) > limit or d.unconsumed_tail:
        raise BodyError(413, f"the request body decompresses to more than {_limit_note(limit)}")
    if not d.eof:
        raise BodyError(400, "the request body is not complete gzip data")
    return out


def _unzstd(data: bytes, limit: int) -> bytes:
    try:
        import zstandard
    except ImportError:  # the proxy extra installs it
        raise BodyError(
            415, "a zstd body needs the zstandard package (pip install 'toolreplay[proxy]')"
        ) from None
    out = bytearray()
    reader = zstandard.ZstdDecompressor().stream_reader(data)
    try:
        while chunk := reader.read(1 << 16):
            out += chunk
            if len(out) > limit:
                raise BodyError(413, f"the request body decompresses to more than {_limit_note(limit)}")
    except zstandard.ZstdError as exc:
        raise BodyError(400, f"the request body is not valid zstd data ({exc})") from None
    return bytes(out)


def decoded(data: bytes, encoding: str, limit: int) -> bytes:
    """``data`` decompressed by its ``Content-Encoding`` (gzip, deflate, zstd; none: as it is), at most
    ``limit`` bytes; raises :class:`BodyError`."""
    codings = [
        c.strip().lower() for c in encoding.split(",") if c.strip() and c.strip().lower() != "identity"
    ]
    for coding in reversed(codings):
        if coding in ("gzip", "x-gzip"):
            data = _gunzip(data, limit, 16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            data = _gunzip(data, limit, zlib.MAX_WBITS)
        elif coding == "zstd":
            data = _unzstd(data, limit)
        else:
            raise BodyError(415, f"the request body's Content-Encoding {coding!r} is not one the proxy reads")
    if len(data) > limit:
        raise BodyError(413, f"the request body is larger than {_limit_note(limit)}")
    return data


def json_body(data: bytes, encoding: str, limit: int) -> Any:
    """The request's JSON (decompressed first); raises :class:`BodyError` naming what is wrong."""
    return json_value(decoded(data, encoding, limit))


def is_json_object(plain: bytes) -> bool:
    """Whether ``plain`` (decompressed) is surely a JSON object, checked without building it (a third of
    the time of parsing a long history); False when this cannot tell: :func:`json_value` decides then.

    msgspec reads the top level's keys and skips each value, checking its syntax but not the UTF-8 of its
    strings: that is checked apart. What it accepts, the exact readers accept; what it refuses (a lone
    surrogate escape, a byte order mark, ``NaN``, nesting past its depth) goes to them for the verdict.
    """
    return _top(plain) is not None


def _top(plain: bytes) -> dict[str, msgspec.Raw] | None:
    """``plain``'s top-level values as raw slices when it is surely a JSON object (the rule of
    :func:`is_json_object`), else None."""
    if _OBJECT is None:
        return None
    try:
        raws = _OBJECT.decode(plain)
        plain.decode("utf-8")
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    return raws


def json_value(plain: bytes) -> Any:
    """``plain`` (decompressed) read as JSON; raises :class:`BodyError` naming what is wrong."""
    try:
        # orjson itself: it refuses nesting deeper than 1,024 levels, so no depth walk in front of every
        # request (the shared reader's walk cost more than all the rest of the proxy's work)
        return orjson.loads(plain)
    except orjson.JSONDecodeError as exc:
        if not plain.strip():
            raise BodyError(400, "the request body is empty: a JSON object was expected") from None
        problem = str(exc)
    try:  # what orjson refuses that JSON allows (a lone surrogate escape): the exact reader's word
        return jsonenc.loads(plain)
    except (ValueError, RecursionError):
        raise BodyError(400, f"the request body is not valid JSON ({problem})") from None


class Sliced(Mapping[str, Any]):
    """A request body that is surely a JSON object (:func:`sliced`), read at its top level only: each
    value kept as its exact bytes and read when asked for (design 53). A routed request needs its model
    to be picked; its messages are read on the translation thread, each unchanged one taken from the
    memo by its bytes rather than parsed again.

    A value reads as ``orjson`` reads it within the whole body (the same parser on the same bytes); where
    ``orjson`` refuses one (a number past a double's range), :meth:`whole` reads the whole body as
    :func:`json_value` does, so the body is always the one the proxy read before.
    """

    __slots__ = ("layout", "plain", "raws")

    def __init__(self, plain: bytes, raws: dict[str, bytes], layout: Layout | None = None) -> None:
        self.plain, self.raws = plain, raws
        #: read from the body before it (design 57): its list's entries, and where they stand
        self.layout = layout

    def __getitem__(self, key: str) -> Any:
        return json_value(self.raws[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self.raws)

    def __len__(self) -> int:
        return len(self.raws)

    def whole(self) -> dict[str, Any]:
        """The body as :func:`json_value` reads it."""
        try:
            return {k: orjson.loads(v) for k, v in self.raws.items()}
        except orjson.JSONDecodeError:
            return self.exact()

    def exact(self) -> dict[str, Any]:
        """The whole body read by :func:`json_value` (what :meth:`whole` falls back to)."""
        body = json_value(self.plain)
        assert isinstance(body, dict)  # msgspec read it as an object
        return body


def sliced(plain: bytes, key: str | None = None) -> Sliced | None:
    """``plain`` (decompressed) as a :class:`Sliced` body, or None when it is not surely a JSON object
    (:func:`is_json_object`'s rule: the exact readers decide then, and name what is wrong). ``key``: the
    body's message list, where a routed request may continue a kept body (design 57): then only the
    bytes between what it repeats are read."""
    got = LAYOUTS.read(plain, key) if key is not None else None
    if got is not None:
        return Sliced(plain, *got)
    raws = _top(plain)
    return None if raws is None else Sliced(plain, {k: bytes(v) for k, v in raws.items()})


def items(raw: bytes) -> list[bytes] | None:
    """Each element's exact bytes of the JSON list ``raw`` (a slice :func:`sliced` checked), or None when
    it is not a list."""
    if _LIST is None:
        return None
    try:
        return [bytes(v) for v in _LIST.decode(raw)]
    except msgspec.ValidationError:
        return None


def answer_bytes(data: bytes, encoding: str, limit: int) -> bytes:
    """An upstream answer decompressed for recording (brotli, which the proxy cannot read, raises)."""
    return decoded(data, encoding, limit)


__all__ = [
    "BodyError",
    "Sliced",
    "answer_bytes",
    "decoded",
    "is_json_object",
    "items",
    "json_body",
    "json_value",
    "sliced",
]

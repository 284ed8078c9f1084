"""User media as the wires carry them: ``data:`` URLs, and media types read from bytes or a URL.

Pure helpers on :class:`toolreplay.model.Part` that several wires share (Chat and Responses carry inline
images and files as ``data:`` URLs; Ollama sends images without a media type; Gemini's ``fileData`` needs
one beside a URL).
"""

from __future__ import annotations

import base64
import re
from urllib.parse import urlsplit

from toolreplay.model import Part, PartKind


def data_url(p: Part) -> str:
    """An inline part as a ``data:`` URL (Chat and Responses carry inline images and files that way)."""
    return f"data:{p.media_type or 'application/octet-stream'};base64,{p.data}"


_DATA_URL = re.compile(r"^data:([^;,]*)(?:;[^;,]*)*;base64,", re.IGNORECASE)


def from_data_url(kind: PartKind, url: str, name: str = "") -> Part:
    """A part given as a URL: inline (``data:<type>;base64,<data>``: its type and data kept apart, so any
    wire can carry it) or by address."""
    m = _DATA_URL.match(url)
    if m is None:
        return Part(kind, url=url, name=name)
    return Part(kind, media_type=m.group(1), data=url[m.end() :], name=name)


#: The first characters of the base64 of each image format's signature (PNG, JPEG, GIF, WebP).
_IMAGE_MAGIC = (("iVBORw0KGgo", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif"),
                ("UklGR", "image/webp"))  # fmt: skip


def image_type(data: str) -> str:
    """The media type of a base64 image read from its first bytes (a wire that sends images without one,
    Ollama's ``images``); "" when it is none of the common formats."""
    found = next((t for head, t in _IMAGE_MAGIC if data.startswith(head)), "")
    # WebP is a RIFF container, as WAV and AVI are: only the form type at bytes 8-11 (base64 characters
    # 0-15, whole groups of four, so just those are decoded) tells them apart
    return "" if found == "image/webp" and not _riff_webp(data[:16]) else found


def _riff_webp(head: str) -> bool:
    try:
        return base64.b64decode(head, validate=True)[8:12] == b"WEBP"
    except ValueError:  # binascii.Error: not base64 after all
        return False


#: Media types by a URL's file extension, for a wire that needs one beside a URL (Gemini ``fileData``).
_EXTENSIONS = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
               "webp": "image/webp", "pdf": "application/pdf", "txt": "text/plain"}  # fmt: skip


def url_type(url: str) -> str:
    """The media type a URL's file extension names (``.../cat.jpg`` -> ``image/jpeg``); "" when none."""
    path = urlsplit(url).path if "://" in url else url
    return _EXTENSIONS.get(path.rpartition(".")[2].lower(), "") if "." in path else ""


__all__ = ["data_url", "from_data_url", "image_type", "url_type"]

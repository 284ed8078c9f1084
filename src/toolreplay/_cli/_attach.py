"""``--attach PATH``: a file given with the user's words, read into an image or document part (design 34).

The media type comes from the file's first bytes where the format has a signature (PNG, JPEG, GIF, WebP,
PDF), else from its extension (``.txt``), so a photo saved under the wrong name still goes as what it is,
and a file no wire takes is refused before anything is stored, naming the file and the types accepted.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from toolreplay._steps import Part, PartKind

#: The largest file ``--attach`` reads. Providers cap a request's images well below a request's size
#: (OpenAI takes images up to 20 MB each; Anthropic 5 MB per image, 32 MB per request), so a larger file
#: would be refused after the turn was stored; and the whole file is held, base64, in every request.
MAX_BYTES = 20 * 1024 * 1024

#: What ``--attach`` accepts: the inline types some wire has a place for, by the part they make.
ACCEPTED: dict[str, PartKind] = {
    "image/png": "image", "image/jpeg": "image", "image/gif": "image", "image/webp": "image",
    "application/pdf": "document", "text/plain": "document",
}  # fmt: skip

ACCEPTED_NAMES = "PNG, JPEG, GIF and WebP images, PDF and plain-text (.txt) documents"

ATTACH_HELP = (
    "Send this file with the message (repeatable): a PNG, JPEG, GIF or WebP image, a PDF or a .txt "
    "document, at most 20 MB; its type is read from its first bytes, else its extension. With a file, "
    "TEXT may be left out."
)


def _sniffed(raw: bytes) -> str:
    """The type the first bytes name; "" when they name none of the formats with a signature."""
    from toolreplay._steps import image_type

    if raw.startswith(b"%PDF-"):
        return "application/pdf"
    return image_type(base64.b64encode(raw[:24]).decode("ascii"))


def _media_type(path: Path, raw: bytes) -> str:
    from toolreplay._steps import url_type

    sniffed, named = _sniffed(raw), url_type(path.name)
    if sniffed:
        return sniffed
    if named and named != "text/plain":  # a signature format whose bytes are not that format
        raise click.BadParameter(f"{path}: named {named} by its extension, but its first bytes are not")
    if named == "text/plain":
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise click.BadParameter(
                f"{path}: a .txt file that is not UTF-8 ({exc.reason} at byte {exc.start})"
            ) from None
        return named
    raise click.BadParameter(f"{path}: not a type any wire takes; accepted: {ACCEPTED_NAMES}")


def read_attachment(path: Path) -> Part:
    """The file at ``path`` as an image or document part (base64), or a :class:`click.BadParameter`
    naming the file: missing, unreadable, too large, or of a type no wire takes."""
    from toolreplay._steps import Part

    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise click.BadParameter(f"{path}: {size:,} bytes, more than the {MAX_BYTES:,} --attach takes")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise click.BadParameter(f"{path}: no such file") from None
    except IsADirectoryError:
        raise click.BadParameter(f"{path}: a directory, not a file") from None
    except OSError as exc:
        raise click.BadParameter(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not raw:
        raise click.BadParameter(f"{path}: the file is empty")
    media_type = _media_type(path, raw)
    kind = ACCEPTED[media_type]
    name = path.name if kind == "document" else ""
    return Part(kind, media_type=media_type, data=base64.b64encode(raw).decode("ascii"), name=name)


def read_attachments(ctx: click.Context, param: click.Parameter, value: tuple[Path, ...]) -> tuple[Part, ...]:
    """The ``--attach`` callback: every file read, in the order given."""
    try:
        return tuple(read_attachment(p) for p in value)
    except click.BadParameter as exc:
        exc.ctx, exc.param = ctx, param
        raise


attach_option = click.option(
    "--attach",
    "attachments",
    multiple=True,
    metavar="PATH",
    type=click.Path(path_type=Path, dir_okay=True),
    callback=read_attachments,
    help=ATTACH_HELP,
)

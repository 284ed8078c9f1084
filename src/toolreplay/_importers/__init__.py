"""Bring any history in: the logs people keep, read into stored histories and stored.

Formats (``toolreplay import FILE --from FORMAT``):

========================  ==========================================================================
``toolreplay``            the stored history's own file (JSON, JSON Lines of messages or conversations)
``<wire>``                each registered wire with an import form (``Wire.importing``, whose
                          ``description`` says what): its message lists / request bodies (a JSON
                          array, a body, JSON Lines of them), read by the wire's ``parse_request``
``claude-code``           a Claude Code session JSONL file
``llm-logs``              simonw/llm's SQLite ``logs.db``
``pydantic-ai``           a pydantic-ai message history (``ModelMessagesTypeAdapter`` JSON)
``tau-bench``             tau-bench / tau2-bench trajectories
========================  ==========================================================================

``auto`` tries them in the order of ``AUTO_ORDER`` (the most specific first; a plain-text chat list,
the same in several wires, reads as ``openai-chat``) and says which it chose. A file in no known format
raises :class:`~toolreplay.errors.ImportFormatError` in one line: the file, and why it is not JSON at all
(empty, not JSON), or the reason of the closest format. A file whose
shape one format claims (messages with ``text`` or ``tool_uses`` are toolreplay's own; an SQLite file is
llm's) is judged by that format alone, with its one reason: another format could read it only by
dropping content. No wire is detected for a file with a message key it would drop (``text``,
``parts``...); named with ``--from``, it reads with a warning.

Every importer reports what it could not represent instead of dropping it (``warnings``), keeps
``created_at`` as given (never invented, design 6), and stores one transaction per conversation (the
store's ``import_history``: idempotent, a conflicting message refused with nothing of that conversation
written). A JSON Lines file with a bad line (cut short, not UTF-8, nested too deep) imports its other
lines and names the bad one by its number.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolreplay._errors import ImportFormatError, StoreError
from toolreplay._history import History, Message
from toolreplay._importers import claude_code, llm_logs, native, pydantic_ai, tau_bench
from toolreplay._importers._source import Document, Format, Reading, Record, read_document
from toolreplay._importers.wire_formats import wire_formats
from toolreplay._steps import Issuer, host_of

if TYPE_CHECKING:
    from toolreplay._store import ImportResult, Store

    FORMATS: dict[str, Format]
    AUTO_ORDER: tuple[str, ...]
    FORMAT_NAMES: tuple[str, ...]

#: The formats that are not a wire's, in the order ``auto`` tries them (before the wires' own).
_OWN: tuple[Format, ...] = (
    llm_logs.FORMAT,
    native.FORMAT,
    tau_bench.FORMAT,
    claude_code.FORMAT,
    pydantic_ai.FORMAT,
)


def formats() -> dict[str, Format]:
    """Every format by name, in the order ``auto`` tries them: the formats of their own, then one per
    registered wire with an import form (the most specific first, see :mod:`.wire_formats`)."""
    return {f.name: f for f in (*_OWN, *wire_formats())}


def __getattr__(name: str) -> object:
    # FORMATS, AUTO_ORDER and FORMAT_NAMES follow the wire registry (a wire registered later is a format).
    if name == "FORMATS":
        return formats()
    if name == "AUTO_ORDER":
        return tuple(formats())
    if name == "FORMAT_NAMES":
        return ("auto", *sorted(formats()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, slots=True)
class ImportBatch:
    """What a file holds, read: its format (and whether ``auto`` chose it), the conversations, and every
    warning (file-level first, then each conversation's)."""

    source: str
    format: str
    detected: bool
    conversations: tuple[History, ...]
    file_warnings: tuple[str, ...] = ()
    left_out: int = 0

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.file_warnings + tuple(w for h in self.conversations for w in h.warnings)

    @property
    def calls(self) -> int:
        return sum(len(m.tool_uses) for h in self.conversations for m in h.messages)

    @property
    def issuers(self) -> tuple[Issuer, ...]:
        """Who the replies' steps say made their reasoning and signatures (design 17), in first-seen order."""
        seen = {s.issuer: None for h in self.conversations for m in h.messages for s in m.steps if s.issuer}
        return tuple(i for i in seen if i is not None)


def with_issuer_host(h: History, base_url: str) -> History:
    """``h`` with the host of every step's issuer set to ``base_url``'s (``import --issuer-url``): the
    body went to that endpoint, not the wire's public one (design 17)."""
    host = host_of(base_url)

    def moved(m: Message) -> Message:
        if not any(s.issuer for s in m.steps):
            return m
        steps = tuple(replace(s, issuer=replace(s.issuer, host=host)) if s.issuer else s for s in m.steps)
        return replace(m, steps=steps)

    return replace(h, messages=tuple(moved(m) for m in h.messages))


def detect(doc: Document) -> tuple[str, dict[str, str]]:
    """The first format of ``AUTO_ORDER`` that reads ``doc``, and why each one before it did not.

    A format that ``claims`` the document (its shape is unmistakably that format's) but refuses it ends
    the search with that format's reason alone: trying the others could only read it by losing content.
    """
    reasons: dict[str, str] = {}
    for name, f in formats().items():
        why = f.sniff(doc)
        if why is None:
            return name, reasons
        if f.claims is not None and f.claims(doc):
            if name == native.NAME:
                # the history reader's error names the message index, id and field; the sniff's reason
                # stays for a file it would take but the sniff refuses (a wire key beside 'text')
                f.read(doc, None)
            raise ImportFormatError(f"{doc.source}: looks like {name} but is not: {why}")
        reasons[name] = why
    if doc.not_json is not None:  # empty, not JSON: that alone is the reason, whatever the format
        raise ImportFormatError(f"{doc.source}: {doc.not_json}")
    raise ImportFormatError(f"{doc.source}: in no known format: {_closest(reasons)}")


def _closest(reasons: Mapping[str, str]) -> str:
    """The one reason worth reading of a JSON document no format reads: that of a format that read every
    message but would lose content; else that of the first format (in detection order) that read it and
    still refused it. Every other format's reason is the same fact said again or a shape complaint about a
    file that was never meant for it."""
    # A format that read every message and refused only because content would be lost got furthest.
    for name, why in reasons.items():
        if "would be lost" in why:
            return f"closest is {name} ({why})"
    generic = ("not an SQLite database", "not JSON")
    for name, why in reasons.items():
        if not why.startswith(generic):
            return f"closest is {name} ({why})"
    return next(iter(reasons.values()), "nothing reads it")


def read_file(
    path: str | Path,
    fmt: str = "auto",
    *,
    conversation: str | None = None,
    issuer_url: str | None = None,
) -> ImportBatch:
    """Read ``path`` in format ``fmt`` (``auto``: detect it) into stored histories, storing nothing.

    ``conversation``: for a file of one conversation, the id to store it under; for a file of many (llm
    logs, JSON Lines of conversations, benchmark results), the one conversation to import.
    ``issuer_url``: the base URL the recorded requests went to; the reasoning and signatures they carry
    are recorded as made there (default: the wire's public endpoint, design 17).
    """
    return read_doc(read_document(path), fmt, conversation=conversation, issuer_url=issuer_url)


def read_history(
    path_or_body: str | Path | Mapping[str, Any] | Sequence[Any],
    format: str = "auto",
    *,
    conversation: str | None = None,
    issuer_url: str | None = None,
) -> ImportBatch:
    """The conversations ``toolreplay import`` would store from a file, or from a body or message list
    given as a value, and every warning it would print; nothing is stored.

    ``format``: one of ``import --from``'s (``auto``: detected, as ``import`` does; ``batch.format`` says
    which). ``conversation`` and ``issuer_url`` are ``import``'s ``--conversation`` and ``--issuer-url``.
    Raises :class:`~toolreplay.errors.ImportFormatError` naming the input and why it is in no format.
    """
    if isinstance(path_or_body, (str, Path)):
        doc = read_document(path_or_body)
    else:
        doc = Document(Path("<body>"), "json", (Record(path_or_body),))
    return read_doc(doc, format, conversation=conversation, issuer_url=issuer_url)


def read_doc(
    doc: Document, fmt: str = "auto", *, conversation: str | None = None, issuer_url: str | None = None
) -> ImportBatch:
    """:func:`read_file` of a document already read."""
    known = formats()
    if fmt != "auto" and fmt not in known:
        names = ("auto", *sorted(known))
        raise ImportFormatError(f"unknown format {fmt!r}; known: {', '.join(names)}")
    detected = fmt == "auto"
    if detected:
        fmt, _ = detect(doc)
    else:
        f = known[fmt]
        why = (f.check or f.sniff)(doc)
        if why is not None:
            raise ImportFormatError(f"{doc.source}: not {fmt}: {why}")
    reading: Reading = known[fmt].read(doc, conversation)
    if not reading.conversations:
        raise ImportFormatError(f"{doc.source}: no conversation found in it as {fmt}")
    convs = reading.conversations
    if issuer_url is not None:
        if not host_of(issuer_url):
            raise ImportFormatError(f"--issuer-url {issuer_url!r}: not a URL with a host (https://host/...)")
        convs = tuple(with_issuer_host(h, issuer_url) for h in convs)
    return ImportBatch(doc.source, fmt, detected, convs, reading.warnings, reading.left_out)


@dataclass(frozen=True, slots=True)
class StoredConversation:
    """The outcome of storing one conversation: the store's result, or the error that refused it whole."""

    conversation_id: str
    result: ImportResult | None
    error: str | None = None


def store_batch(
    store: Store, batch: ImportBatch, *, progress: Callable[[StoredConversation], None] | None = None
) -> list[StoredConversation]:
    """Store each conversation of ``batch`` in its own transaction (``import_history``).

    A conversation the store refuses (a message id stored with other content) is reported and nothing of
    it is written; the other conversations are still stored.
    """
    out: list[StoredConversation] = []
    for h in batch.conversations:
        try:
            done = StoredConversation(h.id, store.import_history(h))
        except StoreError as exc:
            done = StoredConversation(h.id, None, str(exc))
        out.append(done)
        if progress is not None:
            progress(done)
    return out


def import_file(
    store: Store, path: str | Path, fmt: str = "auto", *, conversation: str | None = None
) -> tuple[ImportBatch, list[StoredConversation]]:
    """Read ``path`` (see :func:`read_file`) and store its conversations (see :func:`store_batch`)."""
    batch = read_file(path, fmt, conversation=conversation)
    return batch, store_batch(store, batch)


def describe() -> Mapping[str, str]:
    """Format name -> one line saying what it reads (for ``--help`` and the docs)."""
    return {name: f.description for name, f in formats().items()}


__all__: Sequence[str] = [
    "AUTO_ORDER",
    "FORMATS",
    "FORMAT_NAMES",
    "ImportBatch",
    "StoredConversation",
    "describe",
    "detect",
    "formats",
    "import_file",
    "read_doc",
    "read_file",
    "read_history",
    "store_batch",
    "with_issuer_host",
]

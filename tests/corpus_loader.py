"""The development corpus: real recorded provider exchanges kept in tests/corpus/ (see its SOURCES.md).

Each ``tests/corpus/<wire>/<source>/<name>.json`` is one envelope::

    {"source": {"repo", "commit", "path", "interaction"?}, "wire", "kind", "provider"?, "model", "url"?,
     "notes"?, "request"?, "response"?, "stream_format"?, "stream"?}

``kind`` is ``exchange`` (a request body the provider accepted, with its answer or its stream), ``response``
(a recorded answer alone) or ``stream`` (a recorded stream alone). ``stream`` lists the payloads as recorded
(``{"event"?, "data"}``, ``data`` verbatim text): ``sse`` (``data:`` lines of a server-sent event stream),
``chunks`` (the ``data`` payloads alone, one a line, as some projects record them), ``json-array`` (Gemini's
stream without ``alt=sse``: one element each) or ``ndjson`` (Ollama's lines).

:func:`exchanges` iterates them by wire and kind; :meth:`Exchange.events` gives the decoded payloads a
wire's ``StreamParser`` is fed, ``[DONE]`` as :data:`DONE`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "corpus"
WIRES = ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama")
KINDS = ("exchange", "response", "stream")
#: Chat's end-of-stream marker, given as its own event by :meth:`Exchange.events`.
DONE = "[DONE]"


@dataclass(frozen=True)
class Exchange:
    """One recorded exchange, as stored in its envelope."""

    path: Path
    envelope: dict[str, Any]

    @cached_property
    def id(self) -> str:
        """``wire/source/name``: readable in parametrized test ids (read for every case collected: kept)."""
        rel = self.path.relative_to(CORPUS)
        return str(rel.with_suffix(""))

    @property
    def wire(self) -> str:
        return str(self.envelope["wire"])

    @property
    def kind(self) -> str:
        return str(self.envelope["kind"])

    @property
    def model(self) -> str | None:
        model = self.envelope.get("model")
        return model if isinstance(model, str) else None

    @property
    def request(self) -> dict[str, Any] | None:
        return self.envelope.get("request")

    @property
    def response(self) -> dict[str, Any] | None:
        return self.envelope.get("response")

    @property
    def streamed(self) -> bool:
        return "stream" in self.envelope

    def events(self) -> list[Any]:
        """The stream's payloads decoded (JSON objects), ``[DONE]`` as :data:`DONE`; empty ones skipped."""
        out: list[Any] = []
        for item in self.envelope.get("stream", []):
            data = item["data"]
            if data.strip() == DONE:
                out.append(DONE)
            elif data.strip():
                out.append(json.loads(data))
        return out

    def event_names(self) -> list[str | None]:
        """The SSE ``event:`` names, one per payload (None where the recording has none)."""
        return [item.get("event") for item in self.envelope.get("stream", [])]


@cache
def _all() -> tuple[Exchange, ...]:
    found = []
    for path in sorted(CORPUS.glob("*/*/*.json")):
        found.append(Exchange(path, json.loads(path.read_text(encoding="utf-8"))))
    return tuple(found)


def exchanges(
    wire: str | None = None,
    *,
    kind: str | None = None,
    with_request: bool = False,
    streamed: bool | None = None,
) -> Iterator[Exchange]:
    """The corpus's exchanges, filtered: by ``wire``, ``kind``, holding a request, streamed or not."""
    for ex in _all():
        if wire is not None and ex.wire != wire:
            continue
        if kind is not None and ex.kind != kind:
            continue
        if with_request and ex.request is None:
            continue
        if streamed is not None and ex.streamed != streamed:
            continue
        yield ex


def sources() -> set[tuple[str, str]]:
    """Every (repository, commit) the corpus cites."""
    return {(ex.envelope["source"]["repo"], ex.envelope["source"]["commit"]) for ex in _all()}

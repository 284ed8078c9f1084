"""Moved: the step model to :mod:`toolreplay.model`, the issuer policy to :mod:`toolreplay._issuers`, the
file form to :mod:`toolreplay._steps_codec`, user media to :mod:`toolreplay.wires.media`. Kept for the
modules still importing these names here."""

from toolreplay._issuers import Audience, host_of, same_model
from toolreplay._steps_codec import parts_from, parts_to_json, steps_from, steps_problem, steps_to_json
from toolreplay.model import (
    PART_KINDS,
    Issuer,
    Part,
    PartKind,
    Piece,
    Reasoning,
    ServerTool,
    Step,
    Text,
    answer_text,
    closing_pieces,
    with_words,
    words_of,
)
from toolreplay.wires.media import data_url, from_data_url, image_type, url_type

__all__ = [
    "PART_KINDS",
    "Audience",
    "Issuer",
    "Part",
    "PartKind",
    "Piece",
    "Reasoning",
    "ServerTool",
    "Step",
    "Text",
    "answer_text",
    "closing_pieces",
    "data_url",
    "from_data_url",
    "host_of",
    "image_type",
    "parts_from",
    "parts_to_json",
    "same_model",
    "steps_from",
    "steps_problem",
    "steps_to_json",
    "url_type",
    "with_words",
    "words_of",
]

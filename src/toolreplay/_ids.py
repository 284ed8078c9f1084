"""Moved to :mod:`toolreplay.ids` (public); kept for the modules still importing it here."""

from toolreplay.ids import HASH_CHARS, KEEP_MAX, PREFIX_CHARS, StemAllocator, call_id, message_stem, stems_for

__all__ = ["HASH_CHARS", "KEEP_MAX", "PREFIX_CHARS", "StemAllocator", "call_id", "message_stem", "stems_for"]

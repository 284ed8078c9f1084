"""Moved to :mod:`toolreplay.jsonenc` (public); kept for the modules still importing it here."""

from toolreplay.jsonenc import MAX_DEPTH, REPLACEMENT, common_prefix, dumps, encode, loads, parse, scrub

__all__ = ["MAX_DEPTH", "REPLACEMENT", "common_prefix", "dumps", "encode", "loads", "parse", "scrub"]

"""The public Python API: ``load_history``, ``render``, ``encode``, ``vessels``.

These names stay; everything else may move. A leaf, as httpx's ``_api`` is: nothing inside toolreplay
imports it (the package's lazy export table aside); the code behind the names lives in
:mod:`toolreplay._render` and below.
"""

from __future__ import annotations

from toolreplay._history import load_history
from toolreplay._jsonenc import encode
from toolreplay._render import render
from toolreplay._render_options import render_options
from toolreplay._vessels import vessels

__all__ = ["encode", "load_history", "render", "render_options", "vessels"]

#!/usr/bin/env python3
"""The render golden file: the sha256 of every encoded render body, pinned before a refactor.

``tests/test_render_golden.py`` renders the bundled demo history, ``examples/conv-1.json`` and every
conversation of the shared transcripts (``dev.jsonl``, imported the way the transcript tests import it)
on every built-in vessel in every mode, cold (``toolreplay.render``) and incrementally (one
``RenderCache`` per vessel and mode fed each prefix of the demo in turn), and compares the digests with
``tests/data/render_golden.json``.

When a change alters the bytes on purpose, regenerate the file and say so in the commit:

    PYTHONPATH=src python3 scripts/render_golden.py          # rewrites tests/data/render_golden.json
    PYTHONPATH=src python3 scripts/render_golden.py --check  # exit 1 and list what differs

Run it without a user vessel file (the built-in table is what is pinned): the script points
``XDG_CONFIG_HOME`` at an empty directory itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "render_golden.json"
MODES = ("plain", "prose", "native")


def _shared() -> Path | None:
    env = os.environ.get("TOOLREPLAY_SHARED")
    path = Path(env) if env else ROOT.parent / "shared"
    return path if path.is_dir() else None


def _histories() -> Iterator[tuple[str, object]]:
    """(label, history) of every history pinned: demo, conv-1 and each transcript conversation."""
    from toolreplay import load_history
    from toolreplay._importers import read_file

    yield "demo", load_history(ROOT / "src" / "toolreplay" / "data" / "demo.json")
    yield "conv-1", load_history(ROOT / "examples" / "conv-1.json")
    shared = _shared()
    if shared is None:
        return
    batch = read_file(shared / "data" / "transcripts" / "dev.jsonl")
    for i, h in enumerate(batch.conversations):
        yield f"dev/{i:02d}:{h.id}", h


def _digest(render: object, *args: object, **kw: object) -> str:
    """The sha256 of the encoded body, or the error class a render raised (pinned too)."""
    from toolreplay import ToolreplayError, encode

    try:
        body = render(*args, **kw)  # type: ignore[operator]
    except ToolreplayError as exc:
        return f"error:{type(exc).__name__}"
    return hashlib.sha256(encode(body)).hexdigest()


def compute(with_shared: bool = True) -> dict[str, str]:
    """Every pinned key (``source|vessel|mode`` and ``demo@N|vessel|mode|cache``) and its digest."""
    from toolreplay import History, render, vessels
    from toolreplay._render_cache import RenderCache

    out: dict[str, str] = {}
    names = [v.name for v in vessels()]
    for label, h in _histories():
        if label.startswith("dev/") and not with_shared:
            continue
        for name in names:
            for mode in MODES:
                out[f"{label}|{name}|{mode}"] = _digest(render, h, name, mode)
    demo = dict(_histories())["demo"]
    assert isinstance(demo, History)
    for name in names:
        for mode in MODES:
            cache = RenderCache()
            for n in range(1, len(demo.messages) + 1):
                prefix = History(demo.id, demo.messages[:n], demo.tools)
                out[f"demo@{n}|{name}|{mode}|cache"] = _digest(cache.render, prefix, name, mode)
    return out


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as home:
        os.environ["XDG_CONFIG_HOME"] = home
        os.environ.pop("TOOLREPLAY_VESSELS", None)
        got = compute(with_shared=_shared() is not None)
    if "--check" in argv:
        want = json.loads(GOLDEN.read_text(encoding="utf-8"))
        bad = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
        for k in bad:
            print(f"differs: {k}")
        return 1 if bad else 0
    if _shared() is None:
        print(
            "the shared material ($TOOLREPLAY_SHARED) is absent: the transcript digests cannot be computed",
            file=sys.stderr,
        )
        return 2
    GOLDEN.write_text(json.dumps(got, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(got)} digests to {GOLDEN.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

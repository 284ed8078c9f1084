"""Render bytes pinned: every vessel, mode and history (demo, conv-1, each shared transcript), cold and
through the incremental cache, against tests/data/render_golden.json.

A refactor must leave every digest alone. A change that alters bytes on purpose regenerates the file with
``scripts/render_golden.py`` (see its docstring) and says so in its commit.
"""

from __future__ import annotations

import json
import sys

from conftest import ROOT, SHARED

if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))
import render_golden


def test_render_bytes_match_the_golden_file() -> None:
    want = json.loads(render_golden.GOLDEN.read_text(encoding="utf-8"))
    got = render_golden.compute(with_shared=SHARED is not None)
    if SHARED is None:  # a user's clone: the transcript digests cannot be computed
        want = {k: v for k, v in want.items() if not k.startswith("dev/")}
    assert len(want) > 1000 if SHARED is not None else len(want) > 300
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    differ = sorted(k for k in set(want) & set(got) if want[k] != got[k])
    report = [f"differs (source|vessel|mode): {k}" for k in differ[:40]]
    report += [f"not rendered: {k}" for k in missing[:10]] + [f"not pinned: {k}" for k in extra[:10]]
    assert not (missing or extra or differ), f"{len(differ)} bodies changed bytes:\n" + "\n".join(report)

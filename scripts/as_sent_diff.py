"""Where the as-sent render (design 38) still differs from the corpus's recorded bodies, wire by wire.

    PYTHONPATH=src python3 scripts/as_sent_diff.py                 # per wire: how many pass, how many not
    PYTHONPATH=src python3 scripts/as_sent_diff.py gemini 5        # the first 5 differing gemini bodies
                                                                   # and the paths that differ most often

Each body is read as ``toolreplay import --from WIRE`` reads it and rendered with ``render(h,
as_sent=True)``; a difference is printed as its JSON path, what was rendered, and what was sent.
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from corpus_loader import exchanges
from toolreplay import read_history, render


def _short(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)[:150]


def diff(got: Any, sent: Any, path: str = "") -> list[str]:
    """Every path where ``got`` and ``sent`` differ (dict key order aside)."""
    if isinstance(got, dict) and isinstance(sent, dict):
        out: list[str] = []
        for k in [*got, *(k for k in sent if k not in got)]:
            if k not in got:
                out.append(f"{path}.{k}: missing, sent {_short(sent[k])}")
            elif k not in sent:
                out.append(f"{path}.{k}: rendered {_short(got[k])}, not sent")
            else:
                out += diff(got[k], sent[k], f"{path}.{k}")
        return out
    if isinstance(got, list) and isinstance(sent, list) and len(got) == len(sent):
        return [d for i, (a, b) in enumerate(zip(got, sent, strict=True)) for d in diff(a, b, f"{path}[{i}]")]
    return [] if got == sent else [f"{path}: rendered {_short(got)}, sent {_short(sent)}"]


def differences(ex: Any) -> list[str]:
    try:
        (h,) = read_history(ex.request, ex.wire).conversations
        return diff(render(h, as_sent=True), ex.request)
    except Exception as exc:
        return [f"error: {type(exc).__name__}: {exc}"]


def main(argv: list[str]) -> None:
    wire = argv[0] if argv else None
    show = int(argv[1]) if len(argv) > 1 else 3
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    paths: collections.Counter[str] = collections.Counter()
    for ex in exchanges(wire, with_request=True):
        found = differences(ex)
        counts[ex.wire][bool(found)] += 1
        if found and wire is not None:
            paths.update({re.sub(r"\[\d+\]", "[]", d.split(":")[0]) for d in found})
            if show > 0:
                print(f"== {ex.id}", *found[:8], sep="\n")
                show -= 1
    for w, (ok, bad) in sorted(counts.items()):
        print(f"{w}: {ok} as sent, {bad} differ")
    for p, n in paths.most_common(25):
        print(f"{n:4d}  {p}")


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""The real agent CLIs the tests drive (see docs/real-agents.md).

    python scripts/agents.py install [AGENT...]   # npm install the pinned CLIs into the cache, once
    python scripts/agents.py capture [AGENT...]   # run them against the double; rewrite tests/data/agents/

Agents: claude, codex, opencode, gemini (install); claude, codex, opencode-chat, opencode-anthropic,
gemini (capture). The cache is $TOOLREPLAY_AGENTS_CACHE, else $XDG_CACHE_HOME/toolreplay/agents.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]

from agentlib import captures, install  # noqa: E402  (the test library lives under tests/)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("install", "capture"):
        print(__doc__, file=sys.stderr)
        return 2
    return install.main(argv[1:]) if argv[0] == "install" else captures.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

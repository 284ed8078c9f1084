"""The README stays true: its --help text, its vessel list, and the example it walks through."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import toolreplay
from toolreplay._cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _env(**extra: str) -> dict[str, str]:
    src = str(ROOT / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]), **extra}


def _block_after(marker: str) -> str:
    start = README.index(marker) + len(marker)
    return README[start : README.index("```", start)].strip("\n")


def test_readme_help_is_current() -> None:
    # what an 80-column terminal shows: click keeps 2 columns free (text 78 wide)
    result = CliRunner().invoke(cli, ["--help"], prog_name="toolreplay", terminal_width=78)
    assert result.exit_code == 0
    assert _block_after("$ toolreplay --help\n").strip() == result.output.strip()
    done = subprocess.run(
        [sys.executable, "-m", "toolreplay", "--help"], capture_output=True, text=True, env=_env(COLUMNS="80")
    )
    assert done.stdout.strip() == result.output.strip()


def test_readme_vessel_list_is_current() -> None:
    listed = re.search(r"^\[v\.name for v in toolreplay\.vessels\(\)\]\n# (\[.*\])$", README, re.M)
    assert listed is not None
    assert listed.group(1) == repr([v.name for v in toolreplay.vessels()])


def test_readme_example_replays_as_shown() -> None:
    h = toolreplay.load_history(ROOT / "examples" / "conv-1.json")
    turns = toolreplay.prepare_turn_messages(h, "native", upto="m2")
    assert [c.as_json() for c in turns[1].calls] == [
        {
            "id": "replay_m2_0",
            "name": "coop",
            "input": {"action": "close", "id": 12},
            "arguments": '{"action":"close","id":12}',
            "answer": "status: closed",
        }
    ]
    shown = re.search(r"\$ toolreplay render conv-1 --vessel gemini\n(.*)\.\.\.\n", README)
    assert shown is not None
    body = toolreplay.encode(toolreplay.render(h, vessel="gemini")).decode()
    assert body.startswith(shown.group(1))


# -- the public API: what `dir(toolreplay)` shows, and the README's Python blocks --------------------------


def test_every_public_name_resolves_and_dir_lists_them() -> None:
    names = set(toolreplay.__all__)
    assert dir(toolreplay) == toolreplay.__all__ == sorted(names)
    for name in toolreplay.__all__:
        assert getattr(toolreplay, name) is not None, name
        if name != "__version__":
            assert name in (toolreplay.__doc__ or ""), f"{name}: not listed in help(toolreplay)"
    # everything a turn needs, as the brief of the public API says
    needed = {
        "run_turn",
        "run_turn_async",
        "TurnOptions",
        "TurnResult",
        "build_registry",
        "Tool",
        "open_store",
    }
    needed |= {
        "Store",
        "ToolreplayError",
        "ProviderError",
        "StoreError",
        "RenderCache",
        "board_of",
        "TodoBoard",
    }
    assert needed <= names


def test_run_turn_has_a_typed_signature() -> None:
    import inspect

    for fn in (toolreplay.run_turn, toolreplay.run_turn_async):
        params = inspect.signature(fn).parameters
        assert all(p.kind is not p.VAR_KEYWORD for p in params.values()), fn.__name__
        assert [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY] == [
            "store",
            "options",
            "on_event",
            "transport",
            "parts",
        ]


def test_import_toolreplay_loads_no_private_module_until_used() -> None:
    code = (
        "import sys, toolreplay; dir(toolreplay); print([m for m in sys.modules if m[:11] == 'toolreplay.'])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)


# The testing block's `...` stands for the reader's agent; this one makes the requests the block expects.
AGENT = """\
    messages = [{"role": "user", "content": "Close todo #12."}]
    first = client.chat.completions.create(model="m", messages=messages).choices[0].message
    messages.append(first.model_dump(exclude_none=True))
    messages += [{"role": "tool", "tool_call_id": c.id, "content": "closed"} for c in first.tool_calls or []]
    client.chat.completions.create(model="m", messages=messages)
"""


@pytest.mark.slow
def test_readme_python_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Python block imports public names only, and runs as written (the run_turn block needs a
    running ``toolreplay double``: tests/test_readme_examples.py runs it in that session)."""
    blocks = _python_blocks()
    assert len(blocks) >= 4 and not any("toolreplay._" in b for b in blocks), "public names only"
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TOOLREPLAY_DB", str(tmp_path / "readme.db"))
    namespace: dict[str, object] = {}
    ran = 0
    for block in blocks:
        if block.startswith("from toolreplay import run_turn"):
            continue
        code = block.replace("    ...  # run your agent against it\n", AGENT)
        exec(compile(code, "README.md", "exec"), namespace)
        ran += 1
    assert ran >= 3

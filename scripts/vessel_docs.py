"""Write what the docs say of every built-in wire and vessel, from the wire registry and the vessel table.

* ``docs/vessels/<name>.md``, one page per built-in vessel: what its wire looks like (a real rendered
  request of examples/conv-1.json, and the wire's own ``Wire.replayed_as`` sentence), its quirks (the
  flags and id rules of its row), its key and a copy-paste example against `toolreplay double`;
* ``docs/vessels/index.md``, the table of them;
* every list of the built-in wires or vessels elsewhere: the blocks between ``<!-- generated: NAME -->``
  and ``<!-- end: NAME -->`` (``#`` comments in mkdocs.yml) of README.md, mkdocs.yml and docs/ (see
  ``BLOCKS``), and the ``toolreplay.vessels()`` output the README shows.

No other file names every wire or vessel, so a new built-in wire is its package, its registry line and its
vessel row, then this script and ``scripts/render_golden.py`` (design 21). tests/test_docs.py fails when a
committed file differs from what this script writes now.

    python scripts/vessel_docs.py          # rewrite them (and remove the page of a vessel that is gone)
    python scripts/vessel_docs.py --check  # exit 1 and name each stale file
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "vessels"

FLAG_TEXT = {
    "tool_message_name": "Chat tool messages carry the tool's `name`.",
    "store_false": 'Responses bodies carry `"store": false` (nothing is kept server-side).',
    "stream_only": "The endpoint answers only streaming requests: every request streams.",
    "no_message_name": "No `name` is ever sent on a Chat message.",
    "reasoning_content": "Its own reasoning goes back as `reasoning_content` on Chat assistant messages.",
    "requires_reasoning": "With thinking on, a tool-call continuation needs the model's own reasoning.",
    "encrypted_reasoning": 'The turn loop asks for `include: ["reasoning.encrypted_content"]`.',
}
#: The line the README's Python block shows the vessels' names after.
VESSELS_CALL = "[v.name for v in toolreplay.vessels()]"


def _builtin_wires() -> list[Any]:
    """The built-in wires, in registry order (a wire a test registered is not one of them)."""
    from toolreplay.wires import _BUILTIN, get_wire

    return [get_wire(name) for name in _BUILTIN]


def _vessels() -> dict[str, Any]:
    from toolreplay._vessels import BUILTIN

    return dict(BUILTIN)


def _wire(name: str) -> Any:
    from toolreplay.wires import get_wire

    return get_wire(name)


def _replayed_as(wire: Any) -> str:
    if not wire.replayed_as:
        raise SystemExit(f"wire {wire.name}: Wire.replayed_as is empty (the sentence the docs say of it)")
    return str(wire.replayed_as)


def _quirks(v: Any) -> list[str]:
    out = [FLAG_TEXT[f] for f in sorted(v.flags)]
    if v.id_policy == "kimi":
        out.append("Call ids are Kimi's own `functions.<name>:<index>`, whatever their length.")
    if v.max_id_len:
        out.append(f"Call ids are at most {v.max_id_len} characters (longer derived ids are shortened).")
    if v.cache_breakpoints:
        out.append(
            f"Up to {v.cache_breakpoints} prompt-cache breakpoints (`cache_control`) per request: the tail, "
            "the system prompt, the ends of the earlier requests (design 36)."
        )
    return out or ["None beyond its wire's rules."]


def _try_it(v: Any) -> list[str]:
    wire = _wire(v.wire)
    if wire.http is None:  # driven by a program, not sent: the double has nothing to answer
        return [
            f"This vessel drives the {wire.driver}, not HTTP, so the double cannot stand in for it. With",
            "it installed and logged in:",
            "",
            "```sh",
            f'toolreplay turn "Close #1." -v {v.name} --cid chief -T coop',
            "```",
        ]
    return [
        "With `toolreplay double --port 8765` running in another terminal:",
        "",
        "```sh",
        f'toolreplay turn "call coop {{\\"action\\": \\"list\\"}}" -v {v.name} --cid try-{v.name} '
        "-T coop -u http://127.0.0.1:8765",
        "```",
        "",
        "Leave out `-u`" + (" (with the key set)" if v.key_env else "") + " to send to the real endpoint.",
    ]


def page(v: Any) -> str:
    from toolreplay import encode, load_history, render

    body = render(load_history(ROOT / "examples" / "conv-1.json"), vessel=v.name, upto="m2")
    pretty = json.dumps(json.loads(encode(body)), indent=2, ensure_ascii=False)
    key = f"`{v.key_env}` (or `toolreplay keys set {v.name}`)" if v.key_env else "none"
    said = _replayed_as(_wire(v.wire))
    lines = [
        f"# {v.name}",
        "",
        f"{v.description}.",
        "",
        "| | |",
        "|---|---|",
        f"| wire | `{v.wire}` |",
        f"| endpoint | `{v.base_url}` |",
        f"| default model | `{v.model}` |",
        f"| key | {key} |",
        "",
        "## What a replayed reply becomes",
        "",
        f"{said[0].upper()}{said[1:]}. The body for the first reply of `examples/conv-1.json`:",
        "",
        "```json",
        pretty,
        "```",
        "",
        "## Quirks",
        "",
        *[f"- {q}" for q in _quirks(v)],
        "",
        "## Try it",
        "",
        *_try_it(v),
    ]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name (in docs/vessels) -> content, for every built-in vessel, and the index."""
    table = _vessels()
    out = {f"{name}.md": page(v) for name, v in table.items()}
    row = "| [{0}]({0}.md) | `{1.wire}` | {1.description} | `{2}` |"
    rows = [row.format(n, v, v.key_env or "none") for n, v in table.items()]
    out["index.md"] = "\n".join(
        [
            "# Vessels",
            "",
            "A vessel is a row of a table: a wire, an endpoint, a key variable, a model, id rules and quirk",
            "flags. `toolreplay vessels` lists them; the [configuration file](../configuration.md) adds or",
            "overrides rows. These pages are generated from the table (`python scripts/vessel_docs.py`).",
            "",
            "| vessel | wire | what | key |",
            "|---|---|---|---|",
            *rows,
            "",
        ]
    )
    return out


# -- the blocks of the other files: each list of wires or vessels they hold --------------------------------


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _replay_table() -> str:
    """README: each built-in wire, its vessels, what a replayed reply becomes on it."""
    table = _vessels()
    rows = ["| wire | vessels | a replayed reply becomes |", "|---|---|---|"]
    for w in _builtin_wires():
        on = ", ".join(n for n, v in table.items() if v.wire == w.name) or "none built in"
        rows.append(f"| `{w.name}` | {on} | {_replayed_as(w).replace(', then ', ' → ')} |")
    return "\n".join(rows)


def _vessel_table() -> str:
    """README: each built-in vessel, its wire, what it is, its key variable."""
    rows = ["| vessel | wire | what | key variable |", "|---|---|---|---|"]
    for n, v in _vessels().items():
        key = f"`{v.key_env}`" if v.key_env else "none"
        rows.append(f"| [{n}](docs/vessels/{n}.md) | `{v.wire}` | {v.description} | {key} |")
    return "\n".join(rows)


def _wire_list() -> str:
    """docs/wires.md: the built-in wires, a wire driven by a program named with its driver."""
    said = [f"`{w.name}`" + (f" ({w.driver}, not HTTP)" if w.http is None else "") for w in _builtin_wires()]
    return ", ".join(said[:-1]) + f" and {said[-1]}" if len(said) > 1 else "".join(said)


def _import_formats() -> str:
    """The import formats that are wires': every built-in wire with an import form."""
    return _names([w.name for w in _builtin_wires() if w.importing is not None])


def _proxy_wires() -> str:
    """docs/proxy-routes.md: the wires the proxy serves (a route's ``WIRE:``): those with an HTTP path."""
    return _names([w.name for w in _builtin_wires() if w.http is not None and w.http.path is not None])


def _nav() -> str:
    """mkdocs.yml: one nav line per vessel page, under Vessels."""
    return "\n".join(f"      - {n}: vessels/{n}.md" for n in _vessels())


#: File -> block name -> (what fills it, whether it is lines of their own or words within a line).
BLOCKS: dict[str, dict[str, tuple[Callable[[], str], bool]]] = {
    "README.md": {
        "replay-table": (_replay_table, True),
        "vessel-table": (_vessel_table, True),
        "import-formats": (_import_formats, False),
    },
    "mkdocs.yml": {"vessel-pages": (_nav, True)},
    "docs/wires.md": {"wires": (_wire_list, False)},
    "docs/importers.md": {"import-formats": (_import_formats, False)},
    "docs/proxy-routes.md": {"proxy-wires": (_proxy_wires, False)},
}


def fill(text: str, where: str, name: str, content: str, lines: bool) -> str:
    """``text`` with block ``name`` holding ``content``; a file without the block's markers is an error."""
    if where.endswith(".yml"):
        start, end = f"# generated: {name}", f"# end: {name}"
    else:
        start, end = f"<!-- generated: {name} -->", f"<!-- end: {name} -->"
    pattern = re.compile(rf"({re.escape(start)})(.*?)([ \t]*{re.escape(end)})", re.S)
    found = list(pattern.finditer(text))
    if len(found) != 1:
        raise SystemExit(f"{where}: needs one block {start!r} ... {end!r}")
    if not lines and text[: found[0].start()].endswith("\n"):
        # a comment that starts a line starts an HTML block: the words after it would show as raw text
        raise SystemExit(f"{where}: {start!r} within a line must not start it")
    inner = f"\n{content}\n" if lines else content
    return pattern.sub(lambda m: m.group(1) + inner + m.group(3), text)


def _vessel_names_shown(text: str) -> str:
    """README: the line after ``VESSELS_CALL`` in its Python block shows the vessels' names."""
    pattern = re.compile(rf"^({re.escape(VESSELS_CALL)}\n)# .*$", re.M)
    if len(pattern.findall(text)) != 1:
        raise SystemExit(f"README.md: needs one line {VESSELS_CALL!r} followed by its output")
    shown = repr(list(_vessels()))
    return pattern.sub(lambda m: m.group(1) + f"# {shown}", text)


def generated() -> dict[str, str]:
    """Path (relative to the checkout) -> the content this script writes there: every file it owns or
    holds a block of."""
    out = {f"docs/vessels/{name}": text for name, text in pages().items()}
    for where, blocks in BLOCKS.items():
        text = (ROOT / where).read_text(encoding="utf-8")
        for name, (make, lines) in blocks.items():
            text = fill(text, where, name, make(), lines)
        if where == "README.md":
            text = _vessel_names_shown(text)
        out[where] = text
    return out


def stale() -> list[str]:
    """Each file that differs from what this script writes, and each vessel page no vessel has."""
    want = generated()
    bad = [p for p, text in want.items() if not (ROOT / p).is_file() or (ROOT / p).read_text("utf-8") != text]
    pages = (f"docs/vessels/{p.name}" for p in sorted(OUT.glob("*.md")))
    return sorted(bad + [p for p in pages if p not in want])


def main(argv: list[str]) -> int:
    if "--check" in argv:
        bad = stale()
        for path in bad:
            print(f"stale: {path} (run python scripts/vessel_docs.py)")
        return 1 if bad else 0
    OUT.mkdir(parents=True, exist_ok=True)
    want = generated()
    for path in sorted(OUT.glob("*.md")):
        if f"docs/vessels/{path.name}" not in want:
            path.unlink()
    wrote = 0
    for rel, text in want.items():
        path = ROOT / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            wrote += 1
    print(f"{wrote} of {len(want)} generated files rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

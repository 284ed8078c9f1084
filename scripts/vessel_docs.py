"""Write docs/vessels/<name>.md, one page per built-in vessel, from the vessel table itself.

Each page says what the vessel's wire looks like (a real rendered request of examples/conv-1.json), its
quirks (the flags and id rules of its row), its key and a copy-paste example against `toolreplay double`.
The pages are generated so they stay true: tests/test_docs.py fails when a committed page differs from
what this script writes now.

    python scripts/vessel_docs.py          # rewrite the pages
"""

from __future__ import annotations

import json
from pathlib import Path

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
WIRE_TEXT = {
    "openai-chat": "assistant `tool_calls` (`content: null`), then one `tool` message per call, then text",
    "openai-responses": "`function_call` items, then `function_call_output` items, then the assistant text",
    "anthropic": "assistant `tool_use` blocks, then user `tool_result` blocks, then the assistant text",
    "gemini": "`model` `functionCall` parts (the first with `thoughtSignature`), then `user` "
    "`functionResponse` parts, then the `model` text",
    "ollama": "assistant `tool_calls` (arguments as an object), then `tool` messages with `tool_name`",
    "claude-prompt": "a prompt holding the prior turns as JSON, each reply with a `calls` field",
}


def _quirks(v: object) -> list[str]:
    from toolreplay._vessels import Vessel

    assert isinstance(v, Vessel)
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


def page(v: object) -> str:
    from toolreplay import encode, load_history, render
    from toolreplay._vessels import Vessel

    assert isinstance(v, Vessel)
    body = render(load_history(ROOT / "examples" / "conv-1.json"), vessel=v.name, upto="m2")
    pretty = json.dumps(json.loads(encode(body)), indent=2, ensure_ascii=False)
    key = f"`{v.key_env}` (or `toolreplay keys set {v.name}`)" if v.key_env else "none"
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
        f"{WIRE_TEXT[v.wire][0].upper()}{WIRE_TEXT[v.wire][1:]}. The body for the first reply of "
        "`examples/conv-1.json`:",
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
    ]
    if v.wire == "claude-prompt":
        lines += [
            "This vessel drives the Claude Code CLI (`claude -p`), not HTTP, so the double cannot stand",
            "in for it. With the CLI installed and logged in:",
            "",
            "```sh",
            f'toolreplay turn "Close #1." -v {v.name} --cid chief -T coop',
            "```",
        ]
    else:
        lines += [
            "With `toolreplay double --port 8765` running in another terminal:",
            "",
            "```sh",
            f'toolreplay turn "call coop {{\\"action\\": \\"list\\"}}" -v {v.name} --cid try-{v.name} '
            "-T coop -u http://127.0.0.1:8765",
            "```",
            "",
            "Leave out `-u`"
            + (" (with the key set)" if v.key_env else "")
            + " to send to the real endpoint.",
        ]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name -> content, for every built-in vessel."""
    from toolreplay._vessels import BUILTIN

    out = {f"{name}.md": page(v) for name, v in BUILTIN.items()}
    rows = [
        f"| [{n}]({n}.md) | `{v.wire}` | {v.description} | `{v.key_env or 'none'}` |"
        for n, v in BUILTIN.items()
    ]
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


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in pages().items():
        (OUT / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(pages())} pages in {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

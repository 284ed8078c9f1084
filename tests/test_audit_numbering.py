"""The audit names a message one way throughout: its place in the body (``messages[14]``), the path the
wire parser's warnings use and ``jq`` finds (design 42)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

import toolreplay
from toolreplay._audit.positions import body_paths
from toolreplay._cli import cli
from toolreplay.wires import parse_request

#: A template that keeps only each message's words: every replayed call is lost from the prompt.
WORDS_ONLY = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}<assistant>"


def test_one_numbering_in_every_line(tmp_path: Path, demo_path: Path) -> None:
    body = toolreplay.render(demo_path, "openai-compatible")
    request = tmp_path / "native.json"
    request.write_text(json.dumps(body), encoding="utf-8")
    template = tmp_path / "words.jinja"
    template.write_text(WORDS_ONLY, encoding="utf-8")
    args = ["audit", str(request), "--history", str(demo_path), "--prompt-template", str(template)]
    out = CliRunner().invoke(cli, [*args, "--server", "llama.cpp"])
    assert out.exit_code == 0, out.output
    # the cut call of m09 sits at messages[14]: every line that names it says so
    assert "excerpt" in body["messages"][14]["tool_calls"][0]["function"]["arguments"]
    assert "as call: messages[14], call 0" in out.output
    assert "  - messages[14], call 0 (coop): input cut to an excerpt (input_excerpt)" in out.output
    assert "warning: messages[14].tool_calls[0]: the input is a replay excerpt" in out.output
    assert "  - call 3 (coop, messages[14]): dropped" in out.output
    refs = re.findall(r"\b(?:request message|message) \d+|messages\[\d+\]", out.output)
    assert refs and all(r.startswith("messages[") for r in refs), refs


def test_body_paths_per_wire(demo_path: Path) -> None:
    """A parsed message is named by the body element it starts at (a separate system prompt by its key)."""
    for vessel, key in (("openai-compatible", "messages"), ("anthropic", "messages"), ("gemini", "contents")):
        body = toolreplay.render(demo_path, vessel)
        parsed = parse_request(toolreplay.get_vessel(vessel).wire, body)
        paths = body_paths(toolreplay.get_vessel(vessel).wire, body, len(parsed.messages))
        assert len(paths) == len(parsed.messages)
        items = body[key]
        for path, message in zip(paths, parsed.messages, strict=True):
            if not path.startswith(key):
                assert message.role == "system" and path in ("system", "systemInstruction"), (vessel, path)
                continue
            element = items[int(path[len(key) + 1 : -1])]
            role = element.get("role")
            assert {"model": "assistant"}.get(role, role) == message.role, (vessel, path, message.role)

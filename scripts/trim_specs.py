"""Extract the request schemas `toolreplay check --offline` needs from the providers' full specs.

The full specs (several MB) are not shipped; this writes, under src/toolreplay/data/schemas/, one JSON
Schema (draft 2020-12) per request type: the root schema and every schema it references, nothing else,
with references rewritten to ``#/$defs/NAME``. Run it when a spec is updated, and update SOURCES.md there
(commit, licence) in the same change:

    python scripts/trim_specs.py PATH/TO/specs     # the directory holding openai/ and google/

Sources read (the same files as the offline validation in the test suite):

* ``openai/openapi.json``: CreateChatCompletionRequest, CreateResponse (MIT, OpenAI).
* ``google/gemini-native.openapi.thirdparty.json``: GenerateContentRequest (MIT, third party, generated
  from Google's documentation).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "src" / "toolreplay" / "data" / "schemas"
_REF = re.compile(r'"#/components/schemas/([^"]+)"')

#: output file -> (spec file under the specs directory, root schema)
TARGETS = {
    "openai-chat.json": ("openai/openapi.json", "CreateChatCompletionRequest"),
    "openai-responses.json": ("openai/openapi.json", "CreateResponse"),
    "gemini.json": ("google/gemini-native.openapi.thirdparty.json", "GenerateContentRequest"),
}


def closure(schemas: dict[str, Any], root: str) -> list[str]:
    """``root`` and every schema it reaches through ``$ref``, sorted."""
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_REF.findall(json.dumps(schemas[name])))
    return sorted(seen)


def trimmed(spec: dict[str, Any], root: str, source: str) -> dict[str, Any]:
    schemas = spec["components"]["schemas"]
    defs = {name: schemas[name] for name in closure(schemas, root)}
    text = _REF.sub(lambda m: f'"#/$defs/{m.group(1)}"', json.dumps(defs, sort_keys=True))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": f"{root} and what it references, from {source} (see SOURCES.md)",
        "$ref": f"#/$defs/{root}",
        "$defs": json.loads(text),
    }


def main(specs: Path) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (source, root) in TARGETS.items():
        spec = json.loads((specs / source).read_text(encoding="utf-8"))
        doc = trimmed(spec, root, source)
        (OUT / name).write_text(
            json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8"
        )
        print(f"{name}: {root}, {len(doc['$defs'])} schemas")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/trim_specs.py PATH/TO/specs")
    main(Path(sys.argv[1]))

"""Build tests/corpus/ from public recordings of real provider exchanges (a maintainer's tool, run by hand).

Reads local bare git snapshots of the source repositories (``--mirror DIR`` holds ``owner+name/repo``) and
writes one JSON envelope per exchange under ``tests/corpus/<wire>/<source>/``. Two kinds of recordings:

* VCR cassettes (YAML): each interaction is a request body the provider accepted and its answer (JSON, an
  SSE stream, a JSON-array stream of Gemini chunks, or NDJSON lines of Ollama);
* recorded answers kept as files: ``*.json`` (one answer) and ``*.chunks.txt`` (the ``data`` payloads of a
  stream, one per line); a ``*.json`` holding a whole recorded HTTP answer (``{"status", "headers", "body"}``)
  gives its body (an answer, or an SSE stream).

The provider's bytes are kept as recorded: bodies as JSON values, stream payloads as their text. Answers
other than 200, files past the size cap and recordings that are hand-made rather than recorded (listed in
``EXCLUDED``) are left out. Needs PyYAML (not a dependency of the project: ``python3 -m pip install pyyaml``).

    python3 scripts/corpus_extract.py --mirror /path/to/mirrors --out tests/corpus

The envelopes of ``tests/corpus/ollama/`` and ``tests/corpus/openai-chat/llm-mistral/`` were written by hand
from the files cited in ``MANUAL_SOURCES`` (their JSON copied as it stands there); this script leaves them
alone and only cites them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

#: One exchange file may hold at most this many bytes (bigger recordings are skipped, not cut).
SIZE_CAP = 60_000

#: URL endings -> wire.
URL_WIRES = (
    ("/chat/completions", "openai-chat"),
    ("/responses", "openai-responses"),
    ("/v1/messages", "anthropic"),
    (":generatecontent", "gemini"),
    (":streamgeneratecontent", "gemini"),
    ("/api/chat", "ollama"),
)


@dataclass(frozen=True)
class Source:
    """A repository snapshot and what to take from it."""

    repo: str
    short: str
    licence: str
    cassettes: tuple[str, ...] = ()  # path regexes of VCR cassettes
    answers: tuple[str, ...] = ()  # path regexes of recorded answers (*.json, *.chunks.txt)
    #: keep only exchanges with calls, results, reasoning, media or server tools; at most this many a file
    select_per_file: int | None = None
    size_cap: int = SIZE_CAP
    #: path regexes left out (variants of one test recorded again, providers of other wires)
    skip: tuple[str, ...] = ()


SOURCES = (
    Source(
        "vercel/ai",
        "vercel-ai",
        "Apache-2.0",
        answers=(r"^packages/[^/]+/src/(chat/|responses/)?__fixtures__/[^/]+\.(json|chunks\.txt)$",),
    ),
    Source("simonw/llm", "llm", "Apache-2.0", cassettes=(r"^tests/cassettes/.*\.yaml$",)),
    Source("simonw/llm-anthropic", "llm-anthropic", "Apache-2.0", cassettes=(r"^tests/cassettes/.*\.yaml$",)),
    Source("simonw/llm-gemini", "llm-gemini", "Apache-2.0", cassettes=(r"^tests/cassettes/.*\.yaml$",)),
    Source(
        "simonw/llm-openrouter", "llm-openrouter", "Apache-2.0", cassettes=(r"^tests/cassettes/.*\.yaml$",)
    ),
    Source(
        "crewAIInc/crewAI",
        "crewai",
        "MIT",
        cassettes=(r"^lib/crewai/tests/cassettes/.*\.yaml$",),
        select_per_file=2,
    ),
    # Tracing instrumentations record the provider traffic their tests make: many providers and agent
    # frameworks (LiteLLM, the OpenAI Agents SDK, LlamaIndex, LangChain, Agno, Haystack, AutoGen) at once.
    Source(
        "traceloop/openllmetry",
        "openllmetry",
        "Apache-2.0",
        cassettes=(
            r"^packages/opentelemetry-instrumentation-(openai|anthropic|ollama|groq|mistralai|google-generativeai"
            r"|openai-agents|agno|langchain|llamaindex|together)/tests/(traces/)?cassettes/.*\.yaml$",
        ),
        select_per_file=3,
        # the same test recorded once more for each way of reporting events: the first recording is kept
        skip=(r"_with_events_with_(no_)?content\.yaml$",),
    ),
    Source(
        "Arize-ai/openinference",
        "openinference",
        "Apache-2.0",
        cassettes=(
            r"^python/instrumentation/openinference-instrumentation-[^/]+/tests/.*cassettes/.*\.yaml$",
        ),
        answers=(r"^js/packages/openinference-instrumentation-anthropic/test/cassettes/[^/]+\.json$",),
        select_per_file=3,
        # pydantic-ai's traffic stays out of the corpus (kept aside for the acceptance check)
        skip=(r"instrumentation-(pydantic-ai|bedrock)/",),
    ),
    Source(
        "open-telemetry/opentelemetry-python-contrib",
        "otel-contrib",
        "Apache-2.0",
        cassettes=(
            r"^instrumentation-genai/opentelemetry-instrumentation-(google-genai|openai-v2|vertexai)/tests/"
            r".*cassettes/.*\.yaml$",
        ),
        select_per_file=3,
    ),
)

#: Marks (in compact JSON) of an exchange worth keeping from a source that is selected from.
INTERESTING = (
    '"tool_calls"', '"type":"tool_use"', '"type":"tool_result"', '"type":"function_call"', '"functionCall"',
    '"function_call"', '"functionResponse"', '"thoughtSignature"', '"type":"thinking"', '"type":"reasoning"',
    '"reasoning_content"', '"reasoning_details"', '"type":"redacted_thinking"', '"server_tool_use"',
    '"web_search_call"', '"executableCode"',
)  # fmt: skip


def _payload(data: str) -> Any:
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        return data


def interesting(env: dict[str, Any]) -> bool:
    # stream payloads are kept as text: read as JSON here, so their marks show unescaped and compact
    events = [_payload(e["data"]) for e in env.get("stream") or []]
    text = json.dumps([env.get("request"), env.get("response"), events], separators=(",", ":"))
    return any(mark in text for mark in INTERESTING)


#: Files whose content is hand-made (invented ids, spliced events) rather than a provider's recording.
_A = "packages/anthropic/src/__fixtures__/"
EXCLUDED = {
    "vercel/ai": {
        _A + "duplicate-message-start.chunks.txt": "hand-made (spliced events)",
        _A + "spliced-message-start.chunks.txt": "hand-made (spliced events)",
        "packages/moonshotai/src/__fixtures__/moonshotai-stream.chunks.txt": "hand-made (id chatcmpl-stream)",
        "packages/openai/src/responses/__fixtures__/parallel-tool-call-wrapper.1.chunks.txt": "hand-made",
        "packages/openai/src/responses/__fixtures__/parallel-tool-call-wrapper.1.json": "hand-made",
        _A + "anthropic-fallback.chunks.txt": "hand-made (an Example id)",
        _A + "anthropic-fallback.json": "hand-made (an Example id)",
    }
}


#: Marks of a hand-made answer file (invented models and ids): such files are left out as well.
HAND_MADE = re.compile(r"kimi-k3|claude-fable|Example[A-Z]|chatcmpl-test|_test_0|abc123|msg_redacted")


HAND_MADE_FOUND: list[str] = []


def git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], check=True, capture_output=True).stdout


def wire_of_url(url: str) -> str | None:
    low = url.lower().split("?")[0]
    for ending, wire in URL_WIRES:
        if low.endswith(ending):
            return wire
    return None


def wire_of_answer(obj: Any) -> str | None:
    """The wire of one recorded answer or stream payload, from its shape."""
    if not isinstance(obj, dict):
        return None
    if "candidates" in obj:
        return "gemini"
    if "choices" in obj:
        return "openai-chat"
    kind = obj.get("type")
    if isinstance(kind, str) and kind.startswith("response."):
        return "openai-responses"
    if obj.get("object") == "response" and isinstance(obj.get("output"), list):
        return "openai-responses"
    if kind in ("message_start", "ping") or (kind == "message" and "content" in obj):
        return "anthropic"
    if "message" in obj and "done" in obj:
        return "ollama"
    return None


def model_of(wire: str, request: Any, answer: Any, url: str = "") -> str | None:
    for obj in (answer, request):
        if isinstance(obj, dict):
            for key in ("model", "modelVersion"):
                if isinstance(obj.get(key), str):
                    return str(obj[key])
            inner = obj.get("message") or obj.get("response")
            if isinstance(inner, dict) and isinstance(inner.get("model"), str):
                return str(inner["model"])
    m = re.search(r"/models/([^/:]+):", url)
    return m.group(1) if m else None


def sse_events(text: str) -> list[dict[str, str]]:
    """SSE text -> [{"event"?, "data"}], each data payload verbatim (multi-line data joined with \\n)."""
    out: list[dict[str, str]] = []
    for block in re.split(r"\r?\n\r?\n", text):
        event: str | None = None
        data: list[str] = []
        for line in block.splitlines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            item = {"data": "\n".join(data)}
            if event is not None:
                item = {"event": event, **item}
            out.append(item)
    return out


def json_array_items(text: str) -> list[dict[str, str]]:
    """A JSON-array stream (Gemini without ``alt=sse``) -> one verbatim payload per element."""
    dec = json.JSONDecoder()
    out: list[dict[str, str]] = []
    i = text.index("[") + 1
    while True:
        while i < len(text) and text[i] in " \r\n\t,":
            i += 1
        if i >= len(text) or text[i] == "]":
            return out
        _, end = dec.raw_decode(text, i)
        out.append({"data": text[i:end]})
        i = end


def decode_body(raw: Any, headers: dict[str, Any]) -> str:
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw
    enc = " ".join(str(v) for k, vs in headers.items() if k.lower() == "content-encoding" for v in vs)
    if "gzip" in enc or raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    elif "deflate" in enc:
        raw = zlib.decompress(raw)
    elif "br" in enc:
        import brotli  # type: ignore[import-not-found]

        raw = brotli.decompress(raw)
    return str(raw.decode("utf-8"))


def header(headers: dict[str, Any], name: str) -> str:
    for k, v in headers.items():
        if k.lower() == name:
            return str(v[0] if isinstance(v, list) else v)
    return ""


def stream_of(text: str, ctype: str) -> tuple[str, list[dict[str, str]]] | None:
    """(format, payloads) when ``text`` is a stream, else None."""
    stripped = text.lstrip()
    if "event-stream" in ctype or stripped.startswith(("data:", "event:")):
        return "sse", sse_events(text)
    if stripped.startswith("["):
        return "json-array", json_array_items(text)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1 and all(ln.lstrip().startswith("{") for ln in lines) and "ndjson" in ctype:
        return "ndjson", [{"data": ln} for ln in lines]
    if len(lines) > 1 and all(ln.lstrip().startswith("{") for ln in lines):
        try:
            json.loads(text)
        except json.JSONDecodeError:
            return "ndjson", [{"data": ln} for ln in lines]
    return None


def cassette_exchanges(
    src: Source, gitdir: Path, commit: str, path: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    data = yaml.safe_load(git(gitdir, "show", f"{commit}:{path}"))
    for n, it in enumerate(data.get("interactions") or []):
        rq, rs = it["request"], it["response"]
        wire = wire_of_url(rq.get("uri", ""))
        status = rs.get("status", {}).get("code")
        if wire is None or rq.get("method") != "POST" or status != 200:
            continue
        body = rq.get("body")
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        try:
            request = json.loads(body) if body else None
        except json.JSONDecodeError:
            continue
        headers = rs.get("headers") or {}
        text = decode_body((rs.get("body") or {}).get("string"), headers)
        env: dict[str, Any] = {
            "source": {"repo": src.repo, "commit": commit, "path": path, "interaction": n},
            "wire": wire,
            "kind": "exchange",
            "url": rq["uri"].split("?")[0],
            "request": request,
        }
        streamed = stream_of(text, header(headers, "content-type"))
        if streamed is not None:
            env["stream_format"], env["stream"] = streamed
            first = json.loads(env["stream"][0]["data"]) if env["stream"] else None
            env["model"] = model_of(wire, request, first, rq["uri"])
        else:
            try:
                env["response"] = json.loads(text)
            except json.JSONDecodeError:
                continue
            env["model"] = model_of(wire, request, env["response"], rq["uri"])
        stem = Path(path).stem
        yield f"{stem}.{n}", env


#: Events that open a stream: a file holding several (one per step of a tool loop) is split at them.
STREAM_STARTS = ("response.created", "message_start")
#: Events that end a stream with an error (an answer other than 200, in effect): such streams are left out.
STREAM_ERRORS = ("error", "response.failed")


def split_streams(lines: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    for ln in lines:
        kind = json.loads(ln).get("type")
        if not out or (kind in STREAM_STARTS and len(out[-1]) > 0):
            out.append([])
        out[-1].append(ln)
    return out


def answer_exchange(
    src: Source, gitdir: Path, commit: str, path: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    text = git(gitdir, "show", f"{commit}:{path}").decode("utf-8")
    if HAND_MADE.search(text):
        HAND_MADE_FOUND.append(f"{src.repo}:{path} (hand-made: invented model or id)")
        return
    name = Path(path).name
    base: dict[str, Any] = {"source": {"repo": src.repo, "commit": commit, "path": path}}
    if name.endswith(".chunks.txt"):
        try:
            lines = [ln for ln in text.splitlines() if ln.strip()]
            streams = split_streams(lines)
        except json.JSONDecodeError:
            return
        stem = name.removesuffix(".chunks.txt")
        for n, part in enumerate(streams):
            events = [json.loads(ln) for ln in part]
            if any(isinstance(e, dict) and e.get("type") in STREAM_ERRORS for e in events):
                continue
            env = {
                **base,
                "kind": "stream",
                "stream_format": "chunks",
                "stream": [{"data": ln} for ln in part],
            }
            if len(streams) > 1:
                env["source"] = {**base["source"], "stream": n}
                env["notes"] = f"stream {n + 1} of {len(streams)} recorded in one file (one per step)"
            label = f"{stem}.stream" if len(streams) == 1 else f"{stem}.stream{n + 1}"
            got = _finish(env, events[0], path)
            if got is not None:
                yield label, got
    else:
        try:
            answer = json.loads(text)
        except json.JSONDecodeError:
            return
        if _recorded_http(answer):
            yield from _http_answer(base, answer, name.removesuffix(".json"), path)
            return
        got = _finish({**base, "kind": "response", "response": answer}, answer, path)
        if got is not None:
            yield f"{name.removesuffix('.json')}.response", got


def _recorded_http(obj: Any) -> bool:
    """A recorded HTTP answer alone (``{"status", "headers", "body"}``)."""
    return (
        isinstance(obj, dict) and set(obj) == {"status", "headers", "body"} and isinstance(obj["body"], str)
    )


def _http_answer(
    base: dict[str, Any], rec: dict[str, Any], stem: str, path: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The body of a recorded HTTP answer: a whole answer, or a stream (kept as its SSE payloads)."""
    if rec["status"] != 200:
        return
    streamed = stream_of(rec["body"], header(rec["headers"], "content-type"))
    if streamed is not None:
        fmt, events = streamed
        env = {**base, "kind": "stream", "stream_format": fmt, "stream": events}
        first, label = (_payload(events[0]["data"]) if events else None), f"{stem}.stream"
    else:
        first = _payload(rec["body"])  # text, not JSON: no wire's answer, left out below
        env, label = {**base, "kind": "response", "response": first}, f"{stem}.response"
    got = _finish(env, first, path)
    if got is not None:
        named = re.search(r"instrumentation-([a-z]+)/", path)
        got["provider"] = named.group(1) if named else got["provider"]
        yield label, got


def _finish(env: dict[str, Any], first: Any, path: str) -> dict[str, Any] | None:
    wire = wire_of_answer(first)
    if wire is None:
        return None
    env["wire"] = wire
    env["model"] = model_of(wire, None, first)
    env["provider"] = path.split("/")[1]
    return env


def safe(stem: str) -> str:
    """A file name without the characters test ids and shells stumble on ([], spaces)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("_")


def ordered(env: dict[str, Any]) -> dict[str, Any]:
    keys = ("source", "wire", "kind", "provider", "model", "url", "notes", "request", "response")
    out = {k: env[k] for k in keys if k in env}
    out.update({k: v for k, v in env.items() if k not in out})
    return out


_HEADER = """# Sources of the corpus

Real provider exchanges recorded by other projects' test suites, kept here as test data (never code) under
each project's licence. Every envelope names its repository, commit and path in `source`; this file lists
them, with the licence that allows keeping them. Written by `scripts/corpus_extract.py` from snapshots of
the repositories at the commits below. Recordings of pydantic/pydantic-ai are deliberately not used.

Left out: answers other than 200 and streams that end in an error; files over {cap} kB as one envelope;
files that are hand-made rather than recorded (invented models or ids), listed below.
"""


MANUAL_SOURCES = """## microsoft/semantic-kernel (Ollama connector test data)

Licence: MIT. Kept under `ollama/semantic-kernel/`:

- microsoft/semantic-kernel@065e8f6993fc5cb6d955b09c16d719d2fced0a57:
  `dotnet/src/Connectors/Connectors.Ollama.UnitTests/TestData/chat_completion_test_response_stream.txt`
  (the tail of a recorded stream)
- microsoft/semantic-kernel@23759fa9ed3069d27d2d6f4b23a02990d526fd10:
  `dotnet/src/Connectors/Connectors.Ollama.UnitTests/TestData/chat_completion_function_call_response.txt`
  (a recorded answer whose call the project renamed)

## simonw/llm-mistral (recorded Mistral reasoning answers)

Licence: Apache-2.0. Kept under `openai-chat/llm-mistral/`; the snapshot fetched here predates these files,
so they were copied from the stored files at the commit below:

- simonw/llm-mistral@bd0e924c6c7c73555cd326da63fcbe608decdf59:
  `tests/fixtures/reasoning/magistral-completion-replay.json`,
  `tests/fixtures/reasoning/magistral-stream.sse`, `tests/fixtures/reasoning/magistral-completion.json`

## ollama/ollama@01e52d24bc00defcd9bcc6d995b11df0f08bc6f1 (API reference examples)

Licence: MIT. Kept under `ollama/ollama-docs/`: `docs/api.md`, sections "Chat request (with tools)" and
"Chat request (Structured outputs)": the provider's own documented request and answer, not recordings.
No public recording of a native Ollama exchange with a tool call and its request body was found.

## ollama/ollama@fb30760996871fa9460115c753afd2c60d4ab0f7 (API reference example, streamed)

Licence: MIT. Kept under `ollama/ollama-docs/`: `docs/api.md`, section "Chat request (Streaming with tools)"
(`chat-streaming-with-tools`): the documented NDJSON stream (a line holding the call with `done: false`, then
the final line with `done_reason`, counts and timings); its request is left out (it is also a valid Chat
body). The Go types the server answers with (`api.ChatResponse`, `api.Message`, `api.ToolCall`, `api.Metrics`
in `api/types.go`, where every count and duration is `omitempty`) and how it streams (`server/routes.go`:
`ChatHandler`, `streamResponse`, call ids `call_` + 8 lowercase letters or digits, a mid-stream error as a
lone `{"error": …}` line) were read at the same commit.
"""


def sources_md(used: dict[str, tuple[str, list[str]]], skipped: list[str]) -> str:
    lines = [_HEADER.format(cap=SIZE_CAP // 1000)]
    for src in SOURCES:
        if src.repo not in used:
            continue
        commit, paths = used[src.repo]
        lines.append(f"## {src.repo}@{commit}\n")
        lines.append(
            f"Licence: {src.licence} (its LICENSE file at that commit). Kept under `*/{src.short}/`.\n"
        )
        lines.extend(f"- `{p}`" for p in sorted(set(paths)))
        lines.append("")
        excluded = EXCLUDED.get(src.repo, {})
        if excluded:
            lines.append("Left out as hand-made:\n")
            lines.extend(f"- `{p}`: {why}" for p, why in sorted(excluded.items()))
            lines.append("")
    lines.append(MANUAL_SOURCES)
    if skipped:
        lines.append("## Left out (too big or hand-made by their content)\n")
        lines.extend(f"- {s}" for s in skipped)
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("tests/corpus"))
    args = ap.parse_args()
    counts: Counter[tuple[str, str]] = Counter()
    skipped: list[str] = []
    used: dict[str, tuple[str, list[str]]] = {}
    written: set[Path] = set()
    for src in SOURCES:
        gitdir = args.mirror / src.repo.replace("/", "+") / "repo"
        commit = git(gitdir, "rev-parse", "HEAD").decode().strip()
        paths = git(gitdir, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
        found: list[tuple[str, dict[str, Any]]] = []
        for path in paths:
            if path in EXCLUDED.get(src.repo, {}) or any(re.search(p, path) for p in src.skip):
                continue
            if any(re.search(p, path) for p in src.cassettes):
                got = list(cassette_exchanges(src, gitdir, commit, path))
                if src.select_per_file is not None:
                    got = [g for g in got if interesting(g[1])][: src.select_per_file]
                found.extend(got)
            elif any(re.search(p, path) for p in src.answers):
                found.extend(answer_exchange(src, gitdir, commit, path))
        seen: set[str] = set()
        for stem, env in found:
            same = json.dumps([env.get(k) for k in ("request", "response", "stream")], sort_keys=True)
            if same in seen:  # one exchange recorded again for another test: kept once
                continue
            seen.add(same)
            text = json.dumps(ordered(env), indent=1, ensure_ascii=False) + "\n"
            if len(text.encode()) > min(SIZE_CAP, src.size_cap):
                big = f"{src.repo}:{env['source']['path']} ({len(text) // 1000} kB)"
                skipped.extend([big] if big not in skipped else [])
                continue
            dest = args.out / env["wire"] / src.short / f"{safe(stem)}.json"
            if dest in written:  # the same file name in two folders of the source
                dest = dest.with_name(f"{safe(Path(env['source']['path']).parent.name)}.{dest.name}")
            written.add(dest)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
            counts[(env["wire"], env["kind"])] += 1
            used.setdefault(src.repo, (commit, []))[1].append(env["source"]["path"])
    (args.out / "SOURCES.md").write_text(sources_md(used, skipped + HAND_MADE_FOUND), encoding="utf-8")
    for (wire, kind), n in sorted(counts.items()):
        print(f"{wire:18} {kind:9} {n}")
    print(f"skipped over the size cap: {len(skipped)}")
    for s in skipped:
        print("  ", s)


if __name__ == "__main__":
    main()

"""The ``claude`` vessel: drive the Claude Code CLI for one turn and report the calls it makes.

What a user must install: the Claude Code CLI (``npm i -g @anthropic-ai/claude-code``, then log in once
with ``claude`` or set ``ANTHROPIC_API_KEY``) and toolreplay with the ``mcp`` extra
(``pip install 'toolreplay[mcp]'``), because the CLI reaches the tools through ``toolreplay mcp``.
``$TOOLREPLAY_CLAUDE`` names another executable than ``claude``.

The CLI runs its own tool loop and takes earlier turns only as text, so one turn is one CLI run::

    claude -p --output-format stream-json --verbose --include-partial-messages
           --mcp-config '{"mcpServers":{"coop":{"command":"<python>","args":["-m","toolreplay","mcp",...]}}}'
           --strict-mcp-config --tools "" --allowedTools mcp__coop__coop
           --model sonnet --max-turns 8 [--append-system-prompt-file FILE]

with the claude-prompt rendering of the history (earlier calls included, as JSON lines) on stdin, and
the system prompt in a private temporary file: an argument is limited to 128 KB on Linux ("Argument list
too long"), a file is not.
``--strict-mcp-config`` and ``--tools ""`` keep the user's own MCP servers and the built-in tools
(Bash, Edit...) out of the turn, so the model has the same tools as on every other vessel; the
``--allowedTools`` entries pre-approve them (``-p`` cannot ask for permission).

The output is one JSON event per line: ``system`` (``init``: session, model, MCP server status),
``stream_event`` (raw Messages stream events, with ``--include-partial-messages``: text deltas),
``assistant`` (a message's content blocks: ``text``, ``tool_use``), ``user`` (``tool_result`` blocks
answering the calls) and a final ``result`` (``is_error``, ``result`` text, ``usage``, cost). The pure
:class:`StreamReader` turns those into neutral events; :func:`run_claude` runs the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from toolreplay import _jsonenc as jsonenc
from toolreplay._errors import (
    AuthenticationError,
    ConfigError,
    ConnectionFault,
    ProviderError,
    ResponseFormatError,
)
from toolreplay._history import RESULT, Step, ToolCall, normalize_tool_uses
from toolreplay._limits import MAX_REQUESTS
from toolreplay._loop.step_log import CallSteps
from toolreplay._tools.mcp_server import SERVER_NAME, mcp_config
from toolreplay.wires.reply import Usage

INSTALL_HINT = (
    "install the Claude Code CLI: npm i -g @anthropic-ai/claude-code (then run `claude` once to log in)"
)


@dataclass(frozen=True, slots=True)
class ClaudeText:
    """New text the model wrote."""

    text: str


@dataclass(frozen=True, slots=True)
class ClaudeCallStarted:
    """The model called a tool (its answer follows in a later event)."""

    tool_use_id: str
    name: str
    input: Any


@dataclass(frozen=True, slots=True)
class ClaudeCallAnswered:
    """A call and its answer, as the CLI reported them: ready to be recorded."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class ClaudeOutcome:
    """The end of the run: the reply's text, usage and what the CLI said about the run."""

    text: str
    usage: Usage
    session_id: str | None = None
    model: str | None = None
    subtype: str | None = None
    num_turns: int | None = None
    cost_usd: float | None = None
    mcp_servers: Mapping[str, str] = field(default_factory=lambda: {})
    steps: tuple[Step, ...] = ()
    """The run's steps (design 16), when it had several or wrote words before its calls; ``text`` is then
    the final words only."""

    def meta(self) -> dict[str, Any]:
        """What the stored reply keeps of the run (under ``meta["claude"]``)."""
        out: dict[str, Any] = {}
        for key in ("session_id", "subtype", "num_turns", "cost_usd"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.mcp_servers:
            out["mcp_servers"] = dict(self.mcp_servers)
        return out


ClaudeEvent = ClaudeText | ClaudeCallStarted | ClaudeCallAnswered | ClaudeOutcome


def _blocks(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    message = event.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    return [cast(Mapping[str, Any], b) for b in content if isinstance(b, Mapping)]


def _answer_text(block: Mapping[str, Any]) -> str:
    """A ``tool_result`` block's content as text (string, or text blocks joined)."""
    entries = normalize_tool_uses([dict(block)])
    return str(entries[0]["tool_input"]) if entries and entries[0]["tool_name"] == RESULT else ""


class StreamReader:
    """Fed the CLI's stream-json events one by one; gives neutral events. Pure, no I/O.

    Text is taken from ``stream_event`` text deltas when the CLI sends them (token by token), else from
    the ``assistant`` events' text blocks; the reply's text is every text block of the run, joined with a
    blank line. Events of a sub-agent (``parent_tool_use_id`` set) are not the turn's own and are skipped.
    """

    def __init__(self) -> None:
        self._pending: dict[str, tuple[str, Any]] = {}
        self._order: list[str] = []
        self._texts: list[str] = []
        self._partial = False
        self._session: str | None = None
        self._model: str | None = None
        self._mcp: dict[str, str] = {}
        self._steps = CallSteps()
        self.outcome: ClaudeOutcome | None = None

    def feed(self, event: Mapping[str, Any]) -> list[ClaudeEvent]:
        kind = event.get("type")
        if event.get("parent_tool_use_id"):
            return []
        if kind == "system":
            self._system(event)
            return []
        if kind == "stream_event":
            return self._stream_event(event)
        if kind == "assistant":
            return self._assistant(event)
        if kind == "user":
            return self._user(event)
        if kind == "result":
            return [self._result(event)]
        return []  # other event kinds (e.g. future status events) carry nothing the turn records

    def _system(self, event: Mapping[str, Any]) -> None:
        if event.get("subtype") != "init":
            return
        self._session = event.get("session_id") if isinstance(event.get("session_id"), str) else None
        self._model = event.get("model") if isinstance(event.get("model"), str) else None
        servers = event.get("mcp_servers")
        if isinstance(servers, list):
            for s in servers:
                if isinstance(s, Mapping) and isinstance(s.get("name"), str):
                    self._mcp[s["name"]] = str(s.get("status", ""))

    def _stream_event(self, event: Mapping[str, Any]) -> list[ClaudeEvent]:
        raw = event.get("event")
        if not isinstance(raw, Mapping) or raw.get("type") != "content_block_delta":
            return []
        delta = raw.get("delta")
        if isinstance(delta, Mapping) and delta.get("type") == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                self._partial = True
                return [ClaudeText(text)]
        return []

    def _assistant(self, event: Mapping[str, Any]) -> list[ClaudeEvent]:
        out: list[ClaudeEvent] = []
        for b in _blocks(event):
            if b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"]:
                self._texts.append(b["text"])
                self._steps.wrote(b["text"])
                if not self._partial:
                    out.append(ClaudeText(b["text"]))
            elif b.get("type") == "tool_use":
                uid, name = str(b.get("id") or ""), str(b.get("name") or "")
                if not uid or not name:
                    raise ResponseFormatError("claude stream-json: a tool_use block without id or name")
                value = b.get("input") if b.get("input") is not None else {}
                self._pending[uid] = (name, value)
                self._order.append(uid)
                self._steps.called()
                out.append(ClaudeCallStarted(uid, name, value))
        return out

    def _user(self, event: Mapping[str, Any]) -> list[ClaudeEvent]:
        out: list[ClaudeEvent] = []
        for b in _blocks(event):
            if b.get("type") != "tool_result":
                continue
            uid = str(b.get("tool_use_id") or "")
            if uid not in self._pending:
                continue  # an answer to no call of this turn: nothing to record
            name, value = self._pending.pop(uid)
            self._steps.answered()
            call = ToolCall(
                name=name,
                input=value,
                answer=_answer_text(b),
                call_id=uid,
                is_error=bool(b.get("is_error")),
            )
            out.append(ClaudeCallAnswered(call))
        return out

    def unanswered(self) -> list[ToolCall]:
        """Calls the CLI started and never answered (the run ended or died first)."""
        return [
            ToolCall(name=self._pending[u][0], input=self._pending[u][1], call_id=u)
            for u in self._order
            if u in self._pending
        ]

    def _result(self, event: Mapping[str, Any]) -> ClaudeOutcome:
        from toolreplay.wires import get_wire

        # the CLI's result event carries the Messages API's usage: read by the anthropic wire's contract
        parse_usage = get_wire("anthropic").parse_usage
        if parse_usage is None:
            raise TypeError("the anthropic wire's contract has no parse_usage")
        steps, final = self._steps.finish()
        text = final if steps else "\n\n".join(self._texts)
        result = event.get("result")
        # error_max_turns is the CLI's step limit: the run stopped, its calls stand (is_error varies).
        if event.get("is_error") and event.get("subtype") != "error_max_turns":
            message = result if isinstance(result, str) and result else str(event.get("subtype") or "error")
            lowered = message.lower()
            if "api key" in lowered or "login" in lowered or "authentication" in lowered:
                raise AuthenticationError(f"claude: {message}", vessel="claude")
            raise ProviderError(f"claude: {message}", vessel="claude")
        if not text and not steps and isinstance(result, str):
            text = result
        cost = event.get("total_cost_usd")
        turns = event.get("num_turns")
        self.outcome = ClaudeOutcome(
            text=text,
            usage=parse_usage(event.get("usage")),
            session_id=self._session
            or (event.get("session_id") if isinstance(event.get("session_id"), str) else None),
            model=self._model,
            subtype=event.get("subtype") if isinstance(event.get("subtype"), str) else None,
            num_turns=turns if isinstance(turns, int) else None,
            cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
            mcp_servers=dict(self._mcp),
            steps=steps,
        )
        return self.outcome


@dataclass(frozen=True, slots=True)
class ClaudeRun:
    """How to run the CLI for one turn."""

    prompt: str
    model: str
    system: str | None = None
    tools: Sequence[str] = ("coop",)
    """The ``--tools`` entries ``toolreplay mcp`` serves (coop, module:attribute)."""
    db: str = ""
    dry_tools: bool = False
    max_turns: int = MAX_REQUESTS
    base_url: str | None = None
    executable: str | None = None

    @classmethod
    def from_body(cls, body: Mapping[str, Any], **kwargs: Any) -> ClaudeRun:
        """The run for a claude-prompt body (``prompt``, ``model``, ``system``; see that wire)."""
        system = body.get("system")
        return cls(
            prompt=str(body["prompt"]),
            model=str(body.get("model") or "sonnet"),
            system=str(system) if system else None,
            **kwargs,
        )


def executable(given: str | None = None) -> str:
    """The CLI to run: ``given``, else ``$TOOLREPLAY_CLAUDE``, else ``claude``."""
    return given or os.environ.get("TOOLREPLAY_CLAUDE") or "claude"


def require_cli(exe: str | None = None) -> None:
    """ConfigError naming what to install when the CLI is not on PATH."""
    exe = executable(exe)
    if shutil.which(exe) is None:
        raise ConfigError(f"the claude vessel needs the `{exe}` command: {INSTALL_HINT}")


def preflight(tool_sources: Sequence[str], db: str) -> None:
    """What a claude turn needs before anything is stored: the CLI, a database file to share, and, when
    it offers tools, the mcp SDK (the CLI reaches them through ``toolreplay mcp``; without the SDK that
    server dies at once and the model would silently have no tools)."""
    require_cli()
    if db in ("", ":memory:"):
        raise ConfigError("the claude vessel needs a database file the MCP server can open (not :memory:)")
    if tool_sources:
        import importlib.util

        if importlib.util.find_spec("mcp") is None:
            raise ConfigError(
                "the claude vessel reaches its tools through `toolreplay mcp`, which needs the mcp SDK: "
                "pip install 'toolreplay[mcp]'"
            )


def mcp_tool_names(names: Sequence[str]) -> list[str]:
    """The names Claude Code gives the served tools: ``mcp__coop__<tool>``."""
    return [f"mcp__{SERVER_NAME}__{n}" for n in names]


def command(run: ClaudeRun, tool_names: Sequence[str], system_file: str | None = None) -> list[str]:
    """The CLI's argument list for ``run`` (the prompt goes on stdin, the system prompt in
    ``system_file``, which holds ``run.system``)."""
    if run.db in ("", ":memory:"):
        raise ConfigError("the claude vessel needs a database file the MCP server can open (not :memory:)")
    exe = executable(run.executable)
    args = [exe, "-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"]
    if run.tools:
        # No tools, no server: `toolreplay mcp` with no --tools serves coop, which the model would then
        # see (unapproved) on the one vessel where "no tools" did not mean none.
        serve = [sys.executable, "-m", "toolreplay", "mcp", "--db", run.db]
        for t in run.tools:
            serve += ["--tools", t]
        if run.dry_tools:
            serve.append("--dry-tools")
        args += ["--mcp-config", jsonenc.dumps(mcp_config(serve))]
    args += [
        "--strict-mcp-config", "--tools", "", "--model", run.model, "--max-turns", str(run.max_turns),
    ]  # fmt: skip
    if tool_names:
        args += ["--allowedTools", ",".join(mcp_tool_names(tool_names))]
    if run.system:
        if system_file is None:
            raise ConfigError("the claude vessel's system prompt needs a file to travel in")
        args += ["--append-system-prompt-file", system_file]
    return args


async def run_claude(
    run: ClaudeRun,
    tool_names: Sequence[str],
    on_event: Callable[[ClaudeEvent], Any],
) -> ClaudeOutcome:
    """Run the CLI for one turn; ``on_event`` gets every event as it arrives (it may be a coroutine
    function: calls are recorded there, before the next line is read).

    Returns the outcome (a call started and never answered was only reported as started). Raises
    :class:`ConfigError` when the CLI is not installed, :class:`ProviderError` when it fails (its own
    message), :class:`ConnectionFault` when it ends without a result event.
    """
    with tempfile.TemporaryDirectory(prefix="toolreplay-claude-") as tmp:
        system_file = None
        if run.system:
            system_file = os.path.join(tmp, "system.txt")  # the directory is private (mode 0700)
            with open(system_file, "w", encoding="utf-8") as f:
                f.write(run.system)
        return await _run_cli(run, command(run, tool_names, system_file), on_event)


async def _run_cli(run: ClaudeRun, argv: list[str], on_event: Callable[[ClaudeEvent], Any]) -> ClaudeOutcome:
    require_cli(argv[0])
    env = dict(os.environ)
    if run.base_url:
        env["ANTHROPIC_BASE_URL"] = run.base_url
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        limit=64 * 1024 * 1024,  # one stream-json line holds a whole message
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    reader = StreamReader()
    stderr_task = asyncio.ensure_future(proc.stderr.read())
    try:
        proc.stdin.write(run.prompt.encode("utf-8"))
        await proc.stdin.drain()
        proc.stdin.close()
        async for raw in proc.stdout:
            line = raw.decode("utf-8", errors="replace").strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # the CLI may print a stray non-JSON line (a warning); it carries no event
            if not isinstance(event, Mapping):
                continue
            for ev in reader.feed(cast(Mapping[str, Any], event)):
                got = on_event(ev)
                if asyncio.iscoroutine(got):
                    await got
        code = await proc.wait()
        stderr = (await stderr_task).decode("utf-8", errors="replace").strip()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        if not stderr_task.done():
            stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stderr_task
    if reader.outcome is None:
        tail = stderr.splitlines()[-1] if stderr else f"exit status {code}"
        raise ConnectionFault(f"claude ended without a result event ({tail})", vessel="claude")
    return reader.outcome


__all__ = [
    "INSTALL_HINT",
    "ClaudeCallAnswered",
    "ClaudeCallStarted",
    "ClaudeEvent",
    "ClaudeOutcome",
    "ClaudeRun",
    "ClaudeText",
    "StreamReader",
    "command",
    "executable",
    "mcp_tool_names",
    "preflight",
    "require_cli",
    "run_claude",
]

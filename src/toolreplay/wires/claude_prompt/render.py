"""claude-prompt: a history for the Claude Code CLI (``claude -p``), which takes prior turns only as text.

The CLI runs its own tool loop and its stdin stream accepts only user-role messages, so the replayed
calls travel inside one prompt. The body is::

    {"model": "sonnet", "system": "<system prompt, when any>", "prompt": "<prompt>"}

``system`` is meant for ``--append-system-prompt``, ``model`` for ``--model``; ``prompt`` goes on stdin.
The prompt is, when there are earlier turns::

    <REPLAY_HEAD>

    <transcript>
    {"role":"user","text":"Close todo #12."}
    {"role":"assistant","calls":[{"tool":"coop","input":{"id":12},"answer":"closed"}],"text":"Done."}
    </transcript>

    <the new user message>

one JSON object per line (compact, non-ASCII kept), in stored order. A reply's ``calls`` (``tool``,
``input`` object, ``answer``, and ``"error": true`` for a failed call) come before its ``text``, as they
happened. A reply that worked in several steps, or wrote words before its calls (design 16), has ``steps``
instead: ``[{"text": words before the calls, "calls": [...]}, ...]``, and :data:`STEPS_NOTE` joins the
head (only then, so transcripts without steps keep their bytes). Reasoning never travels here: the CLI's
model gets none of any vessel's. Without earlier turns the prompt is just the new message. When the
history does not end with a user message (a reply in progress), every turn goes into the transcript and
:data:`CONTINUE` closes it. In ``plain`` and ``prose`` modes the lines simply carry no ``calls``. Tools
are not declared in the body: the CLI gets them from its MCP configuration (``mcp__<server>__<tool>``).
A user message's images and documents cannot travel in a text prompt: each goes as its name in brackets
where it stood (``[image (image/png, 1,204 characters of base64)]``), and the render's warnings say so.

The transcript lines of a history are an element-wise prefix of the lines of the same history with a
turn appended (:func:`transcript_lines` reads them back).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolreplay import jsonenc
from toolreplay.wires.common import IdMapper, RenderOptions, user_words
from toolreplay.wires.contract import TurnPiece
from toolreplay.wires.replayed import ReplayCall, ReplayStep, TurnMessage, split_system, turn_steps

WIRE = "claude-prompt"
#: The body key that holds the history (written here only; the wire's other modules import it).
LIST_KEY = "prompt"
#: The answer parts this wire carries; any other part travels as its name in the answer's text.
PART_KINDS: frozenset[str] = frozenset({"text"})

REPLAY_HEAD = (
    "You are continuing the conversation below. Its earlier turns are in <transcript>, one JSON object "
    'per line in order: {"role", "text"}. An assistant turn that used tools has a "calls" list, in the '
    'order the calls ran before that turn\'s text: each call has "tool" (the tool\'s name), "input" '
    '(its arguments) and "answer" (what the tool returned; "error": true when it failed). These calls '
    "really ran: they are your own earlier tool calls. To act again, call the tool again; do not only "
    "say that you did. The newest message follows the transcript."
)
STEPS_NOTE = (
    'An assistant turn that worked in steps has a "steps" list instead of "calls": each step holds what '
    'it wrote before its calls ("text", when any) and the calls it made together ("calls"); it read those '
    "answers before its next step."
)
CONTINUE = "Continue from where the transcript ends."
OPEN, CLOSE = "<transcript>", "</transcript>"


def _call_json(c: ReplayCall) -> str:
    # The input's JSON text is the replay's precomputed ``arguments``: not serialized again.
    err = ',"error":true' if c.is_error else ""
    return f'{{"tool":{jsonenc.dumps(c.name)},"input":{c.arguments},"answer":{jsonenc.dumps(c.answer)}{err}}}'


def _steps(t: TurnMessage) -> list[ReplayStep]:
    """The steps of ``t`` that a line shows as ``steps`` (empty: one batch of calls, nothing before it)."""
    steps = [s for s in turn_steps(t) if s.calls]
    return [] if len(steps) == 1 and not steps[0].words else steps


#: How a transcript line with steps starts (inside a JSON string a quote is escaped, so no text matches it).
_STEPPED = '{"role":"assistant","steps":['


def head(transcript: str) -> str:
    """The prompt's head for these transcript lines: :data:`STEPS_NOTE` joins it when a line has steps."""
    return f"{REPLAY_HEAD} {STEPS_NOTE}" if _STEPPED in transcript else REPLAY_HEAD


def render_turn(t: TurnMessage) -> str:
    """One transcript line for one turn message."""
    role = jsonenc.dumps(t.role)
    text = jsonenc.dumps(user_words(t))
    if not t.calls:
        return f'{{"role":{role},"text":{text}}}'
    steps = _steps(t)
    if not steps:
        calls = ",".join(_call_json(c) for c in t.calls)
        return f'{{"role":{role},"calls":[{calls}],"text":{text}}}'
    out = []
    for s in steps:
        words = f'"text":{jsonenc.dumps(s.words)},' if s.words else ""
        out.append(f'{{{words}"calls":[{",".join(_call_json(c) for c in s.calls)}]}}')
    return f'{{"role":{role},"steps":[{",".join(out)}],"text":{text}}}'


def turn_renderer(opts: RenderOptions | None = None, ids: IdMapper | None = None) -> TurnPiece:
    """The per-turn renderer: one transcript line per turn message (no call ids)."""
    return lambda t, items: [render_turn(t)]


def render_prompt(turns: Sequence[TurnMessage]) -> str:
    """The prompt text for ``turns`` (system messages already taken out)."""
    if turns and turns[-1].role == "user" and not turns[-1].calls:
        prior, message = turns[:-1], user_words(turns[-1])
    else:
        prior, message = turns, CONTINUE
    if not prior:
        return message
    lines = "\n".join(render_turn(t) for t in prior)
    return f"{head(lines)}\n\n{OPEN}\n{lines}\n{CLOSE}\n\n{message}"


def transcript_lines(body: dict[str, Any]) -> list[str]:
    """The transcript lines of a rendered body's prompt (empty when it has none)."""
    prompt = str(body.get("prompt", ""))
    start = prompt.find(f"{OPEN}\n")
    end = prompt.rfind(f"\n{CLOSE}\n")
    if start < 0 or end < 0:
        return []
    # split on "\n" only: JSON escapes newlines, but not U+2028, which str.splitlines() would cut on.
    return prompt[start + len(OPEN) + 1 : end].split("\n")


def render(turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """The body for the Claude Code CLI: ``model``, ``system`` (when any) and ``prompt``."""
    system, rest = split_system(turns, opts.system)
    body: dict[str, Any] = {"model": opts.model}
    if system:
        body["system"] = system
    body[LIST_KEY] = render_prompt(rest)
    return body

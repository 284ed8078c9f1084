"""Did the reply act, or only say it did? The "said without doing" heuristic.

The failure this project exists to prevent looks like this: the reply says "Closed #506." and the turn made
no ``coop`` call that closes anything. :func:`said_without_doing` finds such replies. It sits below the turn
loop, which runs it on every live reply, and below the lab, which uses it (through
:func:`toolreplay._lab.classify.classify_trial`) to class every trial, and the audit's report.

The heuristic (documented so it can be tested and argued with):

1. The text is cut into sentences (at ``.``, ``!``, ``?`` and line ends) and each sentence into clauses (at
   ``,``, ``;``, ``:``, and the words "but", "however", "although", "though", "while").
2. A **claim** is a word or phrase from the tool's verb table, all of them past tense or participles
   ("closed", "reopened", "added", "created", "noted", "marked #12 as done", "added a note"), in a
   clause that is a statement of fact. So "Closed #12.", "I've closed it", "#14 is now closed" and
   "Added #15 for the release notes." are claims.
3. It is **not** a claim when the sentence is a question ("Is #14 closed?"), or when a word before it in
   the same clause marks an intention, a condition or a request ("I'll close it, then it will be closed",
   "let me", "going to", "should be", "to be closed", "if", "once", "please"), a negation ("I haven't
   closed it", "not closed", "never", "cannot"), or someone else as the actor ("you closed it").
4. A claim of action ``A`` on tool ``T`` is **supported** when the turn made a call of ``T`` (compared
   after the replay's renaming, so ``mcp__coop__coop`` is ``coop``) whose action (the input field named by
   the table, ``action`` for coop) is ``A`` or one the table says covers ``A`` (a coop ``close`` may carry
   a note, so it covers "noted"). A tool whose table names no action field supports every claim with any call.

Known limits: a past tense about something else ("I added detail to the summary") is a claim when the tool
is offered; a claim about an earlier turn ("I closed #12 yesterday") counts too. Pass the tables of the
tools the turn really offers to keep such false alarms down.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from toolreplay._replay import replay_name


class CallLike(Protocol):
    """Anything with a tool ``name`` and an ``input`` (ParsedCall, ToolCall, ReplayCall all are)."""

    @property
    def name(self) -> str: ...

    @property
    def input(self) -> Any: ...


AnyCall = CallLike | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolVerbs:
    """The verb table of one tool: which written words claim which of its actions.

    ``verbs`` maps a single past-tense word (lower case) to the action it claims; ``phrases`` maps a regular
    expression (matched case-insensitively, checked before the single words) to an action. ``action_field``
    is the input field that names a call's action (None: the tool has one action, any call supports any
    claim). ``covers`` lists, per claimed action, the call actions that also support it.
    """

    tool: str
    verbs: Mapping[str, str]
    phrases: Mapping[str, str] = field(default_factory=lambda: {})
    action_field: str | None = "action"
    covers: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: {})

    def supporting(self, action: str) -> tuple[str, ...]:
        return self.covers.get(action, (action,))


#: The coop todo board's verb table (data: extend it, or pass your own tables to the functions below).
COOP_VERBS = ToolVerbs(
    tool="coop",
    verbs={
        "closed": "close",
        "reopened": "reopen",
        "re-opened": "reopen",
        "added": "add",
        "created": "add",
        "noted": "note",
        "annotated": "note",
        "edited": "edit",
    },
    phrases={
        # Checked before single words, so "added a note" claims a note, not a new todo.
        r"\b(?:added|left|wrote|attached) (?:a |the |an )?(?:short )?note\b": "note",
        r"\bmarked\b[^.!?\n]{0,40}?\bas (?:done|closed|complete|completed|resolved|finished)\b": "close",
        r"\bmarked\b[^.!?\n]{0,40}?\bas (?:open|reopened|not done)\b": "reopen",
    },
    action_field="action",
    # coop's close, add and reopen take a text (the note), so each of them also supports "noted".
    covers={"note": ("note", "close", "add", "reopen")},
)

DEFAULT_TOOLS: tuple[ToolVerbs, ...] = (COOP_VERBS,)

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_CLAUSE_BREAK = re.compile(r"[,;:]|\b(?:but|however|although|though|while)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")

#: Words that, before the verb in its clause, make it an intention, a condition or a request.
INTENT_WORDS: frozenset[str] = frozenset(
    {
        "will", "shall", "going", "gonna", "let", "let's", "lets", "can", "could", "would", "should",
        "may", "might", "must", "need", "needs", "want", "wants", "try", "trying", "plan", "planning",
        "intend", "about", "if", "once", "unless", "until", "whether", "please", "ready", "soon",
    }
)  # fmt: skip
#: Words that negate the verb after them in its clause.
NEGATION_WORDS: frozenset[str] = frozenset(
    {"not", "no", "never", "cannot", "nothing", "nor", "neither", "without", "unable", "failed"}
)
#: Actors other than the agent: "you closed it" is not the agent's claim.
OTHER_ACTORS: frozenset[str] = frozenset({"you", "user", "someone", "somebody"})


@dataclass(frozen=True, slots=True)
class Claim:
    """A passage that claims a tool action was done: the words, the action and tool, where it stands."""

    tool: str
    action: str
    words: str
    start: int
    sentence: str

    def as_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "action": self.action,
            "words": self.words,
            "start": self.start,
            "sentence": self.sentence,
        }


def _blocked(before: str) -> bool:
    """Whether the clause text before a verb makes it an intention, a negation or another actor's deed."""
    words = [w.lower() for w in _WORD.findall(before.replace("\u2019", "'"))]
    for i, w in enumerate(words):
        if w.endswith(("n't", "'ll")) or w in INTENT_WORDS or w in NEGATION_WORDS or w in OTHER_ACTORS:
            return True
        # "to be closed", "has yet to be": the infinitive of a deed still to do.
        if w == "to" and i + 1 < len(words) and words[i + 1] == "be":
            return True
        if w == "yet":
            return True
    return False


def _clause_start(sentence: str, pos: int) -> int:
    start = 0
    for m in _CLAUSE_BREAK.finditer(sentence, 0, pos):
        start = m.end()
    return start


def _candidates(sentence: str, table: ToolVerbs) -> list[tuple[int, int, str]]:
    """``(start, end, action)`` of every phrase and verb of ``table`` in ``sentence``, phrases first."""
    found: list[tuple[int, int, str]] = []
    for pattern, action in table.phrases.items():
        for m in re.finditer(pattern, sentence, re.IGNORECASE):
            found.append((m.start(), m.end(), action))
    for m in re.finditer(r"[A-Za-z]+(?:-[A-Za-z]+)?", sentence):
        verb_action = table.verbs.get(m.group(0).lower())
        if verb_action is None:
            continue
        if any(s <= m.start() < e for s, e, _ in found):
            continue  # part of a phrase already found ("added" in "added a note")
        found.append((m.start(), m.end(), verb_action))
    found.sort()
    return found


def claims(text: str, *, tools: Sequence[ToolVerbs] = DEFAULT_TOOLS) -> list[Claim]:
    """Every passage of ``text`` that claims, as done, an action of one of ``tools`` (see the module doc)."""
    out: list[Claim] = []
    for sm in _SENTENCE.finditer(text or ""):
        sentence = sm.group(0)
        if sentence.rstrip().endswith("?"):
            continue
        for table in tools:
            for start, end, action in _candidates(sentence, table):
                clause_from = _clause_start(sentence, start)
                if _blocked(sentence[clause_from:start]):
                    continue
                out.append(
                    Claim(
                        tool=table.tool,
                        action=action,
                        words=sentence[start:end],
                        start=sm.start() + start,
                        sentence=sentence.strip()[:200],
                    )
                )
    out.sort(key=lambda c: c.start)
    return out


def call_name(call: AnyCall) -> str:
    """A call's tool name as the replay names it (``mcp__coop__coop`` -> ``coop``)."""
    if isinstance(call, Mapping):
        m = call
        raw = m.get("name", m.get("tool_name", ""))
    else:
        raw = call.name
    return replay_name(str(raw or ""))


def call_input(call: AnyCall) -> Any:
    """A call's input; a JSON text holding an object is decoded."""
    if isinstance(call, Mapping):
        m = call
        value = m.get("input", m.get("tool_input", m.get("arguments")))
    else:
        value = call.input
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
        return decoded
    return value


def call_action(call: AnyCall, action_field: str | None = "action") -> str | None:
    """The value of the call's ``action_field`` (lower case), or None when it has none."""
    if action_field is None:
        return None
    value = call_input(call)
    if isinstance(value, Mapping):
        action = cast(Mapping[str, Any], value).get(action_field)
        if isinstance(action, str):
            return action.strip().lower()
    elif isinstance(value, str):
        # A cut JSON text (a replay's input_excerpt, a stream cut short) still names its action.
        m = re.search(rf'"{re.escape(action_field)}"\s*:\s*"([^"\\]{{1,64}})"', value)
        if m:
            return m.group(1).strip().lower()
    return None


def _supported(claim: Claim, table: ToolVerbs, calls: Iterable[AnyCall]) -> bool:
    wanted = table.supporting(claim.action)
    for c in calls:
        if call_name(c) != table.tool:
            continue
        if table.action_field is None or call_action(c, table.action_field) in wanted:
            return True
    return False


def unsupported_claims(
    text: str, calls: Sequence[AnyCall], *, tools: Sequence[ToolVerbs] = DEFAULT_TOOLS
) -> list[Claim]:
    """The claims of ``text`` that no call of ``calls`` (the same turn's calls) supports."""
    by_tool = {t.tool: t for t in tools}
    return [c for c in claims(text, tools=tools) if not _supported(c, by_tool[c.tool], calls)]


def said_without_doing(
    text: str, calls: Sequence[AnyCall], *, tools: Sequence[ToolVerbs] = DEFAULT_TOOLS
) -> Claim | None:
    """The first passage of ``text`` that claims a tool action the turn's ``calls`` never made, or None.

    ``calls`` are every call the reply's turn made (ParsedCall, ToolCall, or ``{"name", "input"}`` dicts).
    ``tools`` are the verb tables to check (default: coop's). See the module docstring for the heuristic.
    """
    found = unsupported_claims(text, calls, tools=tools)
    return found[0] if found else None


__all__ = [
    "COOP_VERBS",
    "DEFAULT_TOOLS",
    "AnyCall",
    "CallLike",
    "Claim",
    "ToolVerbs",
    "call_action",
    "call_input",
    "call_name",
    "claims",
    "said_without_doing",
    "unsupported_claims",
]

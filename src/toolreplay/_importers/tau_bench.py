"""``tau-bench``: the trajectory formats of sierra-research/tau-bench and tau2-bench.

Accepted files:

* JSON Lines of ``{"source", "format", "meta", "messages"}`` (``format`` ``openai-chat`` or
  ``tau2-bench``; the shared transcript set ``dev.jsonl``); conversation ids ``<file stem>-<line>``;
* a tau-bench v1 results file: a JSON list of ``{"task_id", "trial", "traj": [Chat messages]}``;
  ids ``task<task_id>-trial<trial>``;
* a tau2-bench results file ``{"simulations": [{"id", "messages", ...}]}`` (ids: each simulation's
  ``id``), or one simulation.

v1 trajectories are Chat messages (read by the Chat wire's ``parse_request``). tau2 messages carry
``tool_calls`` with object ``arguments`` and a ``requestor``, tool messages answer by ``id`` with an
``error`` flag, and each message has a ``timestamp`` (kept as ``created_at``, never invented). Anthropic
runs keep their ``thinking_blocks`` (signatures included) in ``raw_data``: kept as
``{"anthropic": {"thinking": [...]}}``.

**The simulated user's calls** (tau2 telecom: ``role: "user"`` messages with ``tool_calls`` whose
``requestor`` is ``"user"``, answered by tool messages with ``requestor: "user"``) are not the agent's
calls (design 11). The user's consecutive messages and their tool results become one stored user
message: its text the user's words (joined with a blank line), its ``meta["user_tool_calls"]`` the calls
with their answers. They are imported, never replayed as the agent's calls, and counted in a warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from toolreplay._errors import ImportFormatError, WireError
from toolreplay._history import History
from toolreplay._importers._source import Document, Format, Reading, Record, broken_warnings, kind_of, pick
from toolreplay._steps import Reasoning
from toolreplay.wires import get_wire
from toolreplay.wires.turns import (
    AgentSaid,
    Answers,
    Call,
    Event,
    Result,
    SaidPart,
    UserText,
    answer_text,
    arguments_input,
    assemble,
)

NAME = "tau-bench"
#: tau-bench v1 records OpenAI Chat messages (its files name the format so: ``"format": "openai-chat"``).
CHAT = "openai-chat"
FORMATS = (CHAT, "tau2-bench")
#: The wire of the thinking blocks LiteLLM keeps beside a tau2 message (Anthropic's, signature and all).
THINKING = "anthropic"


@dataclass(slots=True)
class _UserSide:
    """The simulated user's consecutive messages and tool results, merged into one stored message."""

    where: str
    created_at: str | None
    texts: list[str] = field(default_factory=lambda: [])
    calls: list[dict[str, Any]] = field(default_factory=lambda: [])

    def answer(self, m: Mapping[str, Any], text: str) -> bool:
        cid = m.get("id")
        open_calls = [c for c in self.calls if "answer" not in c]
        same = [c for c in open_calls if c.get("call_id") == cid]
        target = same[0] if same else (open_calls[0] if open_calls else None)
        if target is None:
            return False
        target["answer"] = text
        if m.get("error") is True:
            target["is_error"] = True
        return True

    def event(self) -> UserText:
        meta = {"user_tool_calls": self.calls} if self.calls else None
        return UserText("\n\n".join(t for t in self.texts if t), self.where, self.created_at, meta)


def _tau2_calls(m: Mapping[str, Any], where: str, warnings: list[str]) -> list[Call]:
    out: list[Call] = []
    calls = m.get("tool_calls") or []
    if not isinstance(calls, list):
        raise WireError(f"tau2 message: {where}.tool_calls is {kind_of(calls)}, not a list")
    for k, tc in enumerate(calls):
        if not isinstance(tc, Mapping) or not isinstance(tc.get("name"), str):
            raise WireError(f"tau2 message: {where}.tool_calls[{k}] has no name")
        value, problem = arguments_input(tc.get("arguments"))
        if problem:
            warnings.append(f"{where}.tool_calls[{k}]: {problem}")
        cid = tc.get("id")
        out.append(Call(str(tc["name"]), value, cid if isinstance(cid, str) and cid else None))
    return out


def _thinking(m: Mapping[str, Any]) -> list[Reasoning]:
    """The Anthropic thinking blocks LiteLLM kept beside a tau2 message, as reasoning pieces (whole)."""
    raw = m.get("raw_data")
    if not isinstance(raw, Mapping):
        return []
    msg = raw.get("message")
    blocks = raw.get("thinking_blocks")
    if not blocks and isinstance(msg, Mapping):
        psf = msg.get("provider_specific_fields")
        blocks = (psf.get("thinking_blocks") if isinstance(psf, Mapping) else None) or msg.get(
            "thinking_blocks"
        )
    form = get_wire(THINKING).importing
    piece = form.reasoning_piece if form is not None else None
    if isinstance(blocks, list) and piece is not None:
        return [piece(b) for b in blocks if isinstance(b, Mapping)]
    return []


def tau2_events(msgs: Sequence[Any], warnings: list[str]) -> tuple[list[Event], int]:
    """The events of tau2 messages, and how many calls the simulated user made (kept aside)."""
    events: list[Event] = []
    user: _UserSide | None = None
    user_calls = 0
    for i, raw in enumerate(msgs):
        where = f"messages[{i}]"
        if not isinstance(raw, Mapping):
            raise WireError(f"tau2 message: {where} is {kind_of(raw)}, not an object")
        m = cast(Mapping[str, Any], raw)
        role, ts = m.get("role"), m.get("timestamp")
        ts = ts if isinstance(ts, str) else None
        text = m.get("content") if isinstance(m.get("content"), str) else ""
        if role == "user" or (role == "tool" and m.get("requestor") == "user"):
            if user is None:
                user = _UserSide(where, ts)
            if role == "user":
                user.texts.append(str(text))
                for c in _tau2_calls(m, where, warnings):
                    user.calls.append({"name": c.name, "input": c.input, "call_id": c.call_id})
                    user_calls += 1
            elif not user.answer(m, str(text)):
                warnings.append(f"{where}: an answer to no call of the simulated user; not kept")
            continue
        if user is not None:
            events.append(user.event())
            user = None
        if role == "assistant":
            parts: list[SaidPart] = [*_thinking(m)]
            if text:
                parts.append(str(text))
            parts.extend(_tau2_calls(m, where, warnings))
            events.append(AgentSaid(parts, where, None, ts))
        elif role == "tool":
            answer, _ = answer_text(m.get("content"))
            cid = m.get("id")
            res = Result(answer, cid if isinstance(cid, str) else None, None, m.get("error") is True, where)
            events.append(Answers([res], where))
        elif role == "system":
            warnings.append(f"{where}: a system message inside a tau2 simulation is not kept")
        else:
            raise WireError(f"tau2 message: {where}.role is {role!r}; expected assistant, user or tool")
    if user is not None:
        events.append(user.event())
    return events, user_calls


def _is_tau2(msgs: Sequence[Any]) -> bool:
    return any(isinstance(m, Mapping) and ("turn_idx" in m or "requestor" in m) for m in msgs[:6])


#: ``(record, id, format, messages, many)``: one conversation found in a file.
Found = tuple[Record, str, str, Sequence[Any], bool]


def _simulations(rec: Record, v: Mapping[str, Any], stem: str) -> list[Found]:
    """A tau2 results file: ``simulations``, each with its ``messages``."""
    out: list[Found] = []
    for k, sim in enumerate(v["simulations"]):
        if isinstance(sim, Mapping) and isinstance(sim.get("messages"), list):
            sid = sim.get("id")
            cid = sid if isinstance(sid, str) and sid else f"{stem}-{k}"
            out.append((rec, cid, "tau2-bench", sim["messages"], True))
    return out


def _trajectories(rec: Record, v: list[Any]) -> list[Found]:
    """A tau-bench v1 results file: a list of tasks, each with its Chat ``traj``."""
    return [
        (rec, f"task{traj.get('task_id', k)}-trial{traj.get('trial', 0)}", CHAT, traj["traj"], True)
        for k, traj in enumerate(v)
        if isinstance(traj, Mapping) and isinstance(traj.get("traj"), list)
    ]


def _messages_record(rec: Record, v: Mapping[str, Any], stem: str, many: bool) -> Found:
    """One conversation as ``messages`` (a dev.jsonl line): its ``format`` when given, else sniffed."""
    msgs = v["messages"]
    given = v.get("format")
    fmt = str(given) if given in FORMATS else ("tau2-bench" if _is_tau2(msgs) else CHAT)
    sid = v.get("id")
    own = sid if isinstance(sid, str) and sid and not many else None
    return (rec, own or (f"{stem}-{rec.line}" if many else stem), fmt, msgs, many)


def _conversations(doc: Document) -> list[Found]:
    """Every conversation in ``doc``."""
    out: list[Found] = []
    many = doc.kind == "jsonl"
    for rec in doc.records:
        v = rec.value
        if isinstance(v, Mapping) and isinstance(v.get("simulations"), list):
            out.extend(_simulations(rec, v, doc.path.stem))
        elif isinstance(v, list):
            out.extend(_trajectories(rec, v))
        elif isinstance(v, Mapping) and isinstance(v.get("messages"), list):
            out.append(_messages_record(rec, v, doc.path.stem, many))
    return out


def sniff(doc: Document) -> str | None:
    """None when ``doc`` holds tau-bench trajectories, else why not."""
    if doc.not_json is not None:
        return doc.not_json
    first = doc.records[0]
    where = f"line {first.line}: " if first.line is not None else ""
    v = first.value
    if isinstance(v, Mapping):
        if isinstance(v.get("simulations"), list):
            return None
        if v.get("format") in FORMATS and isinstance(v.get("messages"), list):
            return None
        if isinstance(v.get("messages"), list) and _is_tau2(v["messages"]):
            return None
        return f"{where}no 'format' (openai-chat or tau2-bench), no 'simulations', no tau2 messages"
    if isinstance(v, list) and v and isinstance(v[0], Mapping) and isinstance(v[0].get("traj"), list):
        return None
    return f"{where}{kind_of(v)} without 'traj' lists (tau-bench v1) or 'simulations' (tau2)"


def read(doc: Document, conversation: str | None) -> Reading:
    """Every trajectory of ``doc`` (``conversation``: see :func:`pick`)."""
    found: list[History] = []
    notes: list[str] = []
    left_out = 0
    convs = _conversations(doc)
    for rec, cid, fmt, msgs, _ in convs:
        if conversation is not None and cid != conversation and len(convs) > 1:
            continue
        try:
            if fmt == "tau2-bench":
                warns: list[str] = []
                events, n_user = tau2_events(msgs, warns)
                h = assemble(events, conversation_id=cid, warnings=warns)
            else:
                parse = get_wire(CHAT).parse_request
                assert parse is not None, f"the {CHAT} wire parses no requests"
                h = parse(list(msgs))
                n_user = 0
        except WireError as exc:
            raise ImportFormatError(f"{doc.at(rec)}: conversation {cid}: {exc}") from None
        if n_user:
            left_out += n_user
            notes.append(
                f"{doc.at(rec)}: conversation {cid}: {n_user} calls by the simulated user kept in the user "
                "messages' meta (user_tool_calls), not replayed as the agent's (design 11)"
            )
        found.append(replace(h, id=cid, warnings=tuple(f"{doc.at(rec)}: {w}" for w in h.warnings)))
    many = len(convs) > 1 or any(c[4] for c in convs)
    picked = pick(doc, found, conversation, many=many)
    return Reading(picked, tuple(broken_warnings(doc) + notes), left_out)


FORMAT = Format(NAME, "tau-bench / tau2-bench trajectories (dev.jsonl lines, v1 results, tau2 simulations)",
                sniff, read)  # fmt: skip

"""Real agents through ``toolreplay proxy --route``: the agent speaks its own wire, the proxy translates
each request for another vessel, and the double answers on that vessel's wire, with that provider's
rules (design 47, docs/real-agents.md "Routed runs").

* :data:`TARGETS`: the vessels a route can name here, each a built-in profile (its id policy, flags,
  key variable) pointed at the double under ``/vessel/<built-in>`` so the double applies that provider's
  rules (Moonshot's thinking mode, Gemini 3's signatures, Anthropic's thinking blocks, OpenAI's ids).
* :func:`routed_proxy`: the :class:`~agentlib.Middle` running the proxy with a routes file, the vessels
  file and the vessels' own (fake) keys; :func:`write_routes` rewrites the routes file between runs.
* :func:`for_route`: the double's responder for a routed run: the agent's own tools, read from the
  upstream's wire, and reasoning that names its issuer, so a test can tell whose reasoning went where.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlib.agents import TASK
from agentlib.harness import ROOT, Middle
from agentlib.responders import DONE, PLANS, SIDE, THOUGHT, Step, answered, declared
from agentlib.runner import DOUBLE_PORT
from toolreplay._vessels import BUILTIN
from toolreplay.testing import Call, Calls, Item, ProviderDouble, RecordedRequest, Text
from toolreplay.wires import get_wire

#: The port the proxy listens on inside the namespace.
PROXY_PORT = 18083


@dataclass(frozen=True, slots=True)
class Target:
    """A vessel of the routed runs: ``builtin``, the profile it copies (and the ``/vessel/`` name the
    double reads its rules by), and the model the route asks for."""

    name: str
    builtin: str
    model: str

    @property
    def wire(self) -> str:
        return BUILTIN[self.builtin].wire

    @property
    def key_env(self) -> str:
        return BUILTIN[self.builtin].key_env or ""


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("kimi-double", "kimi", "kimi-k2-thinking"),  # thinking on: reasoning_content required back
        Target("gemini3-double", "gemini", "gemini-3-pro-preview"),  # signatures required on its calls
        Target("anthropic-double", "anthropic", "claude-sonnet-4-5"),
        Target("chat-double", "openai", "gpt-4.1"),  # OpenAI's own rules: call ids of at most 40
    )
}
#: The key each vessel's variable holds in the proxy's environment (never the agent's own key).
VESSEL_KEY = "toolreplay-vessel-key-{name}"


def _toml(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, frozenset | list | tuple):
        return "[" + ", ".join(_toml(v) for v in sorted(value)) + "]"
    return str(value)


def _row(t: Target) -> str:
    v = BUILTIN[t.builtin]
    suffix = get_wire(v.wire).http
    base = f"http://127.0.0.1:{DOUBLE_PORT}/vessel/{t.builtin}{suffix.base_suffix if suffix else ''}"
    fields: dict[str, object] = {
        "wire": v.wire, "base_url": base, "model": t.model, "key_env": v.key_env or "",
        "id_policy": v.id_policy, "flags": v.flags, "signature_models": v.signature_models,
        "cache_breakpoints": v.cache_breakpoints,
    }  # fmt: skip
    if v.max_id_len is not None:
        fields["max_id_len"] = v.max_id_len
    if v.context_tokens is not None:
        fields["context_tokens"] = v.context_tokens
    return f"[vessels.{t.name}]\n" + "".join(f"{k} = {_toml(x)}\n" for k, x in fields.items())


def write_vessels(path: Path) -> Path:
    """A vessels.toml with every :data:`TARGETS` vessel, each its built-in's profile on the double."""
    path.write_text("\n".join(_row(t) for t in TARGETS.values()), encoding="utf-8")
    return path


def write_routes(path: Path, target: str, match: str = "*") -> Path:
    """A routes file sending every model matching ``match`` (any wire) to the vessel ``target``."""
    path.write_text(f'[[route]]\nmatch = "{match}"\nvessel = "{TARGETS[target].name}"\n', encoding="utf-8")
    return path


#: Unrouted requests pass through to the double on the agent's own wire (a test sees them there).
UPSTREAMS = ("anthropic={double}", "openai-chat={double}/v1", "openai-responses={double}/v1",
             "gemini={double}/v1beta")  # fmt: skip


def routed_proxy(tmp: Path, routes: Path, db: Path | None = None) -> Middle:
    """The proxy between agent and double: ``--routes routes``, recording into ``db`` (``tmp/routed.db``),
    a JSON line per request in ``tmp/proxy.log``, the vessels of :data:`TARGETS` and their keys."""
    vessels = write_vessels(tmp / "vessels.toml")
    argv = [sys.executable, "-m", "toolreplay", "proxy", "-p", str(PROXY_PORT), "--quiet"]
    argv += ["--db", str(db or tmp / "routed.db"), "--log", str(tmp / "proxy.log"), "--routes", str(routes)]
    for u in UPSTREAMS:
        argv += ["--upstream", u]
    env = {"PYTHONPATH": str(ROOT / "src"), "TOOLREPLAY_VESSELS": str(vessels)}
    env.update({t.key_env: VESSEL_KEY.format(name=t.name) for t in TARGETS.values()})
    return Middle(argv, PROXY_PORT, env)


#: The calls each later turn of a conversation makes (turn 1 is the agent's plan): read the file back.
def turn_plan(agent: str, turn: int) -> tuple[Step, ...]:
    plan = PLANS[agent.split("-")[0]]
    return plan if turn == 1 else plan[-1:]


def reasoning_of(issuer: str, turn: int, step: int) -> str:
    """The reasoning the double's ``issuer`` (its ``/vessel/`` name) gives at ``step`` of ``turn``."""
    return f"{THOUGHT} [{issuer}, turn {turn}, step {step}]"


def issuer_in(text: str) -> str | None:
    """The issuer :func:`reasoning_of` wrote into ``text`` (None: not reasoning of the double's)."""
    if not text.startswith(THOUGHT + " ["):
        return None
    return text[len(THOUGHT) + 2 :].split(",", 1)[0]


@dataclass(frozen=True, slots=True)
class RoutedResponder:
    """The plan of ``turn`` (the earlier turns' calls already answered in the history), whatever wire the
    request arrives on; reasoning names its issuer. ``log`` as :class:`agentlib.responders.TaskResponder`."""

    plan: Sequence[Step]
    work: str
    turn: int
    before: int
    log: list[tuple[int, str]]
    numbers: dict[int, int] = field(default_factory=lambda: {})

    def number(self, req: RecordedRequest) -> int:
        """The number the double gives its answer to ``req`` (in its ids and signatures): the plan's
        step, never the arrival order, which a side request racing the main loop changes from run to
        run (opencode's title). Side answers, which no later request carries, are all 0."""
        return self.numbers.get(req.index, 0)

    def __call__(self, req: RecordedRequest) -> Item:
        body = req.body if isinstance(req.body, Mapping) else {}
        tools = declared(req.wire or "", body)
        task = TASK in req.raw.decode("utf-8", "replace")
        if not (tools and task and all(s.tool in tools for s in self.plan)):
            self.log.append((req.index, "side"))
            return Text(SIDE)
        k = answered(req.wire or "", body) - self.before
        self.log.append((req.index, f"main {k}"))
        self.numbers[req.index] = 100 * self.turn + k + 1
        thought = reasoning_of(req.vessel or req.wire or "", self.turn, k)
        if k >= len(self.plan):
            return Text(DONE, reasoning=thought)
        if k < 0:  # the history lost answers of an earlier turn: say so where the test shows it
            return Text(f"harness: {-k} answer(s) of earlier turns missing")
        step = self.plan[k]
        args = step.input(self.work)
        unknown = sorted(set(args) - set(tools[step.tool].get("properties") or {}))
        if unknown:
            return Text(f"harness: {step.tool} has no parameter {', '.join(unknown)}")
        return Calls([Call(step.tool, args)], reasoning=thought)


class NumberedDouble(ProviderDouble):
    """The double with its answers numbered by the responder (:meth:`RoutedResponder.number`) rather
    than in arrival order, so two runs of one task get the same call ids and signatures from it and
    the upstream bytes can be compared. It sets the double's counter just before the answer is built
    (the one place the number is taken), one answer at a time."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._numbering = threading.Lock()

    def _answer(self, item: Any, wire: str, model: str, req: RecordedRequest) -> Any:
        number = getattr(self.responder, "number")  # noqa: B009 - the runner checked it is there
        with self._numbering:
            self._seq = number(req) - 1
            return super()._answer(item, wire, model, req)


def for_route(agent: str, work: str, turn: str = "1") -> RoutedResponder:
    """The responder of turn ``turn`` (a string: it comes through the runner's JSON spec)."""
    n = int(turn)
    before = sum(len(turn_plan(agent, t)) for t in range(1, n))
    return RoutedResponder(turn_plan(agent, n), work, n, before, [])


__all__ = [
    "PROXY_PORT",
    "TARGETS",
    "NumberedDouble",
    "Target",
    "for_route",
    "issuer_in",
    "reasoning_of",
    "routed_proxy",
    "turn_plan",
    "write_routes",
    "write_vessels",
]

"""Real agents on another provider's wire through ``toolreplay proxy --routes`` (issue 26, design 47).

Each agent CLI (the harness of docs/real-agents.md: npm pins, a loopback-only namespace) speaks its own
wire to the proxy; a routes file sends every model to a vessel whose profile is a built-in one pointed at
the double (``agentlib.routed.TARGETS``), so the double answers on that provider's wire with that
provider's rules and refusal texts: Moonshot's thinking mode (``reasoning_content`` back on every
assistant tool-call message), Gemini 3's signatures, Anthropic's thinking blocks, OpenAI's call ids.
The double calls the agent's own tools, read from the upstream's wire.

Checked per route, on two runs of the task: the task is done with every upstream request accepted;
every earlier call travels as a call in the upstream's shape; reasoning reaches only its issuer (each
piece names the double's vessel that gave it; no token of the proxy's reaches a provider); the second
run's upstream bytes are the first's. Then Claude Code on one conversation routed Kimi, Anthropic, Kimi
again (``claude --continue``, the routes file rewritten between turns): each upstream gets only its own
reasoning back. And each agent on a route of the command line (``--route``) to a vessel of another
wire, with or without thinking: the task done, every upstream request within its provider's rules, no
token of ours upstream. Without npm or the agents these skip with the reason (fail under ``CI=true``).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentlib import AgentRun, AgentUnavailable, Middle, SentRequest, load_capture, run_agent
from agentlib.fixtures import unavailable
from agentlib.responders import PLANS
from agentlib.routed import TARGETS, Target, issuer_in, reasoning_of, routed_proxy, turn_plan, write_routes
from agentlib.runner import DOUBLE_PORT
from agentlib.upstream import carried, tokens_in
from toolreplay._vessels import BUILTIN
from toolreplay.wires import get_wire

pytestmark = pytest.mark.slow

#: The routes of the issue: (agent, the vessel its every model is routed to).
ROUTES = (
    ("claude", "kimi-double"),
    ("claude", "gemini3-double"),
    ("claude", "chat-double"),
    ("codex", "anthropic-double"),
    ("opencode-chat", "gemini3-double"),
    ("opencode-chat", "anthropic-double"),
    ("gemini", "chat-double"),
)
IDS = [f"{a}->{t}" for a, t in ROUTES]
#: The upstreams that think, so their answers carry reasoning the next request must give back to them.
THINKS = {"kimi-double", "gemini3-double", "anthropic-double"}

#: What an agent's own requests vary from run to run, as it reaches the upstream: Codex's shell tool
#: reports a random chunk id and the wall time of each command in its output. Nothing else is varied
#: (Claude Code's session id rides in metadata.user_id, which no routed wire is sent).
AGENT_VARIES = (
    (re.compile(rb"Chunk ID: [0-9a-f]+"), b"Chunk ID: <per run>"),
    (re.compile(rb"Wall time: [0-9.]+ seconds"), b"Wall time: <per run> seconds"),
)


def _run(agent: str, root: Path, target: str, args: Sequence[str] = (), turn: int = 1) -> AgentRun:
    """One run of ``agent`` routed to ``target``, in ``root`` (its home, work folder and store);
    ``args``: more for the agent's command line; ``turn``: the conversation's turn it is."""
    routes = write_routes(root / "routes.toml", target)
    try:
        return run_agent(
            agent,
            root,
            via=routed_proxy(root, routes),
            responder="agentlib.routed:for_route",
            responder_args=[str(turn)],
            args=args,
        )
    except AgentUnavailable as exc:
        unavailable(str(exc))
        raise


@dataclass(frozen=True, slots=True)
class Routed:
    agent: str
    target: Target
    runs: tuple[AgentRun, AgentRun]


def _twice(agent: str, target: str, root: Path) -> Routed:
    """The task run twice in the same folder (the same paths in the agent's prompt), each from nothing:
    a fresh home, work folder and store."""
    runs = []
    for _ in range(2):
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        runs.append(_run(agent, root, target))
    return Routed(agent, TARGETS[target], (runs[0], runs[1]))


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Routed]:
    """Each route's two runs, made once for every test of the module that asks for them."""
    done: dict[tuple[str, str], Routed] = {}

    def get(agent: str, target: str) -> Routed:
        if (agent, target) not in done:
            done[(agent, target)] = _twice(agent, target, tmp_path_factory.mktemp(f"{agent}-{target}"))
        return done[(agent, target)]

    return get


def _posts(run: AgentRun) -> list[SentRequest]:
    return [r for r in run.requests if r.method == "POST"]


def _model(r: SentRequest) -> str:
    """The model a request names: its body's, or (Gemini) its path's."""
    found = re.search(r"/models/([^/:]+):", r.path)
    return found.group(1) if found else str((r.body or {}).get("model"))


@pytest.mark.parametrize(("agent", "target"), ROUTES, ids=IDS)
def test_a_routed_agent_completes_its_task_and_the_upstream_accepts_every_request(
    agent: str, target: str, routed: Callable[[str, str], Routed]
) -> None:
    got = routed(agent, target)
    for run in got.runs:
        run.check_completed()  # exit 0, notes.txt holds hello, nothing refused, nothing beyond loopback
        for r in _posts(run):  # every request went to the routed vessel, in its wire, for its model
            assert r.wire == got.target.wire and r.path.startswith(f"/vessel/{got.target.builtin}/"), r.path
            assert r.status == 200 and r.rejected is None, run.report()
            assert _model(r) == got.target.model, run.report()


@pytest.mark.parametrize(("agent", "target"), ROUTES, ids=IDS)
def test_every_earlier_call_travels_as_a_call_in_the_upstreams_shape(
    agent: str, target: str, routed: Callable[[str, str], Routed]
) -> None:
    got = routed(agent, target)
    plan = [s.tool for s in PLANS[agent.split("-")[0]]]
    for run in got.runs:
        for r in run.main:
            k = int(r.role.split()[1])
            c = carried(got.target.wire, r.body)
            # the k calls made so far, each as a call of this wire under the agent's tool name, answered
            assert [name for _, name in c.calls] == plan[:k], (r.role, c)
            answered = [cid or name for cid, name in c.calls]
            assert c.results == answered, (r.role, c)


#: How every signature the double gives starts (base64 of ``toolreplay-double:``): the agent is shown the
#: proxy's own tokens in their place, never these.
UPSTREAM_SIGNED = "dG9vbHJlcGxheS1kb3VibGU6"


def _thought(target: Target, r: SentRequest) -> bool:
    """Whether the double thought for request ``r`` (so its answer carried reasoning), by the double's
    own rule: the vessel's profile, the model and the body's thinking setting (design 32)."""
    double = get_wire(target.wire).double
    assert double is not None
    return double().thinks(BUILTIN[target.builtin], _model(r), r.body)


def issued(run: AgentRun, target: Target, turn: int = 1) -> dict[int, str]:
    """The reasoning ``target`` gave with its answer to each main-loop step of ``run``, by step."""
    steps = {int(r.role.split()[1]): r for r in run.main}
    return {k: reasoning_of(target.builtin, turn, k) for k, r in steps.items() if _thought(target, r)}


@pytest.mark.parametrize(("agent", "target"), ROUTES, ids=IDS)
def test_reasoning_reaches_only_its_issuer(
    agent: str, target: str, routed: Callable[[str, str], Routed]
) -> None:
    got = routed(agent, target)
    for run in got.runs:
        for r in _posts(run):
            assert tokens_in(r.body) == [], f"{r.role}: the proxy's tokens reached the provider"
        # nor does an upstream's signature reach the agent: what it keeps of its session holds none
        assert not _held(run.home, UPSTREAM_SIGNED), f"{agent} holds a signature the double gave"
        gave = issued(run, got.target)
        assert (got.target.name in THINKS) == bool(gave), gave  # the thinking upstreams thought
        for r in run.main:
            k = int(r.role.split()[1])
            c = carried(got.target.wire, r.body)
            foreign = [t for t in c.reasoning if issuer_in(t) != got.target.builtin]
            assert foreign == [], f"{r.role}: reasoning another issuer gave reached {got.target.name}"
            own = [piece for step, piece in sorted(gave.items()) if step < k]
            assert set(c.reasoning) <= set(own), (r.role, c.reasoning)  # its own, nobody else's
            if got.target.name == "kimi-double":  # Moonshot refuses a tool-call message without its own
                assert c.reasoning == own, (r.role, c.reasoning)


CLAUDE_THINKING = [(a, t) for a, t in ROUTES if a == "claude" and t in THINKS]


@pytest.mark.parametrize(("agent", "target"), CLAUDE_THINKING, ids=[f"{a}->{t}" for a, t in CLAUDE_THINKING])
def test_claude_code_never_has_the_reasoning_it_asked_to_omit(
    agent: str, target: str, routed: Callable[[str, str], Routed]
) -> None:
    """Claude Code asks for thinking with ``display: "omitted"`` (its kept capture: the double sees only
    the upstream's wire here), to which Anthropic answers each thinking block with its signature and
    no text. Routed, the upstream's reasoning still goes back to the upstream, from the store, and the
    agent, whose session files keep every block it was sent, never holds its text."""
    asked = load_capture("claude").main[0].body["thinking"]
    assert asked["type"] == "enabled" and asked.get("display") == "omitted", asked
    got = routed(agent, target)
    for run in got.runs:
        pieces = [reasoning_of(got.target.builtin, 1, j) for j in range(3)]
        held = [p for p in pieces if _held(run.home, p)]
        assert held == [], f"Claude Code's session holds the upstream's reasoning: {held}"


def _held(home: Path, text: str) -> bool:
    needle = text.encode("utf-8")
    return any(needle in p.read_bytes() for p in _files(home))


def _files(folder: Path) -> Iterator[Path]:
    yield from (p for p in folder.rglob("*") if p.is_file())


def _by_role(run: AgentRun) -> dict[str, list[bytes]]:
    """The upstream bodies by what they are (``main K``, ``side``), what the agent varies made even: the
    order of a side request racing the main loop (opencode's title) is the agent's and is not compared."""
    out: dict[str, list[bytes]] = {}
    for r in _posts(run):
        raw = r.raw
        for pattern, even in AGENT_VARIES:
            raw = pattern.sub(even, raw)
        out.setdefault(r.role, []).append(raw)
    return {role: sorted(bodies) for role, bodies in out.items()}


@pytest.mark.parametrize(("agent", "target"), ROUTES, ids=IDS)
def test_a_second_run_renders_byte_identical_upstream_requests(
    agent: str, target: str, routed: Callable[[str, str], Routed]
) -> None:
    first, second = (_by_role(run) for run in routed(agent, target).runs)
    assert sorted(first) == sorted(second)
    for role in first:
        assert first[role] == second[role], f"{role}: the upstream bytes differ between two runs"


# -- one conversation, three upstreams ----------------------------------------------------------------

SWITCH = ("kimi-double", "anthropic-double", "kimi-double")


def test_claude_code_switched_kimi_anthropic_kimi_gives_each_upstream_only_its_own_reasoning(
    tmp_path: Path,
) -> None:
    """One Claude Code conversation, a turn per upstream (``claude --continue`` in the same home, the
    routes file rewritten between turns, one store): no request is refused, every earlier call goes to
    each upstream as a call, and each gets back exactly the reasoning it issued itself, Kimi's first turn
    byte for byte in its third though Anthropic answered between."""
    runs = []
    for turn, target in enumerate(SWITCH, 1):
        run = _run("claude", tmp_path, target, ["--continue"] if turn > 1 else [], turn)
        runs.append(run)
        _check_turn(runs, turn, TARGETS[target])
        log = tmp_path / "proxy.log"  # the next turn's proxy starts a log of its own
        _named_in_the_log(turn, run, [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()])
        log.unlink()


def _named_in_the_log(turn: int, run: AgentRun, log: list[dict[str, object]]) -> None:
    """Nothing left out silently: a turn whose history holds another upstream's reasoning names it left
    out, and a turn the thinking upstream answered without thinking names why (the proxy's log of the
    turn, one line per request)."""
    name = SWITCH[turn - 1]
    routed = [x for x in log if x.get("vessel")]
    assert len(routed) == len(_posts(run)) and all(x["vessel"] == name for x in routed), (turn, log)
    notes = [str(n) for x in routed for n in x.get("notes") or []]  # type: ignore[attr-defined]
    if turn > 1:  # the previous turn's upstream reasoned, and its reasoning stayed out here
        assert any("not replayed" in n for n in notes), (turn, notes)
    if not all(_thought(TARGETS[name], r) for r in run.main):
        assert any("thinking" in n for n in notes), (turn, notes)


def _check_turn(runs: list[AgentRun], turn: int, target: Target) -> None:
    run = runs[-1]
    assert run.exit_code == 0 and not run.rejected and not run.outside, run.report()
    assert len(run.main) >= len(turn_plan("claude", turn)) + 1, run.report()
    plan = [s.tool for t in range(1, turn + 1) for s in turn_plan("claude", t)]
    last = run.main[-1]
    c = carried(target.wire, last.body)
    assert [name for _, name in c.calls] == plan and c.results == [i for i, _ in c.calls], run.report()
    assert all(tokens_in(r.body) == [] for r in run.requests), run.report()
    foreign = [t for t in c.reasoning if issuer_in(t) != target.builtin]
    assert foreign == [], f"turn {turn}: reasoning another issuer gave reached {target.name}"
    # only reasoning this upstream gave, in this conversation's earlier turns or this one's steps
    own = {
        p
        for t, run_t in enumerate(runs, 1)
        if SWITCH[t - 1] == target.name
        for p in issued(run_t, target, t).values()
    }
    assert set(c.reasoning) <= own, (c.reasoning, own)
    if target.name == "kimi-double":  # Moonshot: its own reasoning on each of its tool-call messages
        with_calls = [
            p
            for t, run_t in enumerate(runs, 1)
            if SWITCH[t - 1] == target.name
            for k, p in sorted(issued(run_t, target, t).items())
            if k < len(turn_plan("claude", t))
        ]
        assert [p for p in c.reasoning if p in with_calls] == with_calls, (c.reasoning, with_calls)


# -- one route per run, on the proxy's command line ----------------------------------------------------
# Each agent through ``toolreplay proxy --route`` to a vessel on the double's ``/vessel/NAME`` paths,
# every other wire passed through to the double: the task completes, every upstream request passes the
# upstream double's provider rules (the last one carries both earlier calls as calls and, from a model
# that thinks, its own reasoning for each), no token of ours reaches the upstream.

ROOT = Path(__file__).resolve().parent.parent
PORT = 18083
DOUBLE = f"http://127.0.0.1:{DOUBLE_PORT}"
UPSTREAMS = ("anthropic={double}", "openai-chat={double}/v1", "openai-responses={double}/v1",
             "gemini={double}/v1beta", "ollama={double}")  # fmt: skip
#: (agent, its wire, the route, the vessel's upstream wire, whether the upstream's model thinks).
CLI_ROUTES = [
    ("claude", "anthropic", "claude-*=kimi:kimi-k2-thinking", "openai-chat", True),
    ("claude", "anthropic", "claude-*=gemini:gemini-3-pro-preview", "gemini", True),
    ("claude", "anthropic", "claude-*=openai:gpt-4.1", "openai-chat", False),
    ("codex", "openai-responses", "openai-responses:*=anthropic:claude-sonnet-4-5", "anthropic", True),
    ("codex", "openai-responses", "openai-responses:*=kimi:kimi-k2-thinking", "openai-chat", True),
    ("codex", "openai-responses", "openai-responses:*=gemini:gemini-3-pro-preview", "gemini", True),
    ("opencode-anthropic", "anthropic", "anthropic:*=kimi:kimi-k2-thinking", "openai-chat", True),
    ("opencode-chat", "openai-chat", "openai-chat:*=anthropic:claude-sonnet-4-5", "anthropic", True),
    ("opencode-chat", "openai-chat", "openai-chat:*=gemini:gemini-3-pro-preview", "gemini", True),
    ("gemini", "gemini", "gemini:*=kimi:kimi-k2-thinking", "openai-chat", True),
    ("gemini", "gemini", "gemini:*=openai:gpt-4.1", "openai-chat", False),
]


def _proxy(tmp: Path, route: str, vessel: str) -> Middle:
    """The proxy with the route, the vessel pointed at the double (its profile's URL: no key is needed
    on loopback), every other wire passed through to the double."""
    vessels = tmp / "vessels.toml"
    suffix = get_wire(BUILTIN[vessel].wire).http.base_suffix  # type: ignore[union-attr]
    vessels.write_text(
        f'[vessels.{vessel}]\nbase_url = "{DOUBLE}/vessel/{vessel}{suffix}"\n', encoding="utf-8"
    )
    argv = [sys.executable, "-m", "toolreplay", "proxy", "-p", str(PORT), "--db", str(tmp / "agents.db")]
    argv += ["--log", str(tmp / "proxy.log"), "--route", route]
    for u in UPSTREAMS:
        argv += ["--upstream", u]
    env = {"PYTHONPATH": str(ROOT / "src"), "TOOLREPLAY_VESSELS": str(vessels)}
    return Middle(argv, PORT, env)


@pytest.mark.parametrize(
    ("agent", "wire", "route", "upstream", "thinks"),
    CLI_ROUTES,
    ids=[f"{c[0]}-{c[2].split('=')[1]}" for c in CLI_ROUTES],
)
def test_a_real_agent_completes_its_task_on_another_wires_model(
    agent: str, wire: str, route: str, upstream: str, thinks: bool, real_agent: Callable[..., AgentRun],
    tmp_path: Path,
) -> None:  # fmt: skip
    vessel = route.split("=", 1)[1].split(":")[0]
    run = real_agent(agent, via=_proxy(tmp_path, route, vessel))
    run.check_completed()
    routed = [r for r in run.requests if r.method == "POST" and f"/vessel/{vessel}/" in r.path]
    assert routed and all(r.wire == upstream for r in routed), run.report()
    main = [r for r in routed if r.role.startswith("main")]
    assert len(main) >= 3, run.report()
    # the last main-loop request carries both earlier calls as calls (the double's rules refuse them
    # otherwise) and, from a model that thinks, its own reasoning for each (which the agent, not asked
    # to show it or unable to carry it, may never have had)
    assert main[-1].role == "main 2", run.report()
    if thinks:
        assert main[-1].raw.count(b"The user wants notes.txt with hello") >= 2, run.report()
    assert not [r for r in routed if b"toolreplay.r1." in r.raw], run.report()
    logged: list[dict[str, Any]] = [json.loads(x) for x in (tmp_path / "proxy.log").read_text().splitlines()]
    assert {e.get("vessel") for e in logged if e.get("route")} == {vessel}, logged

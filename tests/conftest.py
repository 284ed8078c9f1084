"""Shared test set-up: no live network, the shared material, hypothesis profiles.

* Tests never reach the internet: any socket connection to an address outside loopback fails the test.
  Live provider tests (marker ``live``) run only with ``TOOLREPLAY_LIVE=1`` and a key set.
* ``http`` is one HTTP client for the tests that post to a double themselves: each ``httpx.post`` would
  make a client and load the CA bundle again (~25 ms of CPU, more than the request to a double).
  ``helpers_common.HTTP`` is the same without keep-alive, for a test whose requests each need their own
  connection, as ``httpx.post`` gives.
* ``shared_dir`` is the shared material: the providers' specs, real chat templates and recorded
  transcripts, kept outside the repository in the directory ``$TOOLREPLAY_SHARED`` names (by default
  ``shared`` next to the checkout); tests that need it skip
  with a clear reason when it is absent (a user's clone). Under CI (``CI`` set) its absence fails the run
  before any test: the validation against the providers' specs must not go quietly green.
"""

from __future__ import annotations

import collections
import ipaddress
import itertools
import json
import os
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, settings

# leak_guard: fake keys for every provider, and the search for a leaked piece of one after each test
pytest_plugins = ["leak_guard", "pytester", "agentlib.fixtures"]

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "src" / "toolreplay" / "data" / "demo.json"

settings.register_profile(
    "default", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# scripts/dev.py test --quick: every property still runs, on fewer examples
settings.register_profile(
    "quick", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))


def examples(n: int) -> int:
    """A property's own example count: ``n`` under the full profiles, the same share of the quick one's 10
    under ``--quick`` (a count set on the test would otherwise override the profile there)."""
    per = settings().max_examples
    return n if per >= 100 else max(per, n * per // 100)


def _shared() -> Path | None:
    env = os.environ.get("TOOLREPLAY_SHARED")
    path = Path(env) if env else ROOT.parent / "shared"
    return path if path.is_dir() else None


SHARED = _shared()
NO_SHARED = (
    "the shared material ($TOOLREPLAY_SHARED) is absent (a user's clone): "
    "the spec, template and transcript tests need it"
)


def shared_missing_in_ci(shared: Path | None, env: Mapping[str, str]) -> str | None:
    """The line that fails a CI run without the shared material (None when it is there or not in CI)."""
    if shared is not None or not env.get("CI"):
        return None
    where = env.get("TOOLREPLAY_SHARED") or str(ROOT.parent / "shared")
    return (
        f"CI needs the shared material at {where} (not found): without it the spec and transcript "
        "tests would skip and the run would pass without checking anything against the providers' specs"
    )


#: Tests of the full tier only (design 26) that carry no ``slow`` mark of their own: each waits on real
#: time or a real process (a retry's backoff, a hung provider's timeout, a subprocess server, a lab run),
#: about a second or more apiece, while a faster test of the same module stays in the quick tier. A node id
#: prefix: a file, a test, or a test with its parameters.
WAITS: tuple[str, ...] = (
    "test_turn_sent_nothing.py::",  # the real retry backoff (about 5 s of sleeping)
    "test_turn_deadline.py::",  # 1 s deadlines, twice over
    "test_handoff_transcripts.py::",  # every dev transcript on every vessel; test_handoff stays quick
    "test_faults.py::test_a_provider_hung_every_time_is_surfaced",
    "test_faults.py::test_a_hung_provider_times_out_and_is_retried",
    "test_transport_doubles.py::test_hung_connection_times_out_after_retries",
    "test_acceptance.py::test_a_429_with_retry_after_is_retried",
    "test_template_sandbox.py::test_hostile_templates_end_in_one_line[nested loops]",
    "wires/claude_prompt/test_claude_cli.py::test_claude_turn_records_the_calls_it_reports",
    "test_lab_budget.py::test_the_command_says_the_budget_stopped_it",
    "test_lab.py::test_resume_after_a_stop_and_a_cut_line",
    "test_double_limits.py::test_headers_not_complete_in_time",
    "test_double_limits.py::test_workers_are_bounded",
    "test_proxy_hostile.py::test_an_upstream_that_is_down_or_silent_gets_502_or_504",
    # a process each; test_import_graph checks the whole graph in the quick tier
    "test_model.py::test_the_new_modules_are_in_no_import_cycle",
    "test_hostile_tool_args.py::test_mcp_gives_an_error_result_not_a_protocol_error",
    "test_mcp.py::test_mcp_dry_tools_execute_nothing",  # test_mcp_serves_coop_over_stdio stays quick
    "test_dump_numbering.py::test_parallel_processes",
    "test_suite_honesty.py::test_ci_without_shared_fails_before_any_test",
    "test_chat_interrupt.py::",
    # a proxy each, over every wire that streams calls in pieces; the Gemini cut stream stays quick
    "test_proxy_hostile.py::test_the_calls_a_broken_stream_finished_are_kept_with_the_interrupted_reply",
    # real connections closed, TLS, slow readers; test_kept_alive_connections_are_reused stays quick
    "test_proxy_upstream.py::test_a_tls_upstream_is_verified_and_served",
    "test_proxy_upstream.py::test_an_upstream_that_closes_a_kept_alive_connection_gets_a_new_one",
    "test_proxy_upstream.py::test_a_large_answer_reaches_an_agent_that_reads_slowly_whole",
)

#: Tests repeated over every wire, vessel, fault or recording, a second or more in all: the quick tier runs
#: each on its first parameter (the full tier on every one), so the edit-test loop keeps one case of each
#: behaviour. A node id without its parameters.
ONCE: frozenset[str] = frozenset({
    "wires/openai_responses/test_bridge_responses.py::test_another_wires_recorded_stream_written_as_responses_is_strict_and_reads_back",
    "test_proxy.py::test_pass_through_is_byte_identical",
    "test_proxy.py::test_two_steps_are_recorded_as_one_reply_with_its_call_answer_and_issuer",
    "test_proxy_hostile.py::test_a_broken_stream_ends_with_the_wires_error_event_and_the_reply_is_kept_interrupted",
    "test_proxy_hostile.py::test_refused_bodies_answer_in_the_wires_shape_and_never_reach_the_upstream",
    "test_wires_stability.py::test_many_messages_render_with_linear_work",
    "test_wires_stability.py::test_appending_never_changes_the_earlier_messages",
    "test_wires_stability.py::test_same_history_same_bytes",
    "test_faults.py::test_surfaced_faults_keep_the_executed_call",
    "test_faults.py::test_retried_faults_finish_the_turn",
    "test_translate_doubles.py::test_an_agents_task_completes_on_another_wire_and_runs_again_byte_for_byte",
    "test_acceptance.py::test_three_turns_closing_todos",
    "test_doubles_strict.py::test_sdk_strict_models_accept_every_answer",
    "test_cache_diff.py::test_ten_turns_through_the_doubles_keep_the_prefix",
    "test_agents_as_sent.py::test_an_agents_last_request_is_valid_for_every_vessel_with_its_calls_as_calls",
    "test_proxy_routes_shapes.py::test_anthropics_cache_counts_reach_every_agent_wire_where_it_has_a_place",
})  # fmt: skip

#: Tests run once per recording of the corpus (hundreds of cases of a few milliseconds each, where the
#: runner's own cost per test outweighs the check): the quick tier runs every SAMPLE-th case of each (always
#: the same ones, in collection order); the full tier runs every case. Files, or node ids without their
#: parameters.
SAMPLED: tuple[str, ...] = (
    "test_corpus.py::",
    "test_audit_reasoning.py::test_every_piece_the_body_carries_is_listed_and_nothing_else",
    "test_as_sent.py::test_a_recorded_body_renders_back_as_it_was_sent",
    "test_double_refusals.py::test_the_double_takes_every_body_the_provider_took",
    "test_wire_detection.py::test_import_and_audit_read_the_same_wire",
)
SAMPLE = 4


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    first: set[str] = set()
    seen: collections.Counter[str] = collections.Counter()
    for item in items:
        node = item.nodeid.removeprefix("tests/")
        base = node.split("[", 1)[0]
        sampled = "[" in node and node.startswith(SAMPLED)
        if sampled:
            seen[base] += 1
        if (
            node.startswith(WAITS)
            or (base in ONCE and base in first)
            or (sampled and seen[base] % SAMPLE != 1)
        ):
            item.add_marker(slow)
        elif base in ONCE:
            first.add(base)


def pytest_configure(config: pytest.Config) -> None:
    problem = shared_missing_in_ci(SHARED, os.environ)
    if problem:
        pytest.exit(problem, returncode=1)


@pytest.fixture
def shared_dir() -> Path:
    if SHARED is None:
        pytest.skip(NO_SHARED)
    return SHARED


def load_transcripts() -> list[dict[str, Any]]:
    """Every conversation of ``data/transcripts/dev.jsonl`` in the shared material (empty without it)."""
    if SHARED is None:
        return []
    path = SHARED / "data" / "transcripts" / "dev.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


@pytest.fixture
def demo_path() -> Path:
    return DEMO


def _is_loopback(host: Any) -> bool:
    if not isinstance(host, str):
        return True  # AF_UNIX paths and the like
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_internet(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("live") and os.environ.get("TOOLREPLAY_LIVE") == "1":
        yield
        return
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guard(addr: Any) -> None:
        host = addr[0] if isinstance(addr, tuple) else addr
        if not _is_loopback(host):
            raise RuntimeError(f"tests must not reach the network (tried {addr!r})")

    def connect(self: socket.socket, addr: Any) -> None:
        guard(addr)
        real_connect(self, addr)

    def connect_ex(self: socket.socket, addr: Any) -> int:
        guard(addr)
        return real_connect_ex(self, addr)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield


@pytest.fixture(scope="session")
def _homes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("homes")


@pytest.fixture(autouse=True)
def _leak_home(_homes: Path) -> Path:
    """The test's home directory (config, data, keys file): searched for leaked keys after the test.
    A new name in one folder, made by whatever writes there first (most tests write nothing): not
    ``mktemp("home")``, which numbers a directory by listing every one beside it, so one per test cost a
    time growing with the square of the number of tests (5,600 tests: 14 -> 11.4 CPU-s, 34 -> 18 s)."""
    return _homes / f"home-{next(_HOME_NUMBERS)}"


_HOME_NUMBERS = itertools.count()


@pytest.fixture(autouse=True)
def _isolated_home(_leak_home: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Never touch the user's real database, vessel file or key; every provider has a fake key set
    (``leak_guard``), except in tests marked ``keyless``, which need keys unset."""
    home = _leak_home
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.delenv("TOOLREPLAY_DB", raising=False)
    monkeypatch.delenv("TOOLREPLAY_VESSELS", raising=False)
    monkeypatch.delenv("TOOLREPLAY_KEYS", raising=False)
    from leak_guard import set_fake_keys

    set_fake_keys(monkeypatch, keyless=request.node.get_closest_marker("keyless") is not None)

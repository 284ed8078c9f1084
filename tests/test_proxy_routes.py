"""Model routes (design 47): the ``--route`` and ``--routes FILE`` syntax, their order, and the refusals
that name the file, the route and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from toolreplay._cli import cli
from toolreplay._errors import ConfigError
from toolreplay._proxy.model_routes import check_keys, load_routes, parse_route, pick, routes_from


def test_a_route_names_a_glob_an_optional_wire_a_vessel_and_an_optional_model() -> None:
    r = parse_route("anthropic:claude-*=kimi:kimi-k2-thinking")
    assert (r.match, r.wire, r.vessel.name, r.vessel.model) == (
        "claude-*",
        "anthropic",
        "kimi",
        "kimi-k2-thinking",
    )
    assert r.label() == "anthropic:claude-* -> kimi (kimi-k2-thinking)"
    plain = parse_route(" claude-* = kimi ")
    assert (plain.wire, plain.vessel.model) == (None, "kimi-k2-0905-preview")  # the vessel's own model
    # 'qwen3' is no wire: the whole pattern is a glob on a model name with a colon
    colon = parse_route("qwen3:8b=openai-compatible:Qwen/Qwen3-8B")
    assert (colon.match, colon.wire, colon.vessel.model) == ("qwen3:8b", None, "Qwen/Qwen3-8B")
    assert colon.matches("ollama", "qwen3:8b") and not colon.matches("ollama", "qwen3:4b")


def test_the_first_route_that_matches_wins_the_command_lines_before_the_files(tmp_path: Path) -> None:
    f = tmp_path / "routes.toml"
    f.write_text(
        '[[route]]\nmatch = "claude-*"\nvessel = "anthropic"\n\n'
        '[[route]]\nmatch = "*"\nwire = "openai-chat"\nvessel = "kimi"\nmodel = "kimi-k2-thinking"\n'
    )
    routes = routes_from(["claude-haiku-*=kimi"], f)
    assert [r.where for r in routes] == ["--route 'claude-haiku-*=kimi'", f"{f}: route 1", f"{f}: route 2"]
    assert pick(routes, "anthropic", "claude-haiku-4-5") is routes[0]
    assert pick(routes, "anthropic", "claude-sonnet-4-5") is routes[1]
    assert pick(routes, "openai-chat", "gpt-4.1") is routes[2]
    assert pick(routes, "anthropic", "gpt-4.1") is None  # route 2 is tied to Chat requests
    assert pick(routes, "anthropic", None) is None
    assert pick(routes, "anthropic", "Claude-x") is None  # globs are case-sensitive


def test_a_route_that_is_not_glob_equals_vessel_is_refused() -> None:
    for bad in ("claude-*", "=kimi", "claude-*="):
        with pytest.raises(ConfigError, match=r"give \[WIRE:\]GLOB=VESSEL\[:MODEL\]"):
            parse_route(bad)


def test_an_unknown_vessel_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ConfigError) as got:
        parse_route("claude-*=kimmi")
    assert str(got.value).startswith(
        "--route 'claude-*=kimmi': vessel: unknown vessel 'kimmi'; known vessels:"
    )
    assert "kimi" in str(got.value) and "gemini" in str(got.value)


def test_a_vessel_without_an_http_endpoint_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"vessel: 'claude' runs the Claude Code CLI, not an HTTP endpoint"):
        parse_route("claude-*=claude")


def test_a_wire_that_is_not_served_is_refused_in_the_file(tmp_path: Path) -> None:
    f = tmp_path / "r.toml"
    f.write_text('[[route]]\nmatch = "claude-*"\nwire = "anthropics"\nvessel = "kimi"\n')
    with pytest.raises(ConfigError) as got:
        load_routes(f)
    assert str(got.value).startswith(f"{f}: route 1: wire: 'anthropics' is not a served wire; served wires:")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[route]]\nvessel = "kimi"\n', "route 1: match: missing"),
        ('[[route]]\nmatch = "x"\n', "route 1: vessel: missing"),
        ('[[route]]\nmatch = 3\nvessel = "kimi"\n', "route 1: match: must be a string, not int"),
        (
            '[[route]]\nmatch = "x"\nvessel = "kimi"\nmodle = "k"\n',
            "route 1: unknown field(s) modle; known: match",
        ),
        ("[routes]\nx = 1\n", "unknown table(s) routes; a routes file holds [[route]] tables"),
        ('route = "x"\n', "route must be an array of tables"),
        ("[[route]\n", "not TOML"),
    ],
)
def test_a_bad_routes_file_names_the_file_the_route_and_the_field(
    tmp_path: Path, text: str, said: str
) -> None:
    f = tmp_path / "routes.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as got:
        load_routes(f)
    assert str(got.value).startswith(f"{f}: ") and said in str(got.value)


def test_a_missing_routes_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the routes file"):
        load_routes(tmp_path / "none.toml")


@pytest.mark.keyless
def test_a_routed_vessel_without_its_key_is_refused_at_the_start() -> None:
    with pytest.raises(ConfigError) as got:
        check_keys([parse_route("claude-*=kimi")])
    said = "vessel: kimi needs its key: set MOONSHOT_API_KEY, or store it with `toolreplay keys set kimi`"
    assert str(got.value) == f"--route 'claude-*=kimi': {said}"


def test_the_command_refuses_a_bad_route_and_names_it(tmp_path: Path) -> None:
    bad = CliRunner().invoke(cli, ["proxy", "--route", "claude-*=nope"])
    assert bad.exit_code == 1 and "--route 'claude-*=nope': vessel: unknown vessel 'nope'" in bad.output
    f = tmp_path / "r.toml"
    f.write_text('[[route]]\nmatch = ""\nvessel = "kimi"\n')
    worse = CliRunner().invoke(cli, ["proxy", "--routes", str(f)])
    assert worse.exit_code == 1 and f"{f}: route 1: match: empty" in worse.output

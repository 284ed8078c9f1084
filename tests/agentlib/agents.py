"""How each real agent is pointed at a base URL, kept offline and quiet, and given the task.

``setup(agent, base_url, home, work)`` writes the agent's configuration files under ``home`` (a temporary
folder that is the agent's HOME and every config/data/cache dir) and returns the command line and the
whole environment to run it with: nothing is inherited from the caller's environment but ``PATH``, so
no real key and no user setting reaches the agent. Every telemetry, update and analytics opt-out each CLI
documents (or its package reads) is set here, one agent per function.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentlib.install import PINS, binary_of

TASK = "Create a file notes.txt containing the word hello, then read it back to check."
#: The fake keys the agents send (nothing checks them; they are not the suite's leak-guard keys).
FAKE_KEY = "toolreplay-agent-test-key"
MODEL = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5", "gemini": "gemini-2.5-flash"}


@dataclass(frozen=True, slots=True)
class Launch:
    """What to run: the command line, its whole environment, and its working directory."""

    argv: list[str]
    env: dict[str, str]
    cwd: str


def _base_env(home: Path) -> dict[str, str]:
    dirs = {
        n: home / d
        for n, d in (
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_STATE_HOME", ".local/state"),
        )
    }
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    env = {k: str(v) for k, v in dirs.items()}
    env.update(
        HOME=str(home),
        PATH=os.environ.get("PATH", "/usr/bin:/bin"),
        TERM="dumb",
        NO_COLOR="1",
        CI="1",
        LANG="C.UTF-8",
        TMPDIR=str(home / "tmp"),
        # Node's own update notifier for npm-installed CLIs, and npm itself should anything call it.
        NO_UPDATE_NOTIFIER="1",
        NPM_CONFIG_UPDATE_NOTIFIER="false",
    )
    (home / "tmp").mkdir(exist_ok=True)
    return env


def _claude(base_url: str, home: Path, work: Path) -> Launch:
    env = _base_env(home)
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY=FAKE_KEY,
        ANTHROPIC_MODEL=MODEL["claude"],
        ANTHROPIC_SMALL_FAST_MODEL=MODEL["claude"],
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        # CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is the documented sum of the next four.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_BUG_COMMAND="1",
        DISABLE_COST_WARNINGS="1",
        CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY="1",
        CLAUDE_CODE_DISABLE_FEATURE_FLAGS="1",
        CLAUDE_CODE_DISABLE_TERMINAL_TITLE="1",
        # bypassPermissions refuses to run as root unless told it is in a sandbox, which it is (the
        # namespace, a temporary HOME and work folder).
        IS_SANDBOX="1",
    )
    argv = [
        str(binary_of("claude")),
        "-p",
        TASK,
        "--output-format",
        "json",
        "--permission-mode",
        "bypassPermissions",
        "--model",
        MODEL["claude"],
    ]
    return Launch(argv, env, str(work))


def _codex(base_url: str, home: Path, work: Path) -> Launch:
    env = _base_env(home)
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    # Every key below is one codex 0.171 reads (its config reference); a key it does not know stops it.
    (codex_home / "config.toml").write_text(
        f"""model = "{MODEL["codex"]}"
model_provider = "double"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
# the curated plugin marketplace is synced from api.github.com at start-up otherwise
plugins = false

[model_providers.double]
name = "double"
base_url = "{base_url}"
wire_api = "responses"
env_key = "TOOLREPLAY_AGENT_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false

[projects."{work}"]
trust_level = "trusted"
"""
    )
    env.update(CODEX_HOME=str(codex_home), TOOLREPLAY_AGENT_KEY=FAKE_KEY)
    argv = [str(binary_of("codex")), "exec", "--skip-git-repo-check", "--json", TASK]
    return Launch(argv, env, str(work))


def _opencode_provider(base_url: str, npm: str, model: str) -> dict[str, object]:
    return {
        "npm": npm,
        "name": "double",
        "options": {"baseURL": base_url, "apiKey": FAKE_KEY},
        "models": {model: {"name": model, "tool_call": True}},
    }


def _opencode(base_url: str, home: Path, work: Path, npm: str, model: str) -> Launch:
    env = _base_env(home)
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": f"double/{model}",
        "small_model": f"double/{model}",
        "provider": {"double": _opencode_provider(base_url, npm, model)},
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},
        "lsp": False,
        "formatter": False,
    }
    folder = home / ".config" / "opencode"
    write_json(folder / "opencode.json", config)
    # At start opencode npm-installs @opencode-ai/plugin into its config folder (for plugins' types),
    # unless the folder's package-lock already lists what its package.json asks for: say it does.
    plugin = {"dependencies": {"@opencode-ai/plugin": PINS["opencode"].version}}
    write_json(folder / "package.json", plugin)
    write_json(folder / "package-lock.json", {"lockfileVersion": 3, "packages": {"": plugin}})
    (folder / "node_modules").mkdir(exist_ok=True)
    env.update(
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_SHARE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        OPENCODE_DISABLE_CLAUDE_CODE="1",
        OPENCODE_DISABLE_EXTERNAL_SKILLS="1",
        OPENCODE_DISABLE_TERMINAL_TITLE="1",
    )
    argv = [str(binary_of("opencode")), "run", "--model", f"double/{model}", TASK]
    return Launch(argv, env, str(work))


def _opencode_chat(base_url: str, home: Path, work: Path) -> Launch:
    return _opencode(base_url, home, work, "@ai-sdk/openai-compatible", "double-chat-model")


def _opencode_anthropic(base_url: str, home: Path, work: Path) -> Launch:
    return _opencode(base_url, home, work, "@ai-sdk/anthropic", MODEL["claude"])


def _gemini(base_url: str, home: Path, work: Path) -> Launch:
    env = _base_env(home)
    settings = {
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ide": {"enabled": False},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
    }
    write_json(home / ".gemini" / "settings.json", settings)
    env.update(
        GEMINI_API_KEY=FAKE_KEY,
        GOOGLE_GEMINI_BASE_URL=base_url,
        GEMINI_TELEMETRY_ENABLED="false",
        GEMINI_CLI_TRUST_WORKSPACE="true",
    )
    argv = [
        str(binary_of("gemini")),
        "-p",
        TASK,
        "--yolo",
        "--model",
        MODEL["gemini"],
        "--output-format",
        "json",
    ]
    return Launch(argv, env, str(work))


SETUPS: dict[str, Callable[[str, Path, Path], Launch]] = {
    "claude": _claude,
    "codex": _codex,
    "opencode-chat": _opencode_chat,
    "opencode-anthropic": _opencode_anthropic,
    "gemini": _gemini,
}


def setup(agent: str, base_url: str, home: Path, work: Path) -> Launch:
    return SETUPS[agent](base_url, home, work)


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")

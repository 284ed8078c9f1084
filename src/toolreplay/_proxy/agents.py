"""What the proxy knows of the agents (not of the providers: that is the wires'): the header each names
its session by, and the one line that points each at the proxy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Agent:
    name: str
    #: (wire, the line that points the agent at the proxy: ``{url}`` is the proxy's URL).
    points: tuple[tuple[str, str], ...]


#: The headers agents name their session by: Claude Code, Codex CLI (both spellings seen), opencode.
SESSION_HEADERS = ("x-claude-code-session-id", "session_id", "session-id", "x-session-id")

AGENTS: tuple[Agent, ...] = (
    Agent("Claude Code", (("anthropic", "ANTHROPIC_BASE_URL={url} claude"),)),
    Agent(
        "Codex CLI",
        (
            (
                "openai-responses",
                '~/.codex/config.toml: model_provider = "toolreplay" and [model_providers.toolreplay] '
                'name = "toolreplay", base_url = "{url}/v1", wire_api = "responses", '
                'env_key = "OPENAI_API_KEY"',
            ),
        ),
    ),
    Agent(
        "opencode",
        (
            ("openai-chat", 'opencode.json: "provider": {"openai": {"options": {"baseURL": "{url}/v1"}}}'),
            ("anthropic", 'opencode.json: "provider": {"anthropic": {"options": {"baseURL": "{url}/v1"}}}'),
        ),
    ),
    Agent("Gemini CLI", (("gemini", "GOOGLE_GEMINI_BASE_URL={url} gemini"),)),
    Agent("Ollama clients", (("ollama", "OLLAMA_HOST={url} ollama run MODEL"),)),
)


def session_of(headers: Mapping[str, str], body: object, field: str) -> str | None:
    """The agent's session: its session header, else the body's session field (``prompt_cache_key``)."""
    for h in SESSION_HEADERS:
        value = headers.get(h)
        if value:
            return value[:200]
    if field and isinstance(body, Mapping):
        value = body.get(field)
        if isinstance(value, str) and value:
            return value[:200]
    return None


def start_lines(url: str, served: set[str]) -> list[str]:
    """Per agent, the line that points it at the proxy (only for the wires served)."""
    out = []
    for agent in AGENTS:
        for wire, line in agent.points:
            if wire in served:
                out.append(f"  {agent.name} ({wire}): {line.replace('{url}', url)}")
    return out


__all__ = ["AGENTS", "SESSION_HEADERS", "Agent", "session_of", "start_lines"]

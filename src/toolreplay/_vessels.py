"""Vessels: named provider profiles, as data.

A vessel is a row: wire, endpoint, key variable, default model, id policy and quirk flags. Users add or
override rows in a TOML file (``$TOOLREPLAY_VESSELS``, else ``$XDG_CONFIG_HOME/toolreplay/vessels.toml``,
else ``~/.config/toolreplay/vessels.toml``)::

    [vessels.local-qwen]
    wire = "openai-chat"
    base_url = "http://127.0.0.1:8000/v1"
    model = "Qwen/Qwen3-8B"
    key_env = "LOCAL_KEY"        # optional
    max_id_len = 40              # optional
    context_tokens = 32768       # optional: the model's context window (the context budget's default)
    cache_breakpoints = 4        # optional, 0-4: prompt-cache markers an Anthropic-wire vessel places
    flags = ["tool_message_name"]
    signature_models = ["m-1", "m-1-fast"]   # optional: models that accept each other's reasoning

Flags (quirks) a wire reads:

* ``tool_message_name``: Chat tool messages carry the tool's ``name`` (Kimi).
* ``store_false``: Responses bodies carry ``"store": false`` (Codex requires it; nothing is kept server-side).
* ``stream_only``: the endpoint answers only streaming requests (Codex).
* ``no_message_name``: never send a ``name`` on a Chat message (GLM's OpenAI endpoint rejects it).

Reasoning (design 17: what a vessel gets back is only what it issued itself):

* ``reasoning_content``: its own reasoning goes back as ``reasoning_content`` on Chat assistant messages
  (Kimi, DeepSeek, GLM thinking models; other Chat servers get none).
* ``requires_reasoning``: with thinking on, a tool-call continuation without the model's reasoning is
  refused (Kimi: 400 "thinking is enabled but reasoning_content is missing in assistant tool call
  message"; Anthropic: the last assistant message must start with its thinking block).
* ``encrypted_reasoning``: a stateless Responses vessel (``store: false``) asks for
  ``include: ["reasoning.encrypted_content"]`` in the turn loop, so the model's reasoning survives
  between tool steps (Codex, OpenAI Responses).

``signature_models`` lists model names that accept each other's reasoning and signatures (none by
default: a piece goes back only to the exact model that issued it).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from toolreplay._errors import ConfigError
from toolreplay._files import read_toml
from toolreplay._steps import Audience, Issuer, host_of

#: A registered wire's name (:func:`toolreplay.wires.wire_names`); a vessel row names its wire as data.
WireName = str
IdPolicy = Literal["derived", "kimi"]
KNOWN_FLAGS: frozenset[str] = frozenset(
    {
        "tool_message_name",
        "store_false",
        "stream_only",
        "no_message_name",
        "reasoning_content",
        "requires_reasoning",
        "encrypted_reasoning",
    }
)


@dataclass(frozen=True, slots=True)
class Vessel:
    """One provider profile. ``key_env`` is None for endpoints that take no key (Ollama, a CLI)."""

    name: str
    wire: WireName
    base_url: str
    key_env: str | None
    model: str
    id_policy: IdPolicy = "derived"
    max_id_len: int | None = None
    flags: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    description: str = ""
    signature_models: frozenset[str] = field(default_factory=lambda: frozenset[str]())
    context_tokens: int | None = None
    """The model's context window in tokens (the context budget's default); None: unknown, no budget."""
    cache_breakpoints: int = 0
    """Prompt-cache breakpoints per request, 0 to 4, on a wire that places them (Anthropic's
    ``cache_control``, design 36); 0: none."""
    home_url: str = ""
    """The base URL the profile names: the host its key is for (the key-host rule). Left out: the
    ``base_url``; a vessel given another ``base_url`` (:func:`resolve_vessel`, ``dataclasses.replace``)
    keeps its profile's, so its key does not follow the new URL unasked."""

    def __post_init__(self) -> None:
        if not self.home_url:
            object.__setattr__(self, "home_url", self.base_url)

    def has(self, flag: str) -> bool:
        return flag in self.flags

    def audience(self, model: str | None = None, base_url: str | None = None) -> Audience:
        """Who this vessel is as an issuer (wire, host of the base URL, model), for the replay: design 17."""
        from toolreplay.wires import get_wire

        host = host_of(base_url or self.base_url)
        # A wire with no standard place for reasoning (Chat) names the flag of the profiles that take it.
        flag = get_wire(self.wire).reasoning_flag  # the wire is imported once: both reads hit the cache
        takes = not flag or self.has(flag)
        wire = get_wire(self.wire)
        stateless, field = wire.sealed_reasoning
        sealed = field if stateless and self.has(stateless) else ""
        return Audience(
            self.wire, host, model or self.model, self.signature_models, takes, sealed, wire.carries_data
        )


# Each built-in vessel as the table a user's file would give it ([vessels.NAME]), checked at import by the
# same rule as that file (:func:`_vessel_from_toml`): a misspelt flag or key is refused, naming the row.
# context_tokens: the default model's window, from its provider's model page (Ollama's own num_ctx may be
# set lower); cache_breakpoints: design 36 (Anthropic's own API caches only up to a marker; GLM's endpoint
# documents none). Left out: id_policy "derived", max_id_len none, no flags, no key, no breakpoints.
_TABLE: dict[str, dict[str, Any]] = {
    "codex": dict(wire="openai-responses", base_url="https://chatgpt.com/backend-api/codex",
                  key_env="CODEX_API_KEY", model="gpt-5-codex", context_tokens=400_000, max_id_len=64,
                  flags=["store_false", "stream_only", "encrypted_reasoning"],
                  description="OpenAI Codex (ChatGPT backend), Responses"),
    "grok": dict(wire="openai-responses", base_url="https://api.x.ai/v1", key_env="XAI_API_KEY",
                 model="grok-4", context_tokens=256_000, max_id_len=64, description="xAI Grok, Responses"),
    "openai-responses": dict(wire="openai-responses", base_url="https://api.openai.com/v1",
                             key_env="OPENAI_API_KEY", model="gpt-5", context_tokens=400_000, max_id_len=64,
                             flags=["store_false", "encrypted_reasoning"],
                             description="OpenAI Responses API"),
    "openai": dict(wire="openai-chat", base_url="https://api.openai.com/v1", key_env="OPENAI_API_KEY",
                   model="gpt-4.1", context_tokens=1_047_576, max_id_len=40,
                   description="OpenAI Chat Completions"),
    "kimi": dict(wire="openai-chat", base_url="https://api.moonshot.ai/v1", key_env="MOONSHOT_API_KEY",
                 model="kimi-k2-0905-preview", context_tokens=262_144, id_policy="kimi",
                 flags=["tool_message_name", "reasoning_content"], description="Moonshot Kimi K2, Chat"),
    "openai-compatible": dict(wire="openai-chat", base_url="http://127.0.0.1:8000/v1",
                              key_env="OPENAI_COMPATIBLE_API_KEY", model="default", context_tokens=32_768,
                              description="any OpenAI-compatible server (vLLM, llama.cpp, LM Studio)"),
    "ollama": dict(wire="ollama", base_url="http://127.0.0.1:11434", model="qwen3", context_tokens=40_960,
                   description="Ollama native /api/chat"),
    "anthropic": dict(wire="anthropic", base_url="https://api.anthropic.com", key_env="ANTHROPIC_API_KEY",
                      model="claude-sonnet-4-5", context_tokens=200_000, cache_breakpoints=4,
                      description="Anthropic Messages (Claude API)"),
    "glm": dict(wire="anthropic", base_url="https://api.z.ai/api/anthropic", key_env="ZAI_API_KEY",
                model="glm-4.6", context_tokens=200_000,
                description="Z.ai GLM, Anthropic-compatible endpoint"),
    "gemini": dict(wire="gemini", base_url="https://generativelanguage.googleapis.com/v1beta",
                   key_env="GEMINI_API_KEY", model="gemini-2.5-flash", context_tokens=1_048_576,
                   description="Google Gemini generateContent"),
    "claude": dict(wire="claude-prompt", base_url="claude", model="sonnet", context_tokens=200_000,
                   description="Claude Code CLI (claude -p), history as a JSON prompt"),
}  # fmt: skip


def public_base_url(wire: str) -> str:
    """The base URL of ``wire``'s own provider: that of the first built-in vessel of the wire at the
    host its contract names (``Wire.public_host``), the host an imported body's issuer gets when no
    ``--issuer-url`` says otherwise (design 17); "" for a wire without one."""
    from toolreplay.wires import get_wire, wire_names

    host = get_wire(wire).public_host if wire in wire_names() else ""
    found = (v for v in BUILTIN.values() if v.wire == wire and host and host_of(v.base_url) == host)
    return next((v.base_url for v in found), "")


def public_issuer(wire: str, model: Any, base_url: str | None = None) -> Issuer:
    """The issuer of what an imported body of ``wire`` carries: its model as the body names it ("" when it
    names none: Gemini bodies carry the model in the URL), the host of ``base_url``, else the wire's
    public default host."""
    if base_url is None:
        base_url = public_base_url(wire)
    return Issuer(wire, host_of(base_url), model if isinstance(model, str) else "")


def config_path() -> Path:
    """Where the user's vessel file is looked for."""
    env = os.environ.get("TOOLREPLAY_VESSELS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolreplay" / "vessels.toml"


def _names(raw: Mapping[str, Any], key: str, default: list[str], where: str, what: str) -> list[str]:
    """A list-of-strings key of a vessel table (its base's value when absent)."""
    value = raw.get(key, default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be {what}")
    return cast(list[str], value)


def _flags(raw: Mapping[str, Any], base: Vessel, where: str) -> list[str]:
    flags = _names(raw, "flags", sorted(base.flags), where, "a list of strings")
    bad = sorted(set(flags) - KNOWN_FLAGS)
    if bad:
        raise ConfigError(
            f"{where}: unknown flag(s) {', '.join(bad)}; known: {', '.join(sorted(KNOWN_FLAGS))}"
        )
    return flags


def _int_at_least(value: Any, low: int, what: str) -> int | None:
    """``value`` when it is None or an integer of at least ``low``; else a ConfigError naming ``what``."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
        raise ConfigError(
            f"{what} must be " + ("a positive integer" if low == 1 else f"an integer of at least {low}")
        )
    return value


def _vessel_from_toml(
    name: str, raw: Mapping[str, Any], base: Vessel | None, src: str, *, wires: bool = True
) -> Vessel:
    where = f"{src}: [vessels.{name}]"
    allowed = {"wire", "base_url", "key_env", "model", "id_policy", "max_id_len", "flags", "description",
               "signature_models", "context_tokens", "cache_breakpoints"}  # fmt: skip
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(allowed))}"
        )
    if base is None:
        missing = [k for k in ("wire", "base_url", "model") if k not in raw]
        if missing:
            raise ConfigError(f"{where}: a new vessel needs {', '.join(missing)}")
        base = Vessel(name=name, wire="openai-chat", base_url="", key_env=None, model="")
    wire = raw.get("wire", base.wire)
    from toolreplay.wires import wire_names

    if wires and wire not in wire_names():  # the built-in rows: checked by their test
        raise ConfigError(f"{where}: wire {wire!r} is not one of {', '.join(wire_names())}")
    policy = raw.get("id_policy", base.id_policy)
    if policy not in ("derived", "kimi"):
        raise ConfigError(f"{where}: id_policy must be 'derived' or 'kimi'")
    flags = _flags(raw, base, where)
    max_id = _int_at_least(raw.get("max_id_len", base.max_id_len), 16, f"{where}: max_id_len")
    window = _int_at_least(raw.get("context_tokens", base.context_tokens), 1, f"{where}: context_tokens")
    marks = raw.get("cache_breakpoints", base.cache_breakpoints)
    # checked where a row sets it (the limit is the wires': asking them imports them); the built-in rows
    # are checked by their test (the registry is not imported while this module loads)
    if wires and "cache_breakpoints" in raw:
        marks = checked_breakpoints(marks, f"{where}: ")
    for k in ("base_url", "model", "description", "key_env"):
        if k in raw and not isinstance(raw[k], str):
            raise ConfigError(f"{where}: {k} must be a string")
    shared = _names(raw, "signature_models", sorted(base.signature_models), where, "a list of model names")
    return replace(
        base,
        name=name,
        wire=cast(WireName, wire),
        base_url=str(raw.get("base_url", base.base_url)),
        key_env=raw.get("key_env", base.key_env) or None,
        model=str(raw.get("model", base.model)),
        id_policy=cast(IdPolicy, policy),
        max_id_len=max_id,
        flags=frozenset(flags),
        description=str(raw.get("description", base.description)),
        signature_models=frozenset(shared),
        context_tokens=window,
        cache_breakpoints=marks,
        home_url=str(raw.get("base_url", base.base_url)),  # the profile names its own URL
    )


def builtin_table(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Vessel]:
    """The built-in rows as vessels, each checked as a user's ``[vessels.NAME]`` table is (their wires
    are the registry's, checked by its test: the registry cannot be imported while this module loads)."""
    return {name: _vessel_from_toml(name, raw, None, "the built-in vessel table", wires=False)
            for name, raw in rows.items()}  # fmt: skip


BUILTIN: dict[str, Vessel] = builtin_table(_TABLE)

# The table built from each file's last read, by path: ``read_toml`` hands back the same parsed value while
# the file is unchanged, so that value's identity says the rows need no checking again (checking a user's
# rows costs more than the read: 85 µs a lookup with two rows, 18 µs once kept, the path and its stat).
# An edited file is read again: a new value, checked again.
_BUILT: dict[str, tuple[dict[str, Any], dict[str, Vessel]]] = {}


def load_vessels(path: Path | None = None) -> dict[str, Vessel]:
    """The built-in table overlaid with the user's TOML file.

    The default file may be absent; a file named explicitly (``path``, or ``$TOOLREPLAY_VESSELS``) that
    does not exist is a ConfigError (a typo there must not silently mean the built-in vessels).
    """
    by = "" if path is not None else " (named by TOOLREPLAY_VESSELS)"
    explicit = path is not None or bool(os.environ.get("TOOLREPLAY_VESSELS"))
    path = path if path is not None else config_path()
    try:
        data = read_toml(path)  # read once a process, again only when the file changed
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read vessel file ({exc})") from None
    if data is None:
        if explicit:
            raise ConfigError(f"{path}: no such vessel file{by}")
        return dict(BUILTIN)
    kept = _BUILT.get(str(path))
    if kept is not None and kept[0] is data:
        return dict(kept[1])
    table = _overlay(data, path)
    _BUILT[str(path)] = (data, table)
    return dict(table)


def _overlay(data: Mapping[str, Any], path: Path) -> dict[str, Vessel]:
    """The built-in table with the rows of a vessel file's ``[vessels]`` (read from ``path``) over it."""
    table = dict(BUILTIN)
    section = data.get("vessels", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [vessels] must be a table")
    for name, raw in cast(dict[str, Any], section).items():
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: [vessels.{name}] must be a table")
        table[name] = _vessel_from_toml(name, cast(dict[str, Any], raw), table.get(name), str(path))
    return table


def vessels() -> list[Vessel]:
    """Every vessel profile (built in, then the user's), in table order."""
    return list(load_vessels().values())


def resolve_vessel(
    vessel: str | Vessel,
    *,
    model: str | None = None,
    base_url: str | None = None,
    cache_breakpoints: int | None = None,
) -> Vessel:
    """The vessel a turn or a render runs on: looked up once, ``model`` and ``base_url`` (``--model``,
    ``--base-url``) and ``cache_breakpoints`` (``--cache-breakpoints``, checked) folded in. Everything
    below takes this value; its ``home_url`` stays the profile's."""
    v = get_vessel(vessel)
    if base_url or model:
        v = replace(v, base_url=base_url or v.base_url, model=model or v.model)
    if cache_breakpoints is not None:
        v = replace(v, cache_breakpoints=checked_breakpoints(cache_breakpoints))
    return v


def checked_breakpoints(n: object, where: str = "") -> int:
    """``n`` as a vessel's prompt-cache breakpoints: an integer from 0 to the most a registered wire
    places (``Wire.max_breakpoints``, Anthropic's 4: design 36), else a ConfigError after ``where``.
    The one check of the setting: a ``vessels.toml`` row, ``render(cache_breakpoints=...)``,
    ``TurnOptions.cache_breakpoints`` and ``--cache-breakpoints`` all come through here."""
    from toolreplay.wires import get_wire, wire_names

    most = max(get_wire(w).max_breakpoints for w in wire_names())
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= most:
        raise ConfigError(f"{where}cache_breakpoints must be an integer from 0 to {most}, not {n!r}")
    return n


def get_vessel(name: str | Vessel) -> Vessel:
    """The vessel called ``name``; an unknown name lists the known ones."""
    if isinstance(name, Vessel):
        return name
    table = load_vessels()
    try:
        return table[name]
    except KeyError:
        raise ConfigError(f"unknown vessel {name!r}; known vessels: {', '.join(table)}") from None

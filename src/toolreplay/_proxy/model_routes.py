"""Model routes (design 47): which requests the proxy translates for another vessel, instead of passing
them to their own provider.

A route is a glob on the model name the agent sends, optionally tied to the wire it sends on, and the
vessel (any built-in or ``vessels.toml`` vessel) that answers instead, with that vessel's model unless the
route names one::

    --route 'claude-*=kimi:kimi-k2-thinking'      # any wire's model claude-*, to Kimi's thinking model
    --route 'anthropic:claude-*=kimi'             # only Anthropic requests (the vessel's own model)
    --route 'qwen3:8b=gemini'                     # no wire prefix: 'qwen3' is not a wire, so all is glob

    # --routes FILE (TOML): the same, one [[route]] table each
    [[route]]
    match = "claude-*"
    wire = "anthropic"           # optional
    vessel = "kimi"
    model = "kimi-k2-thinking"   # optional

The text before the first ``:`` of a pattern is a wire only when it is a served wire's name (model names
hold colons: ``qwen3:8b``); a vessel's model follows its name after the first ``:`` (model names hold
slashes: ``openai-compatible:Qwen/Qwen3-8B``). Routes are tried in order, the command line's before the
file's; the first that matches wins. Each is checked when the proxy starts: an unknown vessel (the known
ones listed), a vessel or wire without an HTTP path or an answer bridge, and a key the vessel needs and
does not have are refused with a line naming the route and the field.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, cast

from toolreplay._errors import ConfigError
from toolreplay._vessels import Vessel, get_vessel, resolve_vessel
from toolreplay.wires import all_wires, get_wire

_FIELDS = ("match", "wire", "vessel", "model")


@dataclass(frozen=True, slots=True)
class ModelRoute:
    """One route: the glob, the inbound wire it is tied to (None: any), the vessel that answers (its
    ``model`` already the route's when the route names one), and where the route was given."""

    match: str
    wire: str | None
    vessel: Vessel
    where: str

    def matches(self, wire: str, model: str | None) -> bool:
        return (
            model is not None and (self.wire is None or self.wire == wire) and fnmatchcase(model, self.match)
        )

    def label(self) -> str:
        """``anthropic:claude-* -> kimi (kimi-k2-thinking)``: for the banner and the log."""
        head = f"{self.wire}:{self.match}" if self.wire else self.match
        return f"{head} -> {self.vessel.name} ({self.vessel.model})"


def _served() -> list[str]:
    """The wires the proxy serves (as ``config.served_wires``, which imports this module's type)."""
    return [w.name for w in all_wires() if w.http is not None and w.http.path is not None]


def _bridged(wire: str) -> bool:
    return get_wire(wire).bridge is not None


def _vessel(name: str, model: str | None, where: str) -> Vessel:
    """The route's vessel, checked: it exists, speaks HTTP and has an answer bridge."""
    try:
        vessel = get_vessel(name)
    except ConfigError as exc:
        raise ConfigError(f"{where}: vessel: {exc}") from None
    wire = get_wire(vessel.wire)
    if wire.http is None:
        raise ConfigError(f"{where}: vessel: {name!r} runs the {wire.driver}, not an HTTP endpoint")
    if not _bridged(wire.name):
        raise ConfigError(
            f"{where}: vessel: {name!r} speaks {wire.name}, whose answers cannot be read for translation yet"
            f" (wires that can: {', '.join(w for w in _served() if _bridged(w)) or 'none'})"
        )
    return resolve_vessel(vessel, model=model) if model else vessel


def _wire(wire: str | None, where: str) -> str | None:
    if wire is None:
        return None
    served = _served()
    if wire not in served:
        raise ConfigError(f"{where}: wire: {wire!r} is not a served wire; served wires: {', '.join(served)}")
    if not _bridged(wire):
        raise ConfigError(f"{where}: wire: answers cannot be written in the {wire} wire yet")
    return wire


def _route(match: str, wire: str | None, vessel: str, model: str | None, where: str) -> ModelRoute:
    if not match:
        raise ConfigError(f"{where}: match: empty; give a glob on the agent's model name, e.g. claude-*")
    if not vessel:
        raise ConfigError(f"{where}: vessel: empty; give a vessel name (toolreplay vessels lists them)")
    checked = _wire(wire, where)
    return ModelRoute(match, checked, _vessel(vessel, model or None, where), where)


def parse_route(value: str) -> ModelRoute:
    """One ``--route [WIRE:]GLOB=VESSEL[:MODEL]``."""
    where = f"--route {value!r}"
    pattern, sep, target = value.partition("=")
    pattern, target = pattern.strip(), target.strip()
    if not sep or not pattern or not target:
        raise ConfigError(f"{where}: give [WIRE:]GLOB=VESSEL[:MODEL], e.g. 'claude-*=kimi:kimi-k2-thinking'")
    head, colon, rest = pattern.partition(":")
    wire, match = (head, rest) if colon and head in _served() else (None, pattern)
    vessel, _, model = target.partition(":")
    return _route(match, wire, vessel.strip(), model.strip() or None, where)


def _string(raw: Mapping[str, Any], key: str, where: str, required: bool) -> str | None:
    value = raw.get(key)
    if value is None:
        if required:
            raise ConfigError(f"{where}: {key}: missing (a route needs match and vessel)")
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where}: {key}: must be a string, not {type(value).__name__}")
    return value.strip()


def load_routes(path: Path) -> list[ModelRoute]:
    """The ``[[route]]`` tables of a routes file, in order."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the routes file ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not TOML ({exc})") from None
    unknown = sorted(set(data) - {"route"})
    if unknown:
        raise ConfigError(
            f"{path}: unknown table(s) {', '.join(unknown)}; a routes file holds [[route]] tables"
        )
    tables = data.get("route", [])
    if not isinstance(tables, list):
        raise ConfigError(f"{path}: route must be an array of tables ([[route]])")
    out = []
    for i, raw in enumerate(tables, 1):
        where = f"{path}: route {i}"
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: must be a table")
        extra = sorted(set(cast(dict[str, Any], raw)) - set(_FIELDS))
        if extra:
            raise ConfigError(f"{where}: unknown field(s) {', '.join(extra)}; known: {', '.join(_FIELDS)}")
        match, vessel = _string(raw, "match", where, True), _string(raw, "vessel", where, True)
        assert match is not None and vessel is not None
        wire, model = _string(raw, "wire", where, False), _string(raw, "model", where, False)
        out.append(_route(match, wire or None, vessel, model, where))
    return out


def routes_from(values: Iterable[str], file: Path | None) -> tuple[ModelRoute, ...]:
    """Every route, the command line's first, then the file's (the first that matches wins)."""
    routes = [parse_route(v) for v in values]
    if file is not None:
        routes += load_routes(file)
    return tuple(routes)


def check_keys(routes: Iterable[ModelRoute]) -> None:
    """Each routed vessel's key, where its host needs one, is at hand (its variable or ``toolreplay keys``):
    refused at the start, naming the route, rather than at the agent's first request."""
    from toolreplay._transport.request import is_loopback, key_value, resolve_key

    for r in routes:
        v = r.vessel
        if v.key_env and not is_loopback(v.base_url) and not key_value(v):
            raise ConfigError(
                f"{r.where}: vessel: {v.name} needs its key: set {v.key_env}, or store it with "
                f"`toolreplay keys set {v.name}`"
            )
        try:
            resolve_key(v, v.base_url)
        except ConfigError as exc:
            raise ConfigError(f"{r.where}: vessel: {exc}") from None


def pick(routes: Sequence[ModelRoute], wire: str, model: str | None) -> ModelRoute | None:
    """The first route that takes a request of ``wire`` for ``model``."""
    return next((r for r in routes if r.matches(wire, model)), None)


__all__ = ["ModelRoute", "check_keys", "load_routes", "parse_route", "pick", "routes_from"]

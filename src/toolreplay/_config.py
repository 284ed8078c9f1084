"""The user's settings: the default vessel (in the configuration file) and stored keys (in a keys file).

The configuration file is the vessel file (:func:`toolreplay._vessels.config_path`): besides its
``[vessels.NAME]`` tables it may set, at the top, ``default_vessel = "kimi"``, the vessel every command
uses when ``--vessel`` is left out. ``toolreplay default NAME`` writes that one line and leaves the rest
of the file (comments included) as it was.

Keys live in ``keys.json`` beside it, one entry per key variable (``{"MOONSHOT_API_KEY": "sk-..."}``),
readable and writable only by the user (mode 0600). Both files are rewritten under a lock, whole, and
renamed into place (:mod:`toolreplay._files`), so commands run in parallel never lose each other's
change. A key variable set in the environment wins over the file. Either way the key goes through the
same resolution (:func:`toolreplay._transport.request.resolve_key`), so it is sent only where that allows.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from toolreplay._errors import ConfigError
from toolreplay._files import locked, read_toml, real_path, replace_text

_DEFAULT_LINE = re.compile(r"^\s*default_vessel\s*=.*$", re.M)


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/toolreplay``, else ``~/.config/toolreplay``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolreplay"


def _config_file() -> Path:
    from toolreplay._vessels import config_path

    return config_path()


def _read_config(path: Path) -> dict[str, Any]:
    try:
        return read_toml(path) or {}  # the vessel file's one cached read
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the configuration file ({exc})") from None


def default_vessel() -> str | None:
    """The configured default vessel, None when none is set."""
    path = _config_file()
    value = _read_config(path).get("default_vessel")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{path}: default_vessel must be a vessel name (a string)")
    return value


def set_default_vessel(name: str) -> Path:
    """Write ``default_vessel = "NAME"`` into the configuration file (the line replaced, or added first)."""
    path = _config_file()
    line = f"default_vessel = {json.dumps(name)}"
    real = real_path(path)
    try:
        with locked(real):
            text = real.read_text(encoding="utf-8") if real.exists() else ""
            # Replaced in place, else added first: a top-level key must come before the first [table].
            text = _DEFAULT_LINE.sub(line, text, count=1) if _DEFAULT_LINE.search(text) else f"{line}\n{text}"
            tomllib.loads(text)  # never leave a file the next command cannot read
            # Renamed into place whole: `keys set` and every other command read this file meanwhile.
            mode = stat.S_IMODE(real.stat().st_mode) if real.exists() else 0o644
            replace_text(real, text, mode)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the configuration file ({exc.strerror or exc})") from None
    return path


def pick_vessel(given: str | None) -> str:
    """``--vessel`` when given, else the default vessel; a ConfigError saying how to set one."""
    if given:
        return given
    found = default_vessel()
    if found is None:
        raise ConfigError(
            "no vessel: pass --vessel NAME (-v NAME), or set a default with `toolreplay default NAME`"
        )
    return found


# -- keys ------------------------------------------------------------------------------------------


def keys_path() -> Path:
    """Where stored keys live: ``$TOOLREPLAY_KEYS``, else ``keys.json`` in the configuration directory."""
    env = os.environ.get("TOOLREPLAY_KEYS")
    return Path(env) if env else config_dir() / "keys.json"


def stored_keys() -> dict[str, str]:
    """Every stored key, by key variable ({} when there is no keys file)."""
    path = keys_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the keys file ({exc.__class__.__name__})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError(f"{path}: the keys file must be a JSON object of strings")
    return {str(k): v for k, v in data.items()}


def key_for(key_env: str) -> str:
    """The key for ``key_env``: the environment variable when set, else the keys file; "" when neither."""
    return os.environ.get(key_env, "").strip() or stored_keys().get(key_env, "").strip()


def store_key(key_env: str, value: str) -> Path:
    """Save ``value`` for ``key_env`` in the keys file, readable only by the user.

    Under the file's lock from the read to the rename: two `keys set` at once each keep the other's key.
    """
    path = keys_path()
    try:
        with locked(real_path(path)):
            keys = stored_keys()
            keys[key_env] = value
            replace_text(real_path(path), json.dumps(keys, indent=2, sort_keys=True) + "\n", 0o600)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the keys file ({exc.strerror or exc})") from None
    return path


__all__ = [
    "config_dir",
    "default_vessel",
    "key_for",
    "keys_path",
    "pick_vessel",
    "set_default_vessel",
    "store_key",
    "stored_keys",
]

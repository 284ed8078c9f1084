"""The user's settings: the default vessel (in the configuration file) and stored keys (in a keys file).

The configuration file is the vessel file (:func:`toolreplay._vessels.config_path`): besides its
``[vessels.NAME]`` tables it may set, at the top, ``default_vessel = "kimi"``, the vessel every command
uses when ``--vessel`` is left out. ``toolreplay default NAME`` writes that one line and leaves the rest
of the file (comments included) as it was.

Keys live in ``keys.json`` beside it, one entry per key variable (``{"MOONSHOT_API_KEY": "sk-..."}``),
readable and writable only by the user (mode 0600, written whole and renamed into place). A key variable
set in the environment wins over the file. Either way the key goes through the same resolution
(:func:`toolreplay._transport.request.resolve_key`), so it is sent only where that allows.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from toolreplay._errors import ConfigError

_DEFAULT_LINE = re.compile(r"^\s*default_vessel\s*=.*$", re.M)


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/toolreplay``, else ``~/.config/toolreplay``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolreplay"


def _config_file() -> Path:
    from toolreplay._vessels import config_path

    return config_path()


def _read_config(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
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
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    # Replaced in place, else added first: a top-level key must come before the first [table].
    text = _DEFAULT_LINE.sub(line, text, count=1) if _DEFAULT_LINE.search(text) else f"{line}\n{text}"
    path.parent.mkdir(parents=True, exist_ok=True)
    tomllib.loads(text)  # never leave a file the next command cannot read
    path.write_text(text, encoding="utf-8")
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
    """Save ``value`` for ``key_env`` in the keys file, readable only by the user."""
    path = keys_path()
    keys = stored_keys()
    keys[key_env] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    # Created 0600 from the start: a key must never sit in a file others can read, even for a moment.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(keys, fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.chmod(tmp, 0o600)  # O_CREAT's mode applies only to a new file
    os.replace(tmp, path)
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

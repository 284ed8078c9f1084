"""``toolreplay default`` and ``toolreplay keys``: the default vessel and the stored keys."""

from __future__ import annotations

import sys

import click

from toolreplay._cli._common import friendly


@click.command()
@click.argument("vessel", required=False, metavar="[VESSEL]")
@friendly
def default(vessel: str | None) -> None:
    """Set the vessel used when --vessel is left out (no VESSEL: print it).

    It is written as `default_vessel = "NAME"` at the top of the configuration file (the vessel file,
    `toolreplay keys path` prints the directory); `--vessel` still wins.

    \b
    Example:
      toolreplay default kimi
      toolreplay turn "Close #1."          # on kimi
    """
    from toolreplay._config import default_vessel, set_default_vessel
    from toolreplay._vessels import get_vessel

    if vessel is None:
        click.echo(default_vessel() or "no default vessel (set one: toolreplay default NAME)")
        return
    get_vessel(vessel)  # an unknown name is refused with the list of known ones
    path = set_default_vessel(vessel)
    click.echo(f"default vessel: {vessel} (in {path})")


@click.group()
def keys() -> None:
    """Store provider keys in a file only you can read (environment variables still win)."""


def _key_env(vessel_name: str) -> str:
    from toolreplay._vessels import get_vessel

    v = get_vessel(vessel_name)
    if v.key_env is None:
        raise click.ClickException(f"{v.name} takes no key (its wire is {v.wire})")
    return v.key_env


@keys.command("set")
@click.argument("vessel", metavar="VESSEL")
@friendly
def keys_set(vessel: str) -> None:
    """Store the key of VESSEL's key variable (asked for, or read from stdin when piped).

    The key is never taken as an argument, so it stays out of your shell history.

    \b
    Example:
      toolreplay keys set kimi            # asks for MOONSHOT_API_KEY's value
      pass show moonshot | toolreplay keys set kimi
    """
    from toolreplay._config import store_key

    key_env = _key_env(vessel)
    value = click.prompt(f"{key_env}", hide_input=True) if sys.stdin.isatty() else sys.stdin.read()
    value = value.strip()
    if not value:
        raise click.ClickException("no key given; nothing was stored")
    path = store_key(key_env, value)
    click.echo(f"{key_env} stored in {path} (used by every vessel reading {key_env})")


@keys.command("list")
@friendly
def keys_list() -> None:
    """List the key variables, which vessels use each, and where a key comes from (never the key)."""
    import os

    from toolreplay._config import stored_keys
    from toolreplay._vessels import vessels

    stored = stored_keys()
    users: dict[str, list[str]] = {}
    for v in vessels():
        if v.key_env:
            users.setdefault(v.key_env, []).append(v.name)
    width = max(len(k) for k in users)
    for key_env, names in users.items():
        if os.environ.get(key_env, "").strip():
            where = "environment" + (" (wins over the keys file)" if key_env in stored else "")
        else:
            where = "keys file" if key_env in stored else "not set"
        click.echo(f"{key_env:<{width}}  {where:<13}  {', '.join(names)}")


@keys.command("path")
def keys_path_cmd() -> None:
    """Print where stored keys are kept."""
    from toolreplay._config import keys_path

    click.echo(str(keys_path()))

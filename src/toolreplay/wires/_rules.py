"""What the wires' rule checks share: the id rules of one request, key and name checks.

Used by each wire's ``rules.py`` (the validator, ``check --offline`` and the doubles run the wire's rules);
nothing outside ``wires/`` imports it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from toolreplay.wires.common import ID_SAFE as ANTHROPIC_ID_RE
from toolreplay.wires.common import NamedId
from toolreplay.wires.contract import Refused

if TYPE_CHECKING:
    from toolreplay.wires.contract import VesselProfile

#: OpenAI and Anthropic function names.
# \Z, not $ (which also matches before a trailing newline): "coop\n" is not a valid name.
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")


def is_obj(v: Any) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(v, Mapping)


def json_object_text(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except (json.JSONDecodeError, RecursionError):
        return False


#: (where, the id) -> the provider's own error text for it.
ProviderText = Callable[[str, str], str]
#: (where, the id, the limit) -> the provider's own error text for an id over the limit.
TooLongText = Callable[[str, str, int], str]


class Ids:
    """The id rules of one request: unique, the vessel's length and shape rules. ``missing`` and
    ``too_long`` give the provider's own texts, when the provider refuses those (then the line is a
    :class:`~toolreplay.wires.contract.Refused` one)."""

    def __init__(
        self,
        v: VesselProfile,
        out: list[str],
        *,
        max_len: int | None = None,
        pattern: bool = False,
        missing: ProviderText | None = None,
        too_long: TooLongText | None = None,
        named: NamedId | None = None,
    ):
        self.v, self.out, self.pattern, self.named = v, out, pattern, named
        self.missing, self.too_long = missing, too_long
        limits = [n for n in (v.max_id_len, max_len) if n is not None]
        self.max_len = min(limits) if limits else None
        self.seen: set[str] = set()
        self.index = 0

    def check(self, where: str, wid: Any, name: Any) -> None:
        index, self.index = self.index, self.index + 1
        if not isinstance(wid, str) or not wid:
            self.out.append(refusal(f"{where}: missing or not a string", self.missing, where, ""))
            return
        if wid in self.seen:
            self.out.append(f"{where}: {wid!r} is used twice in this request")
        self.seen.add(wid)
        if self.named is not None:  # the wire's own naming for the vessel's id policy (Kimi's)
            want = self.named(name, index) if isinstance(name, str) else None
            if wid != want:
                self.out.append(f"{where}: {wid!r} is not {want!r} (the vessel's running form)")
            return  # design 7: named ids go in full, whatever their length
        if self.max_len is not None and len(wid) > self.max_len:
            line = f"{where}: {len(wid)} characters, the vessel allows at most {self.max_len}"
            text = self.too_long(where, wid, self.max_len) if self.too_long else None
            self.out.append(Refused(line, text) if text else line)
        if self.pattern and not ANTHROPIC_ID_RE.match(wid):
            self.out.append(f"{where}: {wid!r} does not match ^[a-zA-Z0-9_-]+$")


def refusal(line: str, provider: ProviderText | None, where: str, value: str) -> str:
    """``line`` as a :class:`~toolreplay.wires.contract.Refused` line with the provider's text when
    ``provider`` gives one."""
    return Refused(line, provider(where, value)) if provider is not None else line


def extra_keys(out: list[str], where: str, obj: Mapping[str, Any], allowed: frozenset[str]) -> None:
    extra = sorted(str(k) for k in obj if k not in allowed)
    if extra:
        out.append(f"{where}: key(s) {', '.join(extra)} not allowed here")


def declared_names(body: Mapping[str, Any], names: Callable[[Any], list[Any]]) -> set[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return set()
    got: set[str] = set()
    for t in tools:
        if is_obj(t):
            got.update(n for n in names(t) if isinstance(n, str))
    return got


def nonempty_list(
    body: Mapping[str, Any], key: str, out: list[str], provider: str | None = None
) -> list[Any] | None:
    """The body's ``key`` list, or None (and the problem said, a refusal with ``provider``'s text when
    given) when it is missing or empty."""
    value = body.get(key)
    if not isinstance(value, list) or not value:
        line = f"{key}: must be a non-empty list"
        out.append(Refused(line, provider) if provider else line)
        return None
    return value


def check_name(out: list[str], where: str, name: Any, declared: set[str], rx: re.Pattern[str]) -> None:
    if not isinstance(name, str) or not rx.match(name):
        out.append(f"{where}: tool name {name!r} does not match {rx.pattern}")
    elif name not in declared:
        out.append(f"{where}: tool {name!r} is not declared in tools")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A provider rule a body breaks, said once for both readers of the wire's rules: ``where`` and
    ``problem`` make the validator's line (``check --offline``, ``toolreplay validate``), ``provider`` is
    the text the provider's server answers with (and so the provider double, with ``status``): design 30."""

    where: str
    problem: str
    provider: str
    status: int = 400

    @property
    def line(self) -> str:
        return f"{self.where}: {self.problem}"


def say(out: list[str], refusal: Refusal | None) -> None:
    """The validator's line for ``refusal``, when there is one: a
    :class:`~toolreplay.wires.contract.Refused` line, so the double answers the provider's text."""
    if refusal is not None:
        out.append(Refused(refusal.line, refusal.provider))


# --------------------------------------------------------------------------------------------------

__all__ = [
    "ANTHROPIC_ID_RE",
    "NAME_RE",
    "Ids",
    "ProviderText",
    "Refusal",
    "TooLongText",
    "check_name",
    "declared_names",
    "extra_keys",
    "is_obj",
    "json_object_text",
    "nonempty_list",
    "refusal",
    "say",
]

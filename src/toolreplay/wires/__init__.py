"""The wires: one package per wire, each exporting one :class:`~toolreplay.wires.contract.Wire`, and the
registry that maps wire names to them.

Every wire package ``toolreplay.wires.<pkg>`` exports ``WIRE`` (see :mod:`toolreplay.wires.contract` for
what it holds). The rest of toolreplay never branches on a wire's name: it asks :func:`get_wire` and
uses what the wire says. Adding a wire is one new package plus one line in :data:`_BUILTIN` (or a
:func:`register_wire` call from outside, e.g. a test's toy wire).

The contract's values are exported here: :class:`Wire` and its parts (:class:`Http`, :class:`ImportForm`,
:class:`Double`, :class:`StreamParser`, :class:`Refused`), what a body proves (:class:`Evidence`,
:class:`Proof`, :func:`choose` and its :class:`Detection`), what ``render`` takes (:class:`TurnMessage`,
:class:`ReplayStep`, :class:`ReplayCall`, :class:`RenderOptions`, :class:`IdMapper`) and what the parsers
return (:class:`Reply`, :class:`ParsedCall`); the stored conversation is :mod:`toolreplay.model`.

Wire packages are imported on first use, so importing toolreplay stays light.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolreplay.wires.common import IdMapper, RenderOptions
from toolreplay.wires.contract import Double, Http, ImportForm, Refused, StreamParser, TurnPiece, Wire
from toolreplay.wires.evidence import Detection, Evidence, Proof, choose
from toolreplay.wires.replayed import ReplayCall, ReplayStep, TurnMessage
from toolreplay.wires.reply import ParsedCall, Reply

if TYPE_CHECKING:
    from toolreplay.model import History

#: Wire name -> the module that exports its ``WIRE``: one line per wire.
_BUILTIN: dict[str, str] = {
    "openai-chat": "toolreplay.wires.openai_chat",
    "openai-responses": "toolreplay.wires.openai_responses",
    "anthropic": "toolreplay.wires.anthropic",
    "gemini": "toolreplay.wires.gemini",
    "ollama": "toolreplay.wires.ollama",
    "claude-prompt": "toolreplay.wires.claude_prompt",
}
_modules: dict[str, str] = dict(_BUILTIN)
_loaded: dict[str, Wire] = {}
_lock = threading.Lock()


def wire_names() -> tuple[str, ...]:
    """Every registered wire name, built-in ones first, in registration order."""
    return tuple(_modules)


def get_wire(name: str) -> Wire:
    """The wire called ``name``; an unknown name raises a ConfigError listing the known ones."""
    got = _loaded.get(name)
    if got is not None:
        return got
    module = _modules.get(name)
    if module is None:
        from toolreplay.errors import ConfigError

        raise ConfigError(f"unknown wire {name!r}; known wires: {', '.join(_modules)}")
    wire = importlib.import_module(module).WIRE
    if not isinstance(wire, Wire) or wire.name != name:
        raise TypeError(f"{module}.WIRE is not the Wire named {name!r}")
    with _lock:
        _loaded[name] = wire
    return wire


def all_wires() -> list[Wire]:
    """Every registered wire, loaded (the audit's sniffing and the importer's ``auto`` ask them all)."""
    return [get_wire(n) for n in wire_names()]


def register_wire(wire: Wire | str, name: str | None = None) -> None:
    """Add a wire to the registry: a :class:`Wire` value, or the module path that exports ``WIRE`` (loaded
    on first use; then ``name`` is required). A name already registered is replaced."""
    with _lock:
        if isinstance(wire, Wire):
            _modules[wire.name] = f"<registered {wire.name}>"
            _loaded[wire.name] = wire
            return
        if not name:
            raise ValueError("register_wire(module_path) needs the wire's name")
        _modules[name] = wire
        _loaded.pop(name, None)


def unregister_wire(name: str) -> None:
    """Remove a registered wire (a built-in one comes back as built)."""
    with _lock:
        _loaded.pop(name, None)
        if name in _BUILTIN:
            _modules[name] = _BUILTIN[name]
        else:
            _modules.pop(name, None)


def sniff_wire(body: Mapping[str, Any]) -> Detection:
    """Which wire ``body`` is: every registered wire's evidence, decided by :func:`choose` (design 27).
    The registration order plays no part: a body two wires fit equally is ambiguous, naming both."""
    found: dict[str, Evidence] = {}
    for w in all_wires():
        evidence = w.sniff(body)
        if evidence is not None:
            found[w.name] = evidence
    return choose(found)


def render_wire(wire: str, turns: Sequence[TurnMessage], opts: RenderOptions) -> dict[str, Any]:
    """``turns`` rendered into ``wire``'s request body (the wire's ``render``, then its ``finish``)."""
    w = get_wire(wire)
    body = w.render(turns, opts)
    return body if w.finish is None else w.finish(body, opts)


def parse_response(wire: str, body: Mapping[str, Any]) -> Reply:
    """A whole (non-streamed) answer body parsed by ``wire`` into a Reply."""
    return get_wire(wire).parse_response(body)


def parse_request(wire: str, body: Any) -> History:
    """A request body (or its message list) read back into a History by ``wire``."""
    w = get_wire(wire)
    if w.parse_request is None:
        from toolreplay.errors import ConfigError

        raise ConfigError(f"wire {wire} cannot read request bodies back")
    return w.parse_request(body)


__all__ = [
    "Detection",
    "Double",
    "Evidence",
    "Http",
    "IdMapper",
    "ImportForm",
    "ParsedCall",
    "Proof",
    "Refused",
    "RenderOptions",
    "ReplayCall",
    "ReplayStep",
    "Reply",
    "StreamParser",
    "TurnMessage",
    "TurnPiece",
    "Wire",
    "all_wires",
    "choose",
    "get_wire",
    "parse_request",
    "parse_response",
    "register_wire",
    "render_wire",
    "sniff_wire",
    "unregister_wire",
    "wire_names",
]

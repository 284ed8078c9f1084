"""``toolreplay proxy``: the provider endpoints the coding agents call, served on 127.0.0.1, each request
passed to its own provider byte for byte, each exchange recorded into the store and audited beside it.

The modules: ``config`` (the settings), ``routes`` (which wire a path is, from the wires' own
``Http`` facts), ``bodies`` (decompression under the size limit), ``app`` (the Starlette app:
pass-through and faults), ``answers`` (an error in the wire's shape, an answer sent chunk by chunk),
``exchange`` (one request and answer, read back), ``matching`` (which stored conversation a request
continues), ``record`` (the store writes), ``live_audit``, ``worker`` (the recorder's thread, the
console lines and the JSON log), ``agents`` (the agents' session headers and start lines), ``repair``,
``model_routes`` (``--route``: which vessel a model goes to), ``translate*`` (a request rendered for
another wire), ``translated*`` (the routed path and its answers, event by event), ``serve`` (uvicorn).
Needs the ``proxy`` extra (Starlette, uvicorn, zstandard). See docs/proxy.md and docs/proxy-routes.md.
"""

from __future__ import annotations

from toolreplay._proxy.config import ProxyConfig

__all__ = ["ProxyConfig"]

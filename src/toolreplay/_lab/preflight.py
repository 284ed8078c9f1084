"""Before a lab run spends a trial: does the server's chat template drop the tools (design 43)?

A local open-weight server renders the request with the model's chat template, and a template that never
reads ``tools`` (SmolLM2's, DeepSeek V3.1's) silently drops them: every trial would then be a model that
was never told it has a tool. Only a local server (a loopback or private address) is asked, never a paid
provider, and only through its wire's ``dropped_tools`` (``toolreplay.wires.capabilities``):

* llama.cpp: ``GET /props``, whose ``chat_template_caps.supports_tools`` is the template's own probe;
  without capabilities there (an older build), ``POST /apply-template`` with the cell's request: the tools
  are dropped when none of their names is in the prompt;
* Ollama (when ``GET /api/version`` answers): ``POST /api/show``, whose ``capabilities`` list ``tools``
  for a model whose template takes them.

Nothing is posted to a server whose ``GET`` did not say it is one of these.

A server that answers none of these (vLLM, a double, a server that is down) is not judged.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from toolreplay._lab.plan import Cell, LabConfig

#: Seconds each question may take (a local server answers at once).
TIMEOUT = 5.0


def is_local(url: str) -> bool:
    """A loopback or private address (or ``localhost``): a server of the user's own, not a provider."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def dropped_tools(cell: Cell, config: LabConfig) -> str | None:
    """Why the server of ``cell`` drops the request's tools, or None (kept, or not known)."""
    import httpx

    from toolreplay._transport.tls import ssl_context
    from toolreplay.wires import get_wire
    from toolreplay.wires.capabilities import tool_names

    url = config.base_url or cell.vessel.base_url
    if not is_local(url) or not tool_names(cell.body):
        return None
    probe = get_wire(cell.vessel.wire).dropped_tools
    if probe is None:
        return None
    try:
        with httpx.Client(timeout=TIMEOUT, verify=ssl_context()) as client:
            return probe(client, _origin(url), cell.body, cell.vessel.model)
    except (httpx.HTTPError, OSError):
        return None  # down or not answering: the trials will say so


def check_tools(cells: Sequence[Cell], config: LabConfig) -> list[tuple[str, str]]:
    """``(vessel, why)`` for each vessel whose server drops the tools (one request body per vessel: every
    mode declares the same tools, design 8)."""
    seen: set[str] = set()
    out = []
    for cell in cells:
        if cell.vessel.name in seen:
            continue
        seen.add(cell.vessel.name)
        why = dropped_tools(cell, config)
        if why:
            out.append((cell.vessel.name, why))
    return out


__all__ = ["check_tools", "dropped_tools", "is_local"]

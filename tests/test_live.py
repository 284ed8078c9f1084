"""Live provider checks: run only when asked (TOOLREPLAY_LIVE=1) and only for vessels whose key is set.

    TOOLREPLAY_LIVE=1 MOONSHOT_API_KEY=... .venv/bin/python -m pytest tests/test_live.py -m live

Each vessel is sent the bundled demo history with every earlier call replayed as a call, and must accept
it (the provider answers 2xx). Without TOOLREPLAY_LIVE=1 every test here skips, and conftest blocks any
connection outside loopback anyway.
"""

from __future__ import annotations

import os

import pytest

from toolreplay._vessels import BUILTIN
from wire_helpers import is_http

LIVE = os.environ.get("TOOLREPLAY_LIVE") == "1"
HTTP_VESSELS = [v for v in BUILTIN.values() if is_http(v.wire) and v.key_env]


@pytest.mark.live
@pytest.mark.parametrize("vessel", HTTP_VESSELS, ids=[v.name for v in HTTP_VESSELS])
def test_vessel_accepts_replayed_calls(vessel: object, demo_path: object) -> None:
    from toolreplay._api import render
    from toolreplay._history import load_history
    from toolreplay._transport.client import Transport
    from toolreplay._vessels import Vessel

    assert isinstance(vessel, Vessel)
    if not LIVE:
        pytest.skip("live provider calls run only with TOOLREPLAY_LIVE=1")
    key = os.environ.get(vessel.key_env or "")
    if not key:
        pytest.skip(f"{vessel.name}: {vessel.key_env} is not set")
    history = load_history(str(demo_path))
    body = render(history, vessel, "native", max_tokens=256)
    transport = Transport()
    reply = transport.send_sync(vessel, body)
    assert reply.text or reply.calls

"""The read memo's benchmark on the Chat and Responses wires (``bench/proxy_translate_wires.py``): its
requests continue each other, and both sides it times read the same history from them."""

from __future__ import annotations

import itertools
import json

import pytest
from bench.proxy_translate_wires import REQUESTS, continued

from memo_checks import read_sliced
from toolreplay._proxy.bodies import json_value
from toolreplay.wires import get_wire
from toolreplay.wires.read_memo import READ_MEMO


@pytest.mark.parametrize("wire", ["openai-responses", "openai-chat"])
def test_each_request_continues_the_last_and_both_sides_read_alike(wire: str) -> None:
    inbound = get_wire(wire)
    assert inbound.parse_request is not None
    bodies = continued(wire)
    lists = [json.loads(b)[inbound.list_key] for b in bodies]
    assert len(bodies) == REQUESTS + 1 and 190 <= len(lists[-1]) <= 210
    assert all(b[: len(a)] == a and len(b) > len(a) for a, b in itertools.pairwise(lists))
    READ_MEMO.clear()
    for raw in bodies:
        assert read_sliced(inbound, raw) == inbound.parse_request(json_value(raw))

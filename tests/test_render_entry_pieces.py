"""A render cache entry keeps its elements' JSON in pieces (design 60): whatever the order of elements
added, cut back and added again, the pieces are the elements' JSON joined by commas, and a body encoded
with them is the body encoded whole."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from toolreplay._render_entry import _PIECES, Entry
from toolreplay._replay import DEFAULT_SETTINGS
from toolreplay.jsonenc import Spliced, encode
from toolreplay.wires.common import RenderOptions

_ITEM = st.one_of(
    st.integers(-5, 5),
    st.text(max_size=6),
    st.dictionaries(st.sampled_from(["role", "content"]), st.text(max_size=4), max_size=2),
)
#: each step: elements added (and encoded), or the kept elements cut back to a count
_STEPS = st.lists(
    st.one_of(st.lists(_ITEM, min_size=0, max_size=4), st.integers(0, 12)), min_size=1, max_size=60
)


def _entry() -> Entry:
    return Entry("openai-chat", RenderOptions(model="m"), "native", DEFAULT_SETTINGS, False)


@settings(max_examples=examples(200), deadline=None)
@given(_STEPS)
def test_the_pieces_are_the_kept_elements_json_whatever_was_cut_and_added(steps: list[Any]) -> None:
    e = _entry()
    for step in steps:
        if isinstance(step, int):  # what the render cache's truncation does: the ends go, the pieces stay
            del e.items[step:]
            del e.encoded_ends[len(e.items) :]
        else:
            e.items += step
            e.encode_items()
            assert len(e.encoded) <= _PIECES + 1
        joined = b"".join(e.encoded_items())
        assert joined == b",".join(orjson.dumps(x) for x in e.items[: len(e.encoded_ends)])
    e.encode_items()
    pieces = [b"[", *e.encoded_items(), b"]"]
    body = {"model": "m", "messages": Spliced(pieces), "n": [1, 2]}
    assert encode(body) == orjson.dumps({"model": "m", "messages": e.items, "n": [1, 2]})


def test_a_value_orjson_refuses_beside_pieces_raises_type_error() -> None:
    """(the translation then encodes the body whole, with the plain encoder)"""
    with pytest.raises(TypeError):
        encode({"messages": Spliced([b"[]"]), "big": 1 << 70})

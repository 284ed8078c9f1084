"""Byte-stable call ids (design 2): derived from message ids only, unique within a history, everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from toolreplay import ids
from toolreplay._history import load_history
from toolreplay._ids import StemAllocator, call_id, message_stem, stems_for
from toolreplay._replay import prepare_turn_messages

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "src" / "toolreplay" / "data" / "demo.json"


def test_short_alphanumeric_ids_are_their_own_stem() -> None:
    assert message_stem("m2") == "m2"
    assert message_stem("A" * 16) == "A" * 16
    assert call_id("m2", 0) == "replay_m2_0"


def test_known_values_pin_the_scheme() -> None:
    """Fixed expectations: any machine, any Python, any run must give exactly these."""
    assert message_stem("conversation-0001") == "conversa-2c1bf7bfd9f8"
    assert message_stem("conversation-0002") == "conversa-f130eeb15adb"
    assert message_stem("m-1") == "m1-a461b472cb41"
    assert message_stem("m_1") == "m1-54f0b300c951"
    assert message_stem("日本語") == "-77710aedc74e"
    assert message_stem("a" * 17) == "aaaaaaaa-b860666ee296"


@pytest.mark.parametrize(
    "pair",
    [
        ("conversation-0001", "conversation-0002"),
        ("m-1", "m_1"),
        ("m-1", "m1"),
        ("m.1", "m 1"),
        ("msg_" + "x" * 40 + "1", "msg_" + "x" * 40 + "2"),
        ("Ab", "ab"),
        ("日本", "中文"),
    ],
)
def test_close_ids_get_different_stems(pair: tuple[str, str]) -> None:
    a, b = pair
    assert message_stem(a) != message_stem(b)
    assert len(set(stems_for([a, b]))) == 2


def test_collisions_get_a_deterministic_suffix(monkeypatch: pytest.MonkeyPatch) -> None:
    # ids that are not their own stem (a short ASCII alphanumeric id is, without asking message_stem)
    # patched where StemAllocator looks it up: its own module's globals (the public module, whichever
    # object of it this worker imported first)
    monkeypatch.setitem(StemAllocator.stem.__globals__, "message_stem", lambda _mid: "same-000000000000")
    alloc = StemAllocator()
    assert [alloc.stem(m) for m in ("msg-a", "msg-b", "msg-c")] == [
        "same-000000000000",
        "same-000000000000_2",
        "same-000000000000_3",
    ]
    assert alloc.stem("msg-b") == "same-000000000000_2"  # asking again gives the same stem


def test_a_plain_id_taken_as_another_ids_stem_gets_a_suffix() -> None:
    """A short alphanumeric id is its own stem unless an earlier id's stem already took it."""
    alloc = StemAllocator()
    assert alloc.stem("m1") == "m1"
    assert alloc.stem("m1") == "m1"
    alloc._used.add("m2")  # as if an earlier message's stem were "m2"
    assert alloc.stem("m2") == "m2_2"
    assert alloc.stem("conversation-0001") == ids.message_stem("conversation-0001")


#: ids that collide: short ones that are their own stem, one that another's stem may take, long ones
IDS = st.sampled_from(
    ["m1", "m2", "m1_2", "conversation-0001", "conversation-0002", "日本", "msg_" + "x" * 40]
)


@settings(max_examples=examples(200))
@given(st.lists(IDS, max_size=12), st.data())
def test_a_rewound_allocator_is_one_fed_only_the_first_ids(fed: list[str], data: st.DataObject) -> None:
    alloc, sizes = StemAllocator(), [0]
    for i in fed:
        alloc.stem(i)
        sizes.append(len(alloc))
    k = data.draw(st.integers(0, len(fed)))
    alloc.rewind(sizes[k])
    fresh = StemAllocator()
    for i in fed[:k]:
        fresh.stem(i)
    later = data.draw(st.lists(IDS, max_size=8))
    assert [alloc.stem(i) for i in later] == [fresh.stem(i) for i in later]
    assert len(alloc) == len(fresh)


def test_ids_fit_openai_limit() -> None:
    """The longest derived id (hashed stem, suffix, 5-digit position) stays within 40 characters."""
    alloc = StemAllocator()
    stem = alloc.stem("a-very-long-message-id-" + "z" * 200)
    assert len(call_id(f"{stem}_99", 99_999)) <= 40


def _demo_ids() -> list[str]:
    turns = prepare_turn_messages(load_history(DEMO), "native")
    return [c.call_id for t in turns for c in t.calls]


def test_same_ids_across_runs_and_processes() -> None:
    here = _demo_ids()
    assert here == _demo_ids()
    code = (
        "import json, sys\n"
        "from toolreplay._history import load_history\n"
        "from toolreplay._replay import prepare_turn_messages\n"
        "turns = prepare_turn_messages(load_history(sys.argv[1]), 'native')\n"
        "print(json.dumps([t.as_json() for t in turns]))\n"
    )
    pythonpath = os.environ.get("PYTHONPATH", "")
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(DEMO)],
            capture_output=True,
            text=True,
            check=True,
            # a clean environment but the import path, so the checkout under test is the one imported
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin", "PYTHONPATH": pythonpath},
        ).stdout
        for seed in ("0", "12345")
    ]
    assert runs[0] == runs[1]  # a different hash seed changes nothing
    theirs = [c["id"] for t in json.loads(runs[0]) for c in t["calls"]]
    assert theirs == here == ["replay_m03_0", "replay_m05_0", "replay_m07_0", "replay_m09_0"]


_id_alphabet = st.sampled_from([*"ab01-_. ", "é", "日"])
message_ids = st.lists(
    st.one_of(
        st.text(_id_alphabet, min_size=1, max_size=20),
        st.builds(lambda n: f"conversation-{n:04d}", st.integers(0, 9999)),
        st.builds(lambda n, sep: f"m{sep}{n}", st.integers(0, 99), st.sampled_from(["-", "_", ".", ""])),
    ),
    unique=True,
    max_size=30,
)


@given(message_ids)
def test_stems_unique_and_prefix_stable(mids: list[str]) -> None:
    stems = stems_for(mids)
    assert len(set(stems)) == len(stems)
    for k in range(len(mids)):
        assert stems_for(mids[:k]) == stems[:k]  # appending never changes an earlier stem
    for s in stems:
        assert s and all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in s)

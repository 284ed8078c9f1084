"""Gemini 3's streamed function-call arguments (partialArgs): the stream parser puts each call back together
from the real recordings of tests/corpus, and names what is wrong with a broken piece."""

from __future__ import annotations

import re
from typing import Any

import pytest

from corpus_loader import DONE, exchanges
from toolreplay._errors import ResponseFormatError
from toolreplay.wires import get_wire
from toolreplay.wires.reply import Reply


def _read(events: list[Any]) -> Reply:
    parser = get_wire("gemini").stream_parser()
    for event in events:
        if event != DONE:
            parser.feed(event)
    return parser.finish()


def _recorded(name: str) -> Reply:
    (ex,) = [ex for ex in exchanges("gemini", streamed=True) if ex.id == f"gemini/vercel-ai/{name}.stream"]
    return _read(list(ex.events()))


def test_two_streamed_calls_with_their_strings() -> None:
    reply = _recorded("google-stream-tool-call-arguments")
    assert [(c.name, c.input) for c in reply.calls] == [
        ("getWeather", {"location": "Boston"}),
        ("getWeather", {"location": "San Francisco"}),
    ]
    # the signature rides on the part that opened the first call, and stays with it
    assert reply.calls[0].provider_data is not None and reply.calls[1].provider_data is None
    assert reply.finish_reason == "STOP" and reply.usage.output_tokens == 23 + 132


def test_a_whole_call_without_arguments_then_streamed_ones() -> None:
    reply = _recorded("google-stream-no-args-tool-call")
    assert [(c.name, c.input) for c in reply.calls] == [
        ("read_theme", {}),
        ("read_screen", {"id": "A"}),
        ("read_screen", {"id": "B"}),
        ("read_screen", {"id": "C"}),
    ]


def test_array_items_numbers_and_a_call_closed_by_its_last_piece() -> None:
    reply = _recorded("google-stream-tool-call-array-arguments-missing-terminal-function-call")
    (call,) = reply.calls
    assert call.input == {
        "operations": [
            {"action": "add", "description": "Fresh red apple", "itemid": "apple_001", "price": 0.5},
            {"action": "add", "description": "Ripe yellow banana", "itemid": "banana_001", "price": 0.3},
        ]
    }


def test_nested_objects_and_a_string_in_several_pieces() -> None:
    (call,) = _recorded("google-vertex-stream-tool-call-arguments-nested.1").calls
    recipe = call.input["recipe"]
    assert recipe["name"] == "Lasagna" and len(recipe["ingredients"]) == 10 and len(recipe["steps"]) == 10
    assert recipe["ingredients"][9] == {"amount": "1/2 tsp", "name": "Pepper"}
    assert recipe["steps"][1] == "Cook lasagna noodles according to package directions, drain and set aside."
    assert recipe["steps"][4] == "In a 9x13 baking dish, spread a thin layer of meat sauce."


def _chunk(*parts: Any, finish: str | None = None) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand]}


def _pieces(*args: dict[str, Any], more: bool = True) -> dict[str, Any]:
    call: dict[str, Any] = {"partialArgs": list(args)}
    if more:
        call["willContinue"] = True
    return {"functionCall": call}


def test_every_value_kind_quoted_keys_and_snake_case() -> None:
    reply = _read(
        [
            _chunk({"functionCall": {"name": "set", "willContinue": True}}),
            _chunk(_pieces({"jsonPath": "$.on", "boolValue": False}, {"jsonPath": "$.n", "numberValue": 3})),
            _chunk(_pieces({"jsonPath": "$['odd key'].x", "nullValue": None})),
            _chunk(
                {
                    "function_call": {
                        "partial_args": [{"json_path": "$.s", "string_value": "a"}],
                        "will_continue": True,
                    }
                }
            ),
            _chunk(_pieces({"jsonPath": "$.list[1]", "stringValue": "b"}, more=False)),
            _chunk({"text": "done"}, finish="STOP"),
        ]
    )
    (call,) = reply.calls
    assert call.input == {"on": False, "n": 3, "odd key": {"x": None}, "s": "a", "list": [None, "b"]}
    assert reply.text == "done"


def test_a_string_is_joined_only_while_its_pieces_say_it_goes_on() -> None:
    reply = _read(
        [
            _chunk({"functionCall": {"name": "note", "willContinue": True}}),
            _chunk(_pieces({"jsonPath": "$.t", "stringValue": "ab", "willContinue": True})),
            _chunk(_pieces({"jsonPath": "$.t", "stringValue": "cd"})),
            _chunk(_pieces({"jsonPath": "$.t", "stringValue": "new"})),
            _chunk({"functionCall": {}}, finish="STOP"),
        ]
    )
    assert reply.calls[0].input == {"t": "new"}


@pytest.mark.parametrize(
    ("part", "message"),
    [
        ({"functionCall": {"partialArgs": []}}, "functionCall.name is empty"),
        (_pieces({"jsonPath": "location", "stringValue": "x"}), "does not start with '$'"),
        (_pieces({"jsonPath": "$.a..b", "stringValue": "x"}), "cannot read it from '..b'"),
        (_pieces({"jsonPath": "$", "stringValue": "x"}), "names no argument"),
        (_pieces({"jsonPath": "$.a[0]", "stringValue": "x"}), "index [0] into dict"),
        ({"functionCall": {"partialArgs": {"jsonPath": "$.a"}}}, "partialArgs is not an array"),
    ],
)
def test_a_broken_piece_is_named(part: dict[str, Any], message: str) -> None:
    opened = {"functionCall": {"name": "f", "willContinue": True, "args": {"a": {}}}}
    events = [_chunk(part, finish="STOP")] if "name is empty" in message else [_chunk(opened), _chunk(part)]
    with pytest.raises(ResponseFormatError, match=re.escape(message)):
        _read(events)

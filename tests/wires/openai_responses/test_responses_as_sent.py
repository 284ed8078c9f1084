"""Every recorded Responses request body of the development corpus, imported and rendered ``--as-sent``, is
JSON-equal to the body that was recorded (design 38), and its normal render for every other vessel keeps
its calls as calls and is valid there."""

from __future__ import annotations

from typing import Any

import pytest

from corpus_loader import Exchange, exchanges
from toolreplay import read_history, render

CASES = [pytest.param(ex, id=ex.id) for ex in exchanges("openai-responses", with_request=True)]


def _history(ex: Exchange) -> Any:
    (h,) = read_history(ex.request, "openai-responses").conversations
    return h


@pytest.mark.parametrize("ex", CASES)
def test_a_recorded_responses_body_renders_back_as_it_was_sent(ex: Exchange) -> None:
    assert render(_history(ex), as_sent=True) == ex.request


def test_the_corpus_has_responses_bodies() -> None:
    assert len(CASES) >= 60

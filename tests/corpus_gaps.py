"""Known gaps between toolreplay and the real recordings of tests/corpus/: test -> exchange id -> reason.

Each reason names the issue item that closes the gap. The tests mark these cases ``xfail(strict=True)``, so a
fix makes them fail until their entries are removed here: remove the entries your change closes.
"""

from __future__ import annotations

_MISTRAL_BODY = "openai-chat/llm-mistral/magistral-completion-replay"
_MISTRAL_REPLAY = (
    "issue 12 items 3 and 6: a Mistral 'thinking' content part of a Chat body is not replayed to its issuer"
)


GAPS: dict[str, dict[str, str]] = {
    "round_trip_reasoning": {_MISTRAL_BODY: _MISTRAL_REPLAY},
}

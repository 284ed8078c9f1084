"""Known gaps between toolreplay and the real recordings of tests/corpus/: test -> exchange id -> reason.

Each reason names the issue item that closes the gap. The tests mark these cases ``xfail(strict=True)``, so a
fix makes them fail until their entries are removed here: remove the entries your change closes.
"""

from __future__ import annotations

_MISTRAL_BODY = "openai-chat/llm-mistral/magistral-completion-replay"
_MISTRAL_REPLAY = (
    "issue 12 items 3 and 6: a Mistral 'thinking' content part of a Chat body is not replayed to its issuer"
)

# Mistral's SDK sends "stream": false; a first turn of plain text with a model that is not OpenAI's is then,
# byte for byte, a valid Ollama body, and design 27 ranks Ollama's "stream": false habit above the fallback.
_MISTRAL_PLAIN = (
    "openai-chat/openllmetry/test_mistralai_async_chat_legacy.0",
    "openai-chat/openllmetry/test_mistralai_chat_legacy.0",
    "openai-chat/openllmetry/test_mistralai_chat_with_cache_tokens.0",
)
_AMBIGUOUS = (
    'issue 12 item 6: a plain-text Mistral body with "stream": false carries no mark of Chat\'s and reads as '
    "Ollama's; only the URL tells them apart"
)

GAPS: dict[str, dict[str, str]] = {
    "import_detects": dict.fromkeys(_MISTRAL_PLAIN, _AMBIGUOUS),
    "audit_detects": dict.fromkeys(_MISTRAL_PLAIN, _AMBIGUOUS),
    "round_trip_reasoning": {_MISTRAL_BODY: _MISTRAL_REPLAY},
}

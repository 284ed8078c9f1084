"""Known gaps between toolreplay and the real recordings of tests/corpus/: test -> exchange id -> reason.

Each reason names the issue item that closes the gap. The tests mark these cases ``xfail(strict=True)``, so a
fix makes them fail until their entries are removed here: remove the entries your change closes.
"""

from __future__ import annotations

_MISTRAL_BODY = "openai-chat/llm-mistral/magistral-completion-replay"
_MISTRAL_REPLAY = (
    "issue 12 items 3 and 6: a Mistral 'thinking' content part of a Chat body is not replayed to its issuer"
)


# Round trip (read the body, render it again for the same wire and model)
_RT_MEDIA = (
    "anthropic/llm-anthropic/test_image_prompt.0",
    "anthropic/llm-anthropic/test_image_with_no_prompt.0",
    "anthropic/llm-anthropic/test_url_prompt.2",
    "openai-responses/crewai/TestAgentMultimodalOpenAIResponses.test_image_file_openai-o4-mini-responses_.0",
    "openai-responses/crewai/TestAgentMultimodalOpenAIResponses.test_image_file_openai-o4-mini-responses_.1",
    "openai-responses/crewai/TestAgentMultimodalOpenAIResponses.test_pdf_file_openai-o4-mini-responses_.0",
    "openai-responses/crewai/TestAgentMultimodalOpenAIResponses.test_pdf_file_openai-o4-mini-responses_.1",
    "openai-responses/crewai/TestCrewMultimodalOpenAIResponses.test_image_file_openai-o4-mini-responses_.0",
    "openai-responses/crewai/TestCrewMultimodalOpenAIResponses.test_pdf_file_openai-o4-mini-responses_.0",
    "openai-responses/llm-openrouter/test_image_prompt.1",
)
_IMAGE_ONLY = "anthropic/llm-anthropic/test_image_with_no_prompt.0"

_MEDIA = (
    "issue 12 item 5: images and documents in the body's user content (Anthropic image blocks, Responses "
    "input_image/input_file parts) are reported on import but not replayed"
)
_ENDS_IMAGE_ONLY = (
    "issue 12 item 5: a user message holding only an image is not replayed, so the body loses its last "
    "message"
)

GAPS: dict[str, dict[str, str]] = {
    "round_trip_reasoning": {_MISTRAL_BODY: _MISTRAL_REPLAY},
    "round_trip_media": dict.fromkeys(_RT_MEDIA, _MEDIA),
    "round_trip_ending": {_IMAGE_ONLY: _ENDS_IMAGE_ONLY},
}

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
_RT_STEPS = (
    "gemini/llm-gemini/test_tools.2",
    "openai-chat/llm/test_tool_use_chain_of_two_calls.2",
    "openai-responses/llm/test_responses_interleaved_reasoning_between_tool_calls.2",
    "openai-responses/llm/test_responses_interleaved_reasoning_between_tool_calls.3",
    "openai-responses/llm/test_responses_round_trips_encrypted_reasoning.2",
)
_RT_REASONING = (
    "anthropic/crewai/cassettes.test_anthropic_thinking_blocks_preserved_across_turns.1",
    "anthropic/crewai/test_anthropic_thinking_blocks_preserved_across_turns.1",
    "anthropic/llm-anthropic/test_fixed_version_tool_chain_with_thinking_display_regression.1",
    "openai-responses/llm/test_responses_interleaved_reasoning_between_tool_calls.1",
    "openai-responses/llm/test_responses_interleaved_reasoning_between_tool_calls.2",
    "openai-responses/llm/test_responses_interleaved_reasoning_between_tool_calls.3",
    "openai-responses/llm/test_responses_round_trips_encrypted_reasoning.1",
    "openai-responses/llm/test_responses_round_trips_encrypted_reasoning.2",
)
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
_MID_TURN = (
    "anthropic/crewai/TestAnthropicToolCallStreaming.test_anthropic_streaming_emits_tool_call_events.1"
)
_IMAGE_ONLY = "anthropic/llm-anthropic/test_image_with_no_prompt.0"

_STEPS = (
    "issue 12 item 2: steps are flattened: a turn that called, read the answer and called again renders as "
    "one batch of calls followed by all the answers"
)
_REASONING = (
    "issue 12 item 3: reasoning (Anthropic thinking blocks with their signatures, Responses reasoning items "
    "with encrypted_content) is kept on import but not replayed to the same issuer"
)
_MEDIA = (
    "issue 12 item 5: images and documents in the body's user content (Anthropic image blocks, Responses "
    "input_image/input_file parts) are reported on import but not replayed"
)
_WORDS = (
    "issue 12 items 2 and 4: the words the model wrote before its calls do not ride with them: the imported "
    "mid-turn body renders back with that text after the tool results"
)
_ENDS_MID_TURN = (
    "issue 12 item 4: a mid-turn body (ending with tool results) renders back ending with the model's "
    "earlier words, which Anthropic reads as a prefill"
)
_ENDS_IMAGE_ONLY = (
    "issue 12 item 5: a user message holding only an image is not replayed, so the body loses its last "
    "message"
)

GAPS: dict[str, dict[str, str]] = {
    "round_trip_steps": dict.fromkeys(_RT_STEPS, _STEPS),
    "round_trip_reasoning": {**dict.fromkeys(_RT_REASONING, _REASONING), _MISTRAL_BODY: _MISTRAL_REPLAY},
    "round_trip_media": dict.fromkeys(_RT_MEDIA, _MEDIA),
    "round_trip_words": {_MID_TURN: _WORDS},
    "round_trip_ending": {_MID_TURN: _ENDS_MID_TURN, _IMAGE_ONLY: _ENDS_IMAGE_ONLY},
}

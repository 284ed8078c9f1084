"""The corpus bodies the as-sent render (design 38) cannot reproduce yet: wire -> (reason, exchange ids).

tests/test_as_sent.py marks these ``xfail(strict=True)``: a wire's change that makes one render back as sent
flips it to a failure until its id is removed here. A wire whose list is empty is done; remove its entry.
Run the test, read its XPASS lines, delete those ids.
"""

from __future__ import annotations

AS_SENT_GAPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "anthropic": (
        "issue 22: the Anthropic wire does not render as sent yet (its helper adds render_as_sent:"
        " system blocks, cache_control, text blocks apart, is_error, server tools)",
        (
            "anthropic/crewai/TestCrewMultimodalUnsupportedTypes.test_audio_with_anthropic_uses_tool.0",
            "anthropic/crewai/TestCrewMultimodalUnsupportedTypes.test_audio_with_anthropic_uses_tool.1",
            "anthropic/crewai/test_anthropic_agent_kickoff_structured_output_with_tools.0",
            "anthropic/crewai/test_anthropic_agent_kickoff_structured_output_with_tools.1",
            "anthropic/crewai/test_anthropic_cached_prompt_tokens_with_tools.0",
            "anthropic/crewai/test_anthropic_cached_prompt_tokens_with_tools.1",
            "anthropic/crewai/test_tool_search_discovers_and_calls_tool.0",
            "anthropic/crewai/test_tool_search_saves_input_tokens.1",
            "anthropic/llm-anthropic/test_async_prompt.0",
            "anthropic/llm-anthropic/test_async_prompt.1",
            "anthropic/llm-anthropic/test_fixed_version_tool_chain_regression.0",
            "anthropic/llm-anthropic/test_fixed_version_tool_chain_regression.1",
            "anthropic/llm-anthropic/test_fixed_version_tool_chain_with_thinking_display_regression.0",
            "anthropic/llm-anthropic/test_fixed_version_tool_chain_with_thinking_display_regression.1",
            "anthropic/llm-anthropic/test_opus_46_adaptive_thinking.0",
            "anthropic/llm-anthropic/test_opus_46_prompt.0",
            "anthropic/llm-anthropic/test_opus_46_schema.0",
            "anthropic/llm-anthropic/test_parts_thinking.0",
            "anthropic/llm-anthropic/test_prompt.0",
            "anthropic/llm-anthropic/test_prompt_with_prefill_and_stop_sequences.0",
            "anthropic/llm-anthropic/test_schema_prompt.0",
            "anthropic/llm-anthropic/test_schema_prompt_async.0",
            "anthropic/llm-anthropic/test_sonnet_46_effort_without_thinking.0",
            "anthropic/llm-anthropic/test_sonnet_46_prompt.0",
            "anthropic/llm-anthropic/test_stream_events_text.0",
            "anthropic/llm-anthropic/test_stream_events_thinking.0",
            "anthropic/llm-anthropic/test_stream_events_tool_calls.0",
            "anthropic/llm-anthropic/test_thinking_prompt.0",
            "anthropic/llm-anthropic/test_tools.0",
            "anthropic/llm-anthropic/test_tools.1",
            "anthropic/llm-anthropic/test_web_search.0",
            "anthropic/openinference/TestModels.test_litellm_reasoning_model_has_expected_attributes.1",
            "anthropic/openinference/TestToolCallsInChatResponse.test_anthropic.0",
            "anthropic/openinference/test_anthropic_instrumentation_tool_use_in_input_with_block_params_.0",
            "anthropic/openinference/test_anthropic_instrumentation_tool_use_in_input_with_blocks_.0",
            "anthropic/openinference/test_completion_streaming_with_extended_thinking_anthropic.0",
            "anthropic/openllmetry/test_anthropic_thinking_legacy.0",
            "anthropic/openllmetry/test_anthropic_thinking_streaming_legacy.0",
            "anthropic/openllmetry/test_async_anthropic_thinking_legacy.0",
            "anthropic/openllmetry/test_async_anthropic_thinking_streaming_legacy.0",
            "anthropic/openllmetry/test_tool_calls_anthropic_text_block_and_history.0",
        ),
    ),
}

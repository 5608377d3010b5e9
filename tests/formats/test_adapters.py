import pytest

from judgekit.errors import JudgekitError
from judgekit.formats.adapters import (
    anthropic_transcript,
    detect_format,
    openai_chat_transcript,
    to_transcript,
)

OPENAI = [
    {"role": "developer", "content": "You are AirDesk."},
    {"role": "user", "content": [{"type": "text", "text": "Change my email"}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "update_email", "arguments": '{"user_id": "u1", "email": "a@x.io"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_a", "content": '{"ok": true}'},
    {"role": "assistant", "content": "Done: your email is a@x.io."},
]

ANTHROPIC = {
    "system": [{"type": "text", "text": "You are AirDesk."}],
    "messages": [
        {"role": "user", "content": "Change my email"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should call the tool", "signature": "x"},
                {"type": "text", "text": "Let me do that."},
                {"type": "tool_use", "id": "toolu_1", "name": "update_email", "input": {"user_id": "u1"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_user", "input": {"user_id": "u1"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [{"type": "text", "text": "{}"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "email locked",
                    "is_error": True,
                },
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}},
                {"type": "text", "text": "thanks?"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Sorry, it is locked."}]},
    ],
}


def test_openai_messages_become_a_transcript_with_parsed_arguments():
    t = openai_chat_transcript(OPENAI, case_id="c1", trial=2, tools=[{"type": "function"}], agent_model="m")
    assert (t.case_id, t.trial) == ("c1", 2)
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "assistant"]
    (call,) = t.calls()
    assert call.call.arguments == {"user_id": "u1", "email": "a@x.io"}
    assert call.result == '{"ok": true}'
    assert t.final_answer() == "Done: your email is a@x.io."
    assert t.run is not None
    assert t.run.agent_model == "m"
    assert t.run.tool_definitions_hash is not None
    assert t.run.tool_definitions_hash.startswith("sha256:")


def test_openai_states_and_legacy_function_role():
    msgs = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{"}}]},
        {"role": "function", "name": "f", "content": "Error: boom"},
    ]
    t = openai_chat_transcript(msgs, case_id="c", final_state={"users": {"u1": {"a": 1}}}, ended_by="agent")
    (call,) = t.calls()
    assert call.call.arguments is None
    assert call.call.arguments_error is not None
    assert call.is_error
    assert t.final_state is not None
    assert t.final_state.data == {"users": {"u1": {"a": 1}}}
    assert t.ended_by == "agent"


def test_anthropic_blocks_become_calls_results_and_text():
    t = anthropic_transcript(ANTHROPIC["messages"], system=ANTHROPIC["system"], case_id="c1")
    assert [m.role for m in t.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
    ]
    assert t.messages[0].content == "You are AirDesk."
    assistant = t.messages[2]
    assert assistant.content == "Let me do that."  # the thinking block is not something the agent said
    calls = t.calls()
    assert [(c.call.id, c.call.name, c.call.arguments) for c in calls] == [
        ("toolu_1", "update_email", {"user_id": "u1"}),
        ("toolu_2", "get_user", {"user_id": "u1"}),
    ]
    # results are paired by tool_use_id, whatever their order
    assert calls[0].result == "Error: email locked"
    assert calls[0].is_error
    assert calls[1].result == "{}"
    assert not calls[1].is_error
    assert t.messages[5].content == "thanks?"
    assert t.metadata["omitted_blocks"] == {"image": 1}
    assert t.metadata["source_format"] == "anthropic-messages"
    assert t.run is not None
    assert t.run.prompt_hash is not None


def test_detection_and_to_transcript_pick_the_right_adapter():
    assert detect_format(OPENAI) == "openai"
    assert detect_format({"messages": OPENAI}) == "openai"
    assert detect_format(ANTHROPIC) == "anthropic"
    assert detect_format(ANTHROPIC["messages"]) == "anthropic"
    a = to_transcript(ANTHROPIC, case_id="c1")
    o = to_transcript({"messages": OPENAI, "model": "gpt"}, case_id="c1")
    assert len(a.calls()) == 2
    assert len(o.calls()) == 1
    assert o.run is not None
    assert o.run.agent_model == "gpt"
    # plain text conversations without a system field are OpenAI shaped
    assert detect_format([{"role": "user", "content": "hi"}]) == "openai"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param("hello", r"expected a list of messages or an object with 'messages'", id="string"),
        pytest.param({"turns": []}, r"found an object with keys \{turns\}", id="no_messages_key"),
        pytest.param([{"text": "hi"}], r"messages\[0\]: expected an object with a 'role'", id="no_role"),
        pytest.param([{"role": "robot", "content": "x"}], r"found role\(s\) 'robot'", id="unknown_role"),
        pytest.param([["user", "hi"]], r"messages\[0\]: expected an object with a 'role'", id="pairs"),
    ],
)
def test_unknown_shapes_are_refused_with_what_was_expected(data, message):
    with pytest.raises(JudgekitError, match=message) as info:
        to_transcript(data, case_id="c")
    assert "unknown transcript shape" in str(info.value)


def test_anthropic_blocks_given_to_the_openai_adapter_point_at_the_right_one():
    with pytest.raises(
        JudgekitError,
        match=r"messages\[1\].content.*Anthropic content blocks \(thinking, tool_use\); "
        r"use anthropic_transcript",
    ):
        openai_chat_transcript(ANTHROPIC["messages"], case_id="c")


def test_openai_messages_given_to_the_anthropic_adapter_point_at_the_right_one():
    with pytest.raises(JudgekitError, match=r"messages\[0\].*role 'developer'.*use openai_chat_transcript"):
        anthropic_transcript(OPENAI, case_id="c")
    with pytest.raises(JudgekitError, match=r"messages\[1\].*found tool_calls.*use openai_chat_transcript"):
        anthropic_transcript(OPENAI[1:4], case_id="c")


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        pytest.param(
            [{"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}],
            r"content\[0\]: expected tool_use with text 'id' and 'name'",
            id="tool_use_without_id",
        ),
        pytest.param(
            [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}],
            r"expected tool_result with a text 'tool_use_id'",
            id="tool_result_without_id",
        ),
        pytest.param(
            [{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "a"}]}],
            r"content\[0\].type: expected text, tool_use, server tool blocks, thinking or redacted_thinking",
            id="tool_result_in_assistant_turn",
        ),
        pytest.param(
            [{"role": "user", "content": [{"text": "no type"}]}],
            r"expected a content block with a 'type'",
            id="block_without_type",
        ),
        pytest.param(
            [{"role": "user", "content": 42}],
            r"expected text or content blocks; found int",
            id="numeric_content",
        ),
    ],
)
def test_malformed_anthropic_blocks_are_located(messages, message):
    with pytest.raises(JudgekitError, match=message):
        anthropic_transcript(messages, case_id="c")


def test_openai_malformed_message_is_reported_not_raised_as_a_traceback():
    with pytest.raises(
        JudgekitError, match=r"not a valid OpenAI chat transcript: messages.0.colour: Extra inputs"
    ):
        openai_chat_transcript([{"role": "user", "content": "x", "colour": "red"}], case_id="c")


def test_server_tool_blocks_in_an_assistant_turn_become_a_call_and_its_result():
    t = anthropic_transcript(
        [
            {"role": "user", "content": "What is the baggage policy?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "server_tool_use",
                        "id": "srv_1",
                        "name": "web_search",
                        "input": {"query": "bags"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srv_1",
                        "content": [
                            {"type": "web_search_result", "url": "https://example.test", "title": "Bags"}
                        ],
                    },
                    {"type": "text", "text": "One bag is free."},
                ],
            },
        ],
        case_id="c",
    )
    assert [m.role for m in t.messages] == ["user", "assistant", "tool"]
    (call,) = t.calls()
    assert (call.call.name, call.call.arguments) == ("web_search", {"query": "bags"})
    assert call.result is not None
    assert '"url": "https://example.test"' in call.result
    assert t.final_answer() == "One bag is free."

"""Tests for judgekit.transcript: messages, parsed tool calls, states, run records, JSONL streaming."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from judgekit.errors import JudgekitError, Problem, ProblemsError
from judgekit.state import load_state
from judgekit.transcript import (
    Message,
    StateRef,
    ToolCall,
    Transcript,
    iter_transcripts,
    read_transcripts,
)

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "airdesk"


def openai_call(name: str, arguments: str, call_id: str | None = "c1") -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return call


def transcript(messages: list[dict[str, Any]], **extra: Any) -> Transcript:
    return Transcript.model_validate({"case_id": "c", "messages": messages, **extra})


# --------------------------------------------------------------------------- tool calls


def test_openai_tool_call_arguments_are_parsed_once() -> None:
    call = ToolCall.model_validate(openai_call("issue_refund", '{"amount": 412.18, "payment_id": "P-1"}'))
    assert call.id == "c1"
    assert call.name == "issue_refund"
    assert call.arguments == {"amount": 412.18, "payment_id": "P-1"}
    assert call.arguments_error is None
    assert call.raw_arguments is None


def test_already_parsed_arguments_are_kept() -> None:
    call = ToolCall.model_validate({"id": "x", "name": "t", "arguments": {"n": 1}})
    assert call.arguments == {"n": 1}


def test_empty_argument_string_is_an_empty_mapping() -> None:
    assert ToolCall.model_validate(openai_call("t", "  ")).arguments == {}


def test_invalid_json_arguments_are_kept_with_the_error() -> None:
    raw = '{"customer_id": "C-1008", "phone": "+81"'
    call = ToolCall.model_validate(openai_call("update_contact", raw))
    assert call.arguments is None
    assert call.raw_arguments == raw
    assert call.arguments_error == ("arguments are not valid JSON: Expecting ',' delimiter at column 41")


def test_non_object_arguments_are_an_error() -> None:
    call = ToolCall.model_validate(openai_call("t", "[1, 2]"))
    assert call.arguments is None
    assert call.arguments_error == "arguments must be a JSON object, got list"
    assert call.raw_arguments == "[1, 2]"


def test_unknown_tool_call_field_is_rejected() -> None:
    with pytest.raises(ValidationError, match="extra"):
        ToolCall.model_validate({"id": "x", "name": "t", "colour": "red"})


# --------------------------------------------------------------------------- messages


def test_content_parts_are_joined() -> None:
    message = Message.model_validate(
        {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "there"}]}
    )
    assert message.content == "hello\nthere"


def test_null_tool_calls_are_empty() -> None:
    assert Message.model_validate({"role": "assistant", "content": "x", "tool_calls": None}).tool_calls == ()


def test_unknown_role_is_rejected() -> None:
    with pytest.raises(ValidationError):
        Message.model_validate({"role": "robot", "content": "x"})


# --------------------------------------------------------------------------- pairing calls with results


def test_calls_are_paired_with_results_by_id() -> None:
    t = transcript(
        [
            {"role": "user", "content": "refund me"},
            {
                "role": "assistant",
                "tool_calls": [openai_call("a", "{}", "id-a"), openai_call("b", '{"x": 1}', "id-b")],
            },
            {"role": "tool", "tool_call_id": "id-b", "content": "B done"},
            {"role": "tool", "tool_call_id": "id-a", "content": "Error: card expired"},
            {"role": "assistant", "content": "done"},
        ]
    )
    calls = t.calls()
    assert [(c.index, c.message_index, c.call.name, c.result) for c in calls] == [
        (0, 1, "a", "Error: card expired"),
        (1, 1, "b", "B done"),
    ]
    assert [c.is_error for c in calls] == [True, False]


def test_id_less_tool_calls_get_stable_ids_and_pair_by_order() -> None:
    t = transcript(
        [
            {"role": "assistant", "tool_calls": [openai_call("a", "{}", None), openai_call("b", "{}", None)]},
            {"role": "tool", "content": "result of a"},
            {"role": "tool", "content": "result of b"},
            {"role": "assistant", "tool_calls": [openai_call("c", "{}", None)]},
            {"role": "tool", "content": "result of c"},
        ]
    )
    calls = t.calls()
    assert [c.call.id for c in calls] == ["call_0", "call_1", "call_2"]
    assert [c.result for c in calls] == ["result of a", "result of b", "result of c"]
    assert [m.tool_call_id for m in t.messages if m.role == "tool"] == ["call_0", "call_1", "call_2"]


def test_id_less_result_answers_the_earliest_unanswered_call() -> None:
    t = transcript(
        [
            {"role": "assistant", "tool_calls": [openai_call("a", "{}", "A"), openai_call("b", "{}", "B")]},
            {"role": "tool", "tool_call_id": "B", "content": "b"},
            {"role": "tool", "content": "a"},
        ]
    )
    assert [(c.call.name, c.result) for c in t.calls()] == [("a", "a"), ("b", "b")]


def test_call_without_result_has_none() -> None:
    t = transcript([{"role": "assistant", "tool_calls": [openai_call("a", "{}", "A")]}])
    (call,) = t.calls()
    assert call.result is None
    assert call.is_error is False


@pytest.mark.parametrize(
    ("content", "is_error"),
    [
        pytest.param("Error: no seats", True, id="error_prefix"),
        pytest.param("  error - timeout", True, id="lowercase_after_space"),
        pytest.param('{"error": "card expired"}', True, id="json_error_key"),
        pytest.param('{"status": "ok"}', False, id="json_without_error"),
        pytest.param('{"error": broken', False, id="broken_json"),
        pytest.param("[1, 2]", False, id="json_list"),
        pytest.param("All fine, no errors", False, id="word_error_later"),
    ],
)
def test_error_results_are_recognised(content: str, is_error: bool) -> None:
    t = transcript(
        [
            {"role": "assistant", "tool_calls": [openai_call("a", "{}", "A")]},
            {"role": "tool", "tool_call_id": "A", "content": content},
        ]
    )
    assert t.calls()[0].is_error is is_error


def test_assistant_texts_and_final_answer() -> None:
    t = transcript(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "first"},
            {"role": "assistant", "tool_calls": [openai_call("a", "{}", "A")]},
            {"role": "tool", "tool_call_id": "A", "content": "x"},
            {"role": "assistant", "content": "last"},
        ]
    )
    assert t.assistant_texts() == [(1, "first"), (4, "last")]
    assert t.final_answer() == "last"
    assert transcript([{"role": "user", "content": "hi"}]).final_answer() is None


# --------------------------------------------------------------------------- states and run records


def test_state_ref_string_is_a_path() -> None:
    assert StateRef.model_validate("states/final.sql") == StateRef(path="states/final.sql")


def test_state_ref_mapping_without_path_or_data_is_inline_data() -> None:
    ref = StateRef.model_validate({"orders": {"O-1": {"status": "open"}}})
    assert ref.path is None
    assert ref.data == {"orders": {"O-1": {"status": "open"}}}


def test_state_ref_needs_exactly_one_form() -> None:
    with pytest.raises(ValidationError, match="a state is either a path or inline data"):
        StateRef.model_validate({"path": "a.json", "data": {}})
    with pytest.raises(ValidationError, match="a state is either a path or inline data"):
        StateRef.model_validate({"path": None, "data": None})


def test_empty_mapping_is_an_empty_inline_state() -> None:
    assert StateRef.model_validate({}) == StateRef(data={})


def test_full_transcript_with_run_record() -> None:
    t = transcript(
        [{"role": "user", "content": "hi"}],
        trial=3,
        initial_state="../fixtures/base.sql",
        final_state={"data": {"t": {}}},
        run={
            "agent_model": "m",
            "prompt_hash": "p",
            "tool_definitions_hash": "h",
            "app_version": "1.0",
            "fixture_version": "f",
            "config": {"temperature": 0.2},
        },
    )
    assert t.trial == 3
    assert t.initial_state == StateRef(path="../fixtures/base.sql")
    assert t.final_state is not None
    assert t.final_state.data == {"t": {}}
    assert t.run is not None
    assert t.run.config == {"temperature": 0.2}


def test_trial_numbers_start_at_one() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        transcript([], trial=0)


def test_transcripts_are_frozen() -> None:
    t = transcript([{"role": "user", "content": "hi"}])
    with pytest.raises(ValidationError):
        t.case_id = "other"  # type: ignore[misc]


# --------------------------------------------------------------------------- JSONL streaming


def line(**fields: Any) -> str:
    return json.dumps({"case_id": "c", "messages": [], **fields})


def test_iter_transcripts_streams_and_locates_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(
        (line(trial=1) + "\n\n{oops\n" + line(trial=0) + "\n").encode()
        + b'{"case_id": "\xff"}\n'
        + (line(trial=2) + "\n").encode()
    )
    stream = iter_transcripts(path)
    first = next(stream)
    assert isinstance(first, Transcript)
    assert first.trial == 1
    rest = list(stream)
    assert [str(item) for item in rest[:3]] == [
        f"{path}:3: malformed JSON: Expecting property name enclosed in double quotes (column 2)",
        f"{path}:4: trial: Input should be greater than or equal to 1",
        f"{path}:5: not valid UTF-8 (byte offset 13 in the line)",
    ]
    assert isinstance(rest[3], Transcript)
    assert rest[3].trial == 2


def test_iter_transcripts_is_lazy(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(line(trial=1) + "\n", encoding="utf-8")
    stream = iter_transcripts(path)
    path.write_text(line(trial=1) + "\n" + line(trial=2) + "\n", encoding="utf-8")
    # Nothing was read before the first next(): the file as it is now is streamed.
    assert [t.trial for t in stream if isinstance(t, Transcript)] == [1, 2]


def test_unknown_transcript_field_is_a_located_problem(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(line(trail=2) + "\n", encoding="utf-8")
    (problem,) = list(iter_transcripts(path))
    assert isinstance(problem, Problem)
    assert (problem.line, problem.field) == (1, "trail")
    assert "Extra inputs are not permitted" in problem.message


def test_read_transcripts_raises_every_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("{bad\n" + line() + "\n[1]\n", encoding="utf-8")
    with pytest.raises(ProblemsError) as info:
        read_transcripts(path)
    assert [p.line for p in info.value.problems] == [1, 3]


def test_read_transcripts_of_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match="cannot read transcripts"):
        read_transcripts(tmp_path / "absent.jsonl")


def test_seed_shaped_reference_transcript_loads() -> None:
    path = Path(__file__).parent / "fixtures/seed_shapes/transcripts/pol-0117/reference.jsonl"
    (t,) = read_transcripts(path)
    assert t.case_id == "pol-0117"
    assert [c.call.name for c in t.calls()] == ["find_policy", "refund_premium"]
    assert t.calls()[1].call.arguments == {"premium_id": "PRM-3307", "amount": 86.4, "to": "card"}
    assert t.final_state is not None
    assert t.final_state.path is not None
    final = load_state(path.parent / t.final_state.path)
    assert final.tables["premium_refunds"]["1"] == {
        "refund_id": 1,
        "premium_id": "PRM-3307",
        "amount": 86.4,
        "to": "card",
    }


def test_example_runs_load_with_states() -> None:
    for name in ("agent-v1.jsonl", "agent-v2.jsonl"):
        path = EXAMPLE / "runs" / name
        runs = read_transcripts(path)
        assert len(runs) >= 24 * 4
        assert {t.trial for t in runs} == {1, 2, 3, 4}
        for t in runs:
            assert t.run is not None
            assert t.run.agent_model
            assert t.final_state is not None
            assert t.final_state.path is not None
            assert (path.parent / t.final_state.path).is_file()
    bad_args = [
        c.call
        for t in read_transcripts(EXAMPLE / "runs" / "agent-v1.jsonl")
        for c in t.calls()
        if c.call.arguments_error
    ]
    assert len(bad_args) == 1
    assert bad_args[0].raw_arguments is not None

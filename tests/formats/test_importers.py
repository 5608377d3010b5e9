import json
import os
from collections import Counter
from pathlib import Path

import pytest

from judgekit.errors import JudgekitError
from judgekit.formats.adapters import parse_anthropic_line, read_anthropic
from judgekit.formats.importers import (
    ImportedTrial,
    read_openai_chat,
    read_tau_bench,
    reward_result_lines,
    transcript_lines,
)
from judgekit.results import dump_result_line, read_results
from judgekit.stats import pass_hat_k
from judgekit.transcript import Transcript
from judgekit.verdict import Verdict


def _shared_data() -> Path:
    env = os.environ.get("JUDGEKIT_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


TAU_RAW = _shared_data() / "tau-bench-airline" / "gpt-4o-airline.raw.json"


def _episode(task_id=0, trial=0, reward=1.0, **kw):
    return {
        "task_id": task_id,
        "trial": trial,
        "reward": reward,
        "info": {
            "task": {"user_id": "u1", "instruction": "book", "actions": [], "outputs": ["42"]},
            "source": "user",
        },
        "traj": [
            {"role": "system", "content": "# Policy"},
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_user", "arguments": '{"id": "u1"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "name": "get_user", "content": "{}"},
            {"role": "assistant", "content": "done"},
        ],
        **kw,
    }


def test_tau_bench_episode_becomes_transcript(tmp_path):
    path = tmp_path / "raw.json"
    path.write_text(json.dumps([_episode(3, 0, 1.0), _episode(3, 1, 0.0)]))
    result = read_tau_bench(path, agent_model="gpt-4o")
    assert result.problems == []
    first, second = (t.transcript for t in result.trials)
    assert (first.case_id, first.trial, second.trial) == ("task-3", 1, 2)
    assert first.metadata["tau_bench_trial"] == 0
    assert first.metadata["expected_outputs"] == ["42"]
    assert first.run is not None
    assert first.run.agent_model == "gpt-4o"
    assert first.run.prompt_hash is not None
    assert first.run.prompt_hash.startswith("sha256:")
    calls = first.calls()
    assert calls[0].call.arguments == {"id": "u1"}
    assert calls[0].result == "{}"
    assert [t.reward for t in result.trials] == [1.0, 0.0]


def test_tau_bench_bad_entries_are_located_and_rest_imported(tmp_path):
    path = tmp_path / "raw.json"
    bad_role = _episode(2, 0)
    bad_role["traj"][1]["role"] = "robot"
    path.write_text(json.dumps([_episode(1, 0), {"task_id": 5}, bad_role, _episode(1, 0), "x"]))
    result = read_tau_bench(path)
    assert [t.transcript.case_id for t in result.trials] == ["task-1"]
    located = sorted((p.line, p.message) for p in result.problems)
    assert located[0][0] == 2
    assert "lacks 'reward', 'traj'" in located[0][1]
    assert located[1][0] == 3
    assert "messages.1.role" in located[1][1]
    assert located[2][0] == 4
    assert "appears twice" in located[2][1]
    assert located[3][0] == 5


def test_tau_bench_not_json_is_one_clear_error(tmp_path):
    path = tmp_path / "raw.json"
    path.write_text("[{broken")
    with pytest.raises(JudgekitError, match=r"raw.json:1: malformed JSON"):
        read_tau_bench(path)


def test_transcript_lines_read_back(tmp_path):
    path = tmp_path / "raw.json"
    path.write_text(json.dumps([_episode(1, 0)]))
    result = read_tau_bench(path)
    (line,) = list(transcript_lines(result.trials))
    again = Transcript.model_validate_json(line)
    assert again == result.trials[0].transcript


def test_openai_chat_jsonl(tmp_path):
    path = tmp_path / "chat.jsonl"
    rows = [
        {
            "messages": [{"role": "user", "content": "a"}],
            "metadata": {"case_id": "c1"},
            "tools": [{"type": "function"}],
        },
        {
            "messages": [
                {"role": "user", "content": "b"},
                {"role": "assistant", "content": "x", "refusal": None},
            ],
            "case_id": "c1",
            "model": "gpt-4o-mini",
        },
        {"messages": [{"role": "user", "content": "c"}], "case_id": "c2", "trial": 4},
        {"messages": "nope", "case_id": "c3"},
        {"messages": [{"role": "user", "content": "d"}]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    result = read_openai_chat(path)
    got = [(t.transcript.case_id, t.transcript.trial) for t in result.trials]
    assert got == [("c1", 1), ("c1", 2), ("c2", 4)]
    first = result.trials[0].transcript
    assert first.run is not None
    assert first.run.tool_definitions_hash is not None
    assert result.trials[1].transcript.run.agent_model == "gpt-4o-mini"
    problems = {p.line: p.message for p in result.problems}
    assert "needs 'messages'" in problems[4]
    assert "no case id in case_id or metadata.case_id" in problems[5]
    assert "malformed JSON" in problems[6]


def test_openai_chat_case_id_field(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"messages": [], "meta": {"task": {"name": "t-9"}}}) + "\n")
    result = read_openai_chat(path, case_id_field="meta.task.name")
    assert result.trials[0].transcript.case_id == "t-9"


def test_reward_results_count_missing_reward_as_not_evaluated(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text(
        json.dumps({"messages": [], "case_id": "a", "metadata": {"reward": 1}})
        + "\n"
        + json.dumps({"messages": [], "case_id": "b"})
        + "\n"
    )
    lines = list(reward_result_lines(read_openai_chat(path).trials, run_id="r"))
    assert [line.verdict for line in lines] == [Verdict.PASS, Verdict.NOT_EVALUATED]


@pytest.mark.skipif(not TAU_RAW.is_file(), reason="shared tau-bench data not present")
def test_tau_bench_airline_pass_hat_k_reproduces_published_figures(tmp_path):
    result = read_tau_bench(TAU_RAW)
    assert result.problems == []
    assert len(result.trials) == 200
    n: Counter[str] = Counter()
    c: Counter[str] = Counter()
    for trial in result.trials:
        n[trial.transcript.case_id] += 1
        c[trial.transcript.case_id] += trial.reward == 1.0
    ids = sorted(n)
    assert len(ids) == 50
    got = [
        round(
            pass_hat_k(
                [n[i] for i in ids], [c[i] for i in ids], k, undecided_counts=[0] * 50, undecided="fail"
            ),
            3,
        )
        for k in range(1, 5)
    ]
    assert got == [0.420, 0.273, 0.220, 0.200]
    # Through the results file and the report as well.
    from judgekit.reports.run_model import report_run

    out = tmp_path / "stored.jsonl"
    out.write_text(
        "".join(dump_result_line(x) + "\n" for x in reward_result_lines(result.trials, run_id="tau"))
    )
    report = report_run(read_results(out), undecided="fail")[0]
    (suite,) = report.suites
    assert [round(p.value, 3) for p in suite.pass_hat] == [0.420, 0.273, 0.220, 0.200]
    # every transcript survives serialisation
    for line, trial in zip(transcript_lines(result.trials[:20]), result.trials[:20], strict=True):
        assert Transcript.model_validate_json(line) == trial.transcript


# --------------------------------------------------------------------------- Anthropic messages JSONL

TOOLS = [{"name": "lookup_booking", "input_schema": {"type": "object"}}]


def _anthropic_line(**kw):
    return {
        "system": [{"type": "text", "text": "You are AirDesk."}],
        "model": "claude-sonnet-4-5",
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "I was charged twice for QX7P2L."},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "look it up", "signature": "s"},
                    {"type": "text", "text": "Let me check."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "lookup_booking",
                        "input": {"ref": "QX7P2L"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_2",
                        "name": "list_payments",
                        "input": {"ref": "QX7P2L"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "{}"}],
                    },
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "timeout", "is_error": True},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "I could not load the payments."}]},
        ],
        **kw,
    }


def _write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_anthropic_line_becomes_a_transcript_with_calls_results_and_run_record(tmp_path):
    path = _write_jsonl(
        tmp_path / "claude.jsonl",
        [
            _anthropic_line(
                case_id="gs-double-charge",
                trial=3,
                metadata={"agent_version": "v2", "reward": 1},
                final_state={"payments": [{"id": 1}]},
                ended_by="agent",
            )
        ],
    )
    result = read_anthropic(path)
    assert result.problems == []
    (trial,) = result.trials
    t = trial.transcript
    assert (t.case_id, t.trial, trial.line) == ("gs-double-charge", 3, 1)
    assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    calls = t.calls()
    assert [(c.call.id, c.call.name, c.call.arguments) for c in calls] == [
        ("toolu_1", "lookup_booking", {"ref": "QX7P2L"}),
        ("toolu_2", "list_payments", {"ref": "QX7P2L"}),
    ]
    assert [c.result for c in calls] == ["{}", "Error: timeout"]
    assert [c.is_error for c in calls] == [False, True]
    assert t.messages[2].content == "Let me check."  # thinking left out
    assert t.final_answer() == "I could not load the payments."
    assert t.ended_by == "agent"
    assert t.final_state is not None
    assert t.final_state.data == {"payments": [{"id": 1}]}
    assert t.metadata["agent_version"] == "v2"
    assert t.metadata["source_format"] == "anthropic-messages"
    assert trial.reward == 1.0
    # the run record is what the OpenAI importer records for the same prompt and tools
    assert t.run is not None
    assert t.run.agent_model == "claude-sonnet-4-5"
    assert t.run.config == {"source_format": "anthropic-messages"}
    chat = _write_jsonl(
        tmp_path / "chat.jsonl",
        [
            {
                "case_id": "x",
                "tools": TOOLS,
                "messages": [
                    {"role": "system", "content": "You are AirDesk."},
                    {"role": "user", "content": "hi"},
                ],
            }
        ],
    )
    openai_run = read_openai_chat(chat).trials[0].transcript.run
    assert openai_run is not None
    assert t.run.prompt_hash == openai_run.prompt_hash
    assert t.run.tool_definitions_hash == openai_run.tool_definitions_hash
    assert t.run.tool_definitions_hash is not None
    # and it survives the transcript file
    (line,) = list(transcript_lines(result.trials))
    assert Transcript.model_validate_json(line) == t


def test_anthropic_agent_model_option_wins_and_no_tools_means_no_hash(tmp_path):
    line = _anthropic_line(case_id="c1")
    del line["tools"], line["system"]
    path = _write_jsonl(tmp_path / "claude.jsonl", [line])
    (trial,) = read_anthropic(path, agent_model="my-agent").trials
    assert trial.transcript.run is not None
    assert trial.transcript.run.agent_model == "my-agent"
    assert trial.transcript.run.tool_definitions_hash is None
    assert trial.transcript.run.prompt_hash is None
    assert trial.reward is None


def test_anthropic_case_id_from_metadata_or_named_field_and_trials_numbered(tmp_path):
    path = _write_jsonl(
        tmp_path / "claude.jsonl",
        [
            _anthropic_line(metadata={"case_id": "c1"}),
            _anthropic_line(metadata={"case_id": "c2"}),
            _anthropic_line(metadata={"case_id": "c1"}),
            _anthropic_line(case_id="c1", metadata={"trial": 7}),
        ],
    )
    result = read_anthropic(path)
    assert result.problems == []
    got = [(t.transcript.case_id, t.transcript.trial, t.line) for t in result.trials]
    assert got == [("c1", 1, 1), ("c2", 1, 2), ("c1", 2, 3), ("c1", 7, 4)]
    named = _write_jsonl(tmp_path / "named.jsonl", [_anthropic_line(meta={"task": {"name": 42}})])
    assert read_anthropic(named).problems[0].message.startswith("no case id in case_id or metadata.case_id")
    (trial,) = read_anthropic(named, case_id_field="meta.task.name").trials
    assert trial.transcript.case_id == "42"


def test_anthropic_bad_lines_are_located_problems_and_the_rest_imported(tmp_path):
    bad_block = _anthropic_line(case_id="c3")
    bad_block["messages"][1]["content"][2] = {"type": "tool_use", "name": "no_id"}
    openai_shaped = {
        "case_id": "c6",
        "messages": [{"role": "system", "content": "p"}, {"role": "user", "content": "hi"}],
    }
    path = _write_jsonl(
        tmp_path / "claude.jsonl",
        [
            _anthropic_line(case_id="c1"),
            "{broken",
            bad_block,
            {"case_id": "c4", "messages": "nope"},
            _anthropic_line(case_id="c5", trial=0),
            openai_shaped,
            ["not", "an", "object"],
            _anthropic_line(),
            _anthropic_line(case_id="c1", trial=2),
        ],
    )
    result = read_anthropic(path)
    assert [(t.transcript.case_id, t.transcript.trial) for t in result.trials] == [("c1", 1), ("c1", 2)]
    problems = {p.line: p for p in result.problems}
    assert sorted(problems) == [2, 3, 4, 5, 6, 7, 8]
    assert all(p.file == path for p in result.problems)
    assert "malformed JSON" in problems[2].message
    assert "messages[1].content[2]" in problems[3].message
    assert "tool_use with text 'id' and 'name'" in problems[3].message
    assert (problems[4].field, "needs 'messages'" in problems[4].message) == ("messages", True)
    assert (problems[5].field, "positive integer" in problems[5].message) == ("trial", True)
    assert "judgekit import openai" in problems[6].message
    assert "must be a JSON object" in problems[7].message
    assert "no case id" in problems[8].message


def test_anthropic_duplicate_case_and_trial_keeps_the_first(tmp_path):
    path = _write_jsonl(
        tmp_path / "claude.jsonl",
        [
            _anthropic_line(case_id="c1", trial=1, metadata={"n": "first"}),
            _anthropic_line(case_id="c1", trial=1, metadata={"n": "second"}),
        ],
    )
    result = read_anthropic(str(path))
    (trial,) = result.trials
    assert trial.transcript.metadata["n"] == "first"
    (problem,) = result.problems
    assert problem.line == 2
    assert "case 'c1' trial 1 appears twice (first at 1)" in problem.message


def test_parse_anthropic_line_counts_trials_in_the_given_counter(tmp_path):
    counter: Counter[str] = Counter({"c1": 4})
    parsed = parse_anthropic_line(
        _anthropic_line(case_id="c1"), source=tmp_path / "x.jsonl", line=9, trial_counter=counter
    )
    assert isinstance(parsed, ImportedTrial), parsed
    assert parsed.transcript.trial == 5
    assert counter["c1"] == 5

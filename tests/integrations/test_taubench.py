"""tau-bench tasks and trajectories graded on judgekit's layers; the airline figures reproduced."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from judgekit.errors import JudgekitError
from judgekit.graders.text import find_text
from judgekit.integrations.taubench import (
    DB_CHECK,
    EPISODE_CHECK,
    OUTPUTS_CHECK,
    TauBenchTask,
    apply_diff,
    load_run,
    output_pattern,
    pass_hat_k_table,
    replay_actions,
    task_case,
)
from judgekit.state import snapshot_from_data
from judgekit.verdict import Verdict

REPO = Path(__file__).resolve().parents[2]


def _shared_data() -> Path:
    env = os.environ.get("JUDGEKIT_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


TAU = _shared_data() / "tau-bench-airline"
HAS_TAU = (TAU / "gpt-4o-airline.raw.json").is_file() and (TAU / "gpt-4o-trajectories.jsonl").is_file()

# --------------------------------------------------------------------------- a small synthetic domain

DB = {"users": {"u1": {"email": "old@x.io", "balance": 100}, "u2": {"email": "bo@x.io", "balance": 5}}}


def update_email(data: dict[str, Any], user_id: str, email: str) -> str:
    if user_id not in data["users"]:
        raise KeyError(f"no user {user_id}")
    data["users"][user_id]["email"] = email
    return "ok"


def get_user(data: dict[str, Any], user_id: str) -> str:
    return json.dumps(data["users"][user_id])


TOOLS = {"update_email": update_email, "get_user": get_user}

TASK = {
    "user_id": "u1",
    "instruction": "You are u1. Change your email to new@x.io and ask for your balance.",
    "actions": [{"name": "update_email", "kwargs": {"user_id": "u1", "email": "new@x.io"}}],
    "outputs": ["1000"],
}


def episode(
    trial: int, calls: list[tuple[str, dict[str, Any]]], closing: str, *, finished: bool = True, reward=1.0
):
    traj: list[dict[str, Any]] = [
        {"role": "system", "content": "# Policy"},
        {"role": "user", "content": "Hi, change my email to new@x.io. What is my balance?"},
    ]
    for i, (name, args) in enumerate(calls):
        traj.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        traj.append({"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": "ok"})
    traj.append({"role": "assistant", "content": closing})
    return {
        "task_id": 7,
        "trial": trial,
        "reward": reward,
        "info": {
            "task": TASK,
            "source": "user",
            "user_cost": 0.0,
            "reward_info": {"reward": reward, "info": {}} if finished else None,
        },
        "traj": traj,
    }


@pytest.fixture
def results(tmp_path: Path) -> Path:
    path = tmp_path / "results.json"
    episodes = [
        # right change, says the balance with a thousands separator (tau-bench removes commas): reward 1
        episode(
            0,
            [("get_user", {"user_id": "u1"}), ("update_email", {"user_id": "u1", "email": "new@x.io"})],
            "Done. Your balance is 1,000.",
        ),
        # wrong user changed: the database differs
        episode(
            1,
            [("update_email", {"user_id": "u2", "email": "new@x.io"})],
            "Done. Your balance is 1000.",
            reward=0.0,
        ),
        # right change, but the balance never said
        episode(2, [("update_email", {"user_id": "u1", "email": "new@x.io"})], "Done.", reward=0.0),
        # right change and output, but the step limit cut the episode off
        episode(
            3,
            [("update_email", {"user_id": "u1", "email": "new@x.io"})],
            "Balance 1000",
            finished=False,
            reward=0.0,
        ),
        # a tool error changes nothing, as in tau-bench; the agent then gives up
        episode(4, [("update_email", {"user_id": "u9", "email": "new@x.io"})], "Sorry, 1000.", reward=0.0),
    ]
    path.write_text(json.dumps(episodes))
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "users.json").write_text(json.dumps(DB["users"]))
    return path


def test_task_becomes_a_case_with_expected_state_outputs_and_optional_route() -> None:
    task = TauBenchTask.from_data(TASK, task_id=7)
    case = task_case(task, case_id="task-7", expected_state="exp")
    assert case.user_goal == TASK["instruction"]
    assert case.identity == {"user_id": "u1"}
    assert case.expected_state is not None
    assert case.expected_state.snapshot == "exp"
    assert case.expected is not None
    assert case.expected.route is None  # tau-bench does not grade the route
    assert case.tools == ("update_email",)
    routed = task_case(task, case_id="task-7", route=True)
    assert routed.expected is not None
    assert routed.expected.route is not None
    assert [(r.tool, r.args) for r in routed.expected.route] == [
        ("update_email", TASK["actions"][0]["kwargs"])
    ]


@pytest.mark.parametrize(
    ("output", "text", "found"),
    [
        pytest.param("1628", "The total is 1,628 dollars", True, id="thousands_separator"),
        pytest.param("1628", "The total is 1 628 dollars", False, id="space_is_not_removed"),
        pytest.param("Economy", "you fly ECONOMY", True, id="case_insensitive"),
        pytest.param("327", "3,2,7", True, id="any_commas"),
        pytest.param("a.b", "axb", False, id="dot_is_literal"),
    ],
)
def test_outputs_are_found_the_way_tau_bench_finds_them(output: str, text: str, found: bool) -> None:
    tau_bench = output.lower() in text.lower().replace(",", "")
    assert tau_bench is found
    assert (find_text(output_pattern(output), text) is not None) is found


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param({"actions": []}, "'instruction' must be non-empty text", id="no_instruction"),
        pytest.param(
            {"instruction": "x", "actions": [{"kwargs": {}}]},
            r"actions\[0\] must be",
            id="action_without_name",
        ),
        pytest.param(
            {"instruction": "x", "outputs": "42"}, "'outputs' must be a list of texts", id="outputs_not_list"
        ),
        pytest.param([1], "a task must be an object", id="not_an_object"),
    ],
)
def test_malformed_tasks_are_refused_with_the_field(data: Any, message: str) -> None:
    with pytest.raises(JudgekitError, match=rf"tau-bench task 3: {message}"):
        TauBenchTask.from_data(data, task_id=3)


def test_apply_diff_makes_a_new_state_and_leaves_the_initial_one() -> None:
    initial = snapshot_from_data(DB)
    diff = {
        "users": {
            "u1": {
                "op": "modified",
                "changes": {"email": {"old": "old@x.io", "new": "n@x.io"}, "balance": {"old": 100}},
            },
            "u2": {"op": "removed", "record": DB["users"]["u2"]},
            "u3": {"op": "added", "record": {"email": "c@x.io"}},
        }
    }
    after = apply_diff(initial, diff)
    assert after.tables["users"] == {"u1": {"email": "n@x.io"}, "u3": {"email": "c@x.io"}}
    assert initial.tables["users"]["u1"] == {"email": "old@x.io", "balance": 100}
    with pytest.raises(JudgekitError, match="'op' must be added, removed or modified"):
        apply_diff(initial, {"users": {"u1": {"op": "changed"}}})
    with pytest.raises(JudgekitError, match="modifies users/u9, which the state does not have"):
        apply_diff(initial, {"users": {"u9": {"op": "modified", "changes": {}}}})


def test_replay_runs_tools_on_a_copy_and_keeps_going_after_errors() -> None:
    final, notes = replay_actions(
        DB,
        [
            ("update_email", {"user_id": "u9", "email": "x"}),
            ("nope", {}),
            ("update_email", {"user_id": "u2", "email": "y"}),
        ],
        TOOLS,
    )
    assert final["users"]["u2"]["email"] == "y"
    assert DB["users"]["u2"]["email"] == "bo@x.io"
    assert notes == ["call 0: update_email: KeyError: 'no user u9'", "call 1: unknown tool 'nope'"]


def test_a_run_replayed_with_tools_is_graded_like_tau_bench(results: Path) -> None:
    run = load_run(results, db=results.parent / "db", tools=TOOLS)
    # the one replay note: episode 4's call raises on replay, and the fixture recorded its result as "ok"
    assert [(p.line, p.field) for p in run.problems] == [(5, "traj")]
    assert run.problems[0].message.startswith("task-7 trial 5: call 0 (update_email) failed on replay")
    assert run.has_states
    assert list(run.cases) == ["task-7"]
    grades = asyncio.run(run.grade_all())
    by_trial = {g.trial: g for g in grades}
    assert [by_trial[t].verdict for t in range(1, 6)] == [Verdict.PASS, *[Verdict.FAIL] * 4]
    # the verdicts agree with the stored rewards
    assert [g.verdict is Verdict.PASS for g in grades] == [t.reward == 1.0 for t in run.trials]

    def failed(trial: int) -> set[str]:
        return {c.check_id for c in by_trial[trial].checks if c.verdict is Verdict.FAIL and c.gate}

    # the stored rewards need the current logic (episode 2 said the output, its database is wrong)
    assert run.reward == "current"
    # tau-bench's typed database condition gates; judgekit's state layer reports, not gating
    assert failed(2) == {DB_CHECK}
    # tau-bench's outputs condition gates and says which output (the text layer reports, not gating)
    assert failed(3) == {OUTPUTS_CHECK}
    outputs = next(c for c in by_trial[3].checks if c.check_id == OUTPUTS_CHECK)
    assert outputs.reason == "required output(s) never said: '1000'"
    assert failed(4) == {EPISODE_CHECK}
    assert failed(5) == {DB_CHECK}
    assert run.trials[3].transcript.ended_by == "max_steps_or_error"
    assert run.trials[0].transcript.ended_by == "user_stop"
    table = pass_hat_k_table(grades, ks=(1, 2), undecided="fail")
    assert table == {1: pytest.approx(0.2), 2: pytest.approx(0.0)}


def test_route_can_be_graded_too(results: Path) -> None:
    run = load_run(results, db=results.parent / "db", tools=TOOLS, route=True)
    grades = asyncio.run(run.grade_all())
    route = [next(c for c in g.checks if c.check_id == "route").verdict for g in grades]
    assert route == [Verdict.PASS, Verdict.FAIL, Verdict.PASS, Verdict.PASS, Verdict.FAIL]


def test_without_states_the_state_layer_is_absent_and_says_so(results: Path) -> None:
    run = load_run(results, db=results.parent / "db")
    assert not run.has_states
    grade = asyncio.run(run.grade_all())[0]
    state = next(c for c in grade.checks if c.layer == "state")
    assert state.verdict is Verdict.NOT_EVALUATED


def test_replay_and_tools_together_are_refused(results: Path, tmp_path: Path) -> None:
    with pytest.raises(JudgekitError, match=r"either replay= .* or tools=, not both"):
        load_run(results, db=results.parent / "db", tools=TOOLS, replay=tmp_path / "r.jsonl")


def test_a_trajectory_missing_from_the_replay_file_is_a_located_problem(
    results: Path, tmp_path: Path
) -> None:
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        json.dumps({"task_id": 7, "trial": 0, "final_db_diff": {}, "expected_db_diff": {}}) + "\n"
    )
    run = load_run(results, db=results.parent / "db", replay=replay)
    assert len(run.trials) == 1
    assert [p.line for p in run.problems] == [2, 3, 4, 5]
    assert "task-7 trial 2: not in the replay file" in run.problems[0].message
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"task_id": 7, "trial": 0}) + "\n")
    with pytest.raises(
        JudgekitError, match=r"bad.jsonl:1: a replay row needs .*missing final_db_diff, expected_db_diff"
    ):
        load_run(results, db=results.parent / "db", replay=bad)


# --------------------------------------------------------------------------- the real airline run


@pytest.mark.skipif(not HAS_TAU, reason="shared tau-bench data not present")
def test_airline_pass_hat_k_and_agreements_are_reproduced_through_judgekit_layers() -> None:
    run = load_run(TAU / "gpt-4o-airline.raw.json", db=TAU / "db", replay=TAU / "gpt-4o-trajectories.jsonl")
    assert run.problems == []
    assert (len(run.cases), len(run.trials)) == (50, 200)
    grades = asyncio.run(run.grade_all())
    # pass^k from judgekit's verdicts, as tau-bench's README publishes it (tau-bench: reward != 1 fails)
    table = pass_hat_k_table(grades, undecided="fail")
    assert [round(table[k], 3) for k in (1, 2, 3, 4)] == [0.420, 0.273, 0.220, 0.200]
    # no trial is undecided here, so the other policy gives the same figures
    assert pass_hat_k_table(grades, undecided="exclude") == table
    # every verdict agrees with tau-bench's stored reward
    assert (
        sum((g.verdict is Verdict.PASS) == (t.reward == 1.0) for g, t in zip(grades, run.trials, strict=True))
        == 200
    )
    assert all(g.verdict in (Verdict.PASS, Verdict.FAIL) for g in grades)
    # the state layer agrees with the replay's db_match on all 200
    rows = {
        (r["task_id"], r["trial"]): r
        for r in map(json.loads, (TAU / "gpt-4o-trajectories.jsonl").read_text().splitlines())
    }
    state_ok = []
    for grade, trial in zip(grades, run.trials, strict=True):
        meta = trial.transcript.metadata
        ok = all(c.verdict is Verdict.PASS for c in grade.checks if c.layer == "state")
        assert ok == rows[(meta["task_id"], meta["tau_bench_trial"])]["db_match"]
        state_ok.append(ok)
    assert sum(state_ok) == 88
    # the four trajectories with a correct database but reward 0, and why
    correct_db_no_reward = {
        (g.case_id, g.trial): sorted(c.check_id for c in g.checks if c.verdict is Verdict.FAIL and c.gate)
        for g, ok, t in zip(grades, state_ok, run.trials, strict=True)
        if ok and t.reward == 0.0
    }
    assert correct_db_no_reward == {
        # tau-bench trial 1: never said the required output
        ("task-44", 2): [OUTPUTS_CHECK],
        ("task-44", 4): [OUTPUTS_CHECK],  # tau-bench trial 3
        # tau-bench trial 1: step limit; '23553' said only beside a tool call, which tau-bench ignores
        ("task-2", 2): [EPISODE_CHECK, OUTPUTS_CHECK],
        ("task-46", 4): [EPISODE_CHECK],  # tau-bench trial 3: step limit
    }


@pytest.mark.skipif(not HAS_TAU, reason="shared tau-bench data not present")
def test_the_documented_example_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (REPO / "docs" / "integrations" / "tau-bench.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    monkeypatch.chdir(TAU.parent)
    namespace: dict[str, Any] = {}
    exec(compile(block, "docs/integrations/tau-bench.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "pass^1 0.420  pass^2 0.273  pass^3 0.220  pass^4 0.200" in out
    assert "agree with the stored reward: 200/200" in out


def test_results_and_replay_files_named_as_text(results: Path, tmp_path: Path) -> None:
    run = load_run(str(results), db=results.parent / "db", tools=TOOLS)
    assert [p.line for p in run.problems] == [5]  # episode 4's failing call, a replay note
    assert list(run.cases) == ["task-7"]
    replay = tmp_path / "replay.jsonl"
    replay.write_text(
        json.dumps({"task_id": 7, "trial": 0, "final_db_diff": {}, "expected_db_diff": {}}) + "\n"
    )
    replayed = load_run(str(results), db=results.parent / "db", replay=str(replay))
    assert replayed.problems[0].message.endswith(f"task-7 trial 2: not in the replay file {replay}")
    assert replayed.problems[0].file == results


def test_the_tau_bench_layer_runs_where_asked_and_names_a_reward_that_is_no_version() -> None:
    from judgekit.cases import Case
    from judgekit.graders.context import LayerContext
    from judgekit.graders.layered import deterministic_checks
    from judgekit.integrations.taubench import TAU_BENCH_LAYER, TauBenchGrader
    from judgekit.state.provider import StateProvider
    from judgekit.transcript import Transcript

    case = Case.model_validate({"id": "t", "input": "x", "expected": {"must_mention": ["ok"]}})
    said = Transcript.model_validate({"case_id": "t", "messages": [{"role": "assistant", "content": "ok"}]})
    # registered by the integration, optional: a plain grading does not run it, a tau-bench grading does
    assert all(c.layer != "tau-bench" for c in deterministic_checks(case, said, states=StateProvider()))
    assert TauBenchGrader(reward="current").layers == {"tau-bench": {"reward": "current"}}
    asked = deterministic_checks(
        case, said, states=StateProvider(), layers={"tau-bench": {"reward": "current"}}
    )
    assert [c.check_id for c in asked if c.layer == "tau-bench"] == [OUTPUTS_CHECK, DB_CHECK, EPISODE_CHECK]
    context = LayerContext(states=StateProvider(), options={"tau-bench": {"reward": "v9"}})
    [bad] = TAU_BENCH_LAYER.checks(case, said, context)
    assert bad.verdict is Verdict.ERROR
    assert bad.reason == "the tau-bench layer's reward 'v9' is not a version: give '7362a17' or 'current'"

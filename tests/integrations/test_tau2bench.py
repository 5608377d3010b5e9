"""tau2-bench runs: import as cases and transcripts, tau2's reward reproduced, its unchecked criteria listed.

The shared-data tests run on gpt-4.1's retail simulations (../shared/data/tau2-bench-retail, see its
README) and are skipped when the data is absent; the others write small tau2 files here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from judgekit.caseset import load_case_set
from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.integrations.tau2bench import (
    Tau2Action,
    Tau2Task,
    criteria_findings,
    load_run,
    reproduce_reward,
    task_case,
)
from judgekit.transcript import read_transcripts


def _shared_data() -> Path:
    env = os.environ.get("JUDGEKIT_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


TAU2 = _shared_data() / "tau2-bench-retail"
RESULTS = TAU2 / "gpt-4.1_retail_default_gpt-4.1_1trials.json"
HAS_TAU2 = RESULTS.is_file() and (TAU2 / "tasks.json").is_file() and (TAU2 / "db.json").is_file()
shared = pytest.mark.skipif(not HAS_TAU2, reason="shared tau2-bench retail data absent")

# The README's table: task -> (stored reward, db_match, actions matched, gold actions, communicate met, of).
README_TABLE = {
    "5": (1, True, 5, 5, 0, 0),
    "9": (1, True, 5, 6, 0, 0),
    "12": (1, True, 4, 6, 0, 0),
    "17": (1, True, 3, 6, 0, 0),
    "18": (1, True, 4, 5, 0, 0),
    "26": (1, True, 7, 8, 0, 0),
    "27": (1, True, 6, 6, 0, 0),
    "32": (1, True, 13, 13, 1, 1),
    "33": (1, True, 6, 6, 1, 1),
    "36": (0, False, 0, 1, 2, 2),
    "38": (1, True, 3, 4, 2, 2),
    "39": (1, True, 4, 5, 1, 1),
    "40": (1, True, 4, 4, 2, 2),
    "42": (1, True, 10, 10, 0, 0),
    "45": (1, True, 4, 5, 1, 1),
    "49": (1, True, 8, 10, 0, 0),
    "51": (1, True, 5, 6, 0, 0),
    "53": (1, True, 6, 6, 0, 0),
    "55": (0, False, 12, 13, 0, 0),
    "56": (1, True, 7, 7, 0, 0),
    "60": (1, True, 4, 4, 1, 1),
    "61": (1, True, 4, 5, 0, 0),
    "62": (0, False, 5, 5, 2, 2),
    "64": (1, True, 7, 8, 0, 0),
    "65": (1, True, 3, 3, 0, 0),
    "68": (1, True, 4, 4, 1, 1),
    "70": (1, True, 1, 1, 1, 1),
    "71": (1, True, 2, 2, 0, 0),
    "74": (1, True, 2, 2, 0, 0),
    "77": (1, True, 1, 1, 0, 0),
    "79": (0, False, 0, 1, 0, 0),
    "86": (0, False, 1, 2, 0, 0),
    "90": (1, True, 1, 1, 0, 0),
    "94": (1, True, 1, 1, 0, 0),
    "97": (1, True, 2, 2, 0, 0),
    "100": (1, True, 2, 2, 0, 0),
    "101": (0, False, 2, 3, 0, 0),
    "102": (1, True, 3, 3, 0, 0),
    "108": (1, True, 0, 1, 1, 1),
    "111": (1, True, 3, 3, 0, 0),
}


# --------------------------------------------------------------------------- the shared retail run


@shared
def test_shared_run_reproduces_every_stored_reward() -> None:
    run = load_run(RESULTS)
    assert run.problems == []
    assert len(run.cases) == 40
    assert len(run.trials) == 40
    rewards = {r.task_id: r for r in run.rewards}
    assert sorted(r.reward for r in run.rewards if r.reward is not None) == [0.0] * 6 + [1.0] * 34
    assert {t for t, r in rewards.items() if r.reward == 0.0} == {"36", "55", "62", "79", "86", "101"}
    assert run.pass_hat(1) == pytest.approx(0.85)
    assert run.pass_hat(2) is None  # one trial per task: tau2 defines no pass^2
    for task_id, (stored, db, matched, gold, met, of) in README_TABLE.items():
        r = rewards[task_id]
        assert r.reproduced, (task_id, r.disagreements)
        assert (r.reward, r.stored_reward, r.db_match) == (stored, stored, db)
        assert r.db_source == "stored"
        assert (sum(r.action_checks), len(r.action_checks)) == (matched, gold)
        assert (sum(r.communicate_checks), len(r.communicate_checks)) == (met, of)
        assert r.breakdown == {"DB": float(db), "COMMUNICATE": 1.0}
    assert rewards["108"].nl_assertions == (True, True)


@shared
def test_shared_run_findings_per_task() -> None:
    run = load_run(RESULTS, tasks=TAU2 / "tasks.json")
    by = {}
    for f in run.findings:
        by.setdefault((f.kind, f.component), []).append(f)
    assert {f.task_id for f in by["not_in_reward", "ACTION"]} == set(README_TABLE)
    passed_anyway = {f.task_id for f in by["not_in_reward", "ACTION"] if f.unchecked_failures}
    assert passed_anyway == {"9", "12", "17", "18", "26", "38", "39", "45", "49", "51", "61", "64", "108"}
    assert next(f for f in by["not_in_reward", "ACTION"] if f.task_id == "108").unchecked_failures == (
        (0, 0, 1),
    )
    empty = {f.task_id for f in by["empty_scores_one", "COMMUNICATE"]}
    assert len(empty) == 28
    assert empty == {t for t, row in README_TABLE.items() if row[5] == 0}
    assert {f.task_id for f in by["not_in_reward", "NL_ASSERTION"]} == {"108", "111"}
    assert set(by) == {
        ("not_in_reward", "ACTION"),
        ("empty_scores_one", "COMMUNICATE"),
        ("not_in_reward", "NL_ASSERTION"),
    }


@shared
def test_shared_cases_carry_the_criteria() -> None:
    run = load_run(RESULTS, initial_state="fixtures/db.json")
    case = run.cases["task-108"]
    assert case.response_rubric == (
        "Agent should make the return",
        "Agent should communicate the refund to user.",
    )
    assert case.required_outcome is None  # NL_ASSERTION is not in the basis: judged, never gating
    assert case.expected is not None
    assert case.expected.route is not None
    assert [(c.tool, c.args["order_id"]) for c in case.expected.route] == [
        ("return_delivered_order_items", "#W1679211")
    ]
    assert len(case.expected.must_mention) == 1
    assert case.initial_state == "fixtures/db.json"
    trial = next(t for t in run.trials if t.transcript.case_id == "task-108")
    assert trial.transcript.ended_by == "user_stop"
    assert trial.transcript.trial == 1
    assert trial.transcript.calls()[0].result is not None  # tool results pair with their calls


@shared
def test_shared_cli_writes_a_case_set_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "import"
    code = main(["import", "tau2-bench", str(RESULTS), "--out", str(out), "--db", str(TAU2 / "db.json")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "reproduced 40/40 stored rewards; rewards: 34 at 1, 6 at 0; pass^1 0.850" in captured.out
    assert (
        "task 36 trial 0: reward 0 (stored 0) DB 0 COMMUNICATE 1 | actions 0/1, communicate 2/2"
        in captured.out
    )
    assert (
        "  scored 1.0 although one of these checks failed: 26, 17, 51, 12, 9, 39, 49, 45, 61, 64, 18, 38, 108"
        in captured.out
    )
    case_set = load_case_set(out)
    assert case_set.problems == []
    assert len(case_set.cases) == 40
    transcripts = read_transcripts(out / "transcripts" / "tau2-bench.jsonl")
    assert len(transcripts) == 40
    assert (out / "fixtures" / "db.json").read_bytes() == (TAU2 / "db.json").read_bytes()


@shared
def test_shared_cli_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["import", "tau2-bench", str(RESULTS), "--out", str(tmp_path / "o"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["kind"] == "tau2_import"
    assert doc["reproduced"] == 40
    assert doc["rewards"] == {"1": 34, "0": 6}
    assert doc["pass_hat_1"] == 0.85
    assert len(doc["findings"]) == 40 + 28 + 2


# --------------------------------------------------------------------------- small files


def _task(task_id: str = "1", **criteria: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "actions": [
            {"action_id": f"{task_id}_0", "name": "cancel", "arguments": {"order_id": "#1", "reason": "x"}}
        ],
        "communicate_info": ["1628"],
    }
    base.update(criteria)
    return {
        "id": task_id,
        "user_scenario": {
            "instructions": {"reason_for_call": "Cancel order #1.", "known_info": "You are u1."}
        },
        "evaluation_criteria": base,
    }


def _sim(task_id: str = "1", *, reward: float = 1.0, db: bool = True, **extra: Any) -> dict[str, Any]:
    sim: dict[str, Any] = {
        "id": f"sim-{task_id}",
        "task_id": task_id,
        "trial": 0,
        "termination_reason": "user_stop",
        "reward_info": {"reward": reward, "db_check": {"db_match": db, "db_reward": float(db)}},
        "messages": [
            {"role": "assistant", "content": "Hi! How can I help?"},
            {"role": "user", "content": "Cancel #1 please."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "name": "cancel",
                        "arguments": {"order_id": "#1", "reason": "x"},
                        "requestor": "assistant",
                    }
                ],
            },
            {
                "role": "tool",
                "id": "c1",
                "content": '{"status": "cancelled"}',
                "requestor": "assistant",
                "error": False,
            },
            {"role": "assistant", "content": "Done: a refund of $1,628 is on its way."},
        ],
    }
    sim.update(extra)
    return sim


def _write(tmp_path: Path, tasks: list[Any], sims: list[Any], name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"info": {"agent_info": {"llm": "m"}}, "tasks": tasks, "simulations": sims}))
    return path


def _reward(task: dict[str, Any], sim: dict[str, Any]) -> Any:
    return reproduce_reward(Tau2Task.from_data(task, where="t"), sim)


def test_action_match_follows_tau2_compare_with_tool_call() -> None:
    action = Tau2Action("a", "cancel", {"order_id": "#1", "reason": "x"})
    assert action.matches("cancel", {"order_id": "#1", "reason": "x"})
    assert not action.matches("cancel", {"order_id": "#2", "reason": "x"})
    assert not action.matches("refund", {"order_id": "#1", "reason": "x"})
    # compare_args None compares the call's own argument names: a call with fewer arguments still matches.
    assert action.matches("cancel", {"order_id": "#1"})
    assert action.matches("cancel", {})
    only_id = Tau2Action("a", "cancel", {"order_id": "#1", "reason": "x"}, compare_args=("order_id",))
    assert only_id.matches("cancel", {"order_id": "#1", "reason": "other"})


def test_communicate_check_drops_commas_ignores_case_and_counts_only_the_assistant() -> None:
    r = _reward(_task(communicate_info=["1628", "REFUND"]), _sim())
    assert r.communicate_checks == (True, True)
    # tau2 removes commas from the message, not from the string: a string with a comma is never found.
    task = _task(communicate_info=["1,628"])
    assert _reward(task, _sim()).communicate_checks == (False,)
    (finding,) = [f for f in criteria_findings(Tau2Task.from_data(task, where="t")) if f.kind == "never_met"]
    assert finding.message == (
        "task 1: communicate_info '1,628' has a comma, and tau2 removes commas from the message "
        "before looking, so this check can never be met"
    )
    sim = _sim()
    sim["messages"][-1] = {"role": "user", "content": "so 1628 refund?"}
    assert _reward(_task(communicate_info=["1628"]), sim).communicate_checks == (False,)


def test_reward_is_the_product_of_the_basis_only() -> None:
    sim = _sim()
    sim["messages"][2]["tool_calls"][0]["arguments"]["order_id"] = "#9"
    default = _reward(_task(), sim)
    assert default.action_checks == (False,)
    assert default.reward == 1.0
    with_actions = _reward(_task(reward_basis=["DB", "ACTION"]), sim)
    assert with_actions.reward == 0.0
    assert with_actions.breakdown == {"DB": 1.0, "ACTION": 0.0}
    failed_db = _reward(_task(), _sim(db=False, reward=0.0))
    assert failed_db.reward == 0.0
    assert failed_db.reproduced


def test_nl_assertions_in_the_basis_need_the_judge_verdicts() -> None:
    task = _task(nl_assertions=["Agent refunds", "Agent apologises"], reward_basis=["DB", "NL_ASSERTION"])
    unjudged = _reward(task, _sim())
    assert unjudged.reward is None
    assert not unjudged.reproduced
    judged = _sim(reward=0.0)
    judged["reward_info"]["nl_assertions"] = [
        {"nl_assertion": "Agent refunds", "met": True},
        {"nl_assertion": "Agent apologises", "met": False},
    ]
    r = _reward(task, judged)
    assert (r.nl_assertions, r.reward, r.reproduced) == ((True, False), 0.0, True)
    case = task_case(Tau2Task.from_data(task, where="t"), case_id="task-1")
    assert case.required_outcome == "All of these hold: Agent refunds; Agent apologises"
    assert case.response_rubric == ()


def test_unfinished_simulation_scores_zero_and_no_criteria_scores_one() -> None:
    r = _reward(_task(), _sim(termination_reason="max_steps", reward=0.0))
    assert (r.reward, r.note, r.reproduced) == (0.0, "terminated: max_steps", True)
    bare = {"id": "2", "user_scenario": {"instructions": "Say hi."}, "evaluation_criteria": None}
    r = _reward(bare, _sim("2"))
    assert (r.reward, r.note) == (1.0, "no evaluation criteria")


def test_recomputed_check_that_differs_from_the_stored_one_is_a_disagreement() -> None:
    sim = _sim()
    sim["reward_info"]["action_checks"] = [{"action": {}, "action_match": False, "action_reward": 0.0}]
    r = _reward(_task(), sim)
    assert r.disagreements == ("action checks: recomputed 1/1 met, stored 0/1 met",)
    assert not r.reproduced


def test_db_check_replayed_with_tools(tmp_path: Path) -> None:
    db = tmp_path / "db.json"
    db.write_text(json.dumps({"orders": {"#1": {"status": "pending"}, "#9": {"status": "pending"}}}))

    def cancel(data: dict[str, Any], order_id: str, reason: str) -> str:
        data["orders"][order_id]["status"] = "cancelled"
        return "ok"

    wrong = _sim("2", reward=0.0, db=False)
    wrong["messages"][2]["tool_calls"][0]["arguments"]["order_id"] = "#9"
    lying = _sim("3", reward=1.0, db=True)
    lying["messages"][2]["tool_calls"][0]["arguments"]["order_id"] = "#9"
    path = _write(tmp_path, [_task("1"), _task("2"), _task("3")], [_sim("1"), wrong, lying])
    run = load_run(path, db=db, tools={"cancel": cancel})
    assert [(r.db_match, r.db_source, r.reward) for r in run.rewards] == [
        (True, "replayed", 1.0),
        (False, "replayed", 0.0),
        (False, "replayed", 0.0),
    ]
    assert run.rewards[2].disagreements == ("DB check: replayed False, stored True",)
    with pytest.raises(JudgekitError, match=r"replaying the DB check with tools= needs db="):
        load_run(path, tools={"cancel": cancel})


def test_cli_exits_1_when_a_stored_reward_is_not_reproduced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, [_task()], [_sim(reward=0.0)])
    code = main(["import", "tau2-bench", str(path), "--out", str(tmp_path / "o")])
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "task 1 trial 0: reward 1 (stored 0) DB 1 COMMUNICATE 1 | actions 1/1, communicate 1/1, "
        "DB check stored MISMATCH" in out
    )
    assert "reproduced 0/1 stored rewards" in out


def test_cli_writes_cases_transcripts_and_rewards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, [_task()], [_sim()])
    out = tmp_path / "o"
    code = main(
        ["import", "tau2-bench", str(path), "--out", str(out), "--rewards-out", str(tmp_path / "r.jsonl")]
    )
    assert code == 0, capsys.readouterr().err
    (loaded,) = load_case_set(out).cases
    case = loaded.case
    assert case.id == "task-1"
    assert case.user_goal == "Reason for call: Cancel order #1.\nKnown info: You are u1."
    (transcript,) = read_transcripts(out / "transcripts" / "tau2-bench.jsonl")
    assert transcript.run is not None
    assert transcript.run.agent_model == "m"
    assert transcript.metadata["reward_basis"] == ["DB", "COMMUNICATE"]
    assert [c.call.name for c in transcript.calls()] == ["cancel"]
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 1


# --------------------------------------------------------------------------- malformed input


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["import", "tau2-bench", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err


def test_not_json_is_a_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"simulations": [\n  {"task_id": }\n]}')
    code, err = _cli([str(path), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert f"{path}:2: malformed JSON" in err
    assert "nothing imported" in err
    assert not (tmp_path / "o").exists()


def test_not_a_results_object_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "list.json"
    path.write_text("[]")
    code, err = _cli([str(path), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert err.strip() == (
        f"error: {path}: a tau2 results file is an object with 'tasks' and 'simulations' lists, found list"
    )


def test_tasks_that_are_not_a_list_are_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"tasks": {"1": {}}, "simulations": []}))
    code, err = _cli([str(path), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert f"{path}: tasks must be a list of tasks, found dict" in err


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ({"id": True}, "tasks[0]: 'id' must be text or a number, got True"),
        (
            {"id": "1", "user_scenario": {"instructions": "x"}, "evaluation_criteria": []},
            "'evaluation_criteria' must be an object or null",
        ),
        (
            {"id": "1", "user_scenario": {}},
            "tasks[0] (task 1): 'user_scenario.instructions' must be the user's",
        ),
        (_task(actions={"name": "x"}), "evaluation_criteria.actions must be a list or null"),
        (
            _task(actions=["x"]),
            "evaluation_criteria.actions[0]: an action must be {name: text, arguments: object}",
        ),
        (
            _task(actions=[{"name": "x", "arguments": []}]),
            "evaluation_criteria.actions[0]: 'arguments' must be an object",
        ),
        (
            _task(actions=[{"name": "x", "compare_args": "id"}]),
            "'compare_args' must be a list of argument names or null",
        ),
        (
            _task(communicate_info="60"),
            "evaluation_criteria.communicate_info must be a list of texts or null",
        ),
        (_task(env_assertions={}), "evaluation_criteria.env_assertions must be a list or null"),
        (
            _task(reward_basis=["DB", "TONE"]),
            "evaluation_criteria.reward_basis must be a list of DB, ENV_ASSERTION",
        ),
        ("x", "tasks[0]: a task must be an object, found str"),
    ],
)
def test_malformed_task_is_a_located_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], task: Any, message: str
) -> None:
    path = _write(tmp_path, [task, _task("2")], [_sim("2")])
    code, err = _cli([str(path), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert f"warning: {path}: tasks[0]" in err
    assert message in err
    assert "imported 1 case(s) and 1 tau2-bench trial(s)" in err  # the good task is still imported


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"task_id": "7"}, "simulations[1].task_id: task 7 is not in the tasks of the results file"),
        ({"task_id": None}, "simulations[1].task_id: task_id must be text or a number, got None"),
        ({"trial": -1}, "simulations[1].trial: trial must be a non-negative integer, got -1"),
        ({"trial": 0}, "task 1 trial 0 appears twice; the first is kept"),
        ({"messages": {}}, "simulations[1].messages: messages must be a list of tau2 messages"),
        (
            {"messages": [{"role": "system!", "content": "x"}]},
            "'role' must be assistant, user, tool or system",
        ),
        ({"messages": ["hi"]}, "simulations[1].messages[0]: a message must be an object, found str"),
        ({"messages": [{"role": "user", "content": 3}]}, "'content' must be text or null, found int"),
        (
            {"messages": [{"role": "tool", "content": "x"}]},
            "a tool message needs the 'id' of the call it answers",
        ),
        (
            {
                "messages": [
                    {"role": "system", "content": "x", "tool_calls": [{"name": "t", "arguments": {}}]}
                ]
            },
            "a system message with tool calls is not supported (only the assistant and the user call)",
        ),
        (
            {"messages": [{"role": "user", "tool_calls": [{"name": "t", "arguments": "{}"}]}]},
            "tool_calls[0].arguments must be an object",
        ),
        ({"messages": [{"role": "assistant", "tool_calls": {"name": "t"}}]}, "'tool_calls' must be a list"),
        (
            {"messages": [{"role": "assistant", "tool_calls": [{"id": "c"}]}]},
            "tool_calls[0] must be {id, name, arguments}",
        ),
        (
            {"messages": [{"role": "assistant", "tool_calls": [{"name": "t", "arguments": "{}"}]}]},
            "tool_calls[0].arguments must be an object",
        ),
    ],
)
def test_malformed_simulation_is_a_located_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], message: str
) -> None:
    bad = _sim("1", trial=1)
    bad.update(change)
    path = _write(tmp_path, [_task("1")], [_sim("1"), bad])
    code, err = _cli([str(path), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert f"warning: {path}: simulations[1]" in err
    assert message in err


def test_a_simulation_that_is_not_an_object_is_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, [_task()], [3])
    code, err = _cli([str(path), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert f"{path}: simulations[0]: a simulation must be an object, found int" in err


def test_missing_tasks_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, [_task()], [_sim()])
    code, err = _cli(
        [str(path), "--out", str(tmp_path / "o"), "--tasks", str(tmp_path / "nope.json")], capsys
    )
    assert code == 2
    assert "nope.json" in err
    assert "does not exist" in err


def test_a_task_id_that_makes_no_case_id_is_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, [_task("[a b]"), _task("2")], [_sim("2")])
    code, err = _cli([str(path), "--out", str(tmp_path / "o"), "--case-prefix", ""], capsys)
    assert code == 2
    assert (
        f"warning: {path}: tasks[0] (task [a b]): makes no valid case: id: Value error, ids use letters"
        in err
    )
    assert "(case id '.5Ba.20b.5D'; give a case prefix that starts with a letter or digit)" in err


def test_identical_gold_actions_are_one_route_step() -> None:
    get = {"name": "get_order", "arguments": {"order_id": "#1"}}
    task = Tau2Task.from_data(_task(actions=[get, get, {**get, "arguments": {"order_id": "#2"}}]), where="t")
    case = task_case(task, case_id="task-1")
    assert case.expected is not None
    assert case.expected.route is not None
    assert [(c.tool, c.args, c.max_calls) for c in case.expected.route] == [
        ("get_order", {"order_id": "#1"}, 2),
        ("get_order", {"order_id": "#2"}, 2),
    ]


def test_db_check_compares_values_with_their_types_as_tau2s_hash(tmp_path: Path) -> None:
    # tau2 compares sha256(json.dumps(db.model_dump(), sort_keys=True, default=str)): 1 and 1.0 differ.
    db = tmp_path / "db.json"
    db.write_text(json.dumps({"orders": {"#1": {"status": "pending", "refund": 0.0}}}))

    def cancel(data: dict[str, Any], order_id: str, reason: str) -> str:
        data["orders"][order_id]["refund"] = 1 if reason == "int" else 1.0
        return "ok"

    as_int = _sim("1", reward=0.0, db=False)
    as_int["messages"][2]["tool_calls"][0]["arguments"]["reason"] = "int"
    path = _write(tmp_path, [_task("1"), _task("2")], [as_int, _sim("2")])
    run = load_run(path, db=db, tools={"cancel": cancel})
    assert [(r.db_match, r.db_source, r.reward) for r in run.rewards] == [
        (False, "replayed", 0.0),
        (True, "replayed", 1.0),
    ]


# --------------------------------------------------------------------------- the DB check, recomputed


def _retail_tools() -> dict[str, Any]:
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from tau2_retail_tools import RETAIL_TOOLS
    finally:
        sys.path.pop(0)
    return RETAIL_TOOLS


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


@shared
def test_shared_retail_tools_answer_every_call_as_tau2_did() -> None:
    # tau2's evaluator replays each call and fails when an answer differs from the stored one (set_state).
    import copy

    tools = _retail_tools()
    data = json.loads(RESULTS.read_text())
    initial = json.loads((TAU2 / "db.json").read_text())
    called = {
        tc["name"] for s in data["simulations"] for m in s["messages"] for tc in m.get("tool_calls") or []
    }
    gold = {a["name"] for t in data["tasks"] for a in t["evaluation_criteria"]["actions"] or []}
    assert called | gold <= set(tools)
    differ, calls, errors = [], 0, 0
    for sim in data["simulations"]:
        db = copy.deepcopy(initial)
        answers = {m["id"]: m for m in sim["messages"] if m["role"] == "tool"}
        for message in sim["messages"]:
            for tc in message.get("tool_calls") or []:
                calls += 1
                try:
                    out = tools[tc["name"]](db, **tc["arguments"])
                    text, error = (out if isinstance(out, str) else json.dumps(out)), False
                except Exception as exc:
                    text, error = f"Error: {exc}", True
                stored = answers[tc["id"]]
                errors += error
                if (_json_or_text(text), error) != (_json_or_text(stored["content"]), stored["error"]):
                    differ.append(
                        f"task {sim['task_id']} {tc['name']}: {text[:120]!r} != {stored['content'][:120]!r}"
                    )
    assert (calls, errors, differ) == (299, 12, [])


@shared
def test_shared_db_check_recomputed_with_retail_tools() -> None:
    run = load_run(RESULTS, db=TAU2 / "db.json", tools=_retail_tools())
    data = json.loads(RESULTS.read_text())
    stored = {str(s["task_id"]): s["reward_info"] for s in data["simulations"]}
    table = "\n".join(
        f"task {r.task_id:>4}  stored db {stored[r.task_id]['db_check']['db_match']!s:5}  "
        f"recomputed db {r.db_match!s:5} ({r.db_source})  reward {r.reward} (stored {r.stored_reward})"
        for r in run.rewards
    )
    assert run.problems == [], table
    assert len(run.rewards) == 40, table
    same_db = [r for r in run.rewards if r.db_match == stored[r.task_id]["db_check"]["db_match"]]
    assert [r.db_source for r in run.rewards] == ["replayed"] * 40, table
    assert len(same_db) == 40, table
    assert sum(r.reproduced for r in run.rewards) == 40, table
    assert sorted(r.reward for r in run.rewards if r.reward is not None) == [0.0] * 6 + [1.0] * 34, table
    assert {r.task_id for r in run.rewards if r.db_match is False} == {"36", "55", "62", "79", "86", "101"}
    assert run.pass_hat(1) == pytest.approx(0.85), table


_OTHER_ORDER = [{"action_id": "1_0", "name": "cancel", "arguments": {"order_id": "#2", "reason": "x"}}]


@pytest.mark.parametrize(
    ("criteria", "info", "message"),
    [
        (
            {"reward_basis": ["COMMUNICATE"]},
            {"db_check": {"db_match": False, "db_reward": 0.0}},
            "task 1: DB check computed, not in the reward basis [COMMUNICATE]; trial 0 scored 1.0 with "
            "db_match false",
        ),
        (
            {"env_assertions": [{"env_type": "user", "func_name": "assert_data_on", "arguments": {}}]},
            {"env_assertions": [{"met": False, "reward": 0.0}]},
            "task 1: 1 env_assertions computed, not in the reward basis [DB, COMMUNICATE]; trial 0 scored "
            "1.0 with 0/1 env_assertions met",
        ),
        (
            {"actions": _OTHER_ORDER},
            {},
            "task 1: 1 actions computed, not in the reward basis [DB, COMMUNICATE]; trial 0 scored 1.0 with "
            "0/1 actions met",
        ),
        (
            {"communicate_info": ["9999"], "reward_basis": ["DB"]},
            {},
            "task 1: 1 communicate_info computed, not in the reward basis [DB]; trial 0 scored 1.0 with 0/1 "
            "communicate_info met",
        ),
        (
            {"nl_assertions": ["The agent apologised"]},
            {"nl_assertions": [{"nl_assertion": "The agent apologised", "met": False, "justification": ""}]},
            "task 1: 1 nl_assertions computed, not in the reward basis [DB, COMMUNICATE]; trial 0 scored 1.0 "
            "with 0/1 nl_assertions met",
        ),
    ],
    ids=["DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"],
)
def test_every_component_computed_outside_the_basis_is_a_finding(
    criteria: dict[str, Any], info: dict[str, Any], message: str
) -> None:
    task = _task(**criteria)
    sim = _sim()
    sim["reward_info"].update(info)
    parsed = Tau2Task.from_data(task, where="t")
    reward = reproduce_reward(parsed, sim)
    assert reward.reward == 1.0
    assert message in [f.message for f in criteria_findings(parsed, [reward])]


def test_db_in_the_basis_with_nothing_to_compare_scores_one() -> None:
    task = Tau2Task.from_data(_task(actions=None, communicate_info=["1628"]), where="t")
    (finding,) = criteria_findings(task)
    assert (finding.kind, finding.component) == ("empty_scores_one", "DB")
    assert finding.message == (
        "task 1: DB is in the reward basis but the criteria list neither actions nor env_assertions, so "
        "it scores 1.0 whatever the agent says or does"
    )


def test_a_toml_database_is_read_and_written_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db.toml"
    db.write_text('[[orders]]\norder_id = "#1"\nplaced = 2026-01-31\ntotal = 1628.0\n')
    out = tmp_path / "o"
    code, err = _cli([str(_write(tmp_path, [_task()], [_sim()])), "--out", str(out), "--db", str(db)], capsys)
    assert code == 0, err
    written = json.loads((out / "fixtures" / "db.json").read_text(encoding="utf-8"))
    assert written == {"orders": [{"order_id": "#1", "placed": "2026-01-31", "total": 1628.0}]}


def test_the_import_prints_pass_hat_k_for_every_k_the_trials_allow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sims = [_sim("1", trial=0), _sim("1", trial=1, reward=0.0, db=False), _sim("1", trial=2)]
    sims += [_sim("2", trial=0), _sim("2", trial=1)]
    path = _write(tmp_path, [_task("1"), _task("2")], sims)
    code = main(["import", "tau2-bench", str(path), "--out", str(tmp_path / "o")])
    out = capsys.readouterr().out
    assert code == 0
    # task 1: 2 of 3 trials, task 2: 2 of 2; tau2 stops at the fewest trials of a task (k = 2)
    assert "rewards: 4 at 1, 1 at 0; pass^1 0.833, pass^2 0.667" in out
    assert "pass^3" not in out

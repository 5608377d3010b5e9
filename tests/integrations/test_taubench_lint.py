"""tau-bench tasks linted as golden cases: the tasks a do-nothing agent gets reward 1 on."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from judgekit.golden.lint import FindingKind
from judgekit.integrations.taubench import EPISODE_CHECK, OUTPUTS_CHECK, load_run
from judgekit.integrations.taubench_lint import do_nothing_reward_tasks, lint_tau_bench
from judgekit.verdict import Verdict

REPO = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _shared_data() -> Path:
    env = os.environ.get("JUDGEKIT_SHARED_DATA")
    return Path(env) if env else REPO / ".." / "shared" / "data"


TAU = _shared_data() / "tau-bench-airline"
HAS_TAU = (TAU / "gpt-4o-airline.raw.json").is_file() and (TAU / "gpt-4o-trajectories.jsonl").is_file()
needs_tau = pytest.mark.skipif(
    not HAS_TAU and not IN_CI, reason=f"shared tau-bench data not present at {TAU} (CI=true requires it)"
)

# --------------------------------------------------------------------------- a small synthetic domain

USERS = {"u1": {"email": "old@x.io", "balance": 100}}


def update_email(data: dict[str, Any], user_id: str, email: str) -> str:
    data["users"][user_id]["email"] = email
    return "ok"


def get_user(data: dict[str, Any], user_id: str) -> str:
    return json.dumps(data["users"][user_id])


TASKS = {
    0: {
        "user_id": "u1",
        "instruction": "Change your email.",
        "actions": [{"name": "update_email", "kwargs": {"user_id": "u1", "email": "new@x.io"}}],
        "outputs": [],
    },
    1: {
        "user_id": "u1",
        "instruction": "Ask what your email is, change nothing.",
        "actions": [{"name": "get_user", "kwargs": {"user_id": "u1"}}],
        "outputs": [],
    },
    2: {
        "user_id": "u1",
        "instruction": "Ask for your balance.",
        "actions": [{"name": "get_user", "kwargs": {"user_id": "u1"}}],
        "outputs": ["100"],
    },
}


@pytest.fixture
def results(tmp_path: Path) -> Path:
    episodes = [
        {
            "task_id": task_id,
            "trial": 0,
            "reward": 1.0,
            "info": {"task": task, "source": "user", "reward_info": {"reward": 1.0, "info": {}}},
            "traj": [
                {"role": "system", "content": "# Policy"},
                {"role": "user", "content": task["instruction"]},
                {"role": "assistant", "content": "Done."},
            ],
        }
        for task_id, task in TASKS.items()
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(episodes, indent=1))
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "users.json").write_text(json.dumps(USERS))
    return path


def test_only_the_task_that_changes_nothing_and_needs_no_output_is_free(results: Path) -> None:
    run = load_run(
        results, db=results.parent / "db", tools={"update_email": update_email, "get_user": get_user}
    )
    report = lint_tau_bench(run, results=results)
    assert [c.case_id for c in report.cases] == ["task-0", "task-1", "task-2"]
    assert do_nothing_reward_tasks(report) == ["task-1"]
    changes, free, says = report.cases
    assert [f.kind for f in free.findings] == [FindingKind.DO_NOTHING_PASSES]
    assert free.findings[0].layers == ("state", "tau-bench")
    assert changes.findings == ()
    assert changes.do_nothing.verdict is Verdict.FAIL
    assert says.findings == ()
    failed = {c.check_id for c in says.do_nothing.checks if c.verdict is Verdict.FAIL and c.gate}
    assert failed == {OUTPUTS_CHECK}  # the text layer's must_mention reports, tau-bench's condition gates
    assert {c.check_id: c.verdict for c in free.do_nothing.checks}[EPISODE_CHECK] is Verdict.PASS


def test_findings_point_at_the_line_where_the_task_s_episode_starts(results: Path) -> None:
    run = load_run(
        results, db=results.parent / "db", tools={"update_email": update_email, "get_user": get_user}
    )
    (finding,) = lint_tau_bench(run, results=results).cases[1].findings
    lines = results.read_text().splitlines()
    entry_starts = [i for i, text in enumerate(lines, 1) if text == " {"]
    assert finding.where.file == results
    assert finding.where.line == entry_starts[1]
    assert lint_tau_bench(run).cases[1].findings[0].where.line is None


def test_without_states_only_the_outputs_can_fail_a_do_nothing_agent(results: Path) -> None:
    run = load_run(results, db=results.parent / "db")
    assert not run.has_states
    report = lint_tau_bench(run)
    # no expected state, so tasks 0 and 1 state nothing: nothing fails a do-nothing agent, but nothing
    # passes it either (a case stating no expectation is not_evaluated), so no reward is claimed
    assert do_nothing_reward_tasks(report) == []
    assert [c.case_id for c in report.reported] == ["task-0", "task-1"]
    assert all("nothing in the case could fail it" in c.findings[0].message for c in report.reported)
    assert {c.do_nothing.verdict for c in report.reported} == {Verdict.NOT_EVALUATED}
    checks = {c.check_id: c.verdict for c in report.cases[0].do_nothing.checks}
    assert checks["state"] is Verdict.NOT_EVALUATED  # no expected state: the state layer is absent
    assert [c.verdict for c in report.cases[2].do_nothing.checks if c.check_id == OUTPUTS_CHECK] == [
        Verdict.FAIL
    ]


# --------------------------------------------------------------------------- the real airline run


def _independent_free_tasks() -> list[int]:
    """From the replay rows alone: tasks whose ground truth changes nothing and which need no output."""
    rows = [json.loads(line) for line in (TAU / "gpt-4o-trajectories.jsonl").read_text().splitlines() if line]
    by_task: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_task.setdefault(int(row["task_id"]), []).append(row)
    free = []
    for task_id, task_rows in sorted(by_task.items()):
        diffs = {json.dumps(r["expected_db_diff"], sort_keys=True) for r in task_rows}
        outputs = {tuple(r["expected_outputs"]) for r in task_rows}
        assert len(diffs) == len(outputs) == 1, f"task {task_id}: trials disagree about the task"
        if not task_rows[0]["expected_db_diff"] and not task_rows[0]["expected_outputs"]:
            free.append(task_id)
    return free


AIRLINE_FREE = [12, 13, 15, 17, 18, 21, 24, 29, 35, 36, 37, 38, 39, 40, 41, 42, 47, 48, 49]
"""gpt-4o airline tasks whose reward a do-nothing agent would get (computed by lint_tau_bench)."""


@needs_tau
def test_airline_tasks_a_do_nothing_agent_gets_reward_1_on() -> None:
    run = load_run(TAU / "gpt-4o-airline.raw.json", db=TAU / "db", replay=TAU / "gpt-4o-trajectories.jsonl")
    assert run.problems == []
    report = lint_tau_bench(run, results=TAU / "gpt-4o-airline.raw.json")
    assert len(report.cases) == 50
    assert do_nothing_reward_tasks(report) == [f"task-{n}" for n in AIRLINE_FREE]
    # cross-checked independently from the raw replay rows
    assert _independent_free_tasks() == AIRLINE_FREE
    # every other task fails the do-nothing agent on a deterministic gate, never undecided
    assert all(c.do_nothing.verdict in (Verdict.PASS, Verdict.FAIL) for c in report.cases)
    assert [c.case_id for c in report.reported] == [f"task-{n}" for n in AIRLINE_FREE]
    # task 44 changes nothing but needs the output '4': tau-bench's outputs gate fails it
    task_44 = next(c for c in report.cases if c.case_id == "task-44")
    failed = sorted(c.check_id for c in task_44.do_nothing.checks if c.verdict is Verdict.FAIL and c.gate)
    assert failed == [OUTPUTS_CHECK]


def test_a_results_file_named_as_text_locates_the_findings(results: Path) -> None:
    tools = {"update_email": update_email, "get_user": get_user}
    run = load_run(str(results), db=results.parent / "db", tools=tools)
    (finding,) = lint_tau_bench(run, results=str(results)).cases[1].findings
    assert finding.where.file == results
    assert finding.where.line is not None

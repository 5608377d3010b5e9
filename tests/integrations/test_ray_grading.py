"""Grading the deterministic layers on a real (local) Ray cluster, as a run past one machine would.

The bundled example's two runs (``examples/airdesk/runs/agent-v1.jsonl`` and ``agent-v2.jsonl``) are graded
on a local cluster started by this module and in process (the runner, and the ``judgekit grade`` command);
the result lines, sorted by (case, trial), must be identical but for ``duration_s`` (each trial's grading
time), and for the CLI the run id, grading record and provenance, which the caller chooses. Ray is a
development dependency (and the ``ray`` extra); outside CI the module skips without it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judgekit.caseset import CaseSet, load_case_set
from judgekit.errors import JudgekitError
from judgekit.integrations.ray_grading import (
    RECORD_COLUMNS,
    RayRun,
    TrialBatchGrader,
    grade_dataset,
    grade_on_ray,
    trial_records,
)
from judgekit.provenance import Provenance
from judgekit.runner import LayeredTrialGrader, RunPlan, plan_trials, prepare_output, run_trials
from judgekit.verdict import Verdict
from support import local_ray_cluster

if os.environ.get("CI") == "true":
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'judgekit-agents[ray]')")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
RUNS = ("agent-v1.jsonl", "agent-v2.jsonl")
GRADING: dict[str, Any] = {"cases": str(EXAMPLE), "judge_model": None, "untrusted_policy": "withhold"}
PROVENANCE = Provenance(method="layered", dependencies={"ray": "test"})


@pytest.fixture(scope="module")
def local_cluster() -> Iterator[Any]:
    with local_ray_cluster(ray) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def airdesk() -> CaseSet:
    case_set = load_case_set(EXAMPLE)
    case_set.raise_if_invalid()
    return case_set


def _in_process(case_set: CaseSet, plan: RunPlan, out: Path) -> str:
    """Grade ``plan`` with the runner exactly as ``judgekit grade`` does; return the run id."""
    grader = LayeredTrialGrader(case_set.root, None, "withhold")
    grader.set_sources({t.key: Path(t.source.file).resolve().parent for t in plan.trials})
    try:
        state = prepare_output(out, plan, resume=False, judge_fingerprint=None, grader=grader.spec)
        asyncio.run(run_trials(plan, grader, out=out, state=state, grading=GRADING, provenance=PROVENANCE))
    finally:
        grader.close()
    return state.run_id


def _normalised(lines: list[str], *fields: str) -> list[dict[str, Any]]:
    """Lines as data sorted by (case, trial), with the fields that legitimately differ removed."""
    rows = [json.loads(line) for line in lines]
    for row in rows:
        for name in ("duration_s", *fields):
            row.pop(name)
    return sorted(rows, key=lambda r: (r["case"]["id"], r["trial"]))


@dataclass
class Graded:
    """One example run graded both ways."""

    plan: RunPlan
    local: list[str]
    run: RayRun
    lines: list[str]


@pytest.fixture(scope="module")
def graded(
    tmp_path_factory: pytest.TempPathFactory, airdesk: CaseSet, local_cluster: Any
) -> dict[str, Graded]:
    """Each example run graded in process and on the cluster (once per module: Ray is slow to start)."""
    out: dict[str, Graded] = {}
    for name in RUNS:
        folder = tmp_path_factory.mktemp(name.removesuffix(".jsonl"))
        plan = plan_trials(airdesk, [EXAMPLE / "runs" / name])
        run_id = _in_process(airdesk, plan, folder / "local.jsonl")
        done = grade_on_ray(
            plan,
            root=airdesk.root,
            out=folder / "ray.jsonl",
            run_id=run_id,
            grading=GRADING,
            provenance=PROVENANCE,
            batch_size=64,  # two batches, one per actor: each block costs Ray Data's sort a few tasks
            concurrency=2,
        )
        out[name] = Graded(
            plan,
            (folder / "local.jsonl").read_text(encoding="utf-8").splitlines(),
            done,
            (folder / "ray.jsonl").read_text(encoding="utf-8").splitlines(),
        )
    return out


@pytest.mark.parametrize("run", RUNS)
def test_the_example_runs_graded_on_ray_equal_the_in_process_run(graded: dict[str, Graded], run: str) -> None:
    g = graded[run]
    assert g.run.graded == len(g.plan.trials) == len(g.lines) == 104
    assert g.run.problems == g.plan.problems == []
    assert g.run.out is not None
    assert _normalised(g.lines) == _normalised(g.local)
    keys = [(r["case"]["id"], r["trial"]) for r in map(json.loads, g.lines)]
    assert keys == sorted(keys)  # the file is written sorted by (case, trial)
    verdicts = [json.loads(line)["verdict"] for line in g.local]
    assert {v.value: n for v, n in g.run.verdicts.items() if n} == {
        v: verdicts.count(v) for v in set(verdicts)
    }
    assert g.run.verdicts[Verdict.PASS] > 0
    assert g.run.verdicts[Verdict.FAIL] > 0


def test_the_lines_on_ray_equal_what_judgekit_grade_writes(tmp_path: Path, graded: dict[str, Graded]) -> None:
    from typer.testing import CliRunner

    from judgekit.cli import app

    transcripts = EXAMPLE / "runs" / RUNS[0]
    cli_out = tmp_path / "cli.jsonl"
    result = CliRunner().invoke(
        app, ["grade", "--cases", str(EXAMPLE), "--transcripts", str(transcripts), "--out", str(cli_out)]
    )
    assert result.exit_code == 0, result.output
    differ = ("run_id", "grading", "provenance")
    assert _normalised(graded[RUNS[0]].lines, *differ) == _normalised(
        cli_out.read_text(encoding="utf-8").splitlines(), *differ
    )


def test_a_final_state_a_worker_cannot_read_is_an_error_as_in_process(
    tmp_path: Path, local_cluster: Any
) -> None:
    example = tmp_path / "airdesk"
    shutil.copytree(EXAMPLE, example)
    case_set = load_case_set(example)
    lines = (example / "runs" / RUNS[0]).read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["final_state"] = "states/missing-on-every-worker.sql"
    broken_file = example / "runs" / "broken.jsonl"
    broken_file.write_text(json.dumps(first) + "\n" + "\n".join(lines[1:4]) + "\n", encoding="utf-8")
    plan = plan_trials(case_set, [broken_file])
    local_out = tmp_path / "local.jsonl"
    run_id = _in_process(case_set, plan, local_out)
    done = grade_on_ray(
        plan,
        root=case_set.root,
        run_id=run_id,
        grading=GRADING,
        provenance=PROVENANCE,
        concurrency=1,
    )
    assert done.out is None  # no out file: the lines are returned
    local = local_out.read_text(encoding="utf-8").splitlines()
    assert _normalised(done.lines) == _normalised(local)
    broken = next(r for r in map(json.loads, done.lines) if r["source"]["line"] == 1)
    assert broken["verdict"] == "error"
    reasons = [c["reason"] for c in broken["checks"] if c["verdict"] == "error"]
    assert any("missing-on-every-worker.sql" in reason for reason in reasons), reasons
    others = [json.loads(line)["verdict"] for line in done.lines if json.loads(line)["source"]["line"] > 1]
    assert "error" not in others
    assert done.verdicts[Verdict.ERROR] == 1


def test_a_record_that_is_not_a_transcript_is_left_out_as_plan_trials_leaves_it_out(
    tmp_path: Path, airdesk: CaseSet, local_cluster: Any
) -> None:
    bad = json.dumps({"case_id": "gs-double-charge", "trial": 7, "messages": "hi"})  # not a list
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{bad}\n", encoding="utf-8")
    planned = plan_trials(airdesk, [path])
    assert len(planned.problems) == 1
    plan = plan_trials(airdesk, [EXAMPLE / "runs" / RUNS[0]])
    good = trial_records(plan)[0]
    bad_record = {**good, "trial": 7, "transcript": bad, "file": str(path), "line": 1}
    records = [good, bad_record]
    rows = grade_dataset(
        local_cluster.data.from_items(records),
        [plan.trials[0].case],
        root=airdesk.root,
        run_id="r1",
        concurrency=1,
    ).take_all()
    (left_out,) = [r for r in rows if r["result"] is None]
    assert str(path) == left_out["file"]
    problem = planned.problems[0]
    assert (left_out["line"], left_out["field"], left_out["problem"]) == (
        problem.line,
        problem.field,
        problem.message,
    )
    assert [r["verdict"] for r in rows if r["result"] is not None] == ["pass"]


def test_a_dataset_without_the_record_columns_is_refused(airdesk: CaseSet, local_cluster: Any) -> None:
    dataset = local_cluster.data.from_items([{"case_id": "gs-double-charge", "trial": 1}])
    with pytest.raises(
        JudgekitError, match=r"^the dataset has no column transcript, file, line, sha256"
    ) as exc:
        grade_dataset(dataset, [], root=airdesk.root, run_id="r1")
    assert exc.value.exit_code == 2
    assert "trial_records" in str(exc.value)


def test_a_batch_size_below_one_is_refused(airdesk: CaseSet, local_cluster: Any) -> None:
    dataset = local_cluster.data.from_items([dict.fromkeys(RECORD_COLUMNS, "x")])
    with pytest.raises(
        JudgekitError, match=r"^batch_size and concurrency must be at least 1 \(got 0 and 2\)$"
    ):
        grade_dataset(dataset, [], root=airdesk.root, run_id="r1", batch_size=0)


def test_an_out_file_that_holds_results_is_refused(tmp_path: Path, airdesk: CaseSet) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text('{"already": "here"}\n', encoding="utf-8")
    plan = plan_trials(airdesk, [EXAMPLE / "runs" / RUNS[0]])
    with pytest.raises(JudgekitError, match=r"already holds results; pass --resume") as exc:
        grade_on_ray(plan, root=airdesk.root, out=out)
    assert exc.value.exit_code == 2


def test_a_record_of_a_case_not_shipped_is_left_out_naming_the_case(airdesk: CaseSet) -> None:
    # the worker's callable, run in this process: no cluster needed
    plan = plan_trials(airdesk, [EXAMPLE / "runs" / RUNS[0]])
    grader = TrialBatchGrader([], airdesk.root, run_id="r1")
    (row,) = grader.grade_records(trial_records(plan)[:1])
    assert row["result"] is None
    assert row["field"] == "case_id"
    assert row["problem"] == (
        "case 'gs-double-charge' is not among the cases shipped to the workers; trial 1 left out"
    )


def test_without_ray_the_install_command_is_named(monkeypatch: pytest.MonkeyPatch, airdesk: CaseSet) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    plan = plan_trials(airdesk, [EXAMPLE / "runs" / RUNS[0]])
    with pytest.raises(JudgekitError, match=r"pip install 'judgekit-agents\[ray\]'"):
        grade_on_ray(plan, root=airdesk.root)

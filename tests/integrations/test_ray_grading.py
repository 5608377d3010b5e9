"""Grading the deterministic layers on a real (local) Ray cluster, as a run past one machine would.

The bundled example's two runs (``examples/airdesk/runs/agent-v1.jsonl`` and ``agent-v2.jsonl``) are graded
on a local cluster started by this module and in process (the runner, and the ``judgekit grade`` command);
the result lines, sorted by (case, trial), must be identical but for ``duration_s`` (each trial's grading
time), and for the CLI the run id, grading record and provenance, which the caller chooses. Ray is a
development dependency (and the ``ray`` extra); outside CI the module skips without it.

``judgekit grade --ray ADDRESS`` is run through the command line against a real cluster this module starts
as a user starts one (``ray start --head`` on 127.0.0.1, in its own process group, stopped afterwards): its
results file must be the in-process run's byte for byte but for ``run_id`` and ``duration_s`` (with a
replayed judge, and resumed, too). ``--ray local`` starts a one-machine cluster of its own and writes the
same file; with ``--batch`` the judge's requests still go as one provider batch from this machine (the
loopback judge server), and the lines judge as the in-process batch run's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
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
from support import CLI_CHILD, child_env, local_ray_cluster

if os.environ.get("CI") == "true":
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'judgekit-agents[ray]')")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airdesk"
RUNS = ("agent-v1.jsonl", "agent-v2.jsonl")
GRADING: dict[str, Any] = {"cases": str(EXAMPLE), "judge_model": None, "untrusted_policy": "withhold"}
PROVENANCE = Provenance(method="layered", dependencies={"ray": "test"})


@pytest.fixture(scope="module")
def local_cluster(ray_head: str) -> Iterator[Any]:
    """This process connected to the module's one cluster (:func:`ray_head`): Ray starts once per module."""
    saved = {name: os.environ.get(name) for name in RAY_ENV}
    os.environ.update(RAY_ENV)
    try:
        with local_ray_cluster(ray, address=ray_head) as cluster:
            yield cluster
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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


# --------------------------------------------------------------------------- judgekit grade --ray ADDRESS


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", "RAY_ADDRESS": ""}
"""The cluster and its clients agree on no token (Ray turns token auth on when ~/.ray/auth_token exists)."""


@pytest.fixture(scope="module")
def ray_head() -> Iterator[str]:
    """A real one-node Ray cluster, started with ``ray start --head --block``; its address (HOST:PORT).

    Its own temporary folder keeps it out of the way of other clusters (``ray.init()`` elsewhere never
    finds it); its process group is stopped afterwards (SIGTERM, then SIGKILL), and only it.
    """
    port = _free_port()
    folder = tempfile.mkdtemp(prefix="jk-ray-", dir="/tmp")  # short: Ray's socket paths have a length limit
    command = [
        str(Path(sys.executable).parent / "ray"),
        "start",
        "--head",
        "--block",
        f"--port={port}",
        "--node-ip-address=127.0.0.1",
        "--num-cpus=4",  # two actors plus Ray Data's read and sort tasks at once
        "--object-store-memory=100000000",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={folder}",
    ]
    log = Path(folder) / "ray-start.log"
    with log.open("wb") as sink:
        head = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env=child_env(**RAY_ENV), start_new_session=True
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert head.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the Ray head did not start in 90 s"
            if "Ray runtime started" in log.read_text(errors="replace"):
                break
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)
        head.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def _judgekit(*args: str | Path, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI_CHILD, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=child_env(**RAY_ENV, **env),
        check=False,
    )


VARIABLE = re.compile(rb'"(run_id":"[^"]*|duration_s":[0-9.e-]+)')
"""The two fields two runs of the same grading never share: the run id and each trial's grading time."""


def _without_run_id_and_duration(path: Path) -> bytes:
    return VARIABLE.sub(lambda m: m.group(0).split(b":")[0] + b":~", path.read_bytes())


@pytest.fixture(scope="module")
def example_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example outside any git checkout (provenance records no revision that moves meanwhile)."""
    copy = tmp_path_factory.mktemp("airdesk") / "airdesk"
    shutil.copytree(EXAMPLE, copy)
    return copy


def _grade_args(example: Path, out: Path, *more: str | Path) -> list[str | Path]:
    runs = example / "runs" / RUNS[0]
    return ["grade", "--cases", example, "--transcripts", runs, "--out", out, "--no-progress", *more]


@dataclass
class CliRun:
    """``judgekit grade`` of the example's first run, in process and with ``--ray`` (same options)."""

    local: Path
    ray: Path
    ray_result: subprocess.CompletedProcess[str]
    local_result: subprocess.CompletedProcess[str]


def _both(example: Path, folder: Path, address: str, *more: str | Path) -> CliRun:
    local, on_ray = folder / "local.jsonl", folder / "ray.jsonl"
    local_result = _judgekit(*_grade_args(example, local, *more))
    ray_result = _judgekit(*_grade_args(example, on_ray, *more, "--ray", address))
    assert local_result.returncode == 0, local_result.stderr
    assert ray_result.returncode == 0, ray_result.stderr
    return CliRun(local, on_ray, ray_result, local_result)


def test_grade_ray_writes_the_in_process_results_file(
    tmp_path: Path, example_copy: Path, ray_head: str
) -> None:
    run = _both(example_copy, tmp_path, ray_head)
    assert "Traceback" not in run.ray_result.stderr
    assert "ray: the deterministic layers of 104 trial(s) checked on 1 node(s) (4 CPU(s), 3 worker(s))" in (
        run.ray_result.stderr
    )
    lines = run.ray.read_bytes().splitlines()
    assert len(lines) == 104
    assert _without_run_id_and_duration(run.ray) == _without_run_id_and_duration(run.local)
    assert run.ray.read_bytes() != run.local.read_bytes()  # the run ids differ, and nothing else
    headline = re.compile(r"run \S+: graded 104 trial\(s\) in [0-9.]+s (\(.*\)) -> ")
    local_counts = headline.search(run.local_result.stdout)
    ray_counts = headline.search(run.ray_result.stdout)
    assert local_counts is not None
    assert ray_counts is not None
    assert ray_counts.group(1) == local_counts.group(1)


def test_grade_ray_with_a_judge_grades_it_here_after_the_cluster(
    tmp_path: Path, example_copy: Path, ray_head: str
) -> None:
    judge = (
        "--config",
        example_copy / "judge.yaml",
        "--cassette",
        example_copy / "cassettes" / "judge-honest-reporting.jsonl",
    )
    run = _both(example_copy, tmp_path, ray_head, *judge)
    assert _without_run_id_and_duration(run.ray) == _without_run_id_and_duration(run.local)
    rows = [json.loads(line) for line in run.ray.read_text(encoding="utf-8").splitlines()]
    assert all(row["judge_fingerprint"] is not None for row in rows)
    assert any(check["layer"] == "rubric" for row in rows for check in row["checks"])
    assert "judge cost $0.0000" in run.ray_result.stdout  # replayed: the judge answered on this machine


def test_grade_ray_resume_finishes_an_interrupted_run_as_in_process(
    tmp_path: Path, example_copy: Path, ray_head: str
) -> None:
    whole = tmp_path / "whole.jsonl"
    assert _judgekit(*_grade_args(example_copy, whole)).returncode == 0
    cut = tmp_path / "cut.jsonl"
    kept = whole.read_bytes().splitlines(keepends=True)[:40]
    cut.write_bytes(b"".join(kept) + b'{"schema_version":1,"run_id":"')  # a line cut off by a kill
    resumed = _judgekit(*_grade_args(example_copy, cut, "--resume", "--ray", ray_head))
    assert resumed.returncode == 0, resumed.stderr
    assert "ray: the deterministic layers of 64 trial(s) checked" in resumed.stderr
    assert "64 trial(s)" in resumed.stdout
    assert "40 already graded" in resumed.stdout
    assert _without_run_id_and_duration(cut) == _without_run_id_and_duration(whole)
    run_ids = {json.loads(line)["run_id"] for line in cut.read_text(encoding="utf-8").splitlines()}
    assert run_ids == {json.loads(kept[0])["run_id"]}  # the resumed run keeps its id


def test_grade_ray_at_an_address_where_nothing_answers_is_refused_fast(tmp_path: Path) -> None:
    port = _free_port()
    done = _judgekit(*_grade_args(EXAMPLE, tmp_path / "out.jsonl", "--ray", f"127.0.0.1:{port}"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"--ray 127.0.0.1:{port}: no Ray cluster answers at 127.0.0.1:{port} within 10s" in done.stderr
    assert "ray start --head" in done.stderr
    assert not (tmp_path / "out.jsonl").exists() or not (tmp_path / "out.jsonl").read_bytes()


def test_the_ray_setting_of_the_project_configuration_is_grade_ray(tmp_path: Path) -> None:
    port = _free_port()
    (tmp_path / "judgekit.toml").write_text(f'ray = "ray://127.0.0.1:{port}"\n', encoding="utf-8")
    done = _judgekit(*_grade_args(EXAMPLE, tmp_path / "out.jsonl"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"--ray ray://127.0.0.1:{port}: no Ray cluster answers at 127.0.0.1:{port}" in done.stderr
    shown = _judgekit("config", cwd=tmp_path)
    assert re.search(rf"ray\s+ray://127.0.0.1:{port}\s+{re.escape(str(tmp_path))}", shown.stdout), (
        shown.stdout
    )


def test_grade_ray_without_ray_installed_names_the_extra(tmp_path: Path) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "ray.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'ray'\", name='ray')\n", encoding="utf-8"
    )
    path = os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")])
    done = _judgekit(*_grade_args(EXAMPLE, tmp_path / "out.jsonl", "--ray", "auto"), PYTHONPATH=path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "pip install 'judgekit-agents[ray]'" in done.stderr


def test_a_check_that_raised_on_a_worker_makes_the_in_process_error_line() -> None:
    from judgekit.integrations.ray_grading import _check_row, _given

    class StateCorrupt(Exception):
        pass

    given = _given(_check_row("gs-double-charge", 1, None, StateCorrupt("page 7 is torn")))
    assert isinstance(given, Exception)
    assert f"{type(given).__name__}: {given}" == "StateCorrupt: page 7 is torn"


def _batch_reply(body: dict[str, Any], index: int) -> Any:
    """The same answer for the same request, live or batched: pass or fail by the prompt's length."""
    from judges.server import Reply, verdict_reply

    text = json.dumps(body.get("messages"), sort_keys=True)
    return Reply(content=verdict_reply("pass" if len(text) % 2 else "fail"))


def _judged(path: Path) -> list[tuple[Any, ...]]:
    """Each line's trial, verdict, checks (id, verdict, reason) and judge cost, in file order."""
    from judgekit.results import read_results

    return [
        (
            line.key,
            line.verdict,
            [(c.check_id, c.verdict, c.reason) for c in line.checks],
            [
                e.data["cost"]
                for c in line.checks
                for e in c.evidence
                if e.kind == "note" and isinstance(e.data, dict) and "cost" in e.data
            ],
        )
        for line in read_results(path).lines
    ]


def test_grade_ray_with_a_provider_batch_judges_in_one_batch_as_in_process(
    tmp_path: Path, ray_head: str
) -> None:
    # --ray checks the deterministic layers on the cluster; --batch still sends the judge's requests as one
    # provider batch from this machine, after the cluster, and the lines are those of the in-process run
    from judges.server import JudgeServer
    from support import airdesk_judge_run

    server = JudgeServer(_batch_reply).start()
    try:
        run = airdesk_judge_run(tmp_path, server.api_base, 3)
        env = {"OPENAI_API_KEY": "sk-batch-test-0123456789abcdef", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        args = (
            "--judge-model",
            "openai/gpt-4o-mini",
            "--config",
            run["config"],
            "--batch",
            "--batch-poll",
            "0.05",
        )
        outs = {}
        for where, more in (("here", ()), ("ray", ("--ray", ray_head))):
            out = tmp_path / f"{where}.jsonl"
            grade = ["grade", "--cases", EXAMPLE, "--transcripts", run["transcripts"], "--out", out]
            done = _judgekit(*grade, "--no-progress", *args, *more, **env)
            assert done.returncode == 0, done.stderr
            assert "Traceback" not in done.stderr
            outs[where] = (out, done.stderr)
        assert server.calls == 0  # every judgment went through the batches, none asked directly
        assert (server.uploads, server.batches_created) == (2, 2)
    finally:
        server.stop()
    here, ray_out = outs["here"][0], outs["ray"][0]
    assert "ray: the deterministic layers of 3 trial(s) checked on 1 node(s)" in outs["ray"][1]
    assert "batch batch_2: submitted" in outs["ray"][1]
    assert _judged(ray_out) == _judged(here)
    assert any(check[0].startswith("criterion:") for row in _judged(ray_out) for check in row[2])
    rows = [json.loads(line) for line in ray_out.read_text(encoding="utf-8").splitlines()]
    assert [row["grading"]["batch"]["batch_id"] for row in rows] == ["batch_2"] * 3


def test_grade_ray_local_starts_a_one_machine_cluster_and_writes_the_in_process_file(
    tmp_path: Path, example_copy: Path
) -> None:
    run = _both(example_copy, tmp_path, "local")
    assert "Traceback" not in run.ray_result.stderr
    assert re.search(
        r"ray: the deterministic layers of 104 trial\(s\) checked on 1 node\(s\)", run.ray_result.stderr
    )
    assert _without_run_id_and_duration(run.ray) == _without_run_id_and_duration(run.local)

"""Every path that reads a case set leaves holdout cases out unless they are named.

A case with ``split: holdout`` is reserved: tuning prompts against it overfits it. One function decides
which cases a path uses, :func:`judgekit.caseset.select_cases`, and every path calls it (the runner
through :func:`judgekit.runner.plan_trials`). The paths are enumerated in :data:`PATHS`, each run for real
on a small set of one routine case and one holdout case: ``judgekit grade``, ``report`` and ``export``,
the runner, the pytest plugin (``judgekit_case``, ``judgekit_trial`` and ``golden_cases``), Inspect AI's
samples and scorer, and promptfoo's assertion. By default the holdout is absent; named in the path's own
idiom (``--holdout``, ``--judgekit-holdout`` or the ini key, ``holdout=``, ``config.holdout``) it is
present.

A new module that reads a case set must either be a path here (and go through the function) or be listed
in :data:`NOT_RUNS` with the reason it needs every case; :func:`test_every_module_reading_cases_is_enumerated`
fails otherwise.
"""

from __future__ import annotations

import ast
import asyncio
import csv
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from judgekit.caseset import load_case_set, select_cases
from judgekit.errors import JudgekitError
from support import called_name

SRC = Path(__file__).resolve().parents[1] / "src" / "judgekit"

ROUTINE, HOLDOUT = "routine-1", "held-1"

CASES = {
    "routine.yaml": f"id: {ROUTINE}\nversion: 1\ninput: Where is my refund?\n"
    "expected:\n  must_mention: [refund]\n  reference_answer: Your refund was issued.\n",
    "holdout.yaml": f"id: {HOLDOUT}\nversion: 1\nsplit: holdout\ninput: Where is my parcel?\n"
    "expected:\n  must_mention: [parcel]\n  reference_answer: Your parcel is on its way.\n",
}


def _trial(case_id: str) -> str:
    # both replies miss their required mention, so a report lists every case it counts among its failures
    messages = [{"role": "user", "content": "Where is it?"}, {"role": "assistant", "content": "Hello."}]
    return json.dumps({"case_id": case_id, "trial": 1, "messages": messages})


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    root = tmp_path / "golden"
    (root / "cases").mkdir(parents=True)
    for name, text in CASES.items():
        (root / "cases" / name).write_text(text, encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(f"{_trial(ROUTINE)}\n{_trial(HOLDOUT)}\n", encoding="utf-8")
    load_case_set(root).raise_if_invalid()
    return root


def _transcripts(root: Path) -> Path:
    return root.parent / "t.jsonl"


def _main(args: list[str]) -> None:
    from judgekit.cli import main

    code = main(args)
    assert code in (0, 1, None), (args, code)  # 1: the (failing) trials were graded


def _results(path: Path) -> dict[str, tuple[str, ...]]:
    """Case id of every result line -> the holdouts the run that graded it recorded."""
    from judgekit.results import read_results

    return {line.case.id: tuple(line.grading.get("holdouts", [])) for line in read_results(path).lines}


# --------------------------------------------------------------------------- the paths
# Each takes the set's root and the holdout ids to name, and returns the case ids the path used.


def via_grade(root: Path, names: list[str]) -> set[str]:
    out = root.parent / f"grade-{len(names)}.jsonl"
    args = ["grade", "--cases", str(root), "--transcripts", str(_transcripts(root)), "--out", str(out)]
    _main([*args, "--no-progress", *(a for n in names for a in ("--holdout", n))])
    lines = _results(out)
    assert set(lines.values()) == {tuple(names)}, "every line records the holdouts the run was asked to grade"
    return set(lines)


def via_report(root: Path, names: list[str]) -> set[str]:
    from judgekit.runner import LayeredTrialGrader, plan_trials, prepare_output, run_trials

    every = root.parent / f"every-{len(names)}.jsonl"  # a results file holding the holdout's trial too
    plan = plan_trials(load_case_set(root), [_transcripts(root)], holdout=[HOLDOUT])
    grader = LayeredTrialGrader(root, None, "withhold")
    try:
        state = prepare_output(every, plan, resume=False, judge_fingerprint=grader.judge_fingerprint)
        asyncio.run(run_trials(plan, grader, out=every, state=state))
    finally:
        grader.close()
    report = root.parent / f"report-{len(names)}.json"
    args = ["report", str(every), "--cases", str(root), "--format", "json", "-o", str(report)]
    _main([*args, *(a for n in names for a in ("--holdout", n))])
    failures = json.loads(report.read_text(encoding="utf-8"))["failures"]
    return {case_id for row in failures for case_id in row["example_tasks"]}


def via_export(root: Path, names: list[str]) -> set[str]:
    out = root.parent / "export"
    _main(["export", "cases", str(root), "--format", "copilot-studio", "--out", str(out)])
    text = "".join(p.read_text(encoding="utf-8") for p in out.glob("*.csv"))
    rows = [row for row in csv.reader(text.splitlines()) if row]
    questions = {"Where is my refund?": ROUTINE, "Where is my parcel?": HOLDOUT}
    return {questions[cell] for row in rows for cell in row if cell in questions}


def via_runner(root: Path, names: list[str]) -> set[str]:
    from judgekit.results import read_results
    from judgekit.runner import LayeredTrialGrader, plan_trials, prepare_output, run_trials

    plan = plan_trials(load_case_set(root), [_transcripts(root)], holdout=names)
    assert {t.case.id for t in plan.held_out} == ({HOLDOUT} - set(names))
    out = root.parent / f"runner-{len(names)}.jsonl"
    grader = LayeredTrialGrader(root, None, "withhold")
    try:
        state = prepare_output(out, plan, resume=False, judge_fingerprint=grader.judge_fingerprint)
        asyncio.run(run_trials(plan, grader, out=out, state=state))
    finally:
        grader.close()
    lines = read_results(out).lines
    assert {tuple(line.grading.get("holdouts", [])) for line in lines} == {tuple(names)}
    return {line.case.id for line in lines}


def via_run_service(root: Path, names: list[str]) -> set[str]:
    from judgekit.api.runs import RunOptions, grade_run
    from judgekit.results import read_results

    out = root.parent / f"service-{len(names)}.jsonl"
    outcome = grade_run(
        root, [_transcripts(root)], out, options=RunOptions(holdout=tuple(names), report=False)
    )
    assert outcome.holdouts_left_out == sorted({HOLDOUT} - set(names))
    lines = read_results(out).lines
    assert {tuple(line.grading.get("holdouts", [])) for line in lines} == {tuple(names)}
    return {line.case.id for line in lines}


def _pytest_collect(root: Path, test: str, args: list[str], ini: str = "") -> set[str]:
    work = root.parent / "pytest-run"
    work.mkdir(exist_ok=True)
    (work / "test_cases.py").write_text(test, encoding="utf-8")
    (work / "pytest.ini").write_text(f"[pytest]\n{ini}", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line.split("[", 1)[1].rstrip("]") for line in done.stdout.splitlines() if "::" in line]
    return {i.split("#")[0] for i in ids}


def via_pytest_case(root: Path, names: list[str]) -> set[str]:
    test = "def test_case(judgekit_case):\n    pass\n"
    return _pytest_collect(
        root, test, ["--judgekit-cases", str(root), *(f"--judgekit-holdout={n}" for n in names)]
    )


def via_pytest_ini(root: Path, names: list[str]) -> set[str]:
    test = "def test_trial(judgekit_trial):\n    pass\n"
    ini = f"judgekit_cases = {root}\njudgekit_transcripts = {_transcripts(root)}\n"
    ini += "judgekit_holdout =\n" + "".join(f"    {n}\n" for n in names) if names else ""
    return _pytest_collect(root, test, [], ini)


def via_golden_cases(root: Path, names: list[str]) -> set[str]:
    from judgekit.integrations.pytest_plugin import golden_cases

    return {param.values[0].id for param in golden_cases(root, holdout=names)}


def via_inspect_samples(root: Path, names: list[str]) -> set[str]:
    from judgekit.integrations.inspect import samples_from_cases

    return {str(sample.id) for sample in samples_from_cases(load_case_set(root), holdout=names)}


def via_inspect_scorer(root: Path, names: list[str]) -> set[str]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelName
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    from judgekit.integrations.inspect import judgekit_scorer

    scorer = judgekit_scorer(load_case_set(root), holdout=names)
    scored: set[str] = set()
    for case_id in (ROUTINE, HOLDOUT):
        state = TaskState(
            model=ModelName("mockllm/model"),
            sample_id=case_id,
            epoch=1,
            input="Where is it?",
            messages=[ChatMessageUser(content="Where is it?"), ChatMessageAssistant(content="Hello.")],
            metadata={"case_id": case_id},
        )
        score = asyncio.run(scorer(state, Target("")))
        assert score is not None
        if score.metadata and score.metadata.get("judgekit_verdict") == "error":
            assert "is a holdout case" in (score.explanation or ""), score.explanation
            continue
        scored.add(case_id)
    return scored


def via_promptfoo(root: Path, names: list[str]) -> set[str]:
    from judgekit.integrations.promptfoo import get_assert

    graded: set[str] = set()
    for case_id in (ROUTINE, HOLDOUT):
        config: dict[str, object] = {"cases": str(root), "case_id": case_id}
        if names:
            config["holdout"] = names
        result = get_assert("Hello.", {"prompt": "Where is it?", "vars": {}, "config": config})
        if result["metadata"].get("judgekit_verdict") == "error":
            assert "is a holdout case" in result["reason"], result["reason"]
            continue
        graded.add(case_id)
    return graded


Path_ = Callable[[Path, list[str]], set[str]]

PATHS: dict[str, Path_] = {
    "grade": via_grade,
    "report": via_report,
    "export": via_export,
    "runner": via_runner,
    "run service": via_run_service,
    "pytest judgekit_case": via_pytest_case,
    "pytest judgekit_trial (ini)": via_pytest_ini,
    "pytest golden_cases": via_golden_cases,
    "inspect samples": via_inspect_samples,
    "inspect scorer": via_inspect_scorer,
    "promptfoo": via_promptfoo,
}

REPORT_SIDE = {"api/reports.py"}
"""Path modules that read a case set only to report (grade goes through the run service): their holdout
rule is golden.splits' (``split_report_lines``, ``holdout_ids``), not select_cases."""

NEVER_NAMED = {"export"}
"""Paths with no way to name a holdout: an exported case would be tuned against in the other tool."""

PATH_MODULES = {
    # the grade command is one call to the run service; the report command one call to api/reports.py,
    # which leaves holdout trials out by the report-side rule (golden.splits), which via_report checks
    "api/runs.py": ("grade", "run service"),
    "api/reports.py": ("report",),
    "commands/golden.py": ("export",),
    "runner.py": ("runner",),
    "integrations/pytest_plugin.py": (
        "pytest judgekit_case",
        "pytest judgekit_trial (ini)",
        "pytest golden_cases",
    ),
    "integrations/inspect.py": ("inspect samples", "inspect scorer"),
    "integrations/promptfoo.py": ("promptfoo",),
    # runs on the bundled example set, through plan_trials; tests/commands/test_demo.py checks the line
    # saying the example's holdout trials were left out
    "demo.py": (),
}
"""Module that reads a case set for a run, report, export or integration -> its paths in :data:`PATHS`."""

NOT_RUNS = {
    "caseset.py": "defines the loader and select_cases itself",
    "golden/splits.py": "the report-side holdout rule; its selection is select_cases",
    "golden/lint.py": "lints every case of the set, holdouts included",
    "golden/promote.py": "promotes candidates into the set",
    "golden/rebaseline.py": "rewrites the set's expected states",
    "golden/reconcile.py": "reconciles experts' resolutions into case files",
    "golden/retire.py": "edits the files of the cases named (it refuses a holdout by name)",
    "golden/generate.py": "reads existing ids and questions to avoid duplicate candidates",
    "golden/intake.py": "reads existing ids and incident links to avoid duplicate candidates",
    "golden/coverage.py": "coverage counts every reviewed case, holdouts included",
    "golden/validation.py": "judgekit cases check validates every case, holdouts included",
    "api/cases.py": "retire edits the saturated cases' files (golden/retire.py refuses a holdout by name)",
    "contamination/build.py": "the contamination index must cover holdouts most of all",
    "commands/lint.py": "judgekit cases lint checks every case",
    "commands/grading.py": "judgekit cases check-references checks every case's reference solution",
    "commands/growing.py": "set maintenance (candidates, intake, reconcile, sample): needs every case",
    "api/viewer.py": "judgekit view shows the trials a results file holds; the set describes them",
    "api/expert_labels.py": "labels page shows the trials a results file holds; the set gives their facts",
    "api/calibration.py": "calibrate hashes the criterion texts of the labelled cases; it grades nothing",
    "api/canary.py": "judge canary-set keeps the labelled trials' requests (case facts included) as canaries "
    "(holdouts among them when labelled); it grades nothing",
    "api/refine.py": "judge refine re-judges the experts' labelled trials, holdouts included (as calibrate "
    "and the demo's calibration sample): labels, not a graded run",
}
"""Module that reads a case set but runs nothing against it -> why it sees every case."""


@pytest.mark.parametrize("path", PATHS)
def test_a_holdout_is_left_out_unless_named(golden: Path, path: str) -> None:
    assert PATHS[path](golden, []) == {ROUTINE}


@pytest.mark.parametrize("path", [p for p in PATHS if p not in NEVER_NAMED])
def test_a_named_holdout_is_used(golden: Path, path: str) -> None:
    assert PATHS[path](golden, [HOLDOUT]) == {ROUTINE, HOLDOUT}


def test_naming_a_routine_case_as_a_holdout_is_refused(golden: Path) -> None:
    with pytest.raises(
        JudgekitError, match=rf"^--holdout: not holdout cases \(they are graded anyway\): {ROUTINE}"
    ):
        select_cases(load_case_set(golden), [ROUTINE])


def test_naming_an_unknown_case_is_refused_in_the_paths_own_spelling(golden: Path) -> None:
    with pytest.raises(
        JudgekitError,
        match=rf"^config\.holdout: not cases of the set: nope\. The set's holdout cases: {HOLDOUT}$",
    ):
        select_cases(load_case_set(golden), ["nope"], option="config.holdout")


def test_the_pytest_plugin_refuses_a_wrong_holdout_name(golden: Path) -> None:
    with pytest.raises(AssertionError, match=r"judgekit: --judgekit-holdout: not cases of the set: nope"):
        _pytest_collect(
            golden,
            "def test_case(judgekit_case):\n    pass\n",
            ["--judgekit-cases", str(golden), "--judgekit-holdout=nope"],
        )


def _reads_cases(tree: ast.AST) -> set[str]:
    """The case-set entry points a module's code calls or reads."""
    found: set[str] = set()
    for node in ast.walk(tree):
        name = called_name(node)
        if name in {"load_case_set", "reviewed", "plan_trials", "select_cases"}:
            found.add(name)
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "cases"
            and isinstance(node.value, ast.Name)
            and node.value.id in {"case_set", "cases"}
        ):
            found.add("CaseSet.cases")
    return found


def test_every_module_reading_cases_is_enumerated() -> None:
    readers: dict[str, set[str]] = {}
    for file in sorted(SRC.rglob("*.py")):
        found = _reads_cases(ast.parse(file.read_text(encoding="utf-8")))
        if found:
            readers[file.relative_to(SRC).as_posix()] = found
    unlisted = sorted(set(readers) - set(PATH_MODULES) - set(NOT_RUNS))
    assert not unlisted, (
        f"{unlisted} read a case set: take the cases from judgekit.caseset.select_cases (or plan_trials) and "
        "add the path to PATHS/PATH_MODULES here, or list the module in NOT_RUNS with why it needs every case"
    )
    bypass = sorted(
        m
        for m in PATH_MODULES
        if m not in REPORT_SIDE and not readers.get(m, set()) & {"select_cases", "plan_trials"}
    )
    assert not bypass, f"{bypass} are paths but never call select_cases or plan_trials"
    stale = sorted((set(PATH_MODULES) | set(NOT_RUNS)) - set(readers))
    assert not stale, f"{stale} no longer read a case set; remove them from this test's lists"
    assert {p for paths in PATH_MODULES.values() for p in paths} == set(PATHS)

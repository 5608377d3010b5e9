"""Every pass^k caller gives the same figure for the same trials under the same undecided policy.

The callers (the registry below) are the tau-bench table, the run report, ``judgekit report``, and the
Inspect epoch reducer (the demo's report page is checked against ``judgekit report`` in
``tests/commands/test_demo.py``). Each is compared with :func:`judgekit.stats.pass_k_curve`, on fixed
trials and on generated ones, under both policies. A meta-test parses the sources and fails when a module
calls a pass^k function without being in the registry, so a new caller cannot drift unnoticed.
"""

from __future__ import annotations

import ast
import json
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.integrations.taubench import pass_hat_k_table
from judgekit.reports.run_model import report_run
from judgekit.results import CaseRef, dump_result_line, make_result_line, read_results
from judgekit.stats import UNDECIDED_POLICIES, UndecidedPolicy, pass_k_curve
from judgekit.verdict import Grade, Verdict
from support import called_name

REPO = Path(__file__).resolve().parents[1]
P, F, E, INS, N = (
    Verdict.PASS,
    Verdict.FAIL,
    Verdict.ERROR,
    Verdict.INSUFFICIENT_INFORMATION,
    Verdict.NOT_EVALUATED,
)

Trials = Mapping[str, Sequence[Verdict]]
"""Case id -> the verdict of each of its trials."""

Figures = dict[int, float | None]
"""k -> pass^k, ``None`` where the caller leaves it undefined."""

# tasks a..e, 4 trials each; under "exclude", d has 2 decided trials and b and c have 3
FIXED: dict[str, list[Verdict]] = {
    "a": [P, P, P, P],
    "b": [P, F, P, E],
    "c": [F, INS, F, P],
    "d": [P, N, E, P],
    "e": [F, F, F, F],
}


def _grades(trials: Trials) -> list[Grade]:
    return [
        Grade(case_id=case, trial=i, verdict=v)
        for case, verdicts in trials.items()
        for i, v in enumerate(verdicts, start=1)
    ]


def _write_results(trials: Trials, path: Path) -> Path:
    lines = [
        make_result_line(run_id="r", case=CaseRef(id=g.case_id, version=1, slice="s"), grade=g)
        for g in _grades(trials)
    ]
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines))
    return path


def _k_max(trials: Trials) -> int:
    return max(len(v) for v in trials.values())


# --------------------------------------------------------------------------- the callers


def reference(trials: Trials, policy: UndecidedPolicy) -> Figures:
    """judgekit.stats.pass_k_curve: tasks with fewer than k counted trials left out at that k."""
    n = [len(v) for v in trials.values()]
    c = [sum(x is P for x in v) for v in trials.values()]
    u = [sum(x not in (P, F) for x in v) for v in trials.values()]
    curve = pass_k_curve(n, c, _k_max(trials), undecided_counts=u, undecided=policy)
    return {p.k: p.pass_hat for p in curve}


def taubench_table(trials: Trials, policy: UndecidedPolicy) -> Figures:
    """pass_hat_k_table, k by k; it refuses a k some task has too few counted trials for (None here)."""
    out: Figures = {}
    for k in range(1, _k_max(trials) + 1):
        try:
            out[k] = pass_hat_k_table(_grades(trials), ks=(k,), undecided=policy)[k]
        except ValueError as exc:
            if f"k={k} is larger than the" not in str(exc):
                raise
            out[k] = None
    return out


def run_report(trials: Trials, policy: UndecidedPolicy) -> Figures:
    """report_run: the one suite's pass^k curve."""
    with tempfile.TemporaryDirectory() as tmp:
        report = report_run(read_results(_write_results(trials, Path(tmp) / "r.jsonl")), undecided=policy)[0]
    (suite,) = report.suites
    assert report.undecided_policy == policy
    return {p.k: p.value for p in suite.pass_hat}


def report_service(trials: Trials, policy: UndecidedPolicy) -> Figures:
    """``judgekit.report(path, undecided=POLICY)``, which ``judgekit report`` calls: both give it."""
    import judgekit

    with tempfile.TemporaryDirectory() as tmp:
        report = judgekit.report(_write_results(trials, Path(tmp) / "r.jsonl"), undecided=policy)
    (suite,) = report.suites
    assert report.undecided_policy == policy
    figures = {p.k: p.value for p in suite.pass_hat}
    assert report_command(trials, policy) == figures
    return figures


def report_command(trials: Trials, policy: UndecidedPolicy) -> Figures:
    """``judgekit report --undecided POLICY --format json``."""
    from typer.testing import CliRunner

    from judgekit.cli import app

    with tempfile.TemporaryDirectory() as tmp:
        path = _write_results(trials, Path(tmp) / "r.jsonl")
        result = CliRunner().invoke(app, ["report", str(path), "--format", "json", "--undecided", policy])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["undecided_policy"] == policy
    (suite,) = data["suites"]
    return {p["k"]: p["value"] for p in suite["pass_hat"]}


def inspect_reducer(trials: Trials, policy: UndecidedPolicy) -> Figures:
    """pass_hat_k_reducer per sample (a case's trials are its epochs), then Inspect's accuracy.

    Inspect leaves unscored samples out before its metrics run (``tests/integrations/test_inspect.py``
    checks that end to end); here that step is the filter before ``accuracy``.
    """
    pytest.importorskip("inspect_ai")
    from inspect_ai.scorer import SampleScore, accuracy

    from judgekit.integrations.inspect import pass_hat_k_reducer, score_from_grade

    out: Figures = {}
    for k in range(1, _k_max(trials) + 1):
        reduce = pass_hat_k_reducer(k, undecided=policy)
        reduced = [
            reduce([score_from_grade(Grade(case_id=case, trial=i, verdict=v)) for i, v in enumerate(vs, 1)])
            for case, vs in trials.items()
        ]
        scored = [SampleScore(score=s) for s in reduced if not math.isnan(float(s.value))]
        out[k] = float(accuracy()(scored)) if scored else None
    return out


CALLERS: dict[str, Callable[[Trials, UndecidedPolicy], Figures]] = {
    "judgekit.integrations.taubench": taubench_table,
    "judgekit.reports.run_model": run_report,
    "judgekit.api.reports": report_service,
    "judgekit.integrations.inspect": inspect_reducer,
}
"""Module that computes pass^k -> how this test reaches it."""

CHECKED_ELSEWHERE = {
    "judgekit.demo": "tests/commands/test_demo.py: the demo's run pages equal `judgekit report --cases`",
    "judgekit.api.runs": "grade's figures are report_run's with undecided='fail' over the file it wrote; "
    "tests/commands/test_thresholds.py checks grade's gate equals `judgekit report`'s",
    "judgekit.integrations.tau2bench": "tau2 rewards have no undecided state; stats.pass_hat_k with "
    "undecided='fail', checked against tau2's own pass^1 in tests/integrations/test_tau2bench.py",
}
"""Callers compared with another caller in their own test."""


def _same(got: Figures, want: Figures, *, caller: str) -> None:
    assert got.keys() == want.keys(), caller
    for k, value in want.items():
        if value is None:
            assert got[k] is None, f"{caller}: pass^{k} should be undefined"
        else:
            assert got[k] == pytest.approx(value, rel=1e-12, abs=1e-15), f"{caller}: pass^{k}"


def _short(trials: Trials, policy: UndecidedPolicy) -> dict[int, bool]:
    """k -> whether some task has fewer than k counted trials under the policy."""
    counted = [len(v) if policy == "fail" else sum(x in (P, F) for x in v) for v in trials.values()]
    return {k: min(counted) < k for k in range(1, _k_max(trials) + 1)}


def _check(trials: Trials, policy: UndecidedPolicy, callers: Sequence[str]) -> None:
    want = reference(trials, policy)
    short = _short(trials, policy)
    for name in callers:
        got = CALLERS[name](trials, policy)
        if name == "judgekit.integrations.taubench":
            # the table refuses exactly where a task is short of k, and agrees everywhere else
            assert {k for k, v in got.items() if v is None} == {k for k, s in short.items() if s}, name
            _same(got, {k: (None if short[k] else v) for k, v in want.items()}, caller=name)
        else:
            _same(got, want, caller=name)


# --------------------------------------------------------------------------- fixed trials


@pytest.mark.parametrize("policy", UNDECIDED_POLICIES)
@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_every_caller_gives_the_reference_figures(caller: str, policy: UndecidedPolicy) -> None:
    _check(FIXED, policy, [caller])


def test_the_fixed_trials_distinguish_the_policies() -> None:
    fail, exclude = reference(FIXED, "fail"), reference(FIXED, "exclude")
    # k=2, fail: a 1, b C(2,2)/C(4,2), c 0, d C(2,2)/C(4,2), e 0
    assert fail[2] == pytest.approx((1 + 1 / 6 + 0 + 1 / 6 + 0) / 5)
    # k=2, exclude: a 1, b C(2,2)/C(3,2), c 0, d C(2,2)/C(2,2), e 0
    assert exclude[2] == pytest.approx((1 + 1 / 3 + 0 + 1 + 0) / 5)
    # k=4, exclude: only a and e have 4 decided trials
    assert exclude[4] == pytest.approx((1 + 0) / 2)
    assert taubench_table(FIXED, "exclude")[4] is None  # refused, with a message naming task 1 (b)
    with pytest.raises(ValueError, match=r"k=4 is larger than the 3 decided trial\(s\) of task 1"):
        pass_hat_k_table(_grades(FIXED), ks=(4,), undecided="exclude")


def test_tau_bench_counts_through_every_caller() -> None:
    # tau-bench's gpt-4o airline run in per-task pass counts (50 tasks x 4 trials, 84 passes): every
    # caller gives the published 0.420, 0.273, 0.220, 0.200 under either policy (no trial is undecided)
    passes = [0] * 14 + [1] * 12 + [2] * 10 + [3] * 4 + [4] * 10
    trials = {f"task-{i}": [P] * c + [F] * (4 - c) for i, c in enumerate(passes)}
    for policy in UNDECIDED_POLICIES:
        want = reference(trials, policy)
        assert [round(want[k] or 0.0, 3) for k in (1, 2, 3, 4)] == [0.420, 0.273, 0.220, 0.200]
        _check(trials, policy, sorted(CALLERS))


# --------------------------------------------------------------------------- generated trials

_VERDICTS = st.sampled_from([P, P, P, F, F, E, INS, N])


@st.composite
def _trials(draw: st.DrawFn) -> dict[str, list[Verdict]]:
    n_tasks = draw(st.integers(1, 6))
    return {f"t{i}": draw(st.lists(_VERDICTS, min_size=1, max_size=6)) for i in range(n_tasks)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_trials(), st.sampled_from(UNDECIDED_POLICIES))
def test_callers_agree_on_generated_trials(trials: dict[str, list[Verdict]], policy: UndecidedPolicy) -> None:
    _check(
        trials,
        policy,
        ["judgekit.integrations.taubench", "judgekit.reports.run_model", "judgekit.integrations.inspect"],
    )


# --------------------------------------------------------------------------- no caller escapes

_PASS_K_NAMES = {
    "pass_hat_k",
    "pass_at_k",
    "pass_hat_k_per_task",
    "pass_k_curve",
    "counted_trials",
    "report_run",
}


def _calls() -> dict[str, list[ast.Call]]:
    out: dict[str, list[ast.Call]] = {}
    files = [*(REPO / "src").rglob("*.py"), *(REPO / "bench").glob("*.py")]
    for path in files:
        rel = path.relative_to(REPO / "src" if path.is_relative_to(REPO / "src") else REPO)
        module = ".".join(rel.with_suffix("").parts)
        if module == "judgekit.stats":
            continue  # the definitions
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if called_name(node) in _PASS_K_NAMES:
                out.setdefault(module, []).append(node)
    return out


def test_every_module_computing_pass_k_is_in_the_registry() -> None:
    modules = set(_calls())
    unregistered = modules - set(CALLERS) - set(CHECKED_ELSEWHERE)
    assert not unregistered, f"add these pass^k callers to CALLERS in {__file__}: {sorted(unregistered)}"
    assert set(CALLERS) <= modules, "a registered caller no longer computes pass^k: update the registry"


def test_every_pass_k_call_names_the_undecided_policy() -> None:
    for module, calls in _calls().items():
        for call in calls:
            keywords = {kw.arg for kw in call.keywords}
            assert "undecided" in keywords, f"{module}:{call.lineno} calls pass^k without undecided="


# --------------------------------------------------------------------------- the command's option


def test_the_report_command_defaults_to_fail_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.cli import main

    path = _write_results(FIXED, tmp_path / "r.jsonl")
    assert main(["report", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["undecided_policy"] == "fail"
    assert [p["value"] for p in data["suites"][0]["pass_hat"]] == [
        pytest.approx(v) for v in reference(FIXED, "fail").values()
    ]
    assert main(["report", str(path)]) == 0
    assert "policy `fail`: an undecided trial counts as a trial that did not pass" in capsys.readouterr().out


def test_the_report_command_refuses_an_unknown_policy_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgekit.cli import main

    path = _write_results(FIXED, tmp_path / "r.jsonl")
    assert main(["report", str(path), "--undecided", "pass"]) == 2
    err = capsys.readouterr().err
    assert "--undecided: undecided must be 'fail' or 'exclude'" in err
    assert "never counted as a pass" in err
    assert "Traceback" not in err

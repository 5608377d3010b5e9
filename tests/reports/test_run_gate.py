"""CI thresholds on a run report (pass^1, pass^k, errors, per suite); the compare gate (regression lost)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judgekit.reports.run_compare import compare_runs, digest_runs
from judgekit.reports.run_gate import (
    check_thresholds,
    parse_fail_under,
    parse_fail_under_k,
    parse_max_errors,
    parse_thresholds,
)
from judgekit.reports.run_model import report_run
from judgekit.results import CaseRef, RunResults, dump_result_line, make_result_line, read_results
from judgekit.verdict import CheckResult, Grade, Verdict

P, F, E = Verdict.PASS, Verdict.FAIL, Verdict.ERROR


def _line(case: str, trial: int, verdict: Verdict, *, category: str = "normal"):
    check = CheckResult(
        check_id="state", layer="state", verdict=verdict, reason="ok" if verdict is P else "x"
    )
    grade = Grade(case_id=case, trial=trial, verdict=verdict, checks=(check,))
    return make_result_line(run_id="r", case=CaseRef(id=case, version=1, category=category), grade=grade)


def _run(path: Path, rows: dict[str, tuple[list[Verdict], str]]) -> RunResults:
    lines = [_line(cid, i + 1, v, category=cat) for cid, (vs, cat) in rows.items() for i, v in enumerate(vs)]
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines))
    return read_results(path)


@pytest.fixture
def report(tmp_path: Path):
    # capability: pass^1 = (4/4 + 2/4) / 2 = 0.75, pass^2 = (1 + 1/6) / 2; regression: pass^1 = 1.0
    run = _run(
        tmp_path / "r.jsonl",
        {
            "cap-a": ([P, P, P, P], "normal"),
            "cap-b": ([P, F, P, E], "normal"),
            "reg-a": ([P, P, P, P], "regression"),
        },
    )
    return report_run(run, undecided="fail")[0]


def test_parse_forms() -> None:
    assert parse_fail_under("0.9").model_dump(include={"suite", "k", "minimum"}) == {
        "suite": None,
        "k": 1,
        "minimum": 0.9,
    }
    t = parse_fail_under_k("regression:3=0.8")
    assert (t.suite, t.k, t.minimum) == ("regression", 3, 0.8)
    assert parse_max_errors("capability:2").maximum == 2
    assert [t.kind for t in parse_thresholds(["1"], ["2=0.5"], ["0"])] == [
        "pass_hat",
        "pass_hat",
        "max_errors",
    ]


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        pytest.param(
            parse_fail_under, "1.5", "'1.5': the threshold must be a rate between 0 and 1", id="rate"
        ),
        pytest.param(
            parse_fail_under, "nan", "'nan': the threshold must be a rate between 0 and 1", id="nan"
        ),
        pytest.param(parse_fail_under, "smoke:0.5", "'smoke:0.5': unknown suite 'smoke'", id="suite"),
        pytest.param(parse_fail_under_k, "3", "'3': write K=X (pass^K at least X)", id="no_equals"),
        pytest.param(parse_fail_under_k, "0=0.5", "'0=0.5': K must be a whole number of at least 1", id="k"),
        pytest.param(parse_max_errors, "-1", "'-1': N must be a whole number of at least 0", id="errors"),
    ],
)
def test_each_parse_error_has_its_message(parse, text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        parse(text)


def test_fail_under_applies_to_every_suite_separately(report) -> None:
    misses = check_thresholds(report, parse_thresholds(["0.8"]))
    assert misses == (
        "--fail-under 0.8: pass^1 of the capability suite is 0.7500 over 2 task(s), below 0.8 "
        "(undecided trials count as trials that did not pass)",
    )
    assert check_thresholds(report, parse_thresholds(["0.75"])) == ()  # equal meets it
    assert check_thresholds(report, parse_thresholds(["regression:1"])) == ()


def test_fail_under_k_reads_the_reports_pass_hat(report) -> None:
    value = report.suites[0].pass_hat[1].value
    assert value == pytest.approx((1 + 1 / 6) / 2)
    (miss,) = check_thresholds(report, parse_thresholds(fail_under_k=["capability:2=0.6"]))
    assert f"pass^2 of the capability suite is {value:.4f}" in miss
    assert check_thresholds(report, parse_thresholds(fail_under_k=["capability:2=0.58"])) == ()


def test_a_k_beyond_the_trials_is_a_miss_not_a_pass(report) -> None:
    misses = check_thresholds(report, parse_thresholds(fail_under_k=["regression:5=0"]))
    assert misses == (
        "--fail-under-k regression:5=0: pass^5 of the regression suite is undefined: its tasks have at most "
        "4 trial(s), and pass^k needs k trials of a task",
    )


def test_a_suite_absent_from_the_run_is_a_miss(tmp_path: Path) -> None:
    run = _run(tmp_path / "c.jsonl", {"cap-a": ([P], "normal")})
    model = report_run(run, undecided="fail")[0]
    (miss,) = check_thresholds(model, parse_thresholds(["regression:0.5"]))
    assert (
        miss
        == "--fail-under regression:0.5: the regression suite has no task in this run, so its pass^1 cannot "
        "be checked"
    )
    (miss,) = check_thresholds(model, parse_thresholds(max_errors=["regression:0"]))
    assert "the regression suite has no task in this run, so its errors cannot be checked" in miss


def test_a_run_with_no_task_is_a_miss(tmp_path: Path) -> None:
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    model = report_run(read_results(empty), undecided="fail")[0]
    assert check_thresholds(model, parse_thresholds(["0"])) == (
        "--fail-under 0: the run has no task, so pass^1 cannot be checked",
    )


def test_max_errors_counts_the_whole_run_or_one_suite(report) -> None:
    (miss,) = check_thresholds(report, parse_thresholds(max_errors=["0"]))
    assert miss.startswith(
        "--max-errors 0: 1 trial(s) with verdict error in the whole run (every suite), more than 0"
    )
    assert check_thresholds(report, parse_thresholds(max_errors=["1"])) == ()
    assert check_thresholds(report, parse_thresholds(max_errors=["regression:0"])) == ()


def test_exclude_policy_is_named_in_the_miss(tmp_path: Path) -> None:
    run = _run(tmp_path / "x.jsonl", {"cap-a": ([P, F, E], "normal")})
    (miss,) = check_thresholds(report_run(run, undecided="exclude")[0], parse_thresholds(["0.9"]))
    assert "is 0.5000" in miss
    assert "(undecided trials left out)" in miss


# --------------------------------------------------------------------------- compare: regression suite lost


def test_compare_names_a_lost_regression_task_even_when_the_verdict_is_no_change(tmp_path: Path) -> None:
    a = _run(
        tmp_path / "a.jsonl",
        {"reg-a": ([P, P], "regression"), "reg-b": ([P, P], "regression"), "cap-a": ([F, F], "normal")},
    )
    b = _run(
        tmp_path / "b.jsonl",
        {"reg-a": ([P, F], "regression"), "reg-b": ([P, E], "regression"), "cap-a": ([P, P], "normal")},
    )
    c = compare_runs(*digest_runs(a, b))
    assert c.verdict == "no detectable change"
    assert [(t.case_id, t.change, t.b) for t in c.regression_lost] == [
        ("reg-a", "broken", "fail (1/2)"),
        ("reg-b", "undecided", "error (1/2)"),
    ]


def test_compare_capability_tasks_broken_are_not_regression_losses(tmp_path: Path) -> None:
    a = _run(tmp_path / "a.jsonl", {"cap-a": ([P], "normal"), "cap-b": ([P], "normal")})
    b = _run(tmp_path / "b.jsonl", {"cap-a": ([F], "normal"), "cap-b": ([F], "normal")})
    c = compare_runs(*digest_runs(a, b))
    assert (c.broken, c.regression_lost) == (2, ())


def test_compare_suites_follow_the_case_set_splits_as_the_report_does(tmp_path: Path) -> None:
    a = _run(tmp_path / "a.jsonl", {"t1": ([P], "normal"), "t2": ([P], "regression")})
    b = _run(tmp_path / "b.jsonl", {"t1": ([F], "normal"), "t2": ([F], "regression")})
    # a case's split decides its suite, whatever its category
    c = compare_runs(*digest_runs(a, b, splits={"t1": "regression", "t2": "capability"}))
    assert [t.case_id for t in c.regression_lost] == ["t1"]
    report = report_run(a, undecided="fail", splits={"t1": "regression", "t2": "capability"})[0]
    assert {s.name: s.tasks for s in report.suites} == {"capability": 1, "regression": 1}

"""Run reports and comparisons: numbers, every verdict state, suites, retirement, golden renderings."""

import json
import math
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.errors import JudgekitError
from judgekit.reports.run_compare import compare_runs, digest_runs, task_changes
from judgekit.reports.run_html import render_run_html
from judgekit.reports.run_json import render_comparison_json, render_run_json
from judgekit.reports.run_markdown import render_comparison_markdown, render_run_markdown
from judgekit.reports.run_model import REPORT_SCHEMA_VERSION, report_run, task_outcomes
from judgekit.results import CaseRef, dump_result_line, make_result_line, read_results
from judgekit.transcript import RunRecord
from judgekit.verdict import CheckResult, FailureCategory, Grade, Verdict

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("JUDGEKIT_UPDATE_GOLDEN") == "1"

P, F, E, INS, N = (
    Verdict.PASS,
    Verdict.FAIL,
    Verdict.ERROR,
    Verdict.INSUFFICIENT_INFORMATION,
    Verdict.NOT_EVALUATED,
)


def _line(
    case,
    trial,
    verdict,
    *,
    run_id="run-a",
    fail_cat=None,
    quality=None,
    version=1,
    policy=(),
    app_version="2.1.0",
    **case_kw,
):
    checks = []
    if verdict is F:
        checks.append(
            CheckResult(
                check_id="state",
                layer="state",
                verdict=F,
                reason="diff",
                category=fail_cat or FailureCategory.INCOMPLETE_EXECUTION,
            )
        )
    elif verdict is E:
        checks.append(
            CheckResult(check_id="criterion:x", layer="rubric", verdict=E, reason="judge unreachable")
        )
    elif verdict is INS:
        checks.append(CheckResult(check_id="criterion:x", layer="rubric", verdict=INS, reason="no evidence"))
    elif verdict is N:
        checks.append(CheckResult(check_id="state", layer="state", verdict=N, reason="no final state"))
    else:
        checks.append(CheckResult(check_id="state", layer="state", verdict=P))
    grade = Grade(case_id=case, trial=trial, verdict=verdict, quality=quality, checks=tuple(checks))
    return make_result_line(
        run_id=run_id,
        case=CaseRef(id=case, version=version, policy_refs=policy, **case_kw),
        grade=grade,
        run=RunRecord(agent_model="agent-x", app_version=app_version),
    )


def _write(path, lines):
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines))
    return read_results(path)


def _sample_lines(run_id="run-a", app_version="2.1.0"):
    rows = {
        # capability tasks, 4 trials each
        "refund-1": ([P, P, P, P], {"slice": "policy_edge", "category": "edge", "severity": "critical"}),
        "refund-2": ([P, F, P, P], {"slice": "policy_edge", "category": "edge", "severity": "high"}),
        "address-1": ([F, F, P, F], {"slice": "real_failures", "category": "normal", "severity": "high"}),
        "address-2": ([P, E, P, INS], {"slice": "real_failures", "category": "normal", "severity": "medium"}),
        "faq-1": ([P, P, P, N], {"slice": "high_volume", "category": "normal", "severity": "low"}),
        # regression suite: by category, and by slice name
        "incident-7": (
            [P, P, P, P],
            {"slice": "regression", "category": "regression", "severity": "critical"},
        ),
        "incident-9": (
            [P, P, F, P],
            {"slice": "regressions", "category": "adversarial", "severity": "critical"},
        ),
    }
    lines = []
    for case, (verdicts, meta) in rows.items():
        for i, v in enumerate(verdicts, start=1):
            cat = FailureCategory.POLICY_VIOLATION if case.startswith("incident") else None
            lines.append(
                _line(
                    case,
                    i,
                    v,
                    run_id=run_id,
                    fail_cat=cat,
                    quality=0.5 + 0.1 * (i % 3),
                    app_version=app_version,
                    **meta,
                )
            )
    return lines


def test_report_numbers(tmp_path):
    results = _write(tmp_path / "run.jsonl", _sample_lines())
    report = report_run(results, undecided="exclude")[0]
    assert report.k_max == 4
    assert report.verdicts == {P: 20, F: 5, INS: 1, E: 1, N: 1}
    capability, regression = report.suites
    assert (capability.name, capability.tasks, capability.trials) == ("capability", 5, 20)
    assert (regression.name, regression.tasks) == ("regression", 2)
    # capability pass^1 over decided trials:
    # refund-1 4/4, refund-2 3/4, address-1 1/4, address-2 2/2, faq-1 3/3
    assert capability.pass_hat[0].value == pytest.approx((1 + 0.75 + 0.25 + 1 + 1) / 5)
    # at k=3, address-2 (2 decided trials) is excluded
    k3 = capability.pass_hat[2]
    assert (k3.tasks_used, k3.tasks_excluded) == (4, 1)
    assert k3.value == pytest.approx((1 + 0.25 + 0 + 1) / 4)
    # bounds: undecided counted as failures (low) and as passes (high), over tasks with >= 3 trials
    assert k3.low == pytest.approx((1 + 0.25 + 0 + 0 + 0.25) / 5)
    assert k3.high == pytest.approx((1 + 0.25 + 0 + 1 + 1) / 5)
    assert capability.trial_pass_rate.successes == 13
    assert capability.trial_pass_rate.n == 17
    # every decided trial passed: refund-1 (4/4), address-2 (2/2), faq-1 (3/3)
    assert (capability.tasks_all_pass.successes, capability.tasks_all_pass.n) == (3, 5)
    assert regression.pass_hat[3].value == pytest.approx((1 + 0) / 2)
    assert report.undecided_policy == "exclude"
    names = [g.name for g in report.slices]
    assert names == ["high_volume", "policy_edge", "real_failures", "regression", "regressions"]
    assert [g.name for g in report.severities] == ["critical", "high", "low", "medium"]
    failures = {f.category: f for f in report.failures}
    assert failures["incomplete_execution"].trials == 4
    assert failures["incomplete_execution"].example_tasks[0] == "address-1"
    assert failures["policy_violation"].tasks == 1
    assert any("undecided" in n for n in report.notes)


def test_report_numbers_when_undecided_trials_fail(tmp_path):
    report = report_run(_write(tmp_path / "run.jsonl", _sample_lines()), undecided="fail")[0]
    assert report.undecided_policy == "fail"
    capability, _ = report.suites
    assert capability.undecided_trials == 3
    # every trial counts: address-2 passes 2 of 4, faq-1 3 of 4
    assert capability.pass_hat[0].value == pytest.approx((1 + 0.75 + 0.25 + 0.5 + 0.75) / 5)
    k3 = capability.pass_hat[2]
    assert (k3.tasks_used, k3.tasks_excluded) == (5, 0)
    assert k3.value == pytest.approx((1 + 0.25 + 0 + 0 + 0.25) / 5)
    assert k3.low == k3.value  # under "fail" the value is the low bound
    assert k3.high == pytest.approx((1 + 0.25 + 0 + 1 + 1) / 5)
    assert (capability.trial_pass_rate.successes, capability.trial_pass_rate.n) == (13, 20)
    assert (capability.tasks_all_pass.successes, capability.tasks_all_pass.n) == (1, 5)
    assert any("undecided='fail' counts each as a trial that did not pass" in n for n in report.notes)


@pytest.mark.parametrize("policy", ["fail", "exclude"])
def test_every_rate_carries_its_bounds_under_the_undecided_trials(tmp_path, policy):
    report = report_run(_write(tmp_path / "run.jsonl", _sample_lines()), undecided=policy)[0]
    capability, _ = report.suites
    # 20 trials: 13 pass, 4 fail, 3 undecided (address-2: 2, faq-1: 1), whatever the policy
    rate = capability.trial_pass_rate
    assert (rate.undecided, rate.undecided_low, rate.undecided_high) == (3, 13 / 20, 16 / 20)
    # tasks: refund-1 passes every trial; address-2 and faq-1 have no failure but undecided trials
    tasks = capability.tasks_all_pass
    assert (tasks.undecided, tasks.undecided_low, tasks.undecided_high) == (2, 1 / 5, 3 / 5)
    assert tasks.undecided_low <= tasks.rate <= tasks.undecided_high
    assert rate.undecided_low <= rate.rate <= rate.undecided_high
    text = render_run_markdown(report)
    assert "0.650 if the 3 undecided all fail, 0.800 if they all pass" in text
    assert "0.650 if the 3 undecided all fail" in render_run_html(report)
    data = json.loads(render_run_json(report))
    assert data["suites"][0]["trial_pass_rate"]["undecided_high"] == 0.8


@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 3)).filter(lambda t: sum(t) > 0),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["fail", "exclude"]),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_rate_lies_within_its_undecided_bounds(tmp_path, tasks, policy):
    lines = []
    for t, (passes, fails, undecided) in enumerate(tasks):
        verdicts = [P] * passes + [F] * fails + [E] * undecided
        lines.extend(_line(f"t{t}", i + 1, v) for i, v in enumerate(verdicts))
    report = report_run(_write(tmp_path / "prop.jsonl", lines), undecided=policy)[0]
    for group in report.suites:
        for rate in (group.trial_pass_rate, group.tasks_all_pass):
            assert rate.undecided_low is not None
            assert rate.undecided_high is not None
            assert rate.undecided_low <= rate.undecided_high
            assert (rate.undecided == 0) == (rate.undecided_low == rate.undecided_high)
            if rate.rate is not None:
                assert rate.undecided_low - 1e-12 <= rate.rate <= rate.undecided_high + 1e-12


def test_compare_pass_rates_carry_intervals_and_undecided_bounds(tmp_path):
    a = _write(tmp_path / "a.jsonl", [_line("x", 1, F), _line("y", 1, P), _line("z", 1, INS)])
    b = _write(tmp_path / "b.jsonl", [_line("x", 1, P), _line("y", 1, P), _line("z", 1, P)])
    c = compare_runs(*digest_runs(a, b))
    assert (c.task_pass_a.successes, c.task_pass_a.n) == (1, 2)
    assert (c.task_pass_a.undecided_low, c.task_pass_a.undecided_high) == (1 / 3, 2 / 3)
    assert c.pass_rate_a == c.task_pass_a.rate == 0.5
    assert (c.task_pass_b.undecided, c.task_pass_b.rate) == (0, 1.0)
    assert "0.333 if the undecided one fails, 0.667 if it passes" in render_comparison_markdown(c)
    assert json.loads(render_comparison_json(c))["task_pass_a"]["undecided_low"] == pytest.approx(1 / 3)


def test_undecided_trials_are_counted_per_case(tmp_path):
    report = report_run(_write(tmp_path / "run.jsonl", _sample_lines()), undecided="fail")[0]
    rows = [(r.case_id, r.trials, r.passed, r.failed, r.undecided) for r in report.undecided_cases]
    assert rows == [("address-2", 4, 2, 0, 2), ("faq-1", 4, 3, 0, 1)]
    address = report.undecided_cases[0]
    assert (address.error, address.insufficient_information, address.not_evaluated) == (1, 1, 0)
    assert any("3 trial(s) in 2 case(s) are undecided" in n for n in report.notes)


@pytest.mark.parametrize("policy", ["fail", "exclude"])
def test_every_format_says_the_policy_and_the_undecided_trials_per_case(tmp_path, policy):
    report = report_run(_write(tmp_path / "run.jsonl", _sample_lines()), undecided=policy)[0]
    md = render_run_markdown(report)
    assert f"- Undecided trials: 3 of 28, in 2 case(s); policy `{policy}`: " in md
    assert "## Undecided trials per case" in md
    assert "| address-2 | 4 | 2 | 0 | 2 | 1 | 1 | 0 |" in md
    assert "| faq-1 | 4 | 3 | 0 | 1 | 0 | 0 | 1 |" in md
    html = render_run_html(report)
    assert f"policy <code>{policy}</code>" in html
    assert (
        "<tr><td>address-2</td><td>4</td><td>2</td><td>0</td><td>2</td><td>1</td><td>1</td><td>0</td></tr>"
        in html
    )
    data = json.loads(render_run_json(report))
    assert data["undecided_policy"] == policy
    assert data["schema_version"] == REPORT_SCHEMA_VERSION
    assert [(r["case_id"], r["undecided"]) for r in data["undecided_cases"]] == [
        ("address-2", 2),
        ("faq-1", 1),
    ]


def test_without_undecided_trials_the_report_says_so(tmp_path):
    report = report_run(
        _write(tmp_path / "run.jsonl", [_line("a", 1, P), _line("a", 2, F)]), undecided="fail"
    )[0]
    assert report.undecided_cases == ()
    md = render_run_markdown(report)
    assert "- Undecided trials: 0 of 2, in 0 case(s); policy `fail`" in md
    assert "No undecided trials." in md
    assert "No undecided trials." in render_run_html(report)


def test_a_long_undecided_listing_is_cut_in_markdown_and_html_but_not_in_json(tmp_path):
    from judgekit.reports.run_markdown import UNDECIDED_CASES_SHOWN

    lines = [_line(f"t{i:03d}", 1, E) for i in range(UNDECIDED_CASES_SHOWN + 3)]
    report = report_run(_write(tmp_path / "run.jsonl", lines), undecided="fail")[0]
    assert (
        "And 3 more case(s) with 3 undecided trial(s); the JSON report lists every case."
        in render_run_markdown(report)
    )
    assert "And 3 more case(s) with 3 undecided trial(s)" in render_run_html(report)
    assert len(json.loads(render_run_json(report))["undecided_cases"]) == UNDECIDED_CASES_SHOWN + 3


def test_an_unknown_policy_is_refused(tmp_path):
    results = _write(tmp_path / "run.jsonl", [_line("a", 1, E)])
    with pytest.raises(ValueError, match=r"undecided must be 'fail' or 'exclude'.*never counted as a pass"):
        report_run(results, undecided="pass")[0]


def test_every_state_is_shown_in_every_format(tmp_path):
    report = report_run(_write(tmp_path / "run.jsonl", _sample_lines()), undecided="fail")[0]
    md = render_run_markdown(report)
    assert "| trials | 20 | 5 | 1 | 1 | 1 |" in md
    for label in ("insufficient info", "error", "not evaluated"):
        assert label in md
    data = json.loads(render_run_json(report))
    assert data["verdicts"] == {
        "pass": 20,
        "fail": 5,
        "insufficient_information": 1,
        "error": 1,
        "not_evaluated": 1,
    }
    html = render_run_html(report)
    assert html.count("<td>insufficient info") == 0  # labels are headers, counts are cells
    assert "insufficient info</th>" in html


def test_k_larger_than_trials_is_reported_and_rest_kept(tmp_path):
    report = report_run(_write(tmp_path / "run.jsonl", _sample_lines()), k=9, undecided="fail")[0]
    assert report.k_max == 4
    assert any("k=9 is larger than the trial count (4 trials per task at most)" in p for p in report.problems)
    assert len(report.suites[0].pass_hat) == 4


def test_unknown_cases_are_left_out_and_named(tmp_path):
    results = _write(tmp_path / "run.jsonl", _sample_lines())
    known = dict.fromkeys(("refund-1", "refund-2", "address-1", "address-2", "faq-1", "incident-7"), (1, ()))
    report = report_run(results, known_cases=known, undecided="fail")[0]
    assert report.run.tasks == 6
    assert any(
        "'incident-9' (4 trials; did you mean 'incident-7'?)" in p and "not in the case set" in p
        for p in report.problems
    )


def test_truncated_file_reports_the_rest(tmp_path):
    path = tmp_path / "run.jsonl"
    lines = _sample_lines()
    text = "".join(dump_result_line(line) + "\n" for line in lines[:-1]) + dump_result_line(lines[-1])[:30]
    path.write_text(text)
    report = report_run(read_results(path), undecided="fail")[0]
    assert report.run.trials == len(lines) - 1
    assert any("truncated" in p for p in report.problems)


def test_mixed_versions_within_a_run_are_a_problem(tmp_path):
    lines = [_line("a", 1, P, version=1), _line("a", 2, P, version=2)]
    report = report_run(_write(tmp_path / "run.jsonl", lines), undecided="fail")[0]
    assert any("'a' (v1, v2)" in p for p in report.problems)


def test_empty_results(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("")
    report = report_run(read_results(path), undecided="fail")[0]
    assert report.suites == ()
    markdown = render_run_markdown(report)
    html = render_run_html(report)
    assert "No trials to report." in markdown
    assert "no data" in html
    # An empty run never claims that every trial passed (issue 35: an import of nothing read as a pass).
    assert "Every trial passed" not in markdown
    assert "Every trial passed" not in html
    assert markdown.count("No trials to report.") >= 2


def test_task_outcomes_follow_gate_order():
    lines = [_line("a", 1, P), _line("a", 2, F), _line("b", 1, P), _line("b", 2, E), _line("c", 1, P)]
    out = task_outcomes(lines)
    assert out["a"] == (1, 2, F)
    assert out["b"] == (1, 2, E)
    assert out["c"] == (1, 1, P)


# --------------------------------------------------------------------------- compare


def _paired_runs(tmp_path, fixed, broken, same_pass=5, same_fail=3):
    a, b = [], []
    n = 0
    for kind, count in (("fixed", fixed), ("broken", broken), ("pass", same_pass), ("fail", same_fail)):
        for _ in range(count):
            n += 1
            case = f"t{n:02d}"
            va, vb = {"fixed": (F, P), "broken": (P, F), "pass": (P, P), "fail": (F, F)}[kind]
            a.append(_line(case, 1, va, run_id="A"))
            b.append(_line(case, 1, vb, run_id="B"))
    return _write(tmp_path / "a.jsonl", a), _write(tmp_path / "b.jsonl", b)


def test_compare_seed_ten_fixed_one_broken_is_real_improvement(tmp_path):
    a, b = _paired_runs(tmp_path, 10, 1)
    c = compare_runs(*digest_runs(a, b))
    assert (c.fixed, c.broken) == (10, 1)
    assert c.sign_test_p == pytest.approx(0.0117, abs=1e-3)
    assert c.verdict == "real improvement"


def test_compare_seed_six_fixed_three_broken_is_noise(tmp_path):
    a, b = _paired_runs(tmp_path, 6, 3)
    c = compare_runs(*digest_runs(a, b))
    assert c.sign_test_p == pytest.approx(0.508, abs=1e-3)
    assert c.verdict == "no detectable change"


def test_every_task_of_either_run_has_one_change_label(tmp_path):
    # the labels the comparison counts and the viewer shows: (A's trials, B's trials) -> change
    runs = {
        "fixed": ([F, P], [P, P]),
        "broken": ([P], [P, F]),
        "still-pass": ([P], [P]),
        "still-fail": ([P, F], [F]),
        "undecided-a": ([E], [P]),
        "undecided-b": ([F], [INS, F]),  # a failure decides the gate: fail in both
        "undecided-c": ([P], [N]),
        "only-a": ([P], []),
        "only-b": ([], [F]),
    }
    a = _write(
        tmp_path / "a.jsonl",
        [_line(c, i, v, run_id="A") for c, (va, _) in runs.items() for i, v in enumerate(va, 1)],
    )
    b = _write(
        tmp_path / "b.jsonl",
        [_line(c, i, v, run_id="B") for c, (_, vb) in runs.items() for i, v in enumerate(vb, 1)],
    )
    da, db = digest_runs(a, b)
    assert task_changes(da, db) == [
        ("broken", "broken"),
        ("fixed", "fixed"),
        ("only-a", "only_in_a"),
        ("only-b", "only_in_b"),
        ("still-fail", "still_fail"),
        ("still-pass", "still_pass"),
        ("undecided-a", "undecided"),
        ("undecided-b", "still_fail"),
        ("undecided-c", "undecided"),
    ]
    c = compare_runs(da, db)
    assert (c.fixed, c.broken, c.unchanged_pass, c.unchanged_fail, c.undecided) == (1, 1, 1, 2, 2)
    assert (c.only_in_a, c.only_in_b) == (("only-a",), ("only-b",))


def test_compare_regression_and_mcnemar_on_trials(tmp_path):
    a, b = _paired_runs(tmp_path, 0, 9)
    c = compare_runs(*digest_runs(a, b))
    assert c.verdict == "regression"
    assert (c.trials_fixed, c.trials_broken, c.trial_pairs) == (0, 9, 17)
    assert c.mcnemar_p == pytest.approx(2 * 0.5**9)


def test_compare_refuses_different_versions_and_policies_naming_them(tmp_path):
    a = _write(
        tmp_path / "a.jsonl", [_line("x", 1, P, version=1), _line("y", 1, P, policy=("BIL-7 rev 2025-09",))]
    )
    b = _write(
        tmp_path / "b.jsonl", [_line("x", 1, P, version=2), _line("y", 1, P, policy=("BIL-7 rev 2026-01",))]
    )
    with pytest.raises(JudgekitError) as info:
        compare_runs(*digest_runs(a, b))
    msg = info.value.message
    assert "case 'x': version 1 in a.jsonl, version 2 in b.jsonl" in msg
    assert "case 'y': policy revisions [BIL-7 rev 2025-09] in a.jsonl, [BIL-7 rev 2026-01] in b.jsonl" in msg


def test_compare_undecided_tasks_are_left_out_and_listed(tmp_path):
    a = _write(tmp_path / "a.jsonl", [_line("x", 1, F), _line("y", 1, P), _line("z", 1, P)])
    b = _write(tmp_path / "b.jsonl", [_line("x", 1, E), _line("y", 1, P), _line("w", 1, P)])
    c = compare_runs(*digest_runs(a, b))
    assert c.undecided == 1
    assert c.changes[0].case_id == "x"
    assert c.only_in_a == ("z",)
    assert c.only_in_b == ("w",)


def test_compare_with_no_common_task_is_an_error(tmp_path):
    a = _write(tmp_path / "a.jsonl", [_line("x", 1, F)])
    b = _write(tmp_path / "b.jsonl", [_line("y", 1, P)])
    with pytest.raises(JudgekitError, match="share no task"):
        compare_runs(*digest_runs(a, b))


# --------------------------------------------------------------------------- golden files


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE or not path.exists():
        path.write_text(text)
        if not UPDATE:
            pytest.fail(f"golden file {name} was missing and has been written; re-run")
    assert text == path.read_text(), (
        f"{name} differs from its golden file (JUDGEKIT_UPDATE_GOLDEN=1 to accept)"
    )


def _golden_report(tmp_path):
    # three releases of the agent (1.9.0, 2.0.0, 2.1.0), four trials each: with --retire-min-trials 4,
    # refund-1 (4/4 in each) is suggested for retirement
    history = [
        _write(tmp_path / f"old{i}.jsonl", _sample_lines(f"run-{i}", app_version=v))
        for i, v in enumerate(("1.9.0", "2.0.0"))
    ]
    return report_run(
        _write(tmp_path / "run.jsonl", _sample_lines()),
        history=history,
        undecided="fail",
        retire_min_trials=4,
    )[0]


def test_golden_markdown(tmp_path):
    _golden("run_report.md", render_run_markdown(_golden_report(tmp_path)))


def test_golden_json(tmp_path):
    _golden("run_report.json", render_run_json(_golden_report(tmp_path)))


def test_golden_html(tmp_path):
    _golden("run_report.html", render_run_html(_golden_report(tmp_path)))


def test_golden_comparison(tmp_path):
    a, b = _paired_runs(tmp_path, 10, 1)
    c = compare_runs(*digest_runs(a, b))
    _golden("run_compare.md", render_comparison_markdown(c))
    _golden("run_compare.json", render_comparison_json(c))


def test_html_is_self_contained_and_escapes_text(tmp_path):
    lines = [_line("<script>alert(1)</script>", 1, F, slice="s<b>")]
    html = render_run_html(report_run(_write(tmp_path / "run.jsonl", lines), undecided="fail")[0])
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    # no external fetch of any kind: only the SVG namespace URI may appear
    urls = re.findall(r"https?://[^\s\"'<>]+", html)
    assert set(urls) <= {"http://www.w3.org/2000/svg"}
    assert not re.search(r"<(link|script|img|iframe)\b", html)
    assert "@import" not in html
    assert "<svg" in html
    assert "<polyline" in html


def _calibration_record(tmp_path, fingerprint):
    """A real calibration record of the small label table's judge, written where --records reads it."""
    from judgekit.calibration.agreement import compute_agreement
    from judgekit.calibration.gate import TrustPolicy, evaluate_gate
    from judgekit.calibration.labels import parse_labels
    from judgekit.calibration.records import LabelTableInfo, build_record, dump_record, record_filename

    source = Path(__file__).parents[1] / "calibration" / "data" / "labels_small.csv"
    table = parse_labels(source.read_bytes(), source=source)
    report = compute_agreement(table, judge="judge-v2", experts=["alice", "bob", "carol"], resamples=50)
    record = build_record(
        fingerprint=fingerprint,
        report=report,
        gate=evaluate_gate(report, TrustPolicy()),
        policy=TrustPolicy(),
        label_table=LabelTableInfo(sha256=table.sha256, name=source.name, rows=len(table.rows)),
    )
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / record_filename(record)).write_text(dump_record(record))
    return folder, record


def _judged_line(case, trial, criterion_verdict, fingerprint):
    from judgekit.verdict import Evidence

    check = CheckResult(
        check_id="criterion:goal",
        layer="rubric",
        verdict=criterion_verdict,
        reason="" if criterion_verdict is P else "judged",
        evidence=(Evidence(kind="note", summary="judge", data={"fingerprint": fingerprint}),),
    )
    grade = Grade(case_id=case, trial=trial, verdict=criterion_verdict, checks=(check,))
    return make_result_line(run_id="run-a", case=CaseRef(id=case, version=1), grade=grade)


def test_report_corrects_judged_criteria_with_the_calibration_records(tmp_path, capsys):
    from judgekit.calibration.corrected import lee_from_confusion
    from judgekit.cli import main

    folder, record = _calibration_record(tmp_path, "fp-judge")
    verdicts = [P] * 14 + [F] * 4 + [INS] * 2
    results = _write(
        tmp_path / "run.jsonl", [_judged_line(f"c{i}", 1, v, "fp-judge") for i, v in enumerate(verdicts)]
    )
    report = report_run(results, undecided="fail", calibration_records=[record])[0]
    (row,) = report.corrected
    b = record.metrics.judge_vs_consensus.binary
    assert (row.criterion, row.passed, row.decided, row.undecided) == ("goal", 14, 18, 2)
    assert row.correction == lee_from_confusion(4, 18, tp=b.tp, fn=b.fn, tn=b.tn, fp=b.fp)
    markdown = render_run_markdown(report)
    assert "## Judged criteria corrected for the judge's errors" in markdown
    assert "| goal | fp-judge | 0.778 (14/18) |" in markdown
    assert "(2 undecided)" in markdown
    assert "Judged criteria corrected for the judge" in render_run_html(report)
    # the command: --records names the folder
    assert main(["report", str(results.path), "--records", str(folder), "--format", "json"]) in (0, None)
    data = json.loads(capsys.readouterr().out)
    assert data["corrected"][0]["correction"]["estimate"]["value"] == pytest.approx(
        row.correction.estimate.value
    )
    # without records, or with records for another judge, there is no section
    assert report_run(results, undecided="fail")[0].corrected == ()
    (tmp_path / "other").mkdir()
    _, other = _calibration_record(tmp_path / "other", "fp-other")
    assert report_run(results, undecided="fail", calibration_records=[other])[0].corrected == ()


# --------------------------------------------------------------------------- never-labelled criteria


def _criterion_line(case, labelled):
    """A trial judged on one criterion whose text the calibration labelled or not (``None``: unknown)."""
    from judgekit.verdict import Evidence

    note = {"fingerprint": "fp-judge", "criterion_labelled": labelled}
    check = CheckResult(
        check_id="criterion:goal",
        layer="rubric",
        verdict=P,
        reason="",
        evidence=(Evidence(kind="note", summary="judge", data=note),),
    )
    grade = Grade(case_id=case, trial=1, verdict=P, checks=(check,))
    return make_result_line(
        run_id="run-a", case=CaseRef(id=case, version=1), grade=grade, judge_fingerprint={"hex": "fp-judge"}
    )


def test_every_run_format_says_the_verdicts_on_never_labelled_criteria_in_one_wording(tmp_path):
    from judgekit.reports.run_markdown import render_short_markdown, unlabelled_text

    lines = [_criterion_line("t1", False), _criterion_line("t2", True), _criterion_line("t3", None)]
    report = report_run(_write(tmp_path / "run.jsonl", lines), undecided="fail")[0]
    said = "Judge verdicts on criterion texts never labelled in calibration: 1 in 1 trial(s)"
    assert unlabelled_text(1, 1, judged=True) == said
    assert f"\n- {said}\n" in render_run_markdown(report)
    assert f"\n{said}\n" in render_short_markdown(report)  # the trap: --short left it out
    assert f"<li>{said}</li>" in render_run_html(report)
    assert (report.run.unlabelled_verdicts, report.run.trials_with_unlabelled) == (1, 1)


def test_without_a_judge_layer_no_format_mentions_never_labelled_criteria(tmp_path):
    from judgekit.reports.run_markdown import render_short_markdown, unlabelled_text

    report = report_run(_write(tmp_path / "run.jsonl", [_line("t1", 1, P)]), undecided="fail")[0]
    assert unlabelled_text(0, 0, judged=False) is None
    for text in (render_run_markdown(report), render_short_markdown(report), render_run_html(report)):
        assert "never labelled" not in text


def test_the_runs_cost_and_a_tasks_quality_are_exactly_rounded_sums_whatever_the_line_order(tmp_path):
    # 0.1 + 0.2 + 0.3 added in file order is 0.6000000000000001 one way and 0.6 the other: the report
    # sums exactly (math.fsum's value), so the order of the lines (or of parts added together) cannot
    # change a figure
    values = [0.1, 0.2, 0.3]
    reports = []
    for order in (values, values[::-1]):
        lines = [
            _line("a", n + 1, P, quality=q).model_copy(update={"cost_usd": q}) for n, q in enumerate(order)
        ]
        report, _ = report_run(_write(tmp_path / "r.jsonl", lines), undecided="fail")
        reports.append(report)
        assert report.run.cost_usd == math.fsum(values)
    assert render_run_json(reports[0]) == render_run_json(reports[1])


def _with_case_costs(report, rows):
    from judgekit.reports.run_model import CostSummary

    total = rows[0].model_copy(update={"key": "run"})
    return report.model_copy(update={"cost": CostSummary(run=total, cases=tuple(rows), criteria=rows[:1])})


def _per_case_keys(md: str) -> list[str]:
    """The case column of the Markdown's per-case cost table (header and total left out)."""
    section = md.split("### Per case\n", 1)[1].split("### Per criterion", 1)[0]
    cells = [
        line.split(" | ")[0].removeprefix("| ") for line in section.splitlines() if line.startswith("| ")
    ]
    return [c for c in cells[1:] if c != "total"]


def test_a_long_cost_table_lists_the_costliest_cases_in_markdown_and_html_but_every_one_in_json(
    tmp_path, monkeypatch
):
    from judgekit.reports import run_html
    from judgekit.reports.run_markdown import COST_CASES_SHOWN
    from judgekit.reports.run_model import CostRow

    base = report_run(_write(tmp_path / "run.jsonl", [_line("a", 1, P)]), undecided="fail")[0]
    count = COST_CASES_SHOWN + 5
    # dollars spread over the ids (not in id order); the three cheapest priced alike, told apart by
    # tokens, and two of them also by id
    dollars = [((7 * n) % count) / 1000 for n in range(count)]
    tokens = [100] * count
    cheap = sorted(range(count), key=lambda n: dollars[n])[:3]
    for n in cheap:
        dollars[n] = 0.0
    tokens[cheap[0]] = 50
    rows = [
        CostRow(
            key=f"case-{n:03d}", judgments=1, prompt_tokens=tokens[n], usd=dollars[n], known_usd=dollars[n]
        )
        for n in range(count)
    ]
    report = _with_case_costs(base, rows)
    ranked = [r.key for r in sorted(rows, key=lambda r: (-r.known_usd, -r.prompt_tokens, r.key))]
    md = render_run_markdown(report)
    assert _per_case_keys(md) == ranked[:COST_CASES_SHOWN]
    assert (
        f"The {COST_CASES_SHOWN} costliest of {count} cases, costliest first; the HTML report and "
        "`--format json` list every one." in md
    )
    assert "| total |" in md
    # the cheapest: same dollars, fewer tokens last, then by id
    cut = report.model_copy(
        update={"cost": report.cost.model_copy(update={"cases": tuple(rows[n] for n in cheap)})}
    )
    monkeypatch.setattr("judgekit.reports.run_markdown.COST_CASES_SHOWN", 2)
    assert _per_case_keys(render_run_markdown(cut)) == sorted(f"case-{n:03d}" for n in cheap[1:])
    monkeypatch.setattr(run_html, "COST_CASES_SHOWN_HTML", 3)
    html = render_run_html(report)
    assert f"The 3 costliest of {count} cases, costliest first; the JSON report (--format json) lists" in html
    assert all(f"<td>{key}</td>" in html for key in ranked[:3])
    assert f"<td>{ranked[3]}</td>" not in html
    assert [c["key"] for c in json.loads(render_run_json(report))["cost"]["cases"]] == [r.key for r in rows]


def test_a_cost_table_within_the_limit_lists_every_case_in_id_order(tmp_path):
    from judgekit.reports.run_markdown import COST_CASES_SHOWN
    from judgekit.reports.run_model import CostRow

    base = report_run(_write(tmp_path / "run.jsonl", [_line("a", 1, P)]), undecided="fail")[0]
    rows = [
        CostRow(key=f"case-{n:03d}", judgments=1, usd=n / 100, known_usd=n / 100)
        for n in range(COST_CASES_SHOWN)
    ]
    md = render_run_markdown(_with_case_costs(base, rows))
    assert _per_case_keys(md) == [r.key for r in rows]
    assert "costliest" not in md
    assert "costliest" not in render_run_html(_with_case_costs(base, rows))

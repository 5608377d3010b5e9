"""Reports that explain: the headline verdict line, each trial's one-line reason, tasks with too few trials.

The headline and every reason come from the report model, so the Markdown, the short Markdown (a
pull-request comment), the HTML and the JSON say the same thing; the headline's thresholds are the exit
code's, checked once.
"""

from __future__ import annotations

import json
import random

import pytest
from markupsafe import escape

from judgekit.cli import main
from judgekit.markdown_text import md_text
from judgekit.reports.run_gate import parse_thresholds, with_thresholds
from judgekit.reports.run_html import render_run_html, svg_pass_k_curve
from judgekit.reports.run_json import render_run_json
from judgekit.reports.run_markdown import (
    REASONS_SHOWN,
    SHORT_REASON_WIDTH,
    render_run_markdown,
    render_short_markdown,
)
from judgekit.reports.run_model import TOO_FEW_SHOWN, report_run
from judgekit.results import CaseRef, dump_result_line, make_result_line, read_results
from judgekit.stats import wilson_mean_interval
from judgekit.verdict import CheckResult, Evidence, FailureCategory, Grade, Verdict, verdict_reason

P, F, E, INS = Verdict.PASS, Verdict.FAIL, Verdict.ERROR, Verdict.INSUFFICIENT_INFORMATION

CALL = Evidence(
    kind="call", summary="call 2: issue_refund(amount=500) breaks 'amount > 412.18'", call_index=2
)


def _grade(case: str, trial: int, verdict: Verdict, reason: str = "amount too high") -> Grade:
    if verdict is F:
        checks = (
            CheckResult(check_id="state", layer="state", verdict=P),
            CheckResult(
                check_id="rule:0",
                layer="rules",
                verdict=F,
                reason=reason,
                category=FailureCategory.POLICY_VIOLATION,
                evidence=(CALL,),
            ),
        )
        return Grade(case_id=case, trial=trial, verdict=F, checks=checks)
    if verdict is P:
        return Grade(
            case_id=case,
            trial=trial,
            verdict=P,
            checks=(CheckResult(check_id="state", layer="state", verdict=P),),
        )
    check = CheckResult(check_id="criterion:x", layer="rubric", verdict=verdict, reason="judge unsure")
    return Grade(
        case_id=case,
        trial=trial,
        verdict=verdict,
        reason="acceptance not decided (criterion:x is undecided: judge unsure)",
        checks=(check,),
    )


def _results(tmp_path, rows, name="run.jsonl"):
    lines = [
        make_result_line(
            run_id="r", case=CaseRef(id=case, version=1, **kw), grade=_grade(case, trial, verdict)
        )
        for case, trial, verdict, kw in rows
    ]
    path = tmp_path / name
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines))
    return path


def _uneven(tmp_path):
    """a: 4 trials (3 pass, 1 fail); b: 2 (pass, error); c: 1 pass; reg: 4 passes, regression slice."""
    rows = [("a", 1, P, {}), ("a", 2, P, {}), ("a", 3, F, {}), ("a", 4, P, {})]
    rows += [("b", 1, P, {}), ("b", 2, E, {}), ("c", 1, P, {})]
    rows += [("reg", t, P, {"slice": "regression"}) for t in range(1, 5)]
    return _results(tmp_path, rows)


# --------------------------------------------------------------------------- headline


def test_the_headline_without_thresholds_says_so_and_gives_each_suites_figures(tmp_path):
    report = report_run(read_results(_uneven(tmp_path)), undecided="fail")[0]
    h = report.headline
    assert h is not None
    assert h.status == "unchecked"
    assert h.verdict == "Not gated: no threshold given"
    cap = report.suites[0]
    low, high = wilson_mean_interval(cap.pass_hat[0].value, 3)
    assert f"capability suite: pass^1 {cap.pass_hat[0].value:.3f} [{low:.3f}, {high:.3f}]" in h.text
    assert "pass^4 " in h.text
    assert "(2 task(s) with fewer than 4 trials left out)" in h.text
    assert "regression suite: pass^1 1.000 [" in h.text
    assert h.text.endswith(
        "1 of 11 trials failed; 1 undecided (1 error), counted as trials that did not pass."
    )


def test_the_headline_names_the_missed_threshold_and_the_exit_code_agrees(tmp_path, capsys):
    path = _uneven(tmp_path)
    report = with_thresholds(
        report_run(read_results(path), undecided="fail")[0], parse_thresholds(["0.9"], [], ["0"])
    )
    assert report.headline.status == "missed"
    assert report.headline.thresholds == ("--fail-under 0.9", "--max-errors 0")
    assert len(report.headline.misses) == 2
    assert report.headline.verdict.startswith(
        "Misses 2 threshold check(s): --fail-under 0.9: pass^1 of the capability"
    )
    assert report.headline.verdict.endswith("; and 1 more")
    capsys.readouterr()
    code = main(["report", str(path), "--format", "json", "--fail-under", "0.9", "--max-errors", "0"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert document["headline"]["status"] == "missed"
    assert document["headline"]["misses"] == list(report.headline.misses)


def test_the_headline_of_a_run_meeting_its_thresholds(tmp_path, capsys):
    path = _uneven(tmp_path)
    capsys.readouterr()
    assert main(["report", str(path), "--fail-under", "0.5"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[2].startswith("**Meets every threshold (--fail-under 0.5).** capability suite:")


def test_the_headline_under_exclude_and_with_input_problems(tmp_path):
    path = _uneven(tmp_path)
    with path.open("a") as fh:
        fh.write("{not json\n")
    report = report_run(read_results(path), undecided="exclude")[0]
    assert "1 undecided (1 error), left out of their tasks' trials" in report.headline.text
    assert report.headline.input_problems == 1
    assert "; 1 input problem(s), listed in the report" in report.headline.verdict


def test_an_empty_run_has_a_no_trials_headline(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    report = report_run(read_results(path), undecided="fail")[0]
    assert report.headline.status == "no_trials"
    assert report.headline.text == "No trials to report."


def test_the_headline_opens_every_format(tmp_path):
    report = report_run(read_results(_uneven(tmp_path)), undecided="fail")[0]
    rest = report.headline.text[len(report.headline.verdict) + 2 :]
    md = render_run_markdown(report).splitlines()
    assert md[2] == f"**{report.headline.verdict}.** {rest}"
    assert render_short_markdown(report).splitlines()[2] == md[2]
    html = render_run_html(report)
    assert (
        f'<p class="headline status-unchecked" id="headline"><strong>{report.headline.verdict}.</strong> '
        in html
    )
    assert html.index('id="headline"') < html.index("<h2>")
    assert json.loads(render_run_json(report))["headline"]["text"] == report.headline.text


# --------------------------------------------------------------------------- intervals and too few trials


def test_pass_k_points_carry_a_conservative_interval_over_tasks(tmp_path):
    report = report_run(read_results(_uneven(tmp_path)), undecided="fail")[0]
    cap = report.suites[0]
    for point in cap.pass_hat:
        assert point.ci_low <= point.value <= point.ci_high
        assert (point.ci_low, point.ci_high) == wilson_mean_interval(point.value, point.tasks_used)


def test_the_interval_covers_on_simulated_runs():
    # 40 tasks with per-task pass probabilities spread over [0, 1], 4 trials each: pass^2's interval over
    # tasks covers the true mean of p^2 at least at the nominal rate (it is conservative).
    rng = random.Random(11)
    covered = 0
    for _ in range(400):
        ps = [rng.random() for _ in range(40)]
        truth = sum(p * p for p in ps) / 40
        estimates = []
        for p in ps:
            c = sum(rng.random() < p for _ in range(4))
            estimates.append(c * (c - 1) / 12)
        value = sum(estimates) / 40
        low, high = wilson_mean_interval(value, 40)
        covered += low <= truth <= high
    assert covered / 400 >= 0.95


def test_tasks_with_too_few_trials_are_named_at_each_k(tmp_path):
    report = report_run(read_results(_uneven(tmp_path)), undecided="fail")[0]
    cap = report.suites[0]
    assert [p.too_few_trials for p in cap.pass_hat] == [(), ("c",), ("c", "b"), ("c", "b")]
    assert [p.tasks_excluded for p in cap.pass_hat] == [0, 1, 2, 2]
    md = render_run_markdown(report)
    assert "| 3 | 0.250 [2 excl.] | [0.015, 0.882] | 1.000 [2 excl.] | 1 | 2: c, b |" in md
    html = render_run_html(report)
    assert "<li>capability suite, k=2: 1: c task(s) with fewer than 2 trials left out</li>" in html


def test_too_few_trials_names_at_most_the_cap_and_counts_all(tmp_path):
    rows = [(f"t{i:02d}", 1, P, {}) for i in range(TOO_FEW_SHOWN + 5)] + [
        ("big", 1, P, {}),
        ("big", 2, P, {}),
    ]
    report = report_run(read_results(_results(tmp_path, rows)), undecided="fail")[0]
    point = report.suites[0].pass_hat[1]
    assert point.tasks_excluded == TOO_FEW_SHOWN + 5
    assert len(point.too_few_trials) == TOO_FEW_SHOWN
    assert f"{TOO_FEW_SHOWN + 5}: t00, t01" in render_run_markdown(report)
    assert ", ..." in render_run_markdown(report)


def test_the_chart_draws_interval_bars_and_the_tasks_counted_at_each_k(tmp_path):
    report = report_run(read_results(_uneven(tmp_path)), undecided="fail")[0]
    svg = svg_pass_k_curve(report)
    assert svg.count('opacity="0.6"/>') == 4 + 4  # a bar per pass^k point of each suite
    assert "capability n</text>" in svg
    assert 'fill="#b3261e">1</text>' in svg  # k=4 counts 1 capability task, in red: some had too few
    assert "capability pass^k at k=4: 0.000 [0.000, 0.793] over 1 task(s)" in svg
    assert "2 task(s) with fewer than 4 trials left out" in svg


# --------------------------------------------------------------------------- reasons


def test_every_trial_that_did_not_pass_has_its_reason_in_every_format(tmp_path):
    path = _uneven(tmp_path)
    report = report_run(read_results(path), undecided="fail")[0]
    reasons = [(r.case_id, r.trial, r.verdict, r.check_id, r.reason) for r in report.trial_reasons]
    line = "rule:0: amount too high — call 2: issue_refund(amount=500) breaks 'amount > 412.18'"
    assert reasons == [
        ("a", 3, F, "rule:0", line),
        (
            "b",
            2,
            E,
            None,
            "acceptance not decided (criterion:x is undecided: judge unsure) | criterion:x: judge unsure",
        ),
    ]
    for result in read_results(path).lines:
        if result.verdict is not P:
            assert verdict_reason(result.verdict, result.reason, result.checks) in {r[4] for r in reasons}
    assert f"| a | 3 | fail | {line} |" in render_run_markdown(report)
    html = render_run_html(report)
    assert (
        '<td>a</td><td>3</td><td class="verdict">fail</td><td class="why">rule:0: amount too high — call 2'
        in html
    )
    document = json.loads(render_run_json(report))
    assert document["trial_reasons"][0]["reason"] == line
    assert document["trial_reasons"][0]["category"] == "policy_violation"


def test_a_cases_trials_failing_the_same_way_share_a_row(tmp_path):
    rows = [("a", t, F, {}) for t in range(1, 11)]
    report = report_run(read_results(_results(tmp_path, rows)), undecided="fail")[0]
    assert len(report.trial_reasons) == 10
    assert "| a | 1, 2, 3, 4, 5, 6, 7, 8, ... (10) | fail |" in render_run_markdown(report)


def test_the_full_markdown_lists_the_first_reasons_and_counts_the_rest(tmp_path):
    rows = [(f"case-{i:03d}", 1, F, {}) for i in range(REASONS_SHOWN + 7)]
    report = report_run(read_results(_results(tmp_path, rows)), undecided="fail")[0]
    md = render_run_markdown(report)
    assert "| case-049 | 1 | fail |" in md
    assert "| case-050 |" not in md
    assert "And 7 more trial(s) that did not pass: the HTML report and `--format json` list every one." in md
    assert "case-056" in render_run_html(report)
    assert len(json.loads(render_run_json(report))["trial_reasons"]) == REASONS_SHOWN + 7


def test_the_short_markdown_stays_a_pr_comment_whatever_the_run_size(tmp_path):
    reason = "x" * 3000
    lines = [
        make_result_line(
            run_id="r",
            case=CaseRef(id=f"{'c' * 150}-{i}", version=1),
            grade=_grade(f"{'c' * 150}-{i}", 1, F, reason),
        )
        for i in range(3000)
    ]
    path = tmp_path / "big.jsonl"
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines))
    report = report_run(read_results(path), undecided="fail")[0]
    text = render_short_markdown(report, top=100, link="https://ci.example/run/7/report.html")
    assert len(text) < 65_536  # GitHub's comment limit
    assert text.count("| fail |") == 100
    assert f"{'x' * (SHORT_REASON_WIDTH - 20)}" in text
    assert "x" * (SHORT_REASON_WIDTH + 1) not in text
    assert "And 2900 more trial(s) that did not pass: see the full report." in text
    assert text.rstrip().endswith("Full report: https://ci.example/run/7/report.html")


def test_the_short_markdown_with_top_zero_has_no_reason_table(tmp_path):
    report = report_run(read_results(_uneven(tmp_path)), undecided="fail")[0]
    text = render_short_markdown(report, top=0)
    assert "Why trials did not pass" not in text
    assert "And 2 more trial(s) that did not pass: see the full report." in text


def test_report_short_on_the_command_line(tmp_path, capsys):
    path = _uneven(tmp_path)
    capsys.readouterr()
    assert main(["report", str(path), "--short", "--top", "1", "--link", "https://ci/r.html"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### judgekit: run.jsonl\n")
    assert "**Why trials did not pass** (1 of 2, failed first):" in out
    assert "Full report: https://ci/r.html" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--short", "--format", "html"],
            "error: --short makes a Markdown pull-request comment, not html: use --format md --short, "
            "or leave --short out",
        ),
        (["--top", "3"], "error: --top applies to the short report: add --short (with --format md)"),
        (
            ["--link", "https://x"],
            "error: --link applies to the short report: add --short (with --format md)",
        ),
        (
            ["--short", "--top", "101"],
            "error: --top must be between 0 and 100 (got 101): it counts rows of reasons",
        ),
    ],
)
def test_short_report_usage_mistakes_are_one_line_errors(tmp_path, capsys, args, message):
    path = _uneven(tmp_path)
    out = tmp_path / "kept.md"
    out.write_text("already here")
    capsys.readouterr()
    assert main(["report", str(path), "-o", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.strip() == message
    assert "Traceback" not in err
    assert out.read_text() == "already here"


# --------------------------------------------------------------------------- every failed gate (issue 35)

STATE = CheckResult(
    check_id="state",
    layer="state",
    verdict=F,
    reason="1 expected change(s) not made as expected",
    category=FailureCategory.INCOMPLETE_EXECUTION,
    evidence=(
        Evidence(
            kind="diff",
            summary="final -> expected",
            data={"lines": ["refills/RX-100: status: expected 'filled', found 'pending'"]},
        ),
    ),
)
TWICE = CheckResult(
    check_id="rule:0",
    layer="rules",
    verdict=F,
    reason="forbidden: request_refill when calls > 1: broken 1 time(s)",
    category=FailureCategory.POLICY_VIOLATION,
    evidence=(
        Evidence(
            kind="call",
            summary="call 3: request_refill(rx_id='RX-100') is the second refill request",
            call_index=3,
            tool="request_refill",
            arguments={"rx_id": "RX-100"},
        ),
    ),
)
STATE_LINE = (
    "state: 1 expected change(s) not made as expected — "
    "refills/RX-100: status: expected 'filled', found 'pending'"
)
TWICE_LINE = (
    "rule:0: forbidden: request_refill when calls > 1: broken 1 time(s) — call 3: "
    "request_refill(rx_id='RX-100') is the second refill request"
)


def _two_ways(tmp_path):
    """The issue's pharmacy case: trial 1 requested a refill twice AND missed the expected state; trial 2
    only missed the state; trial 3 passed."""
    passed = CheckResult(check_id="rule:0", layer="rules", verdict=P)
    grades = [
        Grade(case_id="refill-1", trial=1, verdict=F, checks=(STATE, TWICE)),
        Grade(case_id="refill-1", trial=2, verdict=F, checks=(STATE, passed)),
        Grade(
            case_id="refill-1", trial=3, verdict=P, checks=(STATE.model_copy(update={"verdict": P}), passed)
        ),
    ]
    lines = [make_result_line(run_id="r", case=CaseRef(id="refill-1", version=1), grade=g) for g in grades]
    path = tmp_path / "pharmacy.jsonl"
    path.write_text("".join(dump_result_line(line) + "\n" for line in lines))
    return path


def test_a_trial_lists_every_failed_gate_with_its_own_evidence_in_the_model_and_json(tmp_path):
    report = report_run(read_results(_two_ways(tmp_path)), undecided="fail")[0]
    first, second = report.trial_reasons
    assert [(g.check_id, g.decided, g.evidence) for g in first.gates] == [
        ("state", True, ("refills/RX-100: status: expected 'filled', found 'pending'",)),
        ("rule:0", True, ("call 3: request_refill(rx_id='RX-100') is the second refill request",)),
    ]
    assert first.check_id == "state"  # the first gate that decided the verdict
    assert first.reason == f"{STATE_LINE} | {TWICE_LINE}"
    assert [g.check_id for g in second.gates] == ["state"]
    assert second.reason == STATE_LINE
    document = json.loads(render_run_json(report))
    assert document["schema_version"] == 6
    gates = document["trial_reasons"][0]["gates"]
    assert [(g["check_id"], g["category"], g["decided"], g["line"]) for g in gates] == [
        ("state", "incomplete_execution", True, STATE_LINE),
        ("rule:0", "policy_violation", True, TWICE_LINE),
    ]
    assert document["trial_reasons"][0]["check_id"] == "state"  # the keys of schema 5 stay


def test_trials_of_one_case_that_failed_differently_are_separate_rows_listing_every_gate(tmp_path):
    report = report_run(read_results(_two_ways(tmp_path)), undecided="fail")[0]
    md = render_run_markdown(report)
    assert f"| refill-1 | 1 | fail | {md_text(STATE_LINE)}<br>{md_text(TWICE_LINE)} |" in md
    assert f"| refill-1 | 2 | fail | {md_text(STATE_LINE)} |" in md
    assert "| refill-1 | 1, 2 |" not in md
    html = render_run_html(report)
    assert (
        '<td>refill-1</td><td>1</td><td class="verdict">fail</td>'
        f'<td class="why">{escape(STATE_LINE)}<br>{escape(TWICE_LINE)}</td>'
    ) in html
    assert (
        f'<td>refill-1</td><td>2</td><td class="verdict">fail</td><td class="why">{escape(STATE_LINE)}</td>'
        in html
    )
    short = render_short_markdown(report)
    assert f"| refill-1 | 1 | fail | {md_text(STATE_LINE)}<br>{md_text(TWICE_LINE)} |" in short
    assert f"| refill-1 | 2 | fail | {md_text(STATE_LINE)} |" in short


def test_report_short_on_the_command_line_lists_every_failed_gate(tmp_path, capsys):
    path = _two_ways(tmp_path)
    capsys.readouterr()
    assert main(["report", str(path), "--short"]) == 0
    out = capsys.readouterr().out
    assert "**Why trials did not pass** (2 of 2, failed first):" in out
    assert md_text(TWICE_LINE) in out


def test_the_viewer_data_lists_every_failed_gate(tmp_path):
    from judgekit.api.viewer import write_viewer
    from support import load_viewer_data

    write_viewer([read_results(_two_ways(tmp_path))], tmp_path / "v")
    rows = load_viewer_data(tmp_path / "v" / "data" / "index.js")["runs"][0]["rows"]
    assert [(row[1], row[-1]) for row in rows if row[2] == "fail"] == [
        (1, f"{STATE_LINE} | {TWICE_LINE}"),
        (2, STATE_LINE),
    ]
    details = load_viewer_data(tmp_path / "v" / "data" / "run0" / "chunk-0.js")
    first = next(d for d in details if d["trial"] == 1)
    assert [(g["check_id"], g["decided"], g["evidence"]) for g in first["gates"]] == [
        ("state", True, ["refills/RX-100: status: expected 'filled', found 'pending'"]),
        ("rule:0", True, ["call 3: request_refill(rx_id='RX-100') is the second refill request"]),
    ]
    assert next(d for d in details if d["trial"] == 3)["gates"] == []


def test_a_gate_that_did_not_decide_the_verdict_is_listed_after_and_marked(tmp_path):
    errored = CheckResult(check_id="fixture", layer="fixture", verdict=E, reason="fixture unreadable")
    grade = Grade(case_id="refill-2", trial=1, verdict=F, checks=(errored, TWICE))
    path = tmp_path / "r.jsonl"
    path.write_text(
        dump_result_line(make_result_line(run_id="r", case=CaseRef(id="refill-2", version=1), grade=grade))
        + "\n"
    )
    (reason,) = report_run(read_results(path), undecided="fail")[0].trial_reasons
    assert [(g.check_id, g.decided) for g in reason.gates] == [("rule:0", True), ("fixture", False)]
    assert reason.reason == f"{TWICE_LINE} | fixture (error, did not decide): fixture unreadable"
    assert reason.check_id == "rule:0"

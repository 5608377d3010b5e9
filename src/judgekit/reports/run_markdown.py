"""Markdown rendering of run reports and run comparisons (formatting only; numbers come from the models)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from judgekit.reports.retirement import retirement_lines
from judgekit.reports.run_compare import Comparison
from judgekit.reports.run_model import GroupSummary, Interval, KPoint, RunReport, UndecidedCase
from judgekit.stats import UndecidedPolicy
from judgekit.verdict import Verdict

__all__ = [
    "CORRECTED_HEADER",
    "COST_HEADER",
    "UNDECIDED_CASES_SHOWN",
    "corrected_rows",
    "cost_rows",
    "counted_label",
    "fmt_bounds",
    "fmt_interval",
    "fmt_k",
    "fmt_rate",
    "policy_text",
    "render_comparison_markdown",
    "render_run_markdown",
    "run_cost_text",
    "undecided_case_rows",
]

UNDECIDED_CASES_SHOWN = 50
"""Cases with undecided trials listed in the Markdown and HTML reports; the JSON report lists every one."""

_STATE_LABELS = {
    Verdict.PASS: "pass",
    Verdict.FAIL: "fail",
    Verdict.INSUFFICIENT_INFORMATION: "insufficient info",
    Verdict.ERROR: "error",
    Verdict.NOT_EVALUATED: "not evaluated",
}


def fmt_rate(value: float | None) -> str:
    """A proportion as ``0.420``, or ``n/a`` when undefined."""
    return "n/a" if value is None else f"{value:.3f}"


def fmt_bounds(interval: Interval) -> str:
    """``; 0.400 if the 10 undecided all fail, 0.450 if they all pass``, or ``""`` when none is undecided."""
    if not interval.undecided or interval.undecided_low is None or interval.undecided_high is None:
        return ""
    low, high = f"{interval.undecided_low:.3f}", f"{interval.undecided_high:.3f}"
    if interval.undecided == 1:
        return f"; {low} if the undecided one fails, {high} if it passes"
    return f"; {low} if the {interval.undecided} undecided all fail, {high} if they all pass"


def fmt_interval(interval: Interval) -> str:
    """``0.420 [0.354, 0.489] (84/200)``, or ``n/a (0/0)`` when undefined, then the undecided bounds.

    Examples:
        >>> from judgekit.reports.run_model import Interval
        >>> fmt_interval(Interval(successes=8, n=10, rate=0.8, low=0.49, high=0.943))
        '0.800 [0.490, 0.943] (8/10)'
        >>> fmt_interval(Interval(successes=8, n=12, rate=0.667, low=0.391, high=0.862, undecided=2,
        ...                       undecided_low=0.667, undecided_high=0.833))
        '0.667 [0.391, 0.862] (8/12); 0.667 if the 2 undecided all fail, 0.833 if they all pass'
    """
    if interval.rate is None or interval.low is None or interval.high is None:
        return f"n/a ({interval.successes}/{interval.n}){fmt_bounds(interval)}"
    return (
        f"{interval.rate:.3f} [{interval.low:.3f}, {interval.high:.3f}] ({interval.successes}/{interval.n})"
        f"{fmt_bounds(interval)}"
    )


def fmt_k(point: KPoint) -> str:
    """pass^k at one k, with its undecided bounds when they differ and the excluded task count."""
    if point.value is None:
        return "n/a"
    text = f"{point.value:.3f}"
    if point.low is not None and point.high is not None and (point.high - point.low) > 5e-4:
        text += f" ({point.low:.3f}–{point.high:.3f})"
    if point.tasks_excluded:
        text += f" [{point.tasks_excluded} excl.]"
    return text


def policy_text(policy: UndecidedPolicy) -> str:
    """What the undecided policy in force does, in one phrase (plain text, without the policy's name)."""
    if policy == "fail":
        return "an undecided trial counts as a trial that did not pass (it stays in its task's n)"
    return (
        "an undecided trial is left out of its task's trials (pass^k over decided trials; a task with "
        "fewer than k decided trials is left out at that k)"
    )


def counted_label(policy: UndecidedPolicy) -> str:
    """The trials a rate counts under the policy: ``trials`` or ``decided trials``."""
    return "decided trials" if policy == "exclude" else "trials"


def undecided_case_rows(report: RunReport) -> tuple[tuple[UndecidedCase, ...], int, int]:
    """The undecided cases the Markdown and HTML reports list.

    Returns:
        ``(shown, more_cases, more_trials)``: the first :data:`UNDECIDED_CASES_SHOWN` cases (most undecided
        trials first), and how many cases and undecided trials are left out of the listing (0 and 0 when
        every case is shown).
    """
    shown = report.undecided_cases[:UNDECIDED_CASES_SHOWN]
    rest = report.undecided_cases[UNDECIDED_CASES_SHOWN:]
    return shown, len(rest), sum(r.undecided for r in rest)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out.extend("| " + " | ".join(_escape(c) for c in row) + " |" for row in rows)
    return out


def _verdict_cells(verdicts: dict[Verdict, int]) -> list[str]:
    return [str(verdicts.get(state, 0)) for state in Verdict]


def _group_table(groups: Sequence[GroupSummary], k_max: int, label: str) -> list[str]:
    header = [
        label,
        "tasks",
        "trials",
        *(_STATE_LABELS[s] for s in Verdict),
        "pass^1",
        f"pass^{k_max}",
        "trial pass rate [95% Wilson]",
    ]
    rows = []
    for g in groups:
        last = g.pass_hat[-1] if g.pass_hat else None
        rows.append(
            [
                g.name,
                str(g.tasks),
                str(g.trials),
                *_verdict_cells(g.verdicts),
                fmt_k(g.pass_hat[0]) if g.pass_hat else "n/a",
                fmt_k(last) if last else "n/a",
                fmt_interval(g.trial_pass_rate),
            ]
        )
    return _table(header, rows)


def _suite_section(suite: GroupSummary, policy: UndecidedPolicy) -> list[str]:
    out = [f"### {suite.name.capitalize()} suite", ""]
    counted = counted_label(policy)
    out.append(
        f"{suite.tasks} tasks, {suite.trials} trials ({suite.undecided_trials} undecided). "
        f"Trial pass rate (passes over {counted}) {fmt_interval(suite.trial_pass_rate)}. "
        f"Tasks whose {counted} all passed {fmt_interval(suite.tasks_all_pass)}."
    )
    if suite.mean_quality is not None:
        out.append(f"Mean quality score {suite.mean_quality:.3f} over {suite.quality_trials} trials.")
    out.append("")
    rows = [
        [
            str(h.k),
            fmt_k(h),
            fmt_k(a),
            str(h.tasks_used),
        ]
        for h, a in zip(suite.pass_hat, suite.pass_at, strict=True)
    ]
    out.extend(_table(["k", "pass^k", "pass@k", "tasks used"], rows))
    out.append("")
    out.extend(_table([_STATE_LABELS[s] for s in Verdict], [_verdict_cells(suite.verdicts)]))
    out.append("")
    return out


def render_run_markdown(report: RunReport) -> str:
    """Render a run report as Markdown."""
    run = report.run
    out = [f"# Run report: {run.file}", ""]
    meta = [
        f"- Run: {', '.join(run.run_ids) or 'n/a'}",
        f"- Tasks: {run.tasks}; trials: {run.trials} "
        f"({run.trials_per_task[0]}–{run.trials_per_task[1]} per task)",
        f"- Agent model: {', '.join(run.agent_models) or 'not recorded'}",
        f"- App version: {', '.join(run.app_versions) or 'not recorded'}",
        f"- judgekit: {', '.join(run.judgekit_versions) or 'n/a'}",
        f"- Judge fingerprints: {len(run.judge_fingerprints) or 'none (no judge layer)'}",
    ]
    if run.cost_usd is not None:
        meta.append(f"- Judge cost: {run_cost_text(report)}")
    meta.append(
        f"- Verdicts resting on untrusted judges: {run.untrusted_verdicts} in {run.trials_with_untrusted} "
        f"trial(s) (untrusted policy: {', '.join(run.untrusted_policies) or 'n/a'})"
    )
    undecided_trials = sum(r.undecided for r in report.undecided_cases)
    meta.append(
        f"- Undecided trials: {undecided_trials} of {run.trials}, in {len(report.undecided_cases)} case(s); "
        f"policy `{report.undecided_policy}`: {policy_text(report.undecided_policy)}"
    )
    out.extend(meta)
    out.append("")
    if report.problems:
        out.append("## Problems in the input")
        out.append("")
        out.extend(f"- {_escape(p)}" for p in report.problems)
        out.append("")
    out.append("## Verdicts")
    out.append("")
    out.extend(
        _table(
            ["counted", *(_STATE_LABELS[s] for s in Verdict)],
            [
                ["trials", *_verdict_cells(report.verdicts)],
                ["checks", *_verdict_cells(report.check_verdicts)],
            ],
        )
    )
    out.append("")
    out.append("## Suites (reported separately, never blended)")
    out.append("")
    if not report.suites:
        out.append("No trials to report.")
        out.append("")
    for suite in report.suites:
        out.extend(_suite_section(suite, report.undecided_policy))
    out.extend(_undecided_section(report))
    for title, groups, label in (
        ("By slice", report.slices, "slice"),
        ("By category", report.categories, "category"),
        ("By severity", report.severities, "severity"),
    ):
        if groups:
            out.append(f"## {title}")
            out.append("")
            out.extend(_group_table(groups, report.k_max, label))
            out.append("")
    out.append("## Failure categories (the repair queue)")
    out.append("")
    if report.failures:
        out.extend(
            _table(
                ["category", "failed checks", "trials", "tasks", "examples"],
                (
                    [
                        f.category,
                        str(f.failed_checks),
                        str(f.trials),
                        str(f.tasks),
                        ", ".join(f.example_tasks),
                    ]
                    for f in report.failures
                ),
            )
        )
    else:
        out.append("No failed checks.")
    out.append("")
    out.extend(_cost_section(report))
    out.extend(_corrected_section(report))
    out.append("## Retirement suggestions")
    out.append("")
    for line in retirement_lines(report.retirement):
        out.append("- " + _escape(line[2:]) if line.startswith("- ") else _escape(line))
    out.append("")
    if report.notes:
        out.append("## Notes")
        out.append("")
        out.extend(f"- {_escape(n)}" for n in report.notes)
        out.append("")
    return "\n".join(out)


def fmt_usd(usd: float | None, unpriced: int) -> str:
    """A cost for people: ``$0.001260``, or ``unknown (N unpriced)`` (never a fake $0)."""
    return f"unknown ({unpriced} unpriced)" if usd is None or unpriced else f"${usd:.6f}"


def run_cost_text(report: RunReport) -> str:
    """The run's judge cost line: dollars, or unknown with how many trials and why."""
    run = report.run
    total = report.cost.run if report.cost is not None else None
    if not run.cost_unpriced_trials and (total is None or not total.unpriced):
        return f"${run.cost_usd or 0.0:.6f}" + (
            f" ({total.judgments} judgments, {total.replayed} replies replayed)"
            if total is not None and total.replayed
            else ""
        )
    unpriced = total.unpriced if total is not None else 0
    reason = (report.cost.unknown_reason if report.cost is not None else None) or run.cost_unknown_reason
    judgments = total.judgments if total is not None else 0
    priced = f"; ${run.cost_usd or 0.0:.6f} for the priced ones" if unpriced < judgments else ""
    return (
        f"unknown ({unpriced} of {judgments} judgments unpriced, in "
        f"{run.cost_unpriced_trials} of {run.trials} trials: {reason}){priced}"
    )


COST_HEADER = ("case / criterion", "judgments", "tokens in", "tokens out", "cost")
"""The judge-cost tables' columns, the same in Markdown and HTML."""


def cost_rows(report: RunReport, by: str) -> list[list[str]]:
    """The judge-cost table's rows, ``by`` ``"case"`` or ``"criterion"``, then the run total."""
    if report.cost is None:
        return []
    rows = report.cost.cases if by == "case" else report.cost.criteria
    return [
        [r.key, str(r.judgments), str(r.prompt_tokens), str(r.completion_tokens), fmt_usd(r.usd, r.unpriced)]
        for r in (*rows, report.cost.run.model_copy(update={"key": "total"}))
    ]


def _cost_section(report: RunReport) -> list[str]:
    if report.cost is None:
        return []
    out = ["## Judge cost", ""]
    if report.cost.unknown_reason is not None:
        out += [f"Unpriced judgments: {_escape(report.cost.unknown_reason)}.", ""]
    for by, title in (("case", "Per case"), ("criterion", "Per criterion")):
        out += [f"### {title}", ""]
        out.extend(_table(COST_HEADER, cost_rows(report, by)))
        out.append("")
    return out


def corrected_rows(report: RunReport) -> list[list[str]]:
    """The corrected-pass-rate table's rows (criterion, judge, observed, corrected, bounds, q0/q1, note)."""
    from judgekit.reports.calibration_report import fmt_estimate

    rows = []
    for c in report.corrected:
        corrected = fmt_estimate(c.correction.estimate)
        bounds = (
            f"{fmt_rate(c.undecided_low)}–{fmt_rate(c.undecided_high)} ({c.undecided} undecided)"
            if c.undecided
            else "none undecided"
        )
        q = c.correction
        errors = (
            f"q0 {fmt_rate(q.q0)} (of {q.m0}), q1 {fmt_rate(q.q1)} (of {q.m1})"
            if q.q0 is not None and q.q1 is not None
            else f"q0 {fmt_rate(q.q0)}, q1 {fmt_rate(q.q1)}"
        )
        note = f"unreliable: {q.unreliable_reason}" if q.unreliable else ""
        rows.append(
            [
                c.criterion,
                c.fingerprint[:12],
                f"{c.observed:.3f} ({c.passed}/{c.decided})",
                corrected,
                bounds,
                errors,
                note,
            ]
        )
    return rows


CORRECTED_HEADER = (
    "criterion",
    "judge",
    "judge's pass share",
    "corrected pass rate [interval]",
    "bounds under undecided",
    "judge's error rates",
    "note",
)
"""The corrected-pass-rate table's columns, the same in Markdown and HTML."""


def _corrected_section(report: RunReport) -> list[str]:
    if not report.corrected:
        return []
    out = ["## Judged criteria corrected for the judge's errors", ""]
    out.append(
        "Each judged criterion whose judge fingerprint has a calibration record: the judge's pass share, "
        "and the pass rate corrected for its misses and false alarms (Lee et al., adjusted Wald interval "
        "carrying both the test and the calibration uncertainty); the bounds put every undecided check "
        "at fail, then at pass."
    )
    out.append("")
    out.extend(_table(CORRECTED_HEADER, corrected_rows(report)))
    out.append("")
    return out


def _undecided_section(report: RunReport) -> list[str]:
    out = ["## Undecided trials per case", ""]
    if not report.undecided_cases:
        return [*out, "No undecided trials.", ""]
    out.append(f"Policy in force: `{report.undecided_policy}`, {policy_text(report.undecided_policy)}.")
    out.append("")
    shown, more_cases, more_trials = undecided_case_rows(report)
    out.extend(
        _table(
            ["case", "trials", "pass", "fail", "undecided", "error", "insufficient info", "not evaluated"],
            (
                [
                    r.case_id,
                    str(r.trials),
                    str(r.passed),
                    str(r.failed),
                    str(r.undecided),
                    str(r.error),
                    str(r.insufficient_information),
                    str(r.not_evaluated),
                ]
                for r in shown
            ),
        )
    )
    if more_cases:
        out.append("")
        out.append(
            f"And {more_cases} more case(s) with {more_trials} undecided trial(s); the JSON report lists "
            "every case."
        )
    out.append("")
    return out


def render_comparison_markdown(comparison: Comparison) -> str:
    """Render a run comparison as Markdown."""
    c = comparison
    out = [f"# Comparison: {c.b} against {c.a}", "", f"**Verdict: {c.verdict}.** {c.explanation}.", ""]
    out.extend(
        _table(
            ["", "value"],
            [
                ["tasks compared", str(c.tasks_compared)],
                ["fixed (fail → pass)", str(c.fixed)],
                ["broken (pass → fail)", str(c.broken)],
                ["still passing", str(c.unchanged_pass)],
                ["still failing", str(c.unchanged_fail)],
                ["undecided in a run", str(c.undecided)],
                ["sign test p (exact, two-sided)", f"{c.sign_test_p:.4g}"],
                ["paired trials", str(c.trial_pairs)],
                ["trials fixed / broken", f"{c.trials_fixed} / {c.trials_broken}"],
                ["McNemar p (exact, paired trials)", f"{c.mcnemar_p:.4g}"],
                ["task pass rate in A [95% Wilson]", fmt_interval(c.task_pass_a)],
                ["task pass rate in B [95% Wilson]", fmt_interval(c.task_pass_b)],
            ],
        )
    )
    out.append("")
    if c.changes:
        out.append("## Tasks that changed")
        out.append("")
        out.extend(_table(["task", "change", c.a, c.b], ([t.case_id, t.change, t.a, t.b] for t in c.changes)))
        out.append("")
    if c.only_in_a or c.only_in_b:
        out.append("## Tasks in one run only")
        out.append("")
        if c.only_in_a:
            out.append(f"- only in {c.a}: {', '.join(c.only_in_a)}")
        if c.only_in_b:
            out.append(f"- only in {c.b}: {', '.join(c.only_in_b)}")
        out.append("")
    if c.notes:
        out.append("## Notes")
        out.append("")
        out.extend(f"- {n}" for n in c.notes)
        out.append("")
    return "\n".join(out)

"""Markdown rendering of run reports and run comparisons (formatting only; numbers come from the models)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from judgekit.reports.run_compare import Comparison
from judgekit.reports.run_model import GroupSummary, Interval, KPoint, RunReport
from judgekit.verdict import Verdict

__all__ = ["fmt_interval", "fmt_k", "fmt_rate", "render_comparison_markdown", "render_run_markdown"]

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


def fmt_interval(interval: Interval) -> str:
    """``0.420 [0.354, 0.489] (84/200)``, or ``n/a (0/0)`` when undefined."""
    if interval.rate is None or interval.low is None or interval.high is None:
        return f"n/a ({interval.successes}/{interval.n})"
    return (
        f"{interval.rate:.3f} [{interval.low:.3f}, {interval.high:.3f}] ({interval.successes}/{interval.n})"
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


def _suite_section(suite: GroupSummary) -> list[str]:
    out = [f"### {suite.name.capitalize()} suite", ""]
    out.append(
        f"{suite.tasks} tasks, {suite.trials} trials. Trial pass rate {fmt_interval(suite.trial_pass_rate)}. "
        f"Tasks passing every trial {fmt_interval(suite.tasks_all_pass)}."
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
        meta.append(f"- Judge cost: ${run.cost_usd:.4f}")
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
        out.extend(_suite_section(suite))
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
    out.append("## Retirement suggestions")
    out.append("")
    ret = report.retirement
    if ret.suggestions:
        out.append(
            f"Capability tasks that passed every trial in each of the last {ret.required_runs} runs; "
            "move them to the regression suite and replace them with fresh failures:"
        )
        out.append("")
        out.extend(f"- {s.case_id}: {' · '.join(s.history)}" for s in ret.suggestions)
    else:
        out.append(
            ret.note or f"No capability task passed every trial in each of the last {ret.required_runs} runs."
        )
    out.append("")
    if report.notes:
        out.append("## Notes")
        out.append("")
        out.extend(f"- {_escape(n)}" for n in report.notes)
        out.append("")
    return "\n".join(out)


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
                ["task pass rate A → B", f"{fmt_rate(c.pass_rate_a)} → {fmt_rate(c.pass_rate_b)}"],
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

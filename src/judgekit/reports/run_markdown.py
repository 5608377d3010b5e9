"""Markdown rendering of run reports and run comparisons (formatting only; numbers come from the models).

Every value that comes from the results (case ids, agent models, reasons and quotes, run ids, slice names,
notes that name them) goes through :func:`~judgekit.markdown_text.md_text`, so that a transcript
cannot write HTML, a link or a heading into a step summary or pull-request comment; judgekit's own text
(headings, figures, table rules) is written as it is.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence

from judgekit.markdown_text import md_text
from judgekit.reports.retirement import retirement_lines
from judgekit.reports.run_compare import CHANGE_WORDS, Comparison
from judgekit.reports.run_model import CostRow, GroupSummary, KPoint, RunReport, TrialReason, UndecidedCase
from judgekit.stats import Proportion, UndecidedPolicy
from judgekit.verdict import Verdict

__all__ = [
    "CORRECTED_HEADER",
    "COST_CASES_SHOWN",
    "COST_CASES_SHOWN_HTML",
    "COST_HEADER",
    "K_HEADER",
    "REASONS_INTRO",
    "REASONS_SHOWN",
    "REASONS_SHOWN_HTML",
    "REASON_HEADER",
    "SHORT_CELL_WIDTH",
    "SHORT_PARTS_SHOWN",
    "SHORT_PART_MIN",
    "SHORT_TOP",
    "UNDECIDED_CASES_SHOWN",
    "corrected_rows",
    "cost_cases_text",
    "cost_rows",
    "counted_label",
    "fmt_bounds",
    "fmt_ci",
    "fmt_interval",
    "fmt_k",
    "fmt_k_ci",
    "fmt_rate",
    "headline_markdown",
    "headline_parts",
    "policy_text",
    "reason_groups",
    "reason_rows",
    "reasons_more_text",
    "render_comparison_markdown",
    "render_run_markdown",
    "render_short_markdown",
    "run_cost_text",
    "run_unlabelled_text",
    "too_few_text",
    "undecided_case_rows",
    "unlabelled_text",
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


def fmt_bounds(interval: Proportion) -> str:
    """``; 0.400 if the 10 undecided all fail, 0.450 if they all pass``, or ``""`` when none is undecided."""
    if not interval.undecided or interval.undecided_low is None or interval.undecided_high is None:
        return ""
    low, high = f"{interval.undecided_low:.3f}", f"{interval.undecided_high:.3f}"
    if interval.undecided == 1:
        return f"; {low} if the undecided one fails, {high} if it passes"
    return f"; {low} if the {interval.undecided} undecided all fail, {high} if they all pass"


def fmt_interval(interval: Proportion) -> str:
    """``0.420 [0.354, 0.489] (84/200)``, or ``n/a (0/0)`` when undefined, then the undecided bounds.

    Examples:
        >>> from judgekit.stats import Proportion
        >>> fmt_interval(Proportion.wilson(8, 10))
        '0.800 [0.490, 0.943] (8/10)'
        >>> fmt_interval(Proportion.wilson(8, 12, undecided=2, undecided_low=0.667, undecided_high=0.833))
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


def fmt_ci(point: KPoint) -> str:
    """A pass^k point's 95 % interval over its tasks, ``[0.170, 0.497]``, or ``n/a`` when undefined."""
    if point.ci_low is None or point.ci_high is None:
        return "n/a"
    return f"[{point.ci_low:.3f}, {point.ci_high:.3f}]"


def fmt_k_ci(point: KPoint) -> str:
    """``0.594 [0.398, 0.764]``: a pass^k point with its 95 % interval, or ``n/a`` when undefined."""
    if point.value is None:
        return "n/a"
    return f"{point.value:.3f} {fmt_ci(point)}"


def too_few_text(point: KPoint) -> str:
    """The tasks left out at a k for too few trials: ``none``, or ``2: a, b`` (``, ...`` past the names)."""
    if not point.tasks_excluded:
        return "none"
    names = ", ".join(point.too_few_trials)
    more = ", ..." if point.tasks_excluded > len(point.too_few_trials) else ""
    return f"{point.tasks_excluded}: {names}{more}" if names else str(point.tasks_excluded)


K_HEADER = ("k", "pass^k", "pass^k 95% interval", "pass@k", "tasks used", "too few trials (left out)")
"""The per-k table's columns, the same in Markdown and HTML."""


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


def _names(values: Iterable[str], empty: str) -> str:
    """Untrusted names joined by commas, each escaped; ``empty`` (judgekit's text) when there is none."""
    return ", ".join(md_text(v) for v in values) or empty


def _notes_section(notes: Sequence[str]) -> list[str]:
    """A ``## Notes`` section listing ``notes`` (escaped), or no lines when there are none."""
    if not notes:
        return []
    return ["## Notes", "", *(f"- {md_text(n)}" for n in notes), ""]


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A Markdown table; every cell is Markdown already (untrusted values went through ``md_text``)."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out.extend("| " + " | ".join(row) + " |" for row in rows)
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
                md_text(g.name),
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
    out = [f"### {md_text(suite.name.capitalize())} suite", ""]
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
            fmt_ci(h),
            fmt_k(a),
            str(h.tasks_used),
            md_text(too_few_text(h)),
        ]
        for h, a in zip(suite.pass_hat, suite.pass_at, strict=True)
    ]
    out.extend(_table(K_HEADER, rows))
    out.append("")
    out.extend(_table([_STATE_LABELS[s] for s in Verdict], [_verdict_cells(suite.verdicts)]))
    out.append("")
    return out


REASONS_SHOWN = 50
"""Trials with their one-line reason listed in the full Markdown report (the HTML lists
:data:`REASONS_SHOWN_HTML`, the JSON every one)."""

REASONS_SHOWN_HTML = 5000
"""Trials with their one-line reason listed in the HTML report (the JSON lists every one)."""

SHORT_TOP = 10
"""Trials with their reason in the short Markdown (``--short``, a pull-request comment) by default."""

SHORT_REASON_WIDTH = 240
"""Longest part of a reason (one gate and its evidence), in characters, in the short Markdown (longer ones
end with ``...``); a trial with several gates shares :data:`SHORT_CELL_WIDTH` among them."""

SHORT_CELL_WIDTH = 360
"""Most characters of one row's reason in the short Markdown: its parts (the contract's reason, each gate)
get an equal share, at most :data:`SHORT_REASON_WIDTH` and at least :data:`SHORT_PART_MIN` each."""

SHORT_PART_MIN = 60
"""Fewest characters one part of a reason keeps in the short Markdown."""

SHORT_PARTS_SHOWN = 6
"""Most parts of one row's reason in the short Markdown; the rest are counted (the full report lists
every one)."""


def unlabelled_text(verdicts: int, trials: int, *, judged: bool) -> str | None:
    """The line on judge verdicts whose criterion text the calibration never labelled, in every report.

    The full and short Markdown, the HTML report and the viewer's run summary all show this text.

    Args:
        verdicts: Such verdicts over the run (:attr:`~judgekit.reports.run_model.RunInfo.
            unlabelled_verdicts`), >= 0.
        trials: Trials with at least one (``trials_with_unlabelled``), >= 0.
        judged: Whether a judge graded the run (a judge fingerprint was recorded).

    Returns:
        ``Judge verdicts on criterion texts never labelled in calibration: <verdicts> in <trials>
        trial(s)``, or ``None`` for a run without a judge layer and without such a verdict (nothing to say).
    """
    if not judged and not verdicts:
        return None
    return f"Judge verdicts on criterion texts never labelled in calibration: {verdicts} in {trials} trial(s)"


def run_unlabelled_text(report: RunReport) -> str | None:
    """:func:`unlabelled_text` for a run report (``None`` without a judge layer)."""
    run = report.run
    return unlabelled_text(
        run.unlabelled_verdicts, run.trials_with_unlabelled, judged=bool(run.judge_fingerprints)
    )


def headline_parts(report: RunReport) -> tuple[str, str] | None:
    """The headline as ``(verdict, figures)``: its first sentence and the rest; ``None`` without one."""
    h = report.headline
    if h is None:
        return None
    return h.verdict, h.text[len(h.verdict) :].lstrip(". ")


def headline_markdown(report: RunReport) -> list[str]:
    """The headline as a Markdown paragraph: the verdict in bold, then the figures."""
    parts = headline_parts(report)
    if parts is None:
        return []
    return [f"**{md_text(parts[0])}.** {md_text(parts[1])}", ""]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def reason_groups(
    report: RunReport, limit: int | None = None
) -> list[tuple[str, Verdict, TrialReason, tuple[int, ...]]]:
    """The trials that did not pass, grouped by case, verdict and reason: ``(case, verdict, first, trials)``.

    In the report's order (failed first, then by case and first trial); the trials of one case with the
    same reason (the same gates with the same evidence) are one group, shown by its first trial's
    :class:`~judgekit.reports.run_model.TrialReason`, so a case failing eight trials the same way takes
    one row and trials of one case that failed differently take a row each.

    Args:
        report: The report.
        limit: The first this many groups only (``None``: every one). Only the reasons of the trials in
            the first ``limit`` blocks are made, a block being a case's failed trials or its undecided
            ones: each block is together in the report's order (failed first, then by case and trial),
            makes at least one group, and holds every trial of its groups (a case's undecided trials of
            different verdicts may alternate within it), so the first ``limit`` groups are all the
            first blocks', whole.
    """
    reasons = report.trial_reasons
    end = len(reasons)
    if limit is not None:
        blocks = 0
        last: tuple[str, bool] | None = None
        for index, (case, _, verdict) in enumerate(reasons.outline()):
            block = (case, verdict is Verdict.FAIL)
            if block != last:
                if blocks == limit:
                    end = index
                    break
                blocks, last = blocks + 1, block
    groups: dict[tuple[str, Verdict, str], list[TrialReason]] = {}
    for r in reasons[:end]:
        groups.setdefault((r.case_id, r.verdict, r.reason), []).append(r)
    made = [(case, verdict, rs[0], tuple(r.trial for r in rs)) for (case, verdict, _), rs in groups.items()]
    return made if limit is None else made[:limit]


def _trial_list(trials: Sequence[int]) -> str:
    return ", ".join(str(t) for t in trials[:8]) + (f", ... ({len(trials)})" if len(trials) > 8 else "")


ReasonRow = tuple[str, str, str, tuple[str, ...]]
"""One row of the trial-reasons table: case, trials, verdict, and the reason's parts, one per line (the
contract's reason when it gave the verdict, then each gate that did not pass with its evidence)."""


def _short_parts(parts: Sequence[str]) -> tuple[str, ...]:
    """A reason's parts for the short Markdown: the first :data:`SHORT_PARTS_SHOWN`, each clipped."""
    shown = parts[:SHORT_PARTS_SHOWN]
    each = max(SHORT_PART_MIN, min(SHORT_REASON_WIDTH, SHORT_CELL_WIDTH // max(len(shown), 1)))
    clipped = [_clip(part, each) for part in shown]
    if len(parts) > len(shown):
        clipped.append(f"and {len(parts) - len(shown)} more gate(s) that did not pass: see the full report")
    return tuple(clipped)


def reason_rows(report: RunReport, limit: int, *, short: bool = False) -> tuple[list[ReasonRow], int]:
    """The first ``limit`` reason groups as rows (:data:`ReasonRow`): every gate of each, with its evidence.

    Args:
        report: The report.
        limit: Most rows.
        short: Clip for the short Markdown: at most :data:`SHORT_PARTS_SHOWN` parts per row (the rest
            counted), each within its share of :data:`SHORT_CELL_WIDTH`. Case ids are clipped to 80
            characters either way.

    Returns:
        ``(rows, trials_shown)``: the rows, and how many trials they cover.
    """
    groups = reason_groups(report, limit)
    rows = [
        (
            _clip(case, 80),
            _trial_list(trials),
            _STATE_LABELS[verdict],
            _short_parts(first.parts()) if short else first.parts(),
        )
        for case, verdict, first, trials in groups
    ]
    return rows, sum(len(g[3]) for g in groups)


REASON_HEADER = ("case", "trials", "verdict", "why (every gate that did not pass, with its evidence)")
"""The trial-reasons table's columns, the same in Markdown and HTML."""

REASONS_INTRO = (
    "Each trial that did not pass, with every gate that did not pass and what its own evidence shows "
    "(and the grading contract's reason for an undecided trial), most severe first; failed trials first, "
    "a case's trials that failed the same way in one row. Each failed gate fails its trial by itself, so "
    "every one decided the verdict; a gate marked 'did not decide' (an error beside a failure, an untrusted "
    "judge's withheld answer) did not."
)
"""The sentence above the trial-reasons table, the same in Markdown and HTML."""


def reasons_more_text(report: RunReport, shown: int, where: str) -> str:
    """``And 27 more trial(s) that did not pass: <where>.``, or ``""`` when every trial is shown.

    Args:
        report: The report.
        shown: How many trials (not rows) the listing covered.
        where: Where the rest is.
    """
    rest = len(report.trial_reasons) - shown
    return f"And {rest} more trial(s) that did not pass: {where}." if rest > 0 else ""


def _reasons_section(report: RunReport) -> list[str]:
    out = ["## Why trials did not pass", ""]
    if not report.trial_reasons:
        return [*out, "Every trial passed." if report.run.trials else "No trials to report.", ""]
    out.append(REASONS_INTRO)
    out.append("")
    rows, covered = reason_rows(report, REASONS_SHOWN)
    out.extend(_table(REASON_HEADER, _reason_cells(rows)))
    more = reasons_more_text(report, covered, "the HTML report and `--format json` list every one")
    if more:
        out += ["", more]
    out.append("")
    return out


def _reason_cells(rows: list[ReasonRow]) -> list[list[str]]:
    """Reason rows for a Markdown table, the untrusted text (case id, a judge's words, quotes) escaped.

    Each part of the reason (the contract's, each gate's) is on its own line (``<br>``, a line break in a
    table cell).
    """
    return [
        [md_text(case), trials, verdict, "<br>".join(md_text(part) for part in parts)]
        for case, trials, verdict, parts in rows
    ]


SHORT_SUITE_HEADER = ("suite", "tasks", "trials", "failed", "undecided", "pass^1 [95%]")
"""The short Markdown's suite columns (then pass^k at the report's largest k)."""


def render_short_markdown(report: RunReport, *, top: int = SHORT_TOP, link: str | None = None) -> str:
    """The run report as a pull-request comment: the headline, the suites, the top reasons and a link.

    Its size is bounded whatever the run's size (``top`` reasons of at most :data:`SHORT_REASON_WIDTH`
    characters, case ids of at most 80), far below a code host's comment limit (GitHub's is 65,536
    characters) for ``top`` up to 100.

    Args:
        report: The run report.
        top: How many rows of reasons (a case's trials failing the same way share a row), ``>= 0``;
            failed trials first.
        link: Where the full report is (a URL or path), linked at the end; ``None`` for no link.

    Returns:
        Markdown text.
    """
    run = report.run
    out = [f"### judgekit: {md_text(run.file)}", ""]
    out.extend(headline_markdown(report))
    unlabelled = run_unlabelled_text(report)
    if unlabelled is not None:
        out += [unlabelled, ""]
    if report.suites:
        out.extend(
            _table(
                [
                    "suite",
                    "tasks",
                    "trials",
                    "failed",
                    "undecided",
                    "pass^1 [95%]",
                    f"pass^{report.k_max} [95%]",
                ],
                (
                    [
                        md_text(g.name),
                        str(g.tasks),
                        str(g.trials),
                        str(g.verdicts.get(Verdict.FAIL, 0)),
                        str(g.undecided_trials),
                        fmt_k_ci(g.pass_hat[0]) if g.pass_hat else "n/a",
                        fmt_k_ci(g.pass_hat[-1]) if g.pass_hat else "n/a",
                    ]
                    for g in report.suites
                ),
            )
        )
        out.append("")
    covered = 0
    if report.trial_reasons and top > 0:
        rows, covered = reason_rows(report, top, short=True)
        out.append(f"**Why trials did not pass** ({covered} of {len(report.trial_reasons)}, failed first):")
        out.append("")
        out.extend(_table(REASON_HEADER, _reason_cells(rows)))
        out.append("")
    more = reasons_more_text(report, covered, "see the full report")
    if more:
        out += [more, ""]
    if report.problems:
        out += [f"{len(report.problems)} input problem(s): see the full report.", ""]
    if link:
        out += [f"Full report: {link}", ""]
    return "\n".join(out)


def render_run_markdown(report: RunReport) -> str:
    """Render a run report as Markdown."""
    run = report.run
    out = [f"# Run report: {md_text(run.file)}", ""]
    out.extend(headline_markdown(report))
    meta = [
        f"- Run: {_names(run.run_ids, 'n/a')}",
        f"- Tasks: {run.tasks}; trials: {run.trials} "
        f"({run.trials_per_task[0]}–{run.trials_per_task[1]} per task)",
        f"- Agent model: {_names(run.agent_models, 'not recorded')}",
        f"- App version: {_names(run.app_versions, 'not recorded')}",
        f"- judgekit: {_names(run.judgekit_versions, 'n/a')}",
        f"- Judge fingerprints: {len(run.judge_fingerprints) or 'none (no judge layer)'}",
    ]
    if run.cost_usd is not None:
        meta.append(f"- Judge cost: {run_cost_text(report, text=md_text)}")
    meta.append(
        f"- Verdicts resting on untrusted judges: {run.untrusted_verdicts} in {run.trials_with_untrusted} "
        f"trial(s) (untrusted policy: {_names(run.untrusted_policies, 'n/a')})"
    )
    unlabelled = run_unlabelled_text(report)
    if unlabelled is not None:
        meta.append(f"- {unlabelled}")
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
        out.extend(f"- {md_text(p)}" for p in report.problems)
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
    out.extend(_reasons_section(report))
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
                        md_text(f.category),
                        str(f.failed_checks),
                        str(f.trials),
                        str(f.tasks),
                        _names(f.example_tasks, ""),
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
        # The advice names releases (agent models, app versions) and case ids: the whole line is escaped.
        out.append("- " + md_text(line[2:]) if line.startswith("- ") else md_text(line))
    out.append("")
    out.extend(_notes_section(report.notes))
    return "\n".join(out)


def fmt_usd(usd: float | None, unpriced: int) -> str:
    """A cost for people: ``$0.001260``, or ``unknown (N unpriced)`` (never a fake $0)."""
    return f"unknown ({unpriced} unpriced)" if usd is None or unpriced else f"${usd:.6f}"


def tokens_in(row: CostRow) -> str:
    """A cost row's prompt tokens, with how many the provider read from its prompt cache when it said.

    Examples:
        >>> tokens_in(CostRow(key="run", prompt_tokens=1200))
        '1200'
        >>> tokens_in(CostRow(key="run", prompt_tokens=1200, cached_tokens=1024))
        '1200 (1024 cached)'
    """
    return (
        f"{row.prompt_tokens} ({row.cached_tokens} cached)" if row.cached_tokens else str(row.prompt_tokens)
    )


def _cache_text(total: CostRow | None) -> str:
    """``; 1024 of 1200 prompt tokens (85%) read from the provider's prompt cache``, or ``""``."""
    if total is None or not total.cached_tokens or not total.prompt_tokens:
        return ""
    share = 100 * total.cached_tokens / total.prompt_tokens
    return (
        f"; {total.cached_tokens} of {total.prompt_tokens} prompt tokens ({share:.0f}%) read from the "
        "provider's prompt cache"
    )


def run_cost_text(report: RunReport, *, text: Callable[[str], str] = str) -> str:
    """The run's judge cost line: dollars, or unknown with how many trials and why.

    Args:
        report: The report.
        text: How the reason (it may quote a provider or a results line) is written: ``md_text`` for
            Markdown; as it is by default (HTML escapes it in its template).
    """
    run = report.run
    total = report.cost.run if report.cost is not None else None
    if not run.cost_unpriced_trials and (total is None or not total.unpriced):
        detail = (
            [f"{total.judgments} judgments, {total.replayed} replies replayed"]
            if total and total.replayed
            else []
        )
        cache = _cache_text(total)
        return f"${run.cost_usd or 0.0:.6f}" + (f" ({'; '.join(detail)})" if detail else "") + cache
    unpriced = total.unpriced if total is not None else 0
    reason = (report.cost.unknown_reason if report.cost is not None else None) or run.cost_unknown_reason
    judgments = total.judgments if total is not None else 0
    priced = f"; ${run.cost_usd or 0.0:.6f} for the priced ones" if unpriced < judgments else ""
    return (
        f"unknown ({unpriced} of {judgments} judgments unpriced, in "
        f"{run.cost_unpriced_trials} of {run.trials} trials: {text(str(reason))}){priced}{_cache_text(total)}"
    )


COST_HEADER = ("case / criterion", "judgments", "tokens in", "tokens out", "cost")
"""The judge-cost tables' columns, the same in Markdown and HTML."""


COST_CASES_SHOWN = REASONS_SHOWN
"""Cases listed in the full Markdown report's judge-cost table, the costliest when there are more (the HTML
lists :data:`COST_CASES_SHOWN_HTML`, the JSON every one)."""

COST_CASES_SHOWN_HTML = REASONS_SHOWN_HTML
"""Cases listed in the HTML report's judge-cost table, the costliest when there are more (the JSON lists
every one)."""


def _costliest_first(row: CostRow) -> tuple[float, int, str]:
    """A case's sort key, costliest first: priced dollars, then tokens, both descending; then its id."""
    return (-row.known_usd, -(row.prompt_tokens + row.completion_tokens), row.key)


def cost_rows(report: RunReport, by: str, shown: int | None = None) -> list[list[str]]:
    """The judge-cost table's rows, ``by`` ``"case"`` or ``"criterion"``, then the run total.

    Args:
        report: The report.
        by: ``"case"`` or ``"criterion"``.
        shown: At most this many cases (``None``: every one). A run with more cases lists its ``shown``
            costliest (by priced dollars, then tokens, then case id), costliest first; otherwise every case
            in id order. Criteria are always listed whole (a run has few).

    Returns:
        One row of cells per case or criterion, then the run total's; ``[]`` when the report has no cost.
    """
    if report.cost is None:
        return []
    rows = report.cost.cases if by == "case" else report.cost.criteria
    if by == "case" and shown is not None and len(rows) > shown:
        rows = tuple(heapq.nsmallest(shown, rows, key=_costliest_first))
    return [
        [r.key, str(r.judgments), tokens_in(r), str(r.completion_tokens), fmt_usd(r.usd, r.unpriced)]
        for r in (*rows, report.cost.run.model_copy(update={"key": "total"}))
    ]


def cost_cases_text(report: RunReport, shown: int, where: str) -> str:
    """What the per-case cost table leaves out, when it lists fewer than the run's cases; else ``""``.

    Args:
        report: The report.
        shown: The cases the table lists at most (as given to :func:`cost_rows`).
        where: Where every case is listed.

    Returns:
        ``The N costliest of M cases, costliest first; <where>.``, or ``""`` when every case is listed.
    """
    cases = len(report.cost.cases) if report.cost is not None else 0
    if cases <= shown:
        return ""
    return f"The {shown} costliest of {cases} cases, costliest first; {where}."


def _cost_section(report: RunReport) -> list[str]:
    if report.cost is None:
        return []
    out = ["## Judge cost", ""]
    if report.cost.unknown_reason is not None:
        out += [f"Unpriced judgments: {md_text(report.cost.unknown_reason)}.", ""]
    for by, title in (("case", "Per case"), ("criterion", "Per criterion")):
        out += [f"### {title}", ""]
        if by == "case" and (
            part := cost_cases_text(
                report, COST_CASES_SHOWN, "the HTML report and `--format json` list every one"
            )
        ):
            out += [part, ""]
        rows = cost_rows(report, by, COST_CASES_SHOWN)
        out.extend(_table(COST_HEADER, ([md_text(key), *rest] for key, *rest in rows)))
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
    out.extend(
        _table(
            CORRECTED_HEADER,
            (
                [md_text(criterion), md_text(judge), *figures, md_text(note)]
                for criterion, judge, *figures, note in corrected_rows(report)
            ),
        )
    )
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
                    md_text(r.case_id),
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


TRIAL_CHANGES_HEADER = ("task", "task's change", "trials fixed (fail → pass)", "trials broken (pass → fail)")
"""The columns of a comparison's flipped trials, per task (:meth:`Comparison.trials_by_task`), in Markdown
and HTML."""


def _trial_numbers(trials: Sequence[int]) -> str:
    """Every trial number, comma-separated (a comparison names each flipped trial), or ``none``."""
    return ", ".join(map(str, trials)) or "none"


def render_comparison_markdown(comparison: Comparison) -> str:
    """Render a run comparison as Markdown."""
    c = comparison
    a, b = md_text(c.a), md_text(c.b)
    out = [f"# Comparison: {b} against {a}", "", f"**Verdict: {c.verdict}.** {c.explanation}.", ""]
    out.extend(
        _table(
            ["", "value"],
            [
                ["tasks compared", str(c.tasks_compared)],
                ["fixed (fail → pass)", str(c.fixed)],
                ["broken (pass → fail)", str(c.broken)],
                [CHANGE_WORDS["still_pass"], str(c.unchanged_pass)],
                [CHANGE_WORDS["still_fail"], str(c.unchanged_fail)],
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
        out.extend(
            _table(
                ["task", "change", a, b],
                ([md_text(t.case_id), CHANGE_WORDS[t.change], t.a, t.b] for t in c.changes),
            )
        )
        out.append("")
    if c.trial_changes:
        out.extend(["## Trials that changed", ""])
        rows = (
            [md_text(case), CHANGE_WORDS[change], _trial_numbers(fixed), _trial_numbers(broken)]
            for case, change, fixed, broken in c.trials_by_task()
        )
        out.extend([*_table(TRIAL_CHANGES_HEADER, rows), ""])
    if c.only_in_a or c.only_in_b:
        out.append("## Tasks in one run only")
        out.append("")
        if c.only_in_a:
            out.append(f"- only in {a}: {_names(c.only_in_a, '')}")
        if c.only_in_b:
            out.append(f"- only in {b}: {_names(c.only_in_b, '')}")
        out.append("")
    out.extend(_notes_section(c.notes))
    return "\n".join(out)

"""Self-contained HTML rendering of a run report, with an inline SVG pass^k curve.

The page has no external fetch of any kind: styles are inline, the chart is inline SVG drawn here, and no
script, font, image or stylesheet is linked. Text from results (case ids, notes) is escaped by Jinja2's
autoescaping.
"""

from __future__ import annotations

from dataclasses import dataclass

from judgekit.reports.jinja import template_environment
from judgekit.reports.retirement import retirement_lines
from judgekit.reports.run_markdown import (
    CORRECTED_HEADER,
    COST_CASES_SHOWN_HTML,
    COST_HEADER,
    K_HEADER,
    REASON_HEADER,
    REASONS_INTRO,
    REASONS_SHOWN_HTML,
    corrected_rows,
    cost_cases_text,
    cost_rows,
    counted_label,
    fmt_ci,
    fmt_interval,
    fmt_k,
    fmt_rate,
    headline_parts,
    policy_text,
    reason_rows,
    reasons_more_text,
    run_cost_text,
    run_unlabelled_text,
    too_few_text,
    undecided_case_rows,
)
from judgekit.reports.run_model import GroupSummary, KPoint, RunReport
from judgekit.verdict import Verdict

__all__ = ["render_run_html", "svg_pass_k_curve"]

_COLOURS = ("#1f5fa8", "#b8461b", "#2e7d32", "#6a1b9a")


@dataclass(frozen=True)
class _Series:
    label: str
    colour: str
    dashed: bool
    points: tuple[KPoint, ...]


def _series(suites: tuple[GroupSummary, ...]) -> list[_Series]:
    out: list[_Series] = []
    for i, suite in enumerate(suites):
        colour = _COLOURS[i % len(_COLOURS)]
        hat = tuple(p for p in suite.pass_hat if p.value is not None)
        at = tuple(p for p in suite.pass_at if p.value is not None)
        out.append(_Series(f"{suite.name} pass^k", colour, False, hat))
        out.append(_Series(f"{suite.name} pass@k", colour, True, at))
    return out


def _point_title(series: _Series, p: KPoint) -> str:
    ci = f" [{p.ci_low:.3f}, {p.ci_high:.3f}]" if p.ci_low is not None and p.ci_high is not None else ""
    left_out = (
        f"; {p.tasks_excluded} task(s) with fewer than {p.k} trials left out" if p.tasks_excluded else ""
    )
    return f"{series.label} at k={p.k}: {p.value:.3f}{ci} over {p.tasks_used} task(s){left_out}"


def svg_pass_k_curve(report: RunReport, *, width: int = 760, height: int = 380) -> str:
    """An inline SVG chart of pass^k (solid, with 95 % interval bars) and pass@k (dashed) against k.

    One colour per suite. Each pass^k series ends with its value written beside the last point; under the
    k axis each suite's row gives the tasks counted at that k (fewer where tasks had too few trials).

    Returns:
        The ``<svg>`` element as text (empty chart with a message when there is nothing to draw).
    """
    rows = max(len(report.suites), 1)
    left, right, top, bottom = 56, 190, 16, 44 + 14 * rows
    plot_w, plot_h = width - left - right, height - top - bottom
    k_max = max(report.k_max, 1)

    def x(k: int) -> float:
        return left + (plot_w * (k - 1) / (k_max - 1) if k_max > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h * (1.0 - v)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        "<title>pass^k and pass@k against k</title>",
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        ty = y(tick)
        parts.append(
            f'<line x1="{left}" y1="{ty:.1f}" x2="{left + plot_w}" y2="{ty:.1f}" '
            'stroke="#ddd" stroke-width="1"/>'
        )
        parts.append(f'<text x="{left - 6}" y="{ty + 4:.1f}" text-anchor="end">{tick:.2f}</text>')
    for k in range(1, k_max + 1):
        parts.append(
            f'<text x="{x(k):.1f}" y="{top + plot_h + 16}" text-anchor="middle" font-weight="bold">{k}</text>'
        )
    for row, suite in enumerate(report.suites):
        ry = top + plot_h + 30 + 14 * row
        parts.append(
            f'<text x="{left - 6}" y="{ry}" text-anchor="end" fill="#555">{_xml(suite.name)} n</text>'
        )
        for p in suite.pass_hat:
            fill = "#b3261e" if p.tasks_excluded else "#555"
            parts.append(
                f'<text x="{x(p.k):.1f}" y="{ry}" text-anchor="middle" fill="{fill}">{p.tasks_used}</text>'
            )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle">'
        "k (trials that must all pass); n: tasks counted at k (red: some had too few trials)</text>"
    )
    series = _series(report.suites)
    drawn = 0
    for s in series:
        if not s.points:
            continue
        drawn += 1
        coords = " ".join(f"{x(p.k):.1f},{y(p.value or 0.0):.1f}" for p in s.points)
        dash = ' stroke-dasharray="5 4"' if s.dashed else ""
        width_px = 1.5 if s.dashed else 2.5
        parts.append(
            f'<polyline fill="none" stroke="{s.colour}" stroke-width="{width_px}"{dash} points="{coords}"/>'
        )
        for p in s.points:
            v = p.value or 0.0
            if not s.dashed and p.ci_low is not None and p.ci_high is not None:
                parts.append(
                    f'<line x1="{x(p.k):.1f}" y1="{y(p.ci_low):.1f}" x2="{x(p.k):.1f}" '
                    f'y2="{y(p.ci_high):.1f}" stroke="{s.colour}" stroke-width="1" opacity="0.6"/>'
                )
            parts.append(
                f'<circle cx="{x(p.k):.1f}" cy="{y(v):.1f}" r="{2.5 if s.dashed else 3.5}" fill="{s.colour}">'
                f"<title>{_xml(_point_title(s, p))}</title></circle>"
            )
        if not s.dashed:
            last = s.points[-1]
            parts.append(
                f'<text x="{x(last.k) + 8:.1f}" y="{y(last.value or 0.0) + 4:.1f}" fill="{s.colour}" '
                f'font-weight="bold">{last.value or 0.0:.2f}</text>'
            )
    for i, s in enumerate(series):
        ly = top + 14 + i * 16
        dash = ' stroke-dasharray="5 4"' if s.dashed else ""
        parts.append(
            f'<line x1="{left + plot_w + 12}" y1="{ly - 4}" x2="{left + plot_w + 32}" y2="{ly - 4}" '
            f'stroke="{s.colour}" stroke-width="2"{dash}/>'
        )
        parts.append(f'<text x="{left + plot_w + 36}" y="{ly}">{_xml(s.label)}</text>')
    if not drawn:
        parts.append(
            f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h / 2:.1f}" '
            'text-anchor="middle">no data</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Plain lines as HTML blocks: ``("p", [text])`` per paragraph, ``("ul", items)`` per list."""
    blocks: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("- "):
            if not blocks or blocks[-1][0] != "ul":
                blocks.append(("ul", []))
            blocks[-1][1].append(line[2:])
        elif line:
            blocks.append(("p", [line]))
    return blocks


def render_run_html(report: RunReport) -> str:
    """Render a run report as one self-contained HTML page.

    The page states the undecided policy in force and lists the cases with undecided trials (the first
    :data:`~judgekit.reports.run_markdown.UNDECIDED_CASES_SHOWN`, with a count of the rest).
    """
    from markupsafe import Markup

    env = template_environment()
    env.filters["rate"] = fmt_rate
    env.filters["interval"] = fmt_interval
    env.filters["kpoint"] = fmt_k
    env.filters["ci"] = fmt_ci
    template = env.get_template("run_report.html.j2")
    shown, more_cases, more_trials = undecided_case_rows(report)
    reasons, covered = reason_rows(report, REASONS_SHOWN_HTML)
    parts = headline_parts(report)
    return template.render(
        report=report,
        headline_rest=parts[1] if parts is not None else "",
        reason_header=REASON_HEADER,
        reasons_intro=REASONS_INTRO,
        reason_rows=reasons,
        reasons_more=reasons_more_text(report, covered, "the JSON report (--format json) lists every one"),
        k_header=K_HEADER,
        too_few=too_few_text,
        corrected_header=CORRECTED_HEADER,
        corrected_rows=corrected_rows(report),
        cost_header=COST_HEADER,
        cost_by_case=cost_rows(report, "case", COST_CASES_SHOWN_HTML),
        cost_cases_more=cost_cases_text(
            report, COST_CASES_SHOWN_HTML, "the JSON report (--format json) lists every one"
        ),
        cost_by_criterion=cost_rows(report, "criterion"),
        run_cost=run_cost_text(report) if report.run.cost_usd is not None else None,
        unlabelled=run_unlabelled_text(report),
        retirement=_blocks(retirement_lines(report.retirement)),
        undecided_trials=sum(r.undecided for r in report.undecided_cases),
        undecided_shown=shown,
        undecided_more_cases=more_cases,
        undecided_more_trials=more_trials,
        policy_text=policy_text(report.undecided_policy),
        counted=counted_label(report.undecided_policy),
        states=list(Verdict),
        state_labels={
            Verdict.PASS: "pass",
            Verdict.FAIL: "fail",
            Verdict.INSUFFICIENT_INFORMATION: "insufficient info",
            Verdict.ERROR: "error",
            Verdict.NOT_EVALUATED: "not evaluated",
        },
        chart=Markup(svg_pass_k_curve(report)),  # built here from numbers and escaped labels
        group_sets=[
            ("By slice", "slice", report.slices),
            ("By category", "category", report.categories),
            ("By severity", "severity", report.severities),
        ],
    )

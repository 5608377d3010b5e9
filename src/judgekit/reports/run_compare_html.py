"""Self-contained HTML rendering of a run comparison, with inline SVG figures.

The page links, loads and runs nothing: styles are inline and the two figures (task outcomes of the
baseline against the new version, and the share of decided tasks passing in each) are inline SVG drawn
here from the :class:`~judgekit.reports.run_compare.Comparison`. Text from results is escaped by
Jinja2's autoescaping, and by :func:`_xml` inside the SVG.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgekit.reports.jinja import template_environment
from judgekit.reports.run_compare import CHANGE_WORDS, Comparison
from judgekit.reports.run_markdown import TRIAL_CHANGES_HEADER, fmt_interval

__all__ = ["render_comparison_html", "svg_outcomes", "svg_pass_rates"]

_OUTCOMES = (
    (CHANGE_WORDS["fixed"], "#2e7d32"),
    (CHANGE_WORDS["broken"], "#b3261e"),
    (CHANGE_WORDS["still_pass"], "#8fb3de"),
    (CHANGE_WORDS["still_fail"], "#e0a39a"),
    (CHANGE_WORDS["undecided"], "#c9a227"),
)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def svg_outcomes(comparison: Comparison, *, width: int = 560) -> str:
    """A bar per task outcome (fixed, broken, still passing, still failing, undecided) with its count."""
    counts = (
        comparison.fixed,
        comparison.broken,
        comparison.unchanged_pass,
        comparison.unchanged_fail,
        comparison.undecided,
    )
    left, top, row_h, right = 90, 28, 26, 50
    plot_w = width - left - right
    height = top + row_h * len(counts) + 12
    largest = max(*counts, 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12" '
        f'aria-label="task outcomes, {_xml(comparison.a)} to {_xml(comparison.b)}">',
        f"<title>Task outcomes from {_xml(comparison.a)} to {_xml(comparison.b)}</title>",
        '<text x="4" y="16" font-weight="bold">'
        f"Tasks by outcome ({comparison.tasks_compared} compared)</text>",
    ]
    for i, ((label, colour), count) in enumerate(zip(_OUTCOMES, counts, strict=True)):
        y = top + i * row_h
        w = plot_w * count / largest
        parts.append(f'<text x="{left - 6}" y="{y + 16}" text-anchor="end">{label}</text>')
        parts.append(f'<rect x="{left}" y="{y + 3}" width="{w:.1f}" height="{row_h - 8}" fill="{colour}"/>')
        parts.append(f'<text x="{left + w + 6:.1f}" y="{y + 16}">{count}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_pass_rates(comparison: Comparison, *, width: int = 560) -> str:
    """The share of decided tasks passing every trial in each run, as two bars on a 0-1 axis."""
    left, top, row_h, right = 150, 28, 30, 60
    plot_w = width - left - right
    rows: Sequence[tuple[str, float | None]] = (
        (comparison.a, comparison.pass_rate_a),
        (comparison.b, comparison.pass_rate_b),
    )
    height = top + row_h * len(rows) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12" '
        'aria-label="share of decided tasks passing">',
        "<title>Share of decided tasks passing every trial</title>",
        '<text x="4" y="16" font-weight="bold">Share of decided tasks passing every trial</text>',
    ]
    for i, (name, rate) in enumerate(rows):
        y = top + i * row_h
        parts.append(f'<text x="{left - 6}" y="{y + 18}" text-anchor="end">{_xml(name)}</text>')
        if rate is None:
            parts.append(f'<text x="{left + 4}" y="{y + 18}" fill="#a00">undefined (no decided task)</text>')
            continue
        w = plot_w * rate
        colour = "#8fb3de" if i == 0 else "#1f5fa8"
        parts.append(f'<rect x="{left}" y="{y + 4}" width="{w:.1f}" height="{row_h - 10}" fill="{colour}"/>')
        parts.append(f'<text x="{left + w + 6:.1f}" y="{y + 18}">{rate:.3f}</text>')
    axis_y = top + row_h * len(rows) + 4
    parts.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#444"/>')
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        tx = left + plot_w * tick
        parts.append(f'<line x1="{tx:.1f}" y1="{axis_y}" x2="{tx:.1f}" y2="{axis_y + 4}" stroke="#444"/>')
        parts.append(f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle">{tick:.2f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_comparison_html(comparison: Comparison, *, notes: Sequence[str] = ()) -> str:
    """Render a run comparison as one self-contained HTML page.

    Args:
        comparison: The comparison of run B against run A.
        notes: Extra notes shown first (for example that the data are synthetic).
    """
    from markupsafe import Markup

    env = template_environment()
    env.filters["interval"] = fmt_interval
    env.filters["change_words"] = CHANGE_WORDS.__getitem__
    template = env.get_template("run_comparison.html.j2")
    return template.render(
        cmp=comparison,
        notes=[*notes, *comparison.notes],
        outcomes=Markup(svg_outcomes(comparison)),  # built here from numbers and escaped labels
        rates=Markup(svg_pass_rates(comparison)),
        trial_header=TRIAL_CHANGES_HEADER,
        trial_rows=comparison.trials_by_task(),
    )

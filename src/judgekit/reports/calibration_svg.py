"""Inline SVG figures for calibration reports: confusion matrices and metric intervals.

The figures are plain SVG text (no scripts, nothing fetched) built from report models; every label is
escaped, so a rater named ``<script>`` stays text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import escape

from judgekit.calibration.agreement import ConfusionMatrix
from judgekit.stats import Estimate

__all__ = ["IntervalRow", "confusion_svg", "intervals_svg"]


def _t(value: object) -> str:
    return str(escape(str(value)))


def confusion_svg(matrix: ConfusionMatrix, *, title: str = "") -> str:
    """A confusion matrix as a heat map: rows are the reference, columns the rated rater.

    Cell shade is the count's share of its row (darker is larger); each cell shows the count.
    """
    labels = matrix.labels
    k = len(labels)
    cell = 64
    left, top = 150, 70
    width = left + k * cell + 20
    height = top + k * cell + 40
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_t(title or "confusion matrix")}" '
        'font-family="sans-serif" font-size="12">'
    ]
    if title:
        parts.append(f'<text x="4" y="16" font-weight="bold">{_t(title)}</text>')
    parts.append(
        f'<text x="{left + k * cell / 2}" y="36" text-anchor="middle">{_t(matrix.rated)} (columns)</text>'
    )
    parts.append(f'<text x="4" y="{top - 6}" font-style="italic">{_t(matrix.reference)} (rows)</text>')
    for j, lab in enumerate(labels):
        parts.append(
            f'<text x="{left + j * cell + cell / 2}" y="{top - 8}" text-anchor="middle">'
            f"{_t(_short(lab))}</text>"
        )
    for i, row in enumerate(matrix.counts):
        total = sum(row)
        y = top + i * cell
        parts.append(
            f'<text x="{left - 6}" y="{y + cell / 2 + 4}" text-anchor="end">{_t(_short(labels[i]))}</text>'
        )
        for j, count in enumerate(row):
            share = count / total if total else 0.0
            shade = round(245 - share * 185)
            fill = f"rgb({shade},{shade},{min(255, shade + 30)})"
            colour = "#fff" if share > 0.55 else "#000"
            x = left + j * cell
            stroke = ' stroke="#222" stroke-width="2"' if i == j else ' stroke="#bbb"'
            parts.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}"{stroke}/>')
            parts.append(
                f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" text-anchor="middle" fill="{colour}">'
                f"{count}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _short(label: str) -> str:
    return "insuff. info" if label == "insufficient_information" else label


@dataclass(frozen=True)
class IntervalRow:
    """One row of an interval plot: a named estimate and an optional threshold to mark."""

    name: str
    estimate: Estimate
    threshold: float | None = None


def intervals_svg(rows: Sequence[IntervalRow], *, title: str = "", zero_line: bool = False) -> str:
    """Point values with their intervals on a shared axis (a forest plot).

    Undefined estimates are listed with the word "undefined" instead of a mark; thresholds are red ticks.
    """
    left, right, top, row_h = 230, 30, 40, 24
    plot_w = 420
    values: list[float] = [0.0, 1.0]
    for r in rows:
        e = r.estimate
        if e.value is not None:
            values.append(e.value)
        if e.interval is not None:
            values += [e.interval.low, e.interval.high]
        if r.threshold is not None:
            values.append(r.threshold)
    lo, hi = min(values), max(values)
    if zero_line:
        bound = max(abs(lo), abs(hi), 0.05)
        lo, hi = -bound, bound
    span = hi - lo or 1.0

    def x(v: float) -> float:
        return left + (v - lo) / span * plot_w

    height = top + row_h * len(rows) + 40
    width = left + plot_w + right
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_t(title or "metric intervals")}" '
        'font-family="sans-serif" font-size="12">'
    ]
    if title:
        parts.append(f'<text x="4" y="16" font-weight="bold">{_t(title)}</text>')
    axis_y = top + row_h * len(rows) + 6
    parts.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#444"/>')
    ticks = [lo + span * k / 4 for k in range(5)]
    for tv in ticks:
        parts.append(
            f'<line x1="{x(tv):.1f}" y1="{axis_y}" x2="{x(tv):.1f}" y2="{axis_y + 4}" stroke="#444"/>'
        )
        parts.append(f'<text x="{x(tv):.1f}" y="{axis_y + 16}" text-anchor="middle">{tv:.2f}</text>')
    if zero_line or lo < 0 < hi:
        parts.append(
            f'<line x1="{x(0):.1f}" y1="{top - 4}" x2="{x(0):.1f}" y2="{axis_y}" stroke="#999" '
            'stroke-dasharray="3,3"/>'
        )
    for i, r in enumerate(rows):
        cy = top + i * row_h + row_h / 2
        parts.append(f'<text x="{left - 8}" y="{cy + 4}" text-anchor="end">{_t(r.name)}</text>')
        e = r.estimate
        if r.threshold is not None:
            tx = x(r.threshold)
            parts.append(
                f'<line x1="{tx:.1f}" y1="{cy - 9}" x2="{tx:.1f}" y2="{cy + 9}" '
                'stroke="#c00" stroke-width="2"/>'
            )
        if e.value is None:
            parts.append(f'<text x="{left + 4}" y="{cy + 4}" fill="#a00">undefined</text>')
            continue
        if e.interval is not None:
            parts.append(
                f'<line x1="{x(e.interval.low):.1f}" y1="{cy}" x2="{x(e.interval.high):.1f}" y2="{cy}" '
                'stroke="#1f4e9c" stroke-width="2"/>'
            )
        parts.append(f'<circle cx="{x(e.value):.1f}" cy="{cy}" r="4" fill="#1f4e9c"/>')
    parts.append("</svg>")
    return "".join(parts)

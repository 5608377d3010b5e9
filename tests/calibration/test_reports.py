"""Report formats: golden Markdown and JSON, self-contained HTML with inline SVG figures."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judgekit.calibration.gate import TrustPolicy, parse_policy
from judgekit.calibration.labels import parse_labels
from judgekit.calibration.pipeline import run_calibration
from judgekit.calibration.records import build_record
from judgekit.reports.calibration_report import (
    comparison_markdown,
    fmt_estimate,
    render_calibration,
    render_comparison,
)
from judgekit.reports.calibration_svg import IntervalRow, confusion_svg, intervals_svg

HERE = Path(__file__).parent
LABELS = HERE / "data" / "labels_small.csv"
GOLDEN = HERE / "golden"
REGEN = os.environ.get("JUDGEKIT_REGEN_GOLDEN") == "1"
POLICY = parse_policy({"min_items": 40, "bootstrap": {"resamples": 200, "seed": 0}})


@pytest.fixture(scope="module")
def result():
    table = parse_labels(LABELS.read_bytes(), source=LABELS)
    old = run_calibration(
        table,
        judge="judge-v1",
        experts=["alice", "bob", "carol"],
        policy=POLICY,
        fingerprint="fp-v1",
        label_name="labels_small.csv",
    )
    baseline = build_record(
        fingerprint="fp-v1",
        report=old.report,
        gate=old.gate,
        policy=old.policy,
        label_table=old.label_table,
        now=datetime(2026, 1, 1, tzinfo=UTC),
    )
    return run_calibration(
        table,
        judge="judge-v2",
        experts=["alice", "bob", "carol"],
        policy=POLICY,
        fingerprint="fp-v2",
        label_name="labels_small.csv",
        baseline=baseline,
    )


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGEN:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} changed; rerun with JUDGEKIT_REGEN_GOLDEN=1 and review"
    )


def test_markdown_matches_golden(result):
    check_golden("calibration.md", render_calibration(result, "md"))


def test_json_matches_golden_and_has_its_schema(result):
    text = render_calibration(result, "json")
    check_golden("calibration.json", text)
    data = json.loads(text)
    assert data["schema_version"] == "judgekit.calibration-report/1"
    assert data["gate"]["trusted"] is result.gate.trusted
    assert "NaN" not in text


def test_comparison_markdown_matches_golden(result):
    check_golden("grader-change.md", render_comparison(result.comparison, "md"))


def test_markdown_shows_verdict_every_condition_and_the_splits(result):
    md = render_calibration(result, "md")
    assert ("**Verdict: TRUSTED**" in md) is result.gate.trusted
    for c in result.gate.conditions:
        assert f"| {c.name} |" in md
    for s in result.report.splits:
        assert f"| {s.item_id} | {s.criterion} |" in md
    assert "## Grader change" in md
    assert "Exact McNemar p =" in md


def test_html_is_self_contained_with_figures(result):
    html = render_calibration(result, "html")
    assert html.startswith("<!doctype html>")
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html
    svgs = re.findall(r"<svg\b.*?</svg>", html, flags=re.S)
    # intervals + judge vs consensus + 3 experts + comparison (deltas, old, new)
    assert len(svgs) == 8
    assert "Judge vs consensus" in html
    assert "Flipped items" in html


def test_comparison_html_stands_alone(result):
    html = render_comparison(result.comparison, "html")
    assert html.startswith("<!doctype html>")
    assert len(re.findall(r"<svg\b", html)) == 3
    assert "<script" not in html.lower()


def test_names_are_escaped_in_html_and_svg(result):
    evil = "<script>alert(1)</script>"
    table = parse_labels(LABELS.read_text().replace("alice", evil).encode(), source=LABELS)
    res = run_calibration(
        table, judge="judge-v2", experts=[evil, "bob"], policy=POLICY, fingerprint=None, label_name="x.csv"
    )
    html = render_calibration(res, "html")
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_unknown_format_is_refused(result):
    with pytest.raises(ValueError, match="unknown format 'pdf'"):
        render_calibration(result, "pdf")
    with pytest.raises(ValueError, match="unknown format 'pdf'"):
        render_comparison(result.comparison, "pdf")


def test_fmt_estimate_shows_undefined_with_reason():
    from judgekit.calibration.agreement import undefined

    assert fmt_estimate(undefined("no failures")) == "undefined (no failures)"
    assert fmt_estimate(None) == "not computed"


def test_confusion_svg_counts_and_labels(result):
    svg = confusion_svg(result.report.judge_vs_consensus.confusion, title="t")
    counts = [int(x) for row in result.report.judge_vs_consensus.confusion.counts for x in row]
    texts = re.findall(r">(\d+)</text>", svg)
    assert [int(t) for t in texts] == counts
    assert "insuff. info" in svg


def test_interval_svg_marks_undefined_and_thresholds(result):
    from judgekit.calibration.agreement import undefined

    rows = [
        IntervalRow("kappa", result.report.judge_vs_consensus.kappa["none"], 0.6),
        IntervalRow("nothing", undefined("why")),
    ]
    svg = intervals_svg(rows, title="x")
    assert "undefined" in svg
    assert 'stroke="#c00"' in svg
    assert svg.count("<circle") == 1


def test_comparison_markdown_lists_every_flip(result):
    md = comparison_markdown(result.comparison)
    for f in result.comparison.flipped:
        assert f"| {f.item_id} | {f.criterion} | {f.old} | {f.new} |" in md


def test_policy_defaults_are_used_when_not_given():
    assert TrustPolicy().bootstrap.resamples == 2000


def test_every_svg_figure_is_well_formed_xml(result):
    import xml.etree.ElementTree as ET

    html = render_calibration(result, "html")
    for svg in re.findall(r"<svg\b.*?</svg>", html, flags=re.S):
        root = ET.fromstring(svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"


def scored_result(tmp_path: Path, level: str):
    from judgekit.calibration.labels import Scale

    from .test_correlation import write_table

    path = write_table(tmp_path / "coherence.csv")
    scale = Scale(name="coherence", values=("1", "2", "3", "4", "5"), level=level)
    table = parse_labels(path.read_bytes(), source=path, scale=scale)
    policy = parse_policy(
        {"min_items": 10, "bootstrap": {"resamples": 200}, "correlation": {"lower_bound": 0.6}}
    )
    return run_calibration(
        table,
        judge="judge",
        experts=["e1", "e2", "e3"],
        policy=policy,
        fingerprint="fp",
        label_name=path.name,
    )


def test_a_scored_scale_report_matches_golden_with_its_correlation_rows(tmp_path):
    check_golden("calibration-scored.md", render_calibration(scored_result(tmp_path, "interval"), "md"))


def test_every_format_shows_the_correlations_of_a_scored_scale(tmp_path):
    result = scored_result(tmp_path, "ordinal")
    md = render_calibration(result, "md")
    html = render_calibration(result, "html")
    data = json.loads(render_calibration(result, "json"))
    row = '<tr><td>judge vs the experts&#39; median</td><td class="num">20</td><td>0.879 ['
    assert row in html
    assert "<h2>Scored judges: correlations (ordinal scale)</h2>" in html
    assert "| judge vs the experts' median | 20 | 0.879 [" in md
    assert "undefined (Pearson's r needs an interval or ratio scale" in md
    assert data["correlations"]["judge_vs_consensus"]["pearson"]["value"] is None
    assert data["correlations"]["level"] == "ordinal"
    cond = next(c for c in data["gate"]["conditions"] if c["name"] == "correlation_lower_bound")
    assert cond["passed"] is True


def test_a_verdict_scale_report_has_no_correlation_section(result):
    assert "Scored judges" not in render_calibration(result, "md")
    assert "Scored judges" not in render_calibration(result, "html")
    assert json.loads(render_calibration(result, "json"))["correlations"] is None

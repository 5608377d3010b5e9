"""The comparison page and the demo's index page: figures present, untrusted text escaped."""

from __future__ import annotations

from judgekit.reports.demo_index import DemoPage, render_demo_index
from judgekit.reports.run_compare import Comparison, TaskChange
from judgekit.reports.run_compare_html import render_comparison_html, svg_outcomes, svg_pass_rates
from judgekit.reports.run_model import task_rate
from judgekit.verdict import Verdict


def _comparison(**kw) -> Comparison:
    data = {
        "a": "<b>a.jsonl",
        "b": "b.jsonl",
        "tasks_compared": 5,
        "fixed": 3,
        "broken": 1,
        "unchanged_pass": 1,
        "unchanged_fail": 0,
        "undecided": 0,
        "only_in_a": (),
        "only_in_b": (),
        "sign_test_p": 0.625,
        "trial_pairs": 5,
        "trials_fixed": 3,
        "trials_broken": 1,
        "mcnemar_p": 0.625,
        "alpha": 0.05,
        "verdict": "no detectable change",
        "explanation": "3 fixed and 1 broken",
        "pass_rate_a": 0.4,
        "pass_rate_b": None,
        "task_pass_a": task_rate([Verdict.PASS, Verdict.PASS, Verdict.FAIL, Verdict.FAIL, Verdict.FAIL]),
        "task_pass_b": task_rate([Verdict.ERROR]),
        "changes": (
            TaskChange(case_id="<script>alert(1)</script>", change="fixed", a="fail (0/1)", b="pass (1/1)"),
        ),
    }
    data.update(kw)
    return Comparison(**data)


def test_comparison_page_has_both_figures_and_escapes_text():
    html = render_comparison_html(_comparison(), notes=("note <i>",))
    assert html.count("<svg") == 2
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "note &lt;i&gt;" in html
    assert "&lt;b&gt;a.jsonl" in html
    assert "no detectable change" in html
    assert "0.400 [0.118, 0.769] (2/5)" in html
    assert "n/a (0/0); 0.000 if the undecided one fails, 1.000 if it passes" in html


def test_outcome_bars_are_proportional_and_undefined_rate_is_said():
    svg = svg_outcomes(_comparison())
    assert ">3</text>" in svg
    assert ">1</text>" in svg
    widths = [float(part.split('"')[0]) for part in svg.split('width="')[2:]]  # bars after the svg's own
    assert widths[0] == max(widths)  # fixed (3) is the longest bar
    assert widths[0] == 3 * widths[1]  # broken (1)
    rates = svg_pass_rates(_comparison())
    assert "0.400" in rates
    assert "undefined (no decided task)" in rates


def test_index_lists_pages_and_problems_escaped():
    html = render_demo_index(
        [DemoPage(title="Run <1>", href="reports/a.html", summary="s")],
        problems=["coverage gap: <x>"],
        synthetic_note="all invented",
    )
    assert '<a href="reports/a.html">Run &lt;1&gt;</a>' in html
    assert "coverage gap: &lt;x&gt;" in html
    assert "all invented" in html
    assert "<script" not in html

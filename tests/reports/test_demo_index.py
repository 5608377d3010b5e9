"""The demo's index page shows the demo's facts (calibration sample, graded runs, trust, undecided trials)."""

from __future__ import annotations

from judgekit.reports.demo_index import DemoFacts, DemoPage, DemoRunFacts, render_demo_index

PAGES = [DemoPage(title="Run report: a", href="reports/a.html", summary="s")]


def _facts(reason: str = "3 x c1 (insufficient_information): acceptance not decided") -> DemoFacts:
    return DemoFacts(
        calibration="calibration: 12 labelled items from sample.jsonl (not graded below)",
        graded="graded: a (4 trials), b (4 trials)",
        trust="trust: judge j UNTRUSTED by the records in r: no calibration record <fp>",
        runs=(
            DemoRunFacts(
                name="a",
                trials=4,
                verdicts="4 trials: 1 pass, 3 insufficient_information",
                judge="judge checks: 8 (0 trusted, 8 untrusted); verdicts resting on untrusted judges: 0",
                untrusted_verdicts=0,
                undecided_summary="not decided by the grading contract: 3 trial(s)",
                undecided=(reason,),
            ),
        ),
    )


def test_the_facts_are_shown_escaped_in_order():
    html = render_demo_index(PAGES, facts=_facts("1 x <b>case</b> (error): bad"))
    body = html[html.index("<body>") :]
    order = [
        "calibration: 12 labelled items from sample.jsonl (not graded below)",
        "graded: a (4 trials), b (4 trials)",
        "no calibration record &lt;fp&gt;",
        "4 trials: 1 pass, 3 insufficient_information",
        "verdicts resting on untrusted judges: 0",
        "not decided by the grading contract: 3 trial(s)",
        "1 x &lt;b&gt;case&lt;/b&gt; (error): bad",
        '<a href="reports/a.html">',
    ]
    positions = [body.index(text) for text in order]
    assert positions == sorted(positions)
    assert "<b>case</b>" not in html
    assert "<script" not in html


def test_without_facts_the_section_is_left_out():
    html = render_demo_index(PAGES)
    assert "Calibrated on one sample, graded on others" not in html
    assert "Calibrated on one sample, graded on others" in render_demo_index(PAGES, facts=_facts())

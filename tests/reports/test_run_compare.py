"""A comparison names every fixed and broken task and trial by id, in every format and on the command line.

The runs are the trap a new user hit (issue 35): four trials fixed and one broken, the broken one in a task
that still fails (its other trial failed in the baseline too), so no task broke and a report that counts
trials and lists only tasks never says which trial broke.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest

from judgekit.reports.run_compare import (
    CHANGE_WORDS,
    Change,
    Comparison,
    TrialChange,
    compare_runs,
    digest_runs,
)
from judgekit.reports.run_compare_html import render_comparison_html
from judgekit.reports.run_json import render_comparison_json
from judgekit.reports.run_markdown import render_comparison_markdown
from judgekit.results import CaseRef, dump_result_line, make_result_line
from judgekit.verdict import CheckResult, Grade, Verdict

P, F = Verdict.PASS, Verdict.FAIL

RUNS = {
    # case: (verdicts of its trials in A, in B)
    "refill-broke": ([F, P], [F, F]),  # trial 2 broke; the task still fails
    "refill-fixed": ([F, F], [P, P]),  # both trials fixed; the task is fixed
    "renew-fixed": ([F], [P]),
    "renew-mixed": ([F, F, P], [P, F, P]),  # trial 1 fixed; the task still fails
    "stock-pass": ([P], [P]),
}


def write_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Runs A and B of :data:`RUNS` written to ``tmp_path`` (``a.jsonl``, ``b.jsonl``)."""
    paths = []
    for side, name in ((0, "a.jsonl"), (1, "b.jsonl")):
        lines = []
        for case, verdicts in RUNS.items():
            for trial, verdict in enumerate(verdicts[side], start=1):
                check = CheckResult(check_id="state", layer="state", verdict=verdict, reason="diff")
                grade = Grade(case_id=case, trial=trial, verdict=verdict, checks=(check,))
                lines.append(make_result_line(run_id=name, case=CaseRef(id=case, version=1), grade=grade))
        path = tmp_path / name
        path.write_text("".join(dump_result_line(line) + "\n" for line in lines), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


@pytest.fixture
def comparison(tmp_path: Path) -> Comparison:
    return compare_runs(*digest_runs(*write_runs(tmp_path)))


def test_every_flipped_trial_is_listed_by_id_with_its_tasks_change(comparison: Comparison) -> None:
    assert (comparison.trials_fixed, comparison.trials_broken) == (4, 1)
    assert comparison.trial_changes == (
        TrialChange(case_id="refill-fixed", trial=1, change="fixed", task_change="fixed"),
        TrialChange(case_id="refill-fixed", trial=2, change="fixed", task_change="fixed"),
        TrialChange(case_id="renew-fixed", trial=1, change="fixed", task_change="fixed"),
        TrialChange(case_id="renew-mixed", trial=1, change="fixed", task_change="still_fail"),
        TrialChange(case_id="refill-broke", trial=2, change="broken", task_change="still_fail"),
    )
    assert comparison.trials_by_task() == [
        ("refill-broke", "still_fail", (), (2,)),
        ("refill-fixed", "fixed", (1, 2), ()),
        ("renew-fixed", "fixed", (1,), ()),
        ("renew-mixed", "still_fail", (1,), ()),
    ]


def test_the_markdown_names_the_broken_trial_and_the_fixed_ones(comparison: Comparison) -> None:
    text = render_comparison_markdown(comparison)
    section = text.split("## Trials that changed\n", 1)[1]
    assert section.startswith(
        "\n| task | task's change | trials fixed (fail → pass) | trials broken (pass → fail) |\n"
        "|---|---|---|---|\n"
        "| refill-broke | still failing | none | 2 |\n"
        "| refill-fixed | fixed | 1, 2 | none |\n"
        "| renew-fixed | fixed | 1 | none |\n"
        "| renew-mixed | still failing | 1 | none |\n"
    )


def test_every_change_has_words_and_only_the_json_keeps_the_values(comparison: Comparison) -> None:
    # the trap: the trials table printed a task's change as its value (still_fail) among words
    assert set(CHANGE_WORDS) == set(get_args(Change))
    assert all("_" not in words for words in CHANGE_WORDS.values())
    html = re.sub(r'class="[^"]*"', "", render_comparison_html(comparison))  # the values stay as classes
    for text in (render_comparison_markdown(comparison), html):
        assert not any(value in text for value in ("still_fail", "still_pass", "only_in_a", "only_in_b"))
    assert "still failing" in render_comparison_html(comparison)
    assert '"task_change": "still_fail"' in render_comparison_json(comparison)


def test_the_json_lists_each_flipped_trial(comparison: Comparison) -> None:
    document = json.loads(render_comparison_json(comparison))
    assert document["schema_version"] == 4
    broken = [t for t in document["trial_changes"] if t["change"] == "broken"]
    assert broken == [
        {"case_id": "refill-broke", "trial": 2, "change": "broken", "task_change": "still_fail"}
    ]
    assert [(t["case_id"], t["trial"]) for t in document["trial_changes"] if t["change"] == "fixed"] == [
        ("refill-fixed", 1),
        ("refill-fixed", 2),
        ("renew-fixed", 1),
        ("renew-mixed", 1),
    ]


def test_the_html_page_lists_the_trials_that_changed(comparison: Comparison) -> None:
    html = render_comparison_html(comparison)
    assert "<h2>Trials that changed (5: 4 fixed, 1 broken)</h2>" in html
    assert (
        '<tr><td>refill-broke</td><td class="change-still_fail">still failing</td>'
        '<td class="change-fixed">none</td><td class="change-broken">2</td></tr>'
    ) in html


def test_no_flipped_trial_leaves_the_section_out(tmp_path: Path) -> None:
    a, _ = write_runs(tmp_path)
    same = compare_runs(*digest_runs(a, a))
    assert same.trial_changes == ()
    assert "Trials that changed" not in render_comparison_markdown(same)
    assert "Trials that changed" not in render_comparison_html(same)

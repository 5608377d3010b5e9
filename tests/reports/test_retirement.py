"""Retirement counts distinct releases, restarts on a case-version bump and needs enough trials per release.

Each test reproduces a hole of the first version (issue 20, item 6): the same results file given three
times counted as three runs, a version bump mid-streak was ignored, and 1 of 1 trials was saturation.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.reports.retirement import RetirementTallies, retirement_advice, retirement_lines
from judgekit.reports.run_markdown import render_run_markdown
from judgekit.reports.run_model import report_run
from judgekit.results import CaseRef, RunResults, read_results
from judgekit.transcript import RunRecord
from judgekit.verdict import Verdict
from support import results_file

P, F, E = Verdict.PASS, Verdict.FAIL, Verdict.ERROR


def _run(
    path: Path, run_id: str, release: str | None, cases: dict[str, list[Verdict]], version: int = 1, **kw
):
    return read_results(results_file(path, release, cases, version=version, run_id=run_id, **kw))


def _capability(case: CaseRef) -> bool:
    return case.category != "regression"


def _ids(advice) -> list[str]:
    return [s.case_id for s in advice.suggestions]


def test_three_releases_of_eight_passes_each_retire_a_task(tmp_path):
    runs = [
        _run(tmp_path / f"r{v}.jsonl", f"run-{v}", v, {"a": [P] * 8, "b": [P] * 7 + [F]})
        for v in ("1.4", "1.5", "1.6")
    ]
    advice = retirement_advice(runs, is_capability=_capability)
    assert _ids(advice) == ["a"]
    assert advice.releases == ("1.4", "1.5", "1.6")
    assert advice.suggestions[0].history == ("1.4: 8/8", "1.5: 8/8", "1.6: 8/8")
    assert "saturated" in advice.suggestions[0].reason
    assert "v1" in advice.suggestions[0].reason
    assert advice.undersampled == ()


def test_the_same_results_file_three_times_is_one_release(tmp_path):
    one = _run(tmp_path / "r.jsonl", "run-1", "1.4", {"a": [P] * 8})
    advice = retirement_advice([one, one, one], is_capability=_capability)
    assert advice.suggestions == ()
    assert advice.releases == ("1.4",)
    assert advice.runs == 1
    assert any("16 trial(s) were given more than once" in n for n in advice.notes)
    assert any("needs 3 distinct releases" in n and "show 1 (1.4)" in n for n in advice.notes)


def test_three_runs_of_one_release_are_one_release_and_pool_their_trials(tmp_path):
    runs = [_run(tmp_path / f"r{i}.jsonl", f"run-{i}", "1.4", {"a": [P] * 4}) for i in range(3)]
    advice = retirement_advice(runs, is_capability=_capability, required_releases=1)
    assert advice.releases == ("1.4",)
    assert advice.suggestions[0].history == ("1.4: 12/12",)  # pooled: 3 runs of 4 trials


def test_a_version_bump_mid_streak_restarts_the_count(tmp_path):
    runs = [
        _run(tmp_path / "r1.jsonl", "run-1", "1.4", {"a": [P] * 8}, version=1),
        _run(tmp_path / "r2.jsonl", "run-2", "1.5", {"a": [P] * 8}, version=1),
        _run(tmp_path / "r3.jsonl", "run-3", "1.6", {"a": [P] * 8}, version=2),
    ]
    advice = retirement_advice(runs, is_capability=_capability)
    assert advice.suggestions == ()
    history = retirement_advice(runs, is_capability=_capability, required_releases=1).suggestions[0].history
    assert history == ("1.6: 8/8",)  # only the release at the new version counts
    # the set's version decides, even when no run reached it yet
    stale = retirement_advice(
        runs[:2], is_capability=_capability, current_versions={"a": 2}, required_releases=2
    )
    assert stale.suggestions == ()


def test_an_asked_for_task_says_which_release_stopped_it(tmp_path):
    runs = [
        _run(tmp_path / "r1.jsonl", "run-1", "1.4", {"a": [P] * 8, "c": [P] * 8}, version=1),
        _run(tmp_path / "r2.jsonl", "run-2", "1.5", {"a": [P] * 8, "c": [P] * 8}, version=2),
    ]
    advice = retirement_advice(runs, is_capability=_capability, required_releases=2, cases=["a", "nope"])
    assert advice.suggestions == ()
    (blocked,) = advice.blocked
    assert blocked.case_id == "a"
    assert blocked.reason.startswith("not saturated: 1.4: graded against v1 only (the case is v2")
    assert any("not capability tasks of the runs given" in n and "nope" in n for n in advice.notes)
    # without asking, blocked tasks are not listed (a set has hundreds)
    assert retirement_advice(runs, is_capability=_capability, required_releases=2).blocked == ()


def test_one_of_one_trials_is_not_saturation_and_is_listed_as_undersampled(tmp_path):
    runs = [_run(tmp_path / f"r{v}.jsonl", f"run-{v}", v, {"a": [P]}) for v in ("1.4", "1.5", "1.6")]
    advice = retirement_advice(runs, is_capability=_capability)
    assert advice.suggestions == ()
    assert [s.case_id for s in advice.undersampled] == ["a"]
    assert advice.undersampled[0].history[0] == "1.4: 1/1, too few trials"
    text = "\n".join(retirement_lines(advice))
    assert "fewer than 8 trials in a release" in text
    # with the minimum lowered explicitly, the same evidence is enough
    assert _ids(retirement_advice(runs, is_capability=_capability, min_trials=1)) == ["a"]


@pytest.mark.parametrize("middle", [[P] * 7 + [F], [P] * 7 + [E]], ids=["a_failure", "an_error"])
def test_a_trial_that_did_not_pass_in_one_release_breaks_the_streak(tmp_path, middle):
    runs = [
        _run(tmp_path / "r1.jsonl", "run-1", "1.4", {"a": [P] * 8}),
        _run(tmp_path / "r2.jsonl", "run-2", "1.5", {"a": middle}),
        _run(tmp_path / "r3.jsonl", "run-3", "1.6", {"a": [P] * 8}),
    ]
    advice = retirement_advice(runs, is_capability=_capability)
    assert advice.suggestions == ()
    assert advice.undersampled == ()


def test_a_task_not_run_in_a_recent_release_is_not_saturated(tmp_path):
    runs = [
        _run(tmp_path / "r1.jsonl", "run-1", "1.4", {"a": [P] * 8, "b": [P] * 8}),
        _run(tmp_path / "r2.jsonl", "run-2", "1.5", {"b": [P] * 8}),
        _run(tmp_path / "r3.jsonl", "run-3", "1.6", {"a": [P] * 8, "b": [P] * 8}),
    ]
    advice = retirement_advice(runs, is_capability=_capability)
    assert _ids(advice) == ["b"]


def test_trials_without_an_agent_version_count_toward_no_release(tmp_path):
    runs = [_run(tmp_path / f"r{i}.jsonl", f"run-{i}", None, {"a": [P] * 8}) for i in range(3)]
    advice = retirement_advice(runs, is_capability=_capability)
    assert advice.suggestions == ()
    assert advice.releases == ()
    assert any("24 trial(s) record no agent version" in n and "run-0 (8)" in n for n in advice.notes)


def test_regression_tasks_are_never_suggested(tmp_path):
    runs = [
        _run(tmp_path / f"r{v}.jsonl", f"run-{v}", v, {"z": [P] * 8}, category="regression")
        for v in ("1.4", "1.5", "1.6")
    ]
    assert retirement_advice(runs, is_capability=_capability).suggestions == ()


def test_disabled_and_bad_minimum(tmp_path):
    one = _run(tmp_path / "r.jsonl", "run-1", "1.4", {"a": [P] * 8})
    assert (
        retirement_advice([one], is_capability=_capability, required_releases=0).notes[-1]
        == "retirement disabled"
    )
    with pytest.raises(ValueError, match="min_trials must be at least 1"):
        retirement_advice([one], is_capability=_capability, min_trials=0)


def test_the_report_shows_releases_and_the_minimum(tmp_path):
    runs = [_run(tmp_path / f"r{v}.jsonl", f"run-{v}", v, {"a": [P] * 8}) for v in ("1.4", "1.5", "1.6")]
    report = report_run(runs[-1], history=runs[:-1], undecided="fail")[0]
    text = render_run_markdown(report)
    assert "in each of the last 3 releases (1.4, 1.5, 1.6)" in text
    assert "- a: 1.4: 8/8 · 1.5: 8/8 · 1.6: 8/8" in text


# a run given any number of extra times never changes the advice
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    repeats=st.lists(st.integers(min_value=0, max_value=2), min_size=3, max_size=3),
    trials=st.integers(min_value=1, max_value=10),
)
def test_repeating_runs_never_changes_the_advice(tmp_path, repeats, trials):
    runs: list[RunResults] = [
        _run(tmp_path / f"p{v}.jsonl", f"run-{v}", v, {"a": [P] * trials, "b": [P] * (trials - 1) + [F]})
        for v in ("1.4", "1.5", "1.6")
    ]
    base = retirement_advice(runs, is_capability=_capability)
    repeated = [r for run, extra in zip(runs, repeats, strict=True) for r in [run] * (1 + extra)]
    again = retirement_advice(repeated, is_capability=_capability)
    assert again.suggestions == base.suggestions
    assert again.undersampled == base.undersampled
    assert again.releases == base.releases


def test_the_tallies_pickle_each_run_id_and_release_once(tmp_path):
    """A worker process sends its tallies pickled: every trial's entry shares its run's id and release."""
    run_id, release = "run-20261206T093643Z-14d220-with-a-long-id", "release-9.8.7-with-a-long-name"
    run = _run(tmp_path / "r.jsonl", run_id, release, {case: [P, F, P] for case in "abcdefghij"})
    tallies = RetirementTallies()
    for line in run.lines:  # each line with its own copies, as each decoded line has
        fresh = RunRecord(app_version="".join(release), agent_model="".join(["agent", "-x"]))
        tallies.add(line.model_copy(update={"run_id": "".join(run_id), "run": fresh}))
    data = pickle.dumps(tallies, protocol=pickle.HIGHEST_PROTOCOL)
    assert data.count(run_id.encode()) == 1
    assert data.count(release.encode()) == 1
    merged = RetirementTallies()
    merged.merge(pickle.loads(data))
    assert len(merged.seen) == 30
    assert list(merged.run_ids) == [run_id]
    assert list(merged.order) == [(release, "agent-x", None, None)]

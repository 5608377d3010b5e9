"""The run report from a results file read once, line by line: memory flat in the number of trials.

:func:`judgekit.reports.run_model.build_run_report` takes a :class:`~judgekit.results.RunResults` whose
lines are all in memory (about 40 KB per trial for lines as ``judgekit grade`` writes them).
:func:`stream_run_report` gives exactly the same :class:`~judgekit.reports.run_model.RunReport`, problems
included, from the file itself: the one accumulation both use,
:class:`~judgekit.reports.run_model.RunAccumulator`, is fed one validated line at a time and keeps only
what each section needs, never the lines. Lines are read through
:meth:`~judgekit.results.ResultStream.report_lines`: the exact fast path
(:func:`~judgekit.results.fast_result_line`), and the full path for any line it is not certain about, so
the problems are those :func:`~judgekit.results.read_results` reports.

What it keeps, and how it grows:

* per task (case id): its verdict counts, its first case reference, its case versions, its quality sum;
  per (case, release): the retirement tallies; per criterion and fingerprint: the judged-check counts;
  per case and per criterion: the judge cost. These grow with tasks, not trials.
* per trial: one ``(case id, trial)`` entry to find duplicates (:class:`~judgekit.results.ResultStream`)
  and one ``(run id, case id, trial)`` entry for retirement's repeated trials, about 200 bytes each.
* per trial that did not pass: its :class:`~judgekit.reports.run_model.TrialReason` (the report lists
  every one), a few hundred bytes each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from typing import cast

from judgekit.calibration.records import CalibrationRecord
from judgekit.errors import Problem
from judgekit.reports.retirement import DEFAULT_MIN_TRIALS, DEFAULT_RELEASES, RetirementTallies
from judgekit.reports.run_model import (
    DEFAULT_REGRESSION_SLICES,
    RunAccumulator,
    RunReport,
    StreamedRun,
)
from judgekit.results import ResultLine, ResultStream, paused_gc
from judgekit.stats import UndecidedPolicy, check_undecided_policy

__all__ = ["RunAccumulator", "StreamedRun", "stream_history", "stream_run_report"]


def stream_history(paths: Sequence[str | PathLike[str]]) -> tuple[RetirementTallies, list[list[Problem]]]:
    """Feed earlier runs (oldest first) to retirement tallies, one line at a time.

    Args:
        paths: The earlier results files.

    Returns:
        The tallies, and each file's problems (as :func:`judgekit.results.read_results` reports them).

    Raises:
        JudgekitError: When a file cannot be read at all.
    """
    tallies = RetirementTallies()
    problems: list[list[Problem]] = []
    with paused_gc():
        for path in paths:
            stream = ResultStream(path)
            for line in stream.report_lines():
                tallies.add(cast(ResultLine, line))  # only attributes are read (see RunAccumulator.add)
            problems.append(stream.problems)
    return tallies, problems


def stream_run_report(
    path: str | PathLike[str],
    *,
    undecided: UndecidedPolicy,
    k: int | None = None,
    retirement: RetirementTallies | None = None,
    retire_after: int = DEFAULT_RELEASES,
    retire_min_trials: int = DEFAULT_MIN_TRIALS,
    regression_slices: Iterable[str] = DEFAULT_REGRESSION_SLICES,
    known_cases: Mapping[str, tuple[int, tuple[str, ...]]] | None = None,
    splits: Mapping[str, str] | None = None,
    calibration_records: Sequence[CalibrationRecord] = (),
    drop: frozenset[str] = frozenset(),
) -> tuple[RunReport, StreamedRun]:
    """The report of a results file, read once and never held in memory.

    The report equals ``build_run_report(read_results(path), ...)`` with the same arguments (after the
    trials of the ``drop`` cases are left out of the results), byte for byte in every rendering.

    Args:
        path: The results file.
        undecided: The undecided-trial policy (see :func:`~judgekit.reports.run_model.build_run_report`).
        k: Largest k for pass^k and pass@k; default the largest trial count of a task.
        retirement: Retirement tallies already fed the earlier runs (:func:`stream_history`); default none.
        retire_after: R, distinct releases for retirement (``< 1`` disables it).
        retire_min_trials: Trials per release for it to count toward retirement; at least 1.
        regression_slices: Slice names that put a case in the regression suite.
        known_cases: The case set's ``id -> (version, policy_refs)``, when a case set is given.
        splits: Case id to its split, from the case set.
        calibration_records: Calibration records for the corrected criterion rates.
        drop: Case ids whose trials are left out (holdouts not asked for by name).

    Returns:
        The report, and what the reading found (problems, the holdouts the lines recorded, the trials
        per case, the trials dropped).

    Raises:
        JudgekitError: When the file cannot be read at all.
        ValueError: When ``undecided`` is not a policy (a programming error).
    """
    policy = check_undecided_policy(undecided)
    acc = RunAccumulator(
        known_cases=known_cases,
        drop=drop,
        calibration_records=calibration_records,
        retirement=retirement if retirement is not None else RetirementTallies(),
    )
    stream = ResultStream(path)
    with paused_gc():
        for line in stream.report_lines():
            acc.add(line)
        seen = acc.seen
        seen.path = stream.path
        seen.problems = stream.problems
        report = acc.report(
            file=stream.path.name,
            path=stream.path,
            problems_in=stream.problems,
            policy=policy,
            k=k,
            retire_after=retire_after,
            retire_min_trials=retire_min_trials,
            regression_slices=regression_slices,
            splits=splits or {},
        )
    return report, seen

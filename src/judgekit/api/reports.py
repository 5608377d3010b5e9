"""Report a run and compare two runs: the service behind ``judgekit report`` and ``judgekit compare``.

- :func:`report`: a results file (streamed, memory flat in trials) or a run in memory, with the golden
  set's versions and splits, the calibration records and the holdouts, into one
  :class:`~judgekit.reports.run_model.RunReport`; :func:`render_report` writes it as Markdown, the short
  pull-request comment, JSON or HTML.
- :func:`compare`: two runs task by task (:func:`judgekit.reports.run_compare.compare_runs`: fixed and
  broken tasks, exact sign test, McNemar, a plain verdict).

Both read through the one report engine (:func:`judgekit.reports.run_model.report_run`) and the one
comparison, so the command line, the demo and a Python caller get the same figures by construction.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from judgekit.reports.retirement import DEFAULT_MIN_TRIALS, DEFAULT_RELEASES
from judgekit.reports.run_model import DEFAULT_REGRESSION_SLICES

if TYPE_CHECKING:
    from judgekit.calibration.records import CalibrationRecord
    from judgekit.caseset import CaseSet
    from judgekit.errors import Problem
    from judgekit.reports.run_compare import Comparison
    from judgekit.reports.run_gate import Threshold
    from judgekit.reports.run_model import ResultSource, RunReport
    from judgekit.stats import UndecidedPolicy

__all__ = ["REPORT_FORMATS", "compare", "render_report", "render_report_pieces", "report"]

REPORT_FORMATS = ("html", "md", "json")
"""The formats a run report renders to: HTML, Markdown (optionally the short comment), JSON."""

Warn = Callable[["Problem"], None]
"""Receives a problem of an earlier run (``history``) or of a compared file, as it is found."""


def _ignore(problem: Problem) -> None:
    """Drop a problem (the default: they are in the report's own ``problems`` too, or in the return)."""


def _case_set_facts(
    cases: str | os.PathLike[str] | CaseSet | None,
) -> tuple[dict[str, tuple[int, tuple[str, ...]]] | None, dict[str, str], set[str]]:
    """The set's case versions and policies, splits and holdouts (``None``, {}, {} without a set)."""
    if cases is None:
        return None, {}, set()
    from judgekit.caseset import CaseSet, load_case_set
    from judgekit.golden.splits import holdout_ids

    case_set = cases if isinstance(cases, CaseSet) else load_case_set([Path(cases)])
    case_set.raise_if_invalid()
    known = {c.case.id: (c.case.version, c.case.policy_refs) for c in case_set.reviewed()}
    splits: dict[str, str] = {c.case.id: c.case.split for c in case_set.reviewed() if c.case.split}
    return known, splits, holdout_ids(case_set)


def report(
    results: ResultSource,
    *,
    cases: str | os.PathLike[str] | CaseSet | None = None,
    undecided: UndecidedPolicy = "fail",
    k: int | None = None,
    history: Sequence[ResultSource] = (),
    records: str | os.PathLike[str] | Sequence[CalibrationRecord] | None = None,
    holdout: Iterable[str] = (),
    retire_after: int = DEFAULT_RELEASES,
    retire_min_trials: int = DEFAULT_MIN_TRIALS,
    regression_slices: Iterable[str] = DEFAULT_REGRESSION_SLICES,
    thresholds: Sequence[Threshold] = (),
    warn: Warn = _ignore,
    processes: int | None = None,
) -> RunReport:
    """The run report ``judgekit report`` writes: headline, pass^k, suites, reasons, failure categories.

    Bad input never stops the report: lines of another schema version, a truncated last line, trials of
    cases not in ``cases`` and a ``k`` beyond the trial count are listed in the report's ``problems`` (the
    command then exits 2) and everything else is reported.

    Args:
        results: A results file's path (read line by line, never held) or a
            :class:`~judgekit.results.RunResults` already read.
        cases: The golden set (folder, or a set already loaded): its case versions and policy revisions
            are checked, its splits decide suites, its holdout cases are left out. ``None``: no set.
        undecided: How a trial with no decided verdict counts in pass^k and the rates: ``fail`` (the
            default, as ``judgekit report``) or ``exclude``; stated in the report.
        k: Largest k for pass^k (``None``: the largest trial count of a task).
        history: Earlier runs, oldest first, for retirement advice.
        records: The calibration records folder, for judged criteria's corrected pass rates (``None``:
            ``JUDGEKIT_RECORDS``, the project configuration, else ``calibration/records`` when present),
            or the records already read (``()``: none, whatever the environment says).
        holdout: Holdout cases to report anyway (their trials are otherwise left out).
        retire_after: Releases in a row a capability task must pass every trial to be suggested for
            retirement (0: no suggestions).
        retire_min_trials: Trials a task needs in each of those releases, >= 1.
        regression_slices: Slice names that form the regression suite.
        thresholds: Gates on the report's figures (:func:`judgekit.reports.run_gate.parse_thresholds`);
            the headline says which were missed.
        warn: Receives each problem of the ``history`` runs (the report lists its own run's problems).
        processes: How many processes read the results file, by byte ranges (the report is the same, byte
            for byte, whatever the count): 1 this process only, 0 one per CPU; ``None`` (the default) the
            ``processes`` setting (the project configuration), else one per 128 MiB of the file, at most
            one per CPU (:func:`judgekit.reports.run_parts.processes_for`).

    Returns:
        The report.

    Raises:
        JudgekitError: When the case set is unusable, a file cannot be read at all, or a ``holdout`` name
            is not a holdout case (exit code 2).
    """
    from judgekit.calibration.records import load_records
    from judgekit.reports.run_gate import with_thresholds
    from judgekit.settings import records_folder, setting

    known, splits, set_holdouts = _case_set_facts(cases)
    if records is None or isinstance(records, str | os.PathLike):
        # option > JUDGEKIT_RECORDS > project configuration > default (which may be absent: no records)
        calibration_records = tuple(load_records(records_folder(records)))
    else:
        calibration_records = tuple(records)
    model, older_problems, notes = _streamed_report(
        results,
        history,
        holdout=set(holdout),
        set_holdouts=set_holdouts,
        undecided=undecided,
        k=k,
        retire_after=retire_after,
        retire_min_trials=retire_min_trials,
        regression_slices=regression_slices,
        known_cases=known,
        splits=splits,
        calibration_records=calibration_records,
        processes=setting("processes", processes),
    )
    if notes:  # the report says when a holdout was used, or left out
        model = model.model_copy(update={"notes": (*model.notes, *notes)})
    for problem in older_problems:
        warn(problem)
    return with_thresholds(model, list(thresholds)) if thresholds else model


def _streamed_report(
    results: ResultSource,
    history: Sequence[ResultSource],
    *,
    holdout: set[str],
    set_holdouts: set[str],
    undecided: UndecidedPolicy,
    k: int | None,
    retire_after: int,
    retire_min_trials: int,
    regression_slices: Iterable[str],
    known_cases: dict[str, tuple[int, tuple[str, ...]]] | None,
    splits: dict[str, str],
    calibration_records: Sequence[CalibrationRecord],
    processes: int | None,
) -> tuple[RunReport, list[Problem], list[str]]:
    """The report with holdouts handled: the history's problems and the holdout notes beside it.

    The same report as reading every line and leaving the holdout trials out first
    (:func:`judgekit.golden.splits.split_report_lines`): the holdouts the lines record are only known
    once the file is read, so when one of them turns out to have trials in the report, the file is read
    again with it left out.
    """
    from judgekit.golden.splits import check_holdout_names, holdout_notes
    from judgekit.reports.run_model import report_run

    slices = tuple(regression_slices)
    drop = frozenset(set_holdouts - holdout)
    while True:
        model, seen = report_run(
            results,
            undecided=undecided,
            k=k,
            history=history,
            retire_after=retire_after,
            retire_min_trials=retire_min_trials,
            regression_slices=slices,
            known_cases=known_cases,
            splits=splits,
            calibration_records=calibration_records,
            drop=drop,
            processes=processes,
        )
        holdouts = seen.line_holdouts | set_holdouts
        check_holdout_names(holdout, holdouts)
        needed = frozenset(holdouts - holdout)
        if not (needed - drop) & seen.cases.keys():
            break
        drop = needed  # a holdout recorded by the lines had trials in the report: read again without them
    kept = [cid for cid in seen.cases if cid not in seen.dropped]
    used = sorted(cid for cid in kept if cid in holdouts)
    problems = [p for file_problems in seen.history_problems for p in file_problems]
    return model, problems, holdout_notes(used, dict(sorted(seen.dropped.items())))


def render_report(
    model: RunReport,
    output_format: str = "md",
    *,
    short: bool = False,
    top: int = 10,
    link: str | None = None,
) -> str:
    """A run report as text: ``md`` (or with ``short`` the pull-request comment), ``json`` or ``html``.

    The pieces of :func:`render_report_pieces` (which documents the arguments) joined.

    Raises:
        JudgekitError: On an unknown format (exit code 2).
    """
    return "".join(render_report_pieces(model, output_format, short=short, top=top, link=link))


def render_report_pieces(
    model: RunReport,
    output_format: str = "md",
    *,
    short: bool = False,
    top: int = 10,
    link: str | None = None,
) -> Iterator[str]:
    """:func:`render_report`'s text in pieces, cut only where no secret can straddle two of them.

    JSON comes entry by entry of its trial list, about a megabyte a piece
    (:func:`judgekit.reports.run_json.run_json_pieces`), so a report of hundreds of thousands of failed
    trials is never held whole; Markdown and HTML come as one piece. Each piece can be redacted and
    written on its own (:func:`judgekit.io.atomic.write_atomic_pieces`).

    Args:
        model: The report (:func:`report`).
        output_format: ``md``, ``json`` or ``html``.
        short: The bounded Markdown comment for a pull request (``md`` only).
        top: With ``short``: how many trials that did not pass are listed, 0 to 100.
        link: With ``short``: a link to the full report.

    Raises:
        JudgekitError: On an unknown format (exit code 2), before the first piece.
    """
    from judgekit.errors import JudgekitError

    if output_format not in REPORT_FORMATS:
        raise JudgekitError(f"format must be html, md or json (got {output_format!r})", exit_code=2)
    if output_format == "json":
        from judgekit.reports.run_json import run_json_pieces

        return run_json_pieces(model)
    if output_format == "html":
        from judgekit.reports.run_html import render_run_html

        return iter((render_run_html(model),))
    from judgekit.reports.run_markdown import render_run_markdown, render_short_markdown

    return iter((render_short_markdown(model, top=top, link=link) if short else render_run_markdown(model),))


def compare(
    baseline: ResultSource,
    candidate: ResultSource,
    *,
    cases: str | os.PathLike[str] | CaseSet | None = None,
    alpha: float = 0.05,
    regression_slices: Iterable[str] = DEFAULT_REGRESSION_SLICES,
    warn: Warn = _ignore,
    processes: int | None = None,
) -> Comparison:
    """Compare run B (the new version) with run A (the baseline) task by task: ``judgekit compare``.

    Each file is read once, line by line (one verdict per baseline trial is kept to pair the trials).

    Args:
        baseline: Run A: a results file's path or a :class:`~judgekit.results.RunResults`.
        candidate: Run B, the same way.
        cases: The golden set: a case's split (capability, regression) decides its suite (``None``: slices).
        alpha: Significance level of the plain verdict, in (0, 1).
        regression_slices: Slice names that form the regression suite.
        warn: Receives each problem of either file (a bad line, a truncated last line) before comparing.
        processes: How many processes read each results file, by byte ranges (the comparison is the same
            whatever the count): 1 this process only, 0 one per CPU; ``None`` (the default) the
            ``processes`` setting (the project configuration), else one per 128 MiB of the file, at most
            one per CPU (:func:`judgekit.reports.run_parts.processes_for`).

    Returns:
        The comparison: fixed and broken tasks, the regression suite's lost tasks, the exact sign test,
        McNemar, and a plain ``verdict`` with its ``explanation``.

    Raises:
        JudgekitError: When the runs share no task, were graded on different case versions or policy
            revisions (each case named), ``alpha`` is outside (0, 1), or a file cannot be read.
    """
    from judgekit.reports.run_compare import compare_runs, digest_runs
    from judgekit.settings import setting

    _, splits, _ = _case_set_facts(cases)
    a, b = digest_runs(
        baseline,
        candidate,
        regression_slices=tuple(regression_slices),
        splits=splits,
        processes=setting("processes", processes),
    )
    for problem in [*a.problems, *b.problems]:
        warn(problem)
    return compare_runs(a, b, alpha=alpha)

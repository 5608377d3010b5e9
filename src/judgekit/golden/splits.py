"""Splits: capability, regression and holdout cases, and keeping holdouts out of routine work.

A case may carry ``split: capability | regression | holdout`` (:attr:`judgekit.cases.Case.split`).
Holdout cases are reserved: developers who tune prompts against the same small set overfit its wording,
so holdouts are left out of routine runs and reports and used only when asked for **by name** (their case
ids). When they are used, the run records it (``grading["holdouts"]`` in every result line) and the report
says so.

Which cases are used is decided by one function, :func:`judgekit.caseset.select_cases`, that every path
reading a case set calls (``judgekit grade``/``report``/``export``, the runner, the pytest plugin, Inspect
AI, promptfoo and the demo); ``tests/test_holdout_paths.py`` enumerates them. The functions here are pure:
the set's holdout ids, and the report-side rule for result lines.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from judgekit.caseset import HOLDOUT_GRADING_KEY, select_cases
from judgekit.errors import JudgekitError

if TYPE_CHECKING:
    from judgekit.caseset import CaseSet
    from judgekit.results import ResultLine, RunResults

__all__ = [
    "ReportSplit",
    "check_holdout_names",
    "holdout_ids",
    "holdout_notes",
    "split_report_lines",
]


def holdout_ids(case_set: CaseSet) -> set[str]:
    """Ids of the reviewed cases whose split is ``holdout``."""
    return set(select_cases(case_set).left_out)


@dataclass
class ReportSplit:
    """Result lines after holdouts not asked for are left out.

    Attributes:
        results: The results to report.
        left_out: Holdout case id to trials left out.
        used: Holdout case ids reported.
        notes: What a report should say about holdouts.
    """

    results: RunResults
    left_out: dict[str, int] = field(default_factory=dict)
    used: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _line_holdouts(lines: Iterable[ResultLine]) -> set[str]:
    found: set[str] = set()
    for line in lines:
        value = line.grading.get(HOLDOUT_GRADING_KEY)
        if isinstance(value, list):
            found.update(str(v) for v in value)
    return found


def split_report_lines(
    results: RunResults, names: Sequence[str], *, set_holdouts: set[str] | None = None
) -> ReportSplit:
    """Leave holdout trials out of a report unless named, and say what was done.

    A trial is a holdout trial when its case is a holdout in the case set given (``set_holdouts``) or the
    run that graded it recorded the case among its holdouts.

    Args:
        results: The run's results.
        names: Holdout case ids the report was asked to include.
        set_holdouts: The case set's holdout ids, when the report has the set.

    Returns:
        The lines to report (a copy of ``results`` when anything is left out) and notes for the report.

    Raises:
        JudgekitError: When a name is not a holdout case of the run or the set.
    """
    holdouts = _line_holdouts(results.lines) | (set_holdouts or set())
    wanted = set(names)
    check_holdout_names(wanted, holdouts)
    dropped: Counter[str] = Counter()
    kept: list[ResultLine] = []
    for line in results.lines:
        if line.case.id in holdouts and line.case.id not in wanted:
            dropped[line.case.id] += 1
        else:
            kept.append(line)
    used = sorted({line.case.id for line in kept if line.case.id in holdouts})
    out = ReportSplit(results=results if not dropped else replace(results, lines=kept))
    out.left_out = dict(sorted(dropped.items()))
    out.used = used
    out.notes.extend(holdout_notes(used, out.left_out))
    return out


def check_holdout_names(wanted: set[str], holdouts: set[str]) -> None:
    """Refuse ``--holdout`` names that are not holdout cases of the run or the set.

    Args:
        wanted: The names given.
        holdouts: The holdout case ids known (the lines' record and the case set's).

    Raises:
        JudgekitError: Naming the unknown names and the holdouts known.
    """
    unknown = sorted(wanted - holdouts)
    if unknown:
        listed = ", ".join(sorted(holdouts)) or "none"
        raise JudgekitError(
            f"--holdout: {', '.join(unknown)}: not holdout cases of this run or set "
            f"(holdouts known: {listed})"
        )


def holdout_notes(used: Sequence[str], left_out: dict[str, int]) -> list[str]:
    """What a report says about holdouts: those used by name, and the trials left out (case id -> count)."""
    notes: list[str] = []
    if used:
        notes.append(
            f"holdout case(s) used: {', '.join(used)}. Holdouts are kept out of routine runs and reports; "
            "these numbers include them because they were asked for by name"
        )
    if left_out:
        shown = ", ".join(f"{cid} ({n} trial{'s' if n != 1 else ''})" for cid, n in left_out.items())
        notes.append(
            f"holdout trials left out of this report: {shown}; name them with --holdout to include them"
        )
    return notes

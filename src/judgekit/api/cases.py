"""Jobs on a golden set that need the results of runs: retiring saturated capability cases.

:func:`retire_saturated` is ``judgekit retire`` as one call: it reads the set and the results files,
asks :func:`judgekit.reports.retirement.retirement_advice` which capability cases are saturated and edits
their files (:func:`judgekit.golden.retire.retire_cases`), returning a :class:`RetirementReport`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from pydantic import Field

from judgekit.caseset import CaseSet, LocatedProblem, load_case_set
from judgekit.errors import JudgekitError, Problem, ProblemsError
from judgekit.golden.journal import refuse_if_pending
from judgekit.golden.retire import Retire, RetiredCase, finish_interrupted_retirement, retire_cases
from judgekit.reports.retirement import RetirementAdvice, retirement_advice
from judgekit.reports.run_model import in_capability_suite
from judgekit.results import CaseRef, RunResults, read_results
from judgekit.verdict import FrozenModel

__all__ = ["RetiredEntry", "RetirementReport", "UndersampledEntry", "retire_saturated"]


class RetiredEntry(FrozenModel):
    """A case moved (or, in a dry run, that would move) to the regression split.

    Attributes:
        id: The case.
        file: Its file, edited in place.
        line: 1-based line of the case in its file.
        moved_from: Its split before (printed as ``from``), ``None`` when it had none.
        to: Always ``regression``.
        reason: The reason written in its ``retired:`` record.
        resumed: True when this run finished a retirement a killed run had started (not printed in JSON).
    """

    id: str
    file: str
    line: int
    moved_from: str | None = Field(serialization_alias="from")
    to: str = "regression"
    reason: str
    resumed: bool = Field(default=False, exclude=True)

    @classmethod
    def of(cls, done: RetiredCase) -> RetiredEntry:
        """The entry of a retired case."""
        return cls(
            id=done.case_id,
            file=str(done.path),
            line=done.line,
            moved_from=done.moved_from,
            reason=done.reason,
            resumed=done.resumed,
        )


class UndersampledEntry(FrozenModel):
    """A capability case that passed every counted trial but had too few trials in some release.

    Attributes:
        id: The case.
        reason: What it lacks (which release, how many trials).
    """

    id: str
    reason: str


class RetirementReport(FrozenModel):
    """What ``judgekit retire`` did (or, in a dry run, would do).

    Attributes:
        dry_run: True when nothing was written.
        releases: The distinct releases of the results given, oldest first (empty when refused).
        retired: The cases retired, those a killed run left half done first.
        undersampled: Cases that need more trials before they can be retired.
        notes: What limits the advice (too few releases, runs given twice...).
        problems: Why the retirement was refused (empty when it was not).
    """

    dry_run: bool
    releases: list[str] = Field(default_factory=list)
    retired: list[RetiredEntry] = Field(default_factory=list)
    undersampled: list[UndersampledEntry] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    problems: list[LocatedProblem] = Field(default_factory=list)


def _check_counts(releases: int, min_trials: int) -> None:
    if releases < 1:
        raise JudgekitError(f"--releases must be at least 1 (got {releases})", exit_code=2)
    if min_trials < 1:
        raise JudgekitError(
            f"--min-trials must be at least 1 (got {min_trials}); the seed recommends 8", exit_code=2
        )


def _valid_set(set_path: str | os.PathLike[str], *, dry_run: bool) -> tuple[CaseSet, list[RetiredCase]]:
    """The set, once a retirement a killed run left half done is finished (not in a dry run)."""
    case_set = load_case_set(set_path)
    if dry_run:
        refuse_if_pending(case_set.root, "show a dry run of a half-edited set")
    resumed = [] if dry_run else finish_interrupted_retirement(case_set.root)
    if resumed:  # a killed run's retirement, finished first: its cases are retired now
        case_set = load_case_set(set_path)
    try:
        case_set.raise_if_invalid()
    except JudgekitError as exc:
        exc.exit_code = 2
        raise
    return case_set, resumed


def _advice(
    case_set: CaseSet,
    runs: list[RunResults],
    resumed: list[RetiredCase],
    *,
    releases: int,
    min_trials: int,
    cases: Sequence[str],
) -> RetirementAdvice:
    """The retirement advice for the set's reviewed cases; a named case that cannot retire is refused."""
    reviewed = {c.case.id: c.case for c in case_set.reviewed()}
    rule = in_capability_suite({cid: c.split for cid, c in reviewed.items() if c.split})

    def is_capability(ref: CaseRef) -> bool:
        # the set decides a case's suite (its split, category and slice now), not the results' copy
        case = reviewed.get(ref.id)
        return case is not None and rule(
            CaseRef(id=case.id, version=case.version, slice=case.slice, category=case.category)
        )

    wanted = [c for c in cases if c not in {r.case_id for r in resumed}]
    advice = retirement_advice(
        runs,
        is_capability=is_capability,
        current_versions={cid: c.version for cid, c in reviewed.items()},
        required_releases=releases,
        min_trials=min_trials,
        cases=wanted or cases or None,
    )
    if cases and not wanted:  # every case named was in the finished retirement: nothing else to do
        return advice.model_copy(update={"suggestions": (), "undersampled": (), "blocked": (), "notes": ()})
    if wanted:
        refusals = [
            Problem(None, None, s.case_id, f"not retired: {s.reason}")
            for s in (*advice.undersampled, *advice.blocked)
        ]
        refusals += [Problem(None, None, "--case", note) for note in advice.notes if "not capability" in note]
        if refusals:
            raise ProblemsError(refusals)
    return advice


def retire_saturated(
    set_path: str | os.PathLike[str],
    results: Sequence[str | os.PathLike[str]],
    *,
    releases: int = 3,
    min_trials: int = 8,
    cases: Sequence[str] = (),
    reason: str | None = None,
    dry_run: bool = False,
    warn: Callable[[Problem], None] = lambda problem: None,
) -> RetirementReport:
    """Move the saturated capability cases of a set to the regression split, for review.

    A capability case is saturated when it passed every trial, at least ``min_trials`` of them, in each
    of the last ``releases`` distinct releases, all graded against its current version. A retirement a
    killed run left half done is finished first (its cases are listed, marked ``resumed``).

    Args:
        set_path: The golden set's root folder.
        results: Results files of the agent's releases, oldest first.
        releases: Distinct releases in a row in which a case must pass every trial (>= 1).
        min_trials: Trials a case needs in each of those releases (>= 1).
        cases: Retire only these cases (by id); empty retires every saturated one.
        reason: A reviewer's note written after the evidence (blank adds nothing).
        dry_run: Show what would move; write nothing.
        warn: Called with each problem found in a results file (the file is still read).

    Returns:
        What moved (or would move), what needs more trials, and the advice's notes.

    Raises:
        JudgekitError: (exit 2) A count below 1, an invalid set, or a half-edited set in a dry run.
        ProblemsError: (exit 2) A named case that is not saturated or not a capability case, or a file
            that cannot be edited safely; nothing is written.
    """
    _check_counts(releases, min_trials)
    case_set, resumed = _valid_set(set_path, dry_run=dry_run)
    runs = []
    for path in results:
        run = read_results(path)
        for problem in run.problems:
            warn(problem)
        runs.append(run)
    advice = _advice(case_set, runs, resumed, releases=releases, min_trials=min_trials, cases=cases)
    suffix = f"; {reason.strip()}" if reason and reason.strip() else ""
    items = [
        Retire(s.case_id, s.reason + suffix, tuple(t.release for t in s.releases)) for s in advice.suggestions
    ]
    done = retire_cases(case_set, items, on=datetime.now(UTC).date(), write=not dry_run) if items else []
    return RetirementReport(
        dry_run=dry_run,
        releases=list(advice.releases),
        retired=[RetiredEntry.of(r) for r in (*resumed, *done)],
        undersampled=[UndersampledEntry(id=s.case_id, reason=s.reason) for s in advice.undersampled],
        notes=list(advice.notes),
    )

"""Validating a loaded golden set: its own problems, a half-done set edit and personal data.

:func:`validation_report` adds to the loader's problems what only the golden-set tooling knows (a
``promote`` or ``retire`` killed half way, :func:`judgekit.golden.journal.pending_problems`; personal data
in reviewed cases, :func:`judgekit.golden.pii.personal_data_problems`) and returns the ``validation``
document (:class:`ValidationDocument`) ``judgekit cases check`` prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from judgekit.caseset import CaseSet, LoadedCase, LocatedProblem
from judgekit.errors import Problem
from judgekit.golden.journal import pending_problems
from judgekit.golden.pii import personal_data_problems
from judgekit.verdict import FrozenModel

__all__ = ["ValidationDocument", "validation_report"]


class ValidationDocument(FrozenModel):
    """Whether a golden set is valid, and every problem and warning (the ``validation`` document).

    Attributes:
        valid: True when there is no problem (warnings do not count).
        cases: Reviewed cases that loaded (valid or not: see ``cases_with_problems``).
        candidates: Candidate cases that loaded.
        cases_with_problems: Ids of the loaded cases (reviewed or candidates) a problem is about, in file
            order: a case that loaded but names a missing fixture, breaks a set rule or holds personal
            data is not valid. A problem in a file of several cases is the case's whose lines hold it (all
            of the file's cases when it has no line).
        valid_cases: Loaded cases with no problem: ``cases + candidates - len(cases_with_problems)``.
        files: Case files read.
        files_with_problems: Distinct files with at least one problem (a problem of no single file counts
            once).
        problems: Every problem, each located.
        warnings: Things worth knowing that do not make the set invalid (personal data in candidates,
            over-long questions).
    """

    valid: bool
    cases: int
    candidates: int
    cases_with_problems: list[str]
    valid_cases: int
    files: int
    files_with_problems: int
    problems: list[LocatedProblem]
    warnings: list[LocatedProblem]


def validation_report(case_set: CaseSet) -> ValidationDocument:
    """Validate a loaded set: its loader's problems, a half-done promote or retire, and personal data.

    Personal data (emails, phone numbers, card, IBAN and account numbers, national ids, person names,
    postal addresses, postcodes, dates of birth, sort codes) is a problem in reviewed cases and a warning
    in candidates; the manifest's ``synthetic_values`` are allowed.

    Args:
        case_set: The loaded set (not changed).

    Returns:
        The document; ``valid`` is false when any problem was found.
    """
    problems = [*case_set.problems, *pending_problems(case_set.root)]  # a promote or retire killed half way
    allow = case_set.manifest.synthetic_values if case_set.manifest else ()
    pii_problems, pii_warnings = personal_data_problems(case_set.cases, allow=allow)
    problems += pii_problems
    warnings = [*case_set.warnings, *pii_warnings]
    with_problems = _cases_with_problems(case_set.cases, problems)
    return ValidationDocument(
        valid=not problems,
        cases=len(case_set.reviewed()),
        candidates=len(case_set.candidates()),
        cases_with_problems=[loaded.id for loaded in with_problems],
        valid_cases=len(case_set.cases) - len(with_problems),
        files=len(case_set.files),
        files_with_problems=len({p.file for p in problems}),
        problems=[LocatedProblem.of(p) for p in problems],
        warnings=[LocatedProblem.of(w) for w in warnings],
    )


def _cases_with_problems(cases: Sequence[LoadedCase], problems: Sequence[Problem]) -> list[LoadedCase]:
    """The loaded cases some problem is about, in file order.

    A problem belongs to a case of its file: the only one, else the last whose first line is at or before
    the problem's line (every case of the file when the problem has no line).
    """
    by_file: dict[Path, list[LoadedCase]] = {}
    for loaded in cases:
        by_file.setdefault(loaded.path, []).append(loaded)
    hit: set[int] = set()
    for problem in problems:
        in_file = by_file.get(problem.file) if problem.file is not None else None
        if not in_file:
            continue
        if len(in_file) == 1 or problem.line is None:
            hit.update(id(loaded) for loaded in in_file)
            continue
        line = problem.line
        before = [loaded for loaded in in_file if loaded.line <= line]
        hit.add(id(before[-1] if before else in_file[0]))
    return [loaded for loaded in cases if id(loaded) in hit]

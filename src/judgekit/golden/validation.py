"""Validating a loaded golden set: its own problems, a half-done set edit and personal data.

:func:`validation_report` adds to the loader's problems what only the golden-set tooling knows (a
``promote`` or ``retire`` killed half way, :func:`judgekit.golden.journal.pending_problems`; personal data
in reviewed cases, :func:`judgekit.golden.pii.personal_data_problems`) and returns the ``validation``
document (:class:`ValidationDocument`) ``judgekit cases check`` prints.
"""

from __future__ import annotations

from judgekit.caseset import CaseSet, LocatedProblem
from judgekit.golden.journal import pending_problems
from judgekit.golden.pii import personal_data_problems
from judgekit.verdict import FrozenModel

__all__ = ["ValidationDocument", "validation_report"]


class ValidationDocument(FrozenModel):
    """Whether a golden set is valid, and every problem and warning (the ``validation`` document).

    Attributes:
        valid: True when there is no problem (warnings do not count).
        cases: Reviewed cases that loaded.
        candidates: Candidate cases that loaded.
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
    return ValidationDocument(
        valid=not problems,
        cases=len(case_set.reviewed()),
        candidates=len(case_set.candidates()),
        files=len(case_set.files),
        files_with_problems=len({p.file for p in problems}),
        problems=[LocatedProblem.of(p) for p in problems],
        warnings=[LocatedProblem.of(w) for w in warnings],
    )

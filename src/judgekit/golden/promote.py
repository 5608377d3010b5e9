"""Promote reviewed candidates into the golden set.

Generated or intake cases start in the candidates folder, where no gate reads them. A person reviews
one, replaces the ``REVIEW:`` acceptance with the real criterion, and promotes it: the file moves into
the set's cases folder. Promotion refuses an unreviewed acceptance, an invalid case, an id the set
already has, and a file holding several cases.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judgekit.cases import REVIEW_PREFIX
from judgekit.caseset import LoadedCase, load_case_set
from judgekit.errors import JudgekitError, Problem, ProblemsError

__all__ = ["Promotion", "promote_candidates"]


@dataclass(frozen=True)
class Promotion:
    """One promoted case.

    Attributes:
        case_id: The case promoted.
        source: Where its file was.
        destination: Where its file is now.
    """

    case_id: str
    source: Path
    destination: Path


def promote_candidates(set_path: str | os.PathLike[str], ids: Sequence[str]) -> list[Promotion]:
    """Move reviewed candidates into the set's cases folder.

    Every id is checked before any file moves: either all named candidates are promoted or none is.

    Args:
        set_path: The golden set's root folder, as text or a path object.
        ids: Ids of the candidates to promote.

    Returns:
        The promotions made.

    Raises:
        ProblemsError: Listing every reason a named candidate cannot be promoted (nothing is moved).
    """
    set_path = Path(set_path)
    if not ids:
        raise JudgekitError("name at least one candidate id to promote")
    case_set = load_case_set(set_path, check_files=True)
    by_id: dict[str, list[LoadedCase]] = {}
    for loaded in case_set.cases:
        by_id.setdefault(loaded.case.id, []).append(loaded)
    problems: list[Problem] = []
    files_per_path: dict[Path, int] = {}
    for loaded in case_set.cases:
        files_per_path[loaded.path] = files_per_path.get(loaded.path, 0) + 1
    target_dir = case_set.folder("cases_dir")
    plan: list[Promotion] = []
    for case_id in ids:
        found = by_id.get(case_id, [])
        candidates = [c for c in found if c.candidate]
        if not candidates:
            where = "it is already in the set" if found else "no case has this id"
            problems.append(Problem(None, None, case_id, f"not a candidate ({where})"))
            continue
        loaded = candidates[0]
        if any(not c.candidate for c in found):
            problems.append(
                Problem(
                    loaded.path,
                    loaded.line_of("id"),
                    "id",
                    f"the set already has a case '{case_id}'; rename the candidate",
                )
            )
        if loaded.case.is_unreviewed:
            problems.append(
                Problem(
                    loaded.path,
                    loaded.line_of("acceptance"),
                    "acceptance",
                    f"still starts with '{REVIEW_PREFIX}': write or approve the acceptance criterion, "
                    "then promote",
                )
            )
        if files_per_path[loaded.path] > 1:
            problems.append(
                Problem(
                    loaded.path,
                    loaded.line,
                    "",
                    "this file holds several cases; give the candidate a file of its own",
                )
            )
        file_problems = [p for p in case_set.problems if p.file == loaded.path]
        problems.extend(file_problems)
        destination = target_dir / loaded.path.name
        if destination.exists():
            problems.append(
                Problem(loaded.path, None, "", f"{destination} already exists; rename the candidate file")
            )
        plan.append(Promotion(case_id, loaded.path, destination))
    if problems:
        raise ProblemsError(problems)
    target_dir.mkdir(parents=True, exist_ok=True)
    for step in plan:
        os.replace(step.source, step.destination)
    return plan

"""Promote reviewed candidates into the golden set.

Generated or intake cases start in the candidates folder, where no gate reads them. A person reviews
one, replaces the ``REVIEW:`` acceptance with the real criterion, and promotes it: the file moves into
the set's cases folder. Promotion refuses, before anything moves:

* an acceptance that is missing, empty or only whitespace (invisible characters count as nothing);
* an acceptance, ``required_outcome``, ``forbidden_outcomes`` entry or ``response_rubric`` entry that still
  starts with the review marker, read as :func:`~judgekit.cases.starts_with_review_marker` reads it (any
  letter case, leading spaces, invisible or look-alike characters), and a ``required_outcome`` given but
  blank;
* personal data the scanner finds (values the manifest lists under ``synthetic_values`` excepted);
* an invalid case, an id the set already has, a file holding several cases, and a destination file that
  exists already (or that two promoted candidates would share).

The moves are all or nothing. When one fails, the files already moved are moved back. A kill (``kill -9``,
which the command cannot see) is covered by a journal (:mod:`judgekit.golden.journal`) written before the
first move: the next promotion finishes the interrupted one first (its candidates were all checked
before anything moved), and ``judgekit cases check`` reports the set as half done until then.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pydantic import Field

from judgekit.cases import REVIEW_PREFIX, review_guard_text, starts_with_review_marker
from judgekit.caseset import LoadedCase, LocatedProblem, load_case_set
from judgekit.errors import JudgekitError, Problem, ProblemsError
from judgekit.golden.journal import (
    Journal,
    JournalCase,
    JournalMove,
    begin,
    digest,
    end,
    finish_pending,
    journal_path,
    relative,
)
from judgekit.golden.pii import personal_data_problems
from judgekit.io.atomic import move_file
from judgekit.verdict import FrozenModel

__all__ = ["Promoted", "Promotion", "PromotionDocument", "promote_candidates", "promotion_document"]


@dataclass(frozen=True)
class Promotion:
    """One promoted case.

    Attributes:
        case_id: The case promoted.
        source: Where its file was.
        destination: Where its file is now.
        resumed: True when this run finished a promotion a killed run had started (the file may have
            moved then or now).
    """

    case_id: str
    source: Path
    destination: Path
    resumed: bool = False


def _blank(text: str) -> bool:
    """Whether a criterion says nothing: empty, whitespace, or only invisible characters."""
    return not review_guard_text(text).strip()


def _criterion_problems(loaded: LoadedCase) -> list[Problem]:
    """Why the judged criteria of a candidate are not ready for the set (empty when they are).

    Args:
        loaded: The candidate as loaded.

    Returns:
        One problem per criterion that is missing, blank or still marked for review, located at its line.
    """
    case = loaded.case
    path = loaded.path
    problems: list[Problem] = []
    if case.acceptance is None:
        problems.append(
            Problem(
                path,
                loaded.line,
                "acceptance",
                "missing: write the acceptance criterion a person and a judge can both apply, then promote",
            )
        )
    elif _blank(case.acceptance):
        problems.append(
            Problem(
                path,
                loaded.line_of("acceptance"),
                "acceptance",
                "is empty: write the acceptance criterion a person and a judge can both apply, then promote",
            )
        )
    if case.required_outcome is not None and _blank(case.required_outcome):
        problems.append(
            Problem(
                path,
                loaded.line_of("required_outcome"),
                "required_outcome",
                "is empty: write the outcome that counts as success, or remove the field, then promote",
            )
        )
    criteria: list[tuple[str, str | None]] = [
        ("acceptance", case.acceptance),
        ("required_outcome", case.required_outcome),
        *((f"forbidden_outcomes.{i}", text) for i, text in enumerate(case.forbidden_outcomes)),
        *((f"response_rubric.{i}", text) for i, text in enumerate(case.response_rubric)),
    ]
    for field, text in criteria:
        if starts_with_review_marker(text):
            what = "the acceptance criterion" if field == "acceptance" else "the criterion"
            problems.append(
                Problem(
                    path,
                    loaded.line_of(field),
                    field,
                    f"still starts with '{REVIEW_PREFIX}': write or approve {what}, then promote",
                )
            )
    return problems


def _journal(root: Path, plan: Sequence[Promotion]) -> Journal:
    """The journal of ``plan``: each move relative to the set's root, with the candidate file's digest.

    Raises:
        JudgekitError: When a candidate file cannot be read.
    """
    moves: list[JournalMove] = []
    for step in plan:
        try:
            sha = digest(step.source)
        except OSError as exc:
            raise JudgekitError(
                f"{step.source}: cannot read it: {exc.strerror}; nothing was promoted"
            ) from None
        moves.append(
            JournalMove(
                source=relative(root, step.source),
                destination=relative(root, step.destination),
                sha256=sha,
                cases=(JournalCase(id=step.case_id),),
            )
        )
    return Journal(operation="promote", moves=tuple(moves))


def _move_all(plan: Sequence[Promotion], target_dir: Path, root: Path) -> None:
    """Move every planned file, or none: on a failure the files already moved are moved back.

    The journal is written before the first move and deleted after the last (or after a failure whose
    moves were all undone), so a kill at any point leaves a set the next promotion finishes.

    Args:
        plan: The moves, in order.
        target_dir: The folder the files move into (created when missing, removed again on a failure).
        root: The set's root folder, where the journal goes.

    Raises:
        JudgekitError: When a move fails (the destination appeared meanwhile, or the system refused);
            the message says what was moved back, and names any file that could not be (the journal then
            stays, and the next promotion finishes the promotion).
    """
    journal = _journal(root, plan)
    created = not target_dir.exists()
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JudgekitError(f"{target_dir}: cannot create it: {exc.strerror}; nothing was promoted") from None
    try:
        begin(root, journal)
    except JudgekitError as exc:
        if created:
            with contextlib.suppress(OSError):
                target_dir.rmdir()
        raise JudgekitError(f"{exc.message}; nothing was promoted", exit_code=exc.exit_code) from None
    done: list[Promotion] = []
    for step in plan:
        try:
            if os.path.lexists(step.destination):  # appeared since the check: never overwrite it
                raise FileExistsError(0, "it exists already (it appeared while promoting)")
            move_file(step.source, step.destination)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            stranded: list[str] = []
            for moved in reversed(done):
                try:
                    move_file(moved.destination, moved.source)
                except OSError as back:
                    stranded.append(
                        f"{moved.destination} could not be moved back to {moved.source} "
                        f"({back.strerror or back}): move it by hand"
                    )
            if stranded:
                outcome = "; ".join(stranded) + (
                    f"; {journal_path(root)} records the promotion: rerun it to finish it instead"
                )
            else:
                end(root)
                if created:
                    with contextlib.suppress(OSError):  # something else was written there meanwhile
                        target_dir.rmdir()
                outcome = (
                    f"the {len(done)} file(s) already moved were moved back; nothing was promoted"
                    if done
                    else "nothing was promoted"
                )
            raise JudgekitError(
                f"{step.source}: cannot move it to {step.destination}: {reason}; {outcome}"
            ) from None
        done.append(step)
    end(root)


def _finished(root: Path, journal: Journal | None) -> list[Promotion]:
    """The promotions a finished journal made, in its order (empty when none was pending)."""
    if journal is None:
        return []
    return [
        Promotion(case.id, root / PurePosixPath(move.source), root / PurePosixPath(move.destination), True)
        for move in journal.moves
        for case in move.cases
    ]


def promote_candidates(set_path: str | os.PathLike[str], ids: Sequence[str]) -> list[Promotion]:
    """Move reviewed candidates into the set's cases folder.

    Every id is checked before any file moves, and the moves are all or nothing: either all named
    candidates are promoted or none is (a move that fails has the ones before it moved back). An id named
    twice is promoted once.

    A promotion a killed run left half done (its journal at the set's root) is finished first, whichever
    ids are named now: its candidates come first in the result, marked ``resumed``, and the ids named now
    that it promoted are not promoted again.

    Args:
        set_path: The golden set's root folder, as text or a path object.
        ids: Ids of the candidates to promote.

    Returns:
        The promotions finished from an interrupted run (in its order), then those made now, in the order
        the ids were named.

    Raises:
        JudgekitError: When no id is named, or a move fails (the files already moved are moved back), or
            an interrupted retirement is pending (``judgekit cases retire`` finishes it).
        ProblemsError: Listing every reason a named candidate cannot be promoted, each located at its
            file, line and field where it has one (nothing is moved); or every file an interrupted
            promotion cannot be finished for (changed since; nothing is moved).
    """
    set_path = Path(set_path)
    if not ids:
        raise JudgekitError("name at least one candidate id to promote")
    case_set = load_case_set(set_path, check_files=True)
    resumed = _finished(case_set.root, finish_pending(case_set.root, "promote"))
    if resumed:
        case_set = load_case_set(set_path, check_files=True)
    finished_ids = {p.case_id for p in resumed}
    ids = [case_id for case_id in ids if case_id not in finished_ids]
    if not ids:
        return resumed
    allow = case_set.manifest.synthetic_values if case_set.manifest else ()
    by_id: dict[str, list[LoadedCase]] = {}
    for loaded in case_set.cases:
        by_id.setdefault(loaded.case.id, []).append(loaded)
    problems: list[Problem] = []
    files_per_path: dict[Path, int] = {}
    for loaded in case_set.cases:
        files_per_path[loaded.path] = files_per_path.get(loaded.path, 0) + 1
    target_dir = case_set.folder("cases_dir")
    plan: list[Promotion] = []
    claimed: dict[Path, str] = {}
    for case_id in dict.fromkeys(ids):
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
        problems.extend(_criterion_problems(loaded))
        pii_problems, pii_warnings = personal_data_problems([loaded], allow=allow)
        problems.extend([*pii_problems, *pii_warnings])
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
        elif destination in claimed:
            problems.append(
                Problem(
                    loaded.path,
                    None,
                    "",
                    f"candidate '{claimed[destination]}' would move to {destination} too; rename one of "
                    "the candidate files",
                )
            )
        claimed.setdefault(destination, case_id)
        plan.append(Promotion(case_id, loaded.path, destination))
    if problems:
        raise ProblemsError(problems)
    _move_all(plan, target_dir, case_set.root)
    return [*resumed, *plan]


class Promoted(FrozenModel):
    """One candidate moved into the set, as printed.

    Attributes:
        id: The case promoted.
        source: Where its file was (printed as ``from``).
        destination: Where its file is now (printed as ``to``).
    """

    id: str
    source: str = Field(alias="from")
    destination: str = Field(alias="to")


class PromotionDocument(FrozenModel):
    """Candidates promoted (the ``promotion`` document ``judgekit candidates promote`` prints).

    Attributes:
        promoted: The candidates moved, in the order given; empty when the promotion was refused.
        problems: Why it was refused (nothing is moved then); empty when it was not.
    """

    promoted: list[Promoted] = Field(default_factory=list)
    problems: list[LocatedProblem] = Field(default_factory=list)


def promotion_document(steps: Sequence[Promotion]) -> PromotionDocument:
    """The ``promotion`` document of a promotion that went through.

    Args:
        steps: The candidates moved (:func:`promote_candidates`).

    Returns:
        The document, with no problems.
    """
    promoted = [
        Promoted.model_validate({"id": s.case_id, "from": str(s.source), "to": str(s.destination)})
        for s in steps
    ]
    return PromotionDocument(promoted=promoted)

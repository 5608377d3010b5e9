"""The re-baselining guard: what a case's grading depends on must not change without a version bump.

Scores from before and after a change to a case's expectation are not comparable. This module compares
the reviewed cases of a set with the same cases at an earlier git revision. For each case it hashes what
its grading depends on: the expectation fields (:data:`EXPECTATION_FIELDS`) and the bytes of every fixture
file the case's ``initial_state``, ``expected_state.snapshot`` or (with ``expected_state.from_reference``)
``reference_solution`` names. A case whose hash differs while its version did not go up is reported,
naming each field and fixture file that changed. A case that is new to the reviewed set (absent at the
revision, or there only as a candidate) is a promotion: it has no earlier expectation to compare with. A
case whose split changed (``judgekit cases retire`` moving it to the regression split) is a move, listed with
its reason; it is not a contract change.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import Field

from judgekit.cases import Case, confine_path
from judgekit.caseset import CASE_FILE_SUFFIXES, NON_CASE_DIRS, CaseSet, document_cases, load_case_set
from judgekit.errors import JudgekitError
from judgekit.io.documents import Document, parse_text
from judgekit.verdict import FrozenModel

__all__ = [
    "EXPECTATION_FIELDS",
    "Comparison",
    "GoldenDiffDocument",
    "Move",
    "MovedCase",
    "PromotedCase",
    "Promotion",
    "Rebaseline",
    "UnversionedCase",
    "compare_with_revision",
    "diff_with_revision",
    "expectation_fields",
    "find_unversioned_changes",
]

EXPECTATION_FIELDS = (
    "expected_state",
    "expected",
    "required_outcome",
    "acceptance",
    "forbidden",
    "prohibited",
    "forbidden_outcomes",
    "response_rubric",
    "turns.expect_contains",
    "identity",
    "do_nothing",
    "initial_state",
    "reference_solution",
)
"""The case fields whose change needs a version bump, in the order changes are named.

``turns.expect_contains`` stands for each turn's ``expect_contains`` and ``critical`` (the user's wording
is not part of it); ``identity`` is what forbidden rules test against (``identity.customer_id``);
``reference_solution`` counts only when ``expected_state.from_reference`` is set.
"""


@dataclass(frozen=True)
class Rebaseline:
    """A case whose expectation changed since a revision without a version bump.

    Attributes:
        case_id: The case.
        path: Its file now.
        old_version: Its version at the revision.
        new_version: Its version now (not greater than ``old_version``).
        changed: What changed, in order: field names from :data:`EXPECTATION_FIELDS` (``acceptance``,
            ``expected_state``...), then one ``fixture PATH (ROLE)`` per fixture file whose bytes changed
            (``fixture fixtures/after.json (expected_state.snapshot)``; PATH as the case writes it).
        old_hash: SHA-256 (hex) of the case's expectation at the revision.
        new_hash: SHA-256 (hex) of the case's expectation in the working tree.
    """

    case_id: str
    path: Path
    old_version: int
    new_version: int
    changed: tuple[str, ...]
    old_hash: str = ""
    new_hash: str = ""


@dataclass(frozen=True)
class Promotion:
    """A reviewed case that has no reviewed counterpart at the revision: nothing to compare with.

    Attributes:
        case_id: The case.
        path: Its file now.
        version: Its version now.
        source: ``candidate`` when the case was a candidate at the revision (promoted after review),
            ``new`` when no case had this id there.
    """

    case_id: str
    path: Path
    version: int
    source: Literal["candidate", "new"]


@dataclass(frozen=True)
class Move:
    """A case whose split changed since the revision (a retirement, or a case brought back).

    A move is not a contract change: it needs no version bump, but it is a decision to review.

    Attributes:
        case_id: The case.
        path: Its file now.
        old_split: Its split at the revision (``None``: none).
        new_split: Its split now (``None``: none).
        reason: The ``retired.reason`` the case gives now, ``None`` when it has no retirement record.
    """

    case_id: str
    path: Path
    old_split: str | None
    new_split: str | None
    reason: str | None


@dataclass(frozen=True)
class Comparison:
    """The result of comparing a set with a revision.

    Attributes:
        unversioned: Cases whose expectation changed without a version bump, sorted by id.
        promoted: Cases new to the reviewed set since the revision, sorted by id.
        moved: Cases whose split changed since the revision (retired by ``judgekit cases retire``, or moved by
            hand), sorted by id.
    """

    unversioned: list[Rebaseline] = field(default_factory=list)
    promoted: list[Promotion] = field(default_factory=list)
    moved: list[Move] = field(default_factory=list)


@dataclass(frozen=True)
class _Fixture:
    """A fixture file a case names: ``written`` as the case writes it, ``roles`` the fields naming it."""

    written: str
    roles: tuple[str, ...]


def _git(args: list[str], cwd: Path) -> str:
    try:
        completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise JudgekitError("git is not installed; golden diff needs git") from None
    if completed.returncode != 0:
        raise JudgekitError(f"git {' '.join(args)}: {completed.stderr.strip() or 'failed'}")
    return completed.stdout


def _blobs_at(top: Path, commit: str, paths: list[str]) -> dict[str, bytes | None]:
    """The bytes of each path (relative to the work tree's top) at ``commit``; ``None`` when absent.

    One ``git cat-file --batch`` reads them all. A path that is a folder at ``commit`` counts as absent.
    """
    asked = [p for p in paths if "\n" not in p]
    out: dict[str, bytes | None] = dict.fromkeys(paths)
    if not asked:
        return out
    request = "".join(f"{commit}:{p}\n" for p in asked).encode("utf-8")
    try:
        completed = subprocess.run(
            ["git", "cat-file", "--batch"], cwd=top, input=request, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise JudgekitError("git is not installed; golden diff needs git") from None
    if completed.returncode != 0:
        message = completed.stderr.decode("utf-8", "replace").strip() or "failed"
        raise JudgekitError(f"git cat-file --batch: {message}")
    data = completed.stdout
    pos = 0
    for path in asked:
        end = data.find(b"\n", pos)
        if end < 0:
            raise JudgekitError(f"git cat-file --batch: output ended before {commit}:{path}")
        header = data[pos:end].split(b" ")
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit():
            continue  # "<name> missing" or "<name> ambiguous": not a file at that revision
        size = int(header[2])
        if header[1] == b"blob":
            out[path] = data[pos : pos + size]
        pos += size + 1
    return out


def expectation_fields(case: Case) -> dict[str, Any]:
    """What a case's grading depends on inside its own file, as plain data keyed by field name.

    Args:
        case: The case.

    Returns:
        One entry per name in :data:`EXPECTATION_FIELDS`, in that order; ``reference_solution`` is
        ``None`` unless the expected state is taken from the reference solution.
    """
    fields = case.contract_fingerprint_fields()
    from_reference = case.expected_state is not None and case.expected_state.from_reference
    fields |= {
        "turns.expect_contains": [
            {"expect_contains": list(turn.expect_contains), "critical": turn.critical} for turn in case.turns
        ],
        "identity": dict(sorted(case.identity.items())),
        "do_nothing": case.do_nothing.model_dump(mode="json") if case.do_nothing else None,
        "initial_state": case.initial_state,
        "reference_solution": case.reference_solution if from_reference else None,
    }
    return {name: fields.get(name) for name in EXPECTATION_FIELDS}


def _fixtures(case: Case) -> list[_Fixture]:
    """The fixture files a case's expectation depends on, each once, in field order."""
    named: list[tuple[str, str]] = []
    if case.initial_state:
        named.append(("initial_state", case.initial_state))
    if case.expected_state is not None and case.expected_state.snapshot:
        named.append(("expected_state.snapshot", case.expected_state.snapshot))
    if case.expected_state is not None and case.expected_state.from_reference and case.reference_solution:
        named.append(("reference_solution", case.reference_solution))
    roles: dict[str, list[str]] = {}
    for role, written in named:
        roles.setdefault(written, []).append(role)
    return [_Fixture(written, tuple(r)) for written, r in roles.items()]


class _Tree:
    """Resolves fixture paths of one set and reads their bytes at a revision and in the working tree."""

    def __init__(self, case_set: CaseSet, top: Path, commit: str) -> None:
        self.case_set = case_set
        self.top = top.resolve()
        self.commit = commit
        self._old: dict[str, bytes | None] = {}

    def key(self, written: str) -> str | None:
        """The fixture's path relative to the work tree's top (``None``: outside the work tree)."""
        try:
            resolved = confine_path(written, self.case_set.root, self.case_set.allowed_roots)
        except ValueError:
            return None  # the set's validation reports such a path; nothing to read
        if not resolved.is_relative_to(self.top):
            return None  # an allowed root outside the repository has no history to compare with
        return resolved.relative_to(self.top).as_posix()

    def load_old(self, keys: set[str]) -> None:
        """Read every ``keys`` file at the revision in one go."""
        self._old = _blobs_at(self.top, self.commit, sorted(keys))

    def digest(self, key: str, *, old: bool) -> str | None:
        """SHA-256 (hex) of the file's bytes at the revision (``old``) or now; ``None`` when absent."""
        if old:
            content = self._old.get(key)
        else:
            try:
                from judgekit.io.documents import read_regular

                content = read_regular(self.top / key, "golden file")
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                content = None
            except OSError as exc:
                raise JudgekitError(
                    f"{self.top / key}: cannot read the fixture ({exc.strerror}); fix its permissions"
                ) from None
        return hashlib.sha256(content).hexdigest() if content is not None else None


def _hash(fields: dict[str, Any], files: dict[str, str | None]) -> str:
    """SHA-256 (hex) of a case's expectation fields and its fixture files' digests."""
    text = json.dumps({"fields": fields, "files": files}, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _old_cases(case_set: CaseSet, top: Path, commit: str) -> tuple[dict[str, Case], set[str]]:
    """The reviewed cases at ``commit`` by id, and the ids that were only candidates there."""
    root = case_set.root
    rel_root = root.resolve().relative_to(top.resolve())
    candidates_dir = case_set.folder("candidates_dir").resolve()
    cand_rel = (
        PurePosixPath(candidates_dir.relative_to(top.resolve()).as_posix())
        if candidates_dir.is_relative_to(top.resolve())
        else None
    )
    listing = _git(["ls-tree", "-r", "--name-only", commit, "--", str(rel_root) or "."], top)
    reviewed: dict[str, Case] = {}
    candidates: set[str] = set()
    for name in listing.splitlines():
        path = Path(name)
        if path.suffix.lower() not in CASE_FILE_SUFFIXES or path.name == "judgekit-set.yaml":
            continue
        inner = path.relative_to(rel_root).parts[:-1] if str(rel_root) != "." else path.parts[:-1]
        if any(part in NON_CASE_DIRS or part.startswith(".") for part in inner):
            continue
        is_candidate = cand_rel is not None and cand_rel in PurePosixPath(name).parents
        text = _git(["show", f"{commit}:{name}"], top)
        try:
            docs = list(parse_text(text, path))
        except JudgekitError:
            continue  # the file was broken at that revision; nothing to compare with
        for doc in docs:
            if not isinstance(doc, Document):
                continue
            for _, case in document_cases(doc):
                if not isinstance(case, Case):
                    continue
                if is_candidate:
                    candidates.add(case.id)
                else:
                    reviewed.setdefault(case.id, case)
    return reviewed, candidates - set(reviewed)


def compare_with_revision(set_path: str | os.PathLike[str], rev: str) -> Comparison:
    """Compare the reviewed cases of a set with the same cases at ``rev``.

    A reviewed case is compared when a reviewed case with its id existed at ``rev`` (cases under the
    set's ``candidates_dir`` there are candidates, not reviewed). Its expectation hash covers the
    :data:`EXPECTATION_FIELDS` and the bytes of each fixture file it names, read with ``git cat-file``
    at ``rev`` and from the working tree; fixture paths resolve inside the set (or its allowed roots) as
    everywhere else. A fixture outside the git work tree has no history and is left out of both hashes.
    Cases invalid at ``rev`` are not compared.

    Args:
        set_path: The golden set's root folder (inside a git work tree), as text or a path object.
        rev: A git revision (``main``, ``HEAD~3``, a commit id).

    Returns:
        The cases changed without a version bump, the cases promoted and the cases moved to another split
        since ``rev``, each sorted by id.

    Raises:
        JudgekitError: When the folder is not in a git work tree, the revision is unknown, the set is
            invalid now, or a fixture file cannot be read.
    """
    case_set = load_case_set(Path(set_path), check_files=False)
    case_set.raise_if_invalid()
    root = case_set.root
    top = Path(_git(["rev-parse", "--show-toplevel"], root).strip())
    commit = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], root).strip()
    old, old_candidates = _old_cases(case_set, top, commit)
    tree = _Tree(case_set, top, commit)

    pairs: list[tuple[Case, Case, Path]] = []
    promoted: list[Promotion] = []
    for loaded in case_set.reviewed():
        before = old.get(loaded.case.id)
        if before is None:
            source: Literal["candidate", "new"] = "candidate" if loaded.case.id in old_candidates else "new"
            promoted.append(Promotion(loaded.case.id, loaded.path, loaded.case.version, source))
        else:
            pairs.append((before, loaded.case, loaded.path))
    tree.load_old({k for before, _, _ in pairs for f in _fixtures(before) if (k := tree.key(f.written))})

    found: list[Rebaseline] = []
    moved = [
        Move(case.id, path, before.split, case.split, case.retired.reason if case.retired else None)
        for before, case, path in pairs
        if before.split != case.split
    ]
    for before, case, path in pairs:
        old_fields, new_fields = expectation_fields(before), expectation_fields(case)
        changed = [name for name in EXPECTATION_FIELDS if new_fields[name] != old_fields[name]]
        old_files = {k: tree.digest(k, old=True) for f in _fixtures(before) if (k := tree.key(f.written))}
        new_files: dict[str, str | None] = {}
        for fixture in _fixtures(case):
            key = tree.key(fixture.written)
            if key is None:
                continue
            new_files[key] = tree.digest(key, old=False)
            if key in old_files and old_files[key] != new_files[key]:
                changed.append(f"fixture {fixture.written} ({', '.join(fixture.roles)})")
        old_hash, new_hash = _hash(old_fields, old_files), _hash(new_fields, new_files)
        if changed and case.version <= before.version:
            found.append(
                Rebaseline(case.id, path, before.version, case.version, tuple(changed), old_hash, new_hash)
            )
    return Comparison(
        unversioned=sorted(found, key=lambda r: r.case_id),
        promoted=sorted(promoted, key=lambda p: p.case_id),
        moved=sorted(moved, key=lambda m: m.case_id),
    )


def find_unversioned_changes(set_path: str | os.PathLike[str], rev: str) -> list[Rebaseline]:
    """List cases whose expectation changed since ``rev`` without a version bump.

    The same comparison as :func:`compare_with_revision`, without the promotions: cases new to the
    reviewed set since ``rev`` (promoted candidates among them) are not compared.

    Args:
        set_path: The golden set's root folder (inside a git work tree), as text or a path object.
        rev: A git revision (``main``, ``HEAD~3``, a commit id).

    Returns:
        The offending cases, sorted by id.

    Raises:
        JudgekitError: When the folder is not in a git work tree, the revision is unknown, the set is
            invalid now, or a fixture file cannot be read.
    """
    return compare_with_revision(set_path, rev).unversioned


class UnversionedCase(FrozenModel):
    """A case whose contract changed since the revision while its version stayed.

    Attributes:
        id: The case.
        file: Its file.
        changed: The contract parts that changed (``expected``, ``acceptance``, fixture paths...).
        old_version: Its version at the revision.
        new_version: Its version now (the same: the version was not bumped).
    """

    id: str
    file: str
    changed: list[str]
    old_version: int
    new_version: int


class PromotedCase(FrozenModel):
    """A case new to the reviewed set since the revision (nothing to compare).

    Attributes:
        id: The case.
        file: Its file.
        source: ``candidate`` (a candidate at the revision) or ``new`` (not in the set); printed as ``from``.
        version: Its version now.
    """

    id: str
    file: str
    source: str = Field(serialization_alias="from")
    version: int


class MovedCase(FrozenModel):
    """A case whose split changed since the revision (judgekit cases retire): not a contract change.

    Attributes:
        id: The case.
        file: Its file.
        old_split: Its split at the revision (``None`` when it had none); printed as ``from``.
        new_split: Its split now (``None`` when it has none); printed as ``to``.
        reason: The reason its ``retired:`` record gives, or ``None``.
    """

    id: str
    file: str
    old_split: str | None = Field(serialization_alias="from")
    new_split: str | None = Field(serialization_alias="to")
    reason: str | None


class GoldenDiffDocument(FrozenModel):
    """Cases whose contract changed since a revision (the ``golden_diff`` document).

    Attributes:
        revision: The git revision compared with.
        unversioned: Contract changes without a version bump (each one is a finding).
        promoted: Cases new to the reviewed set.
        moved: Cases whose split changed.
    """

    revision: str
    unversioned: list[UnversionedCase]
    promoted: list[PromotedCase]
    moved: list[MovedCase]


def diff_with_revision(set_path: str | os.PathLike[str], rev: str) -> GoldenDiffDocument:
    """Compare a golden set with a git revision: :func:`compare_with_revision` as a document.

    Args:
        set_path: The set's root folder.
        rev: A git revision (``main``, ``HEAD~1``, a commit).

    Returns:
        The unversioned contract changes, the promoted cases and the moved ones, in set order.

    Raises:
        JudgekitError: As :func:`compare_with_revision` (not a git work tree, an unknown revision).
    """
    comparison = compare_with_revision(set_path, rev)
    return GoldenDiffDocument(
        revision=rev,
        unversioned=[
            UnversionedCase(
                id=item.case_id,
                file=str(item.path),
                changed=list(item.changed),
                old_version=item.old_version,
                new_version=item.new_version,
            )
            for item in comparison.unversioned
        ],
        promoted=[
            PromotedCase(id=item.case_id, file=str(item.path), source=item.source, version=item.version)
            for item in comparison.promoted
        ],
        moved=[
            MovedCase(
                id=item.case_id,
                file=str(item.path),
                old_split=item.old_split,
                new_split=item.new_split,
                reason=item.reason,
            )
            for item in comparison.moved
        ],
    )

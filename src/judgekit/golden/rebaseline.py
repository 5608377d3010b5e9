"""The re-baselining guard: expected outcomes must not change without a version bump.

Scores from before and after a change to a case's expected outcome are not comparable. This module
compares the cases of a set with the same cases at an earlier git revision and lists every case whose
expected outcome, acceptance criterion or forbidden rules changed while its version did not go up.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from judgekit.cases import Case, parse_case
from judgekit.caseset import CASE_FILE_SUFFIXES, NON_CASE_DIRS, load_case_set
from judgekit.errors import JudgekitError
from judgekit.io.documents import Document, parse_text

__all__ = ["Rebaseline", "find_unversioned_changes"]


@dataclass(frozen=True)
class Rebaseline:
    """A case whose contract changed since a revision without a version bump.

    Attributes:
        case_id: The case.
        path: Its file now.
        old_version: Its version at the revision.
        new_version: Its version now (not greater than ``old_version``).
        changed: The contract parts that changed (``acceptance``, ``expected_state``, ``forbidden``...).
    """

    case_id: str
    path: Path
    old_version: int
    new_version: int
    changed: tuple[str, ...]


def _git(args: list[str], cwd: Path) -> str:
    try:
        completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise JudgekitError("git is not installed; golden diff needs git") from None
    if completed.returncode != 0:
        raise JudgekitError(f"git {' '.join(args)}: {completed.stderr.strip() or 'failed'}")
    return completed.stdout


def _old_cases(root: Path, rev: str) -> dict[str, Case]:
    top = Path(_git(["rev-parse", "--show-toplevel"], root).strip())
    _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], root)
    rel_root = root.resolve().relative_to(top.resolve())
    listing = _git(["ls-tree", "-r", "--name-only", rev, "--", str(rel_root) or "."], top)
    out: dict[str, Case] = {}
    for name in listing.splitlines():
        path = Path(name)
        if path.suffix.lower() not in CASE_FILE_SUFFIXES or path.name == "judgekit-set.yaml":
            continue
        inner = path.relative_to(rel_root).parts[:-1] if str(rel_root) != "." else path.parts[:-1]
        if any(part in NON_CASE_DIRS or part.startswith(".") for part in inner):
            continue
        text = _git(["show", f"{rev}:{name}"], top)
        try:
            docs = list(parse_text(text, path))
        except JudgekitError:
            continue  # the file was broken at that revision; nothing to compare with
        for doc in docs:
            if not isinstance(doc, Document):
                continue
            items = doc.data if isinstance(doc.data, list) else [doc.data]
            for item in items:
                case = parse_case(item, doc)
                if isinstance(case, Case):
                    out.setdefault(case.id, case)
    return out


def find_unversioned_changes(set_path: str | os.PathLike[str], rev: str) -> list[Rebaseline]:
    """List cases whose contract changed since ``rev`` without a version bump.

    Cases new since ``rev`` and cases invalid at ``rev`` are not compared.

    Args:
        set_path: The golden set's root folder (inside a git work tree), as text or a path object.
        rev: A git revision (``main``, ``HEAD~3``, a commit id).

    Returns:
        The offending cases, sorted by id.

    Raises:
        JudgekitError: When the folder is not in a git work tree, the revision is unknown, or the set is
            invalid now.
    """
    set_path = Path(set_path)
    case_set = load_case_set(set_path, check_files=False)
    case_set.raise_if_invalid()
    old = _old_cases(case_set.root, rev)
    found: list[Rebaseline] = []
    for loaded in case_set.reviewed():
        case = loaded.case
        before = old.get(case.id)
        if before is None:
            continue
        old_fields = before.contract_fingerprint_fields()
        new_fields = case.contract_fingerprint_fields()
        changed = tuple(k for k in new_fields if new_fields[k] != old_fields.get(k))
        if changed and case.version <= before.version:
            found.append(Rebaseline(case.id, loaded.path, before.version, case.version, changed))
    return sorted(found, key=lambda r: r.case_id)

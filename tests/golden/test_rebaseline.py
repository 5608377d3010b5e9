"""Contract changes without a version bump, found from Python."""

from __future__ import annotations

import subprocess
from pathlib import Path

from judgekit.golden.rebaseline import find_unversioned_changes


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd, check=True)


def test_a_set_named_as_text_is_compared_with_a_revision(small_set: Path) -> None:
    _git(small_set.parent, "init", "-q")
    _git(small_set.parent, "add", ".")
    _git(small_set.parent, "commit", "-qm", "base")
    case = small_set / "cases" / "a.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("States the balance.", "States it."))
    [found] = find_unversioned_changes(str(small_set), "HEAD")
    assert (found.case_id, found.path, found.changed) == ("GS-1", case, ("acceptance",))

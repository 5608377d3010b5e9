"""Provenance of a graded result: everything needed to say how a number was produced, and to redo it.

A :class:`Provenance` travels in every result line (``ResultLine.provenance``): the grading method, the
seed, judgekit's version, the git revision of the case set (and whether its files had uncommitted
changes), the versions of the libraries that can change a verdict or a statistic, and the thresholds in
force. It is computed once per run (:func:`collect_provenance`) and shared by every line.

Nothing here fails a run: a case set outside git, or git missing, gives ``case_set_revision = None`` with
the reason in ``case_set_revision_note``; a library that is not installed is recorded as such.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path

from pydantic import Field, JsonValue

from judgekit.verdict import FrozenModel
from judgekit.version import __version__

__all__ = [
    "DEFAULT_DEPENDENCIES",
    "NOT_INSTALLED",
    "Provenance",
    "collect_provenance",
    "dependency_versions",
    "git_revision",
]

DEFAULT_DEPENDENCIES: tuple[str, ...] = (
    "pydantic",
    "litellm",
    "jinja2",
    "numpy",
    "scipy",
    "scikit-learn",
    "krippendorff",
    "common-expression-language",
    "typer",
)
"""Distributions whose versions can change a verdict, a prompt or a statistic."""

NOT_INSTALLED = "not installed"


class Provenance(FrozenModel):
    """How a result was produced.

    Attributes:
        method: The grading method: the layers run and, for a judge layer, its fingerprint label
            (``layered:state,rules,route,text+rubric:openai/gpt-4o-mini:honest-reporting@3:ab12...``).
        seed: The seed of every random step of the run (bootstrap, sampling), or ``None`` when nothing
            random ran.
        judgekit_version: judgekit's version.
        case_set_revision: The git commit (40 hex digits) of the case set's repository, or ``None`` when it
            is unknown (see ``case_set_revision_note``).
        case_set_dirty: True when the case set's files differ from that commit (uncommitted changes or
            untracked files under the case set's folder); ``None`` when the revision is unknown.
        case_set_revision_note: Why the revision is unknown (``None`` when it is known).
        dependencies: Version of each library that can change a result (``not installed`` when absent).
        python: The Python version.
        thresholds: Every threshold in force (trust policy bounds, pass^k's k, the untrusted-gate policy,
            bias tolerance...), by name.
    """

    method: str = Field(min_length=1)
    seed: int | None = None
    judgekit_version: str = __version__
    case_set_revision: str | None = None
    case_set_dirty: bool | None = None
    case_set_revision_note: str | None = None
    dependencies: dict[str, str] = Field(default_factory=dict)
    python: str = Field(default_factory=platform.python_version)
    thresholds: dict[str, JsonValue] = Field(default_factory=dict)


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    exe = shutil.which("git")
    if exe is None:
        return None
    try:
        return subprocess.run(  # fixed argument list, no shell
            [exe, "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def git_revision(path: str | os.PathLike[str]) -> tuple[str | None, bool | None, str | None]:
    """The git commit holding ``path``, whether ``path`` has uncommitted changes, and why it is unknown.

    Args:
        path: A folder (or file) of the case set, as text or a path object.

    Returns:
        ``(commit, dirty, note)``: ``commit`` is 40 hex digits and ``note`` ``None`` when known; otherwise
        ``(None, None, reason)``.
    """
    path = Path(path)
    if not path.exists():
        return None, None, f"{path} does not exist"
    folder = path if path.is_dir() else path.parent
    if shutil.which("git") is None:
        return None, None, "git is not installed"
    head = _git(["rev-parse", "HEAD"], folder)
    if head is None or head.returncode != 0:
        detail = (head.stderr.strip().splitlines() or ["git failed"])[0] if head is not None else "git failed"
        if "not a git repository" in detail:
            return None, None, f"{folder.name or folder} is not in a git repository"
        return None, None, f"no git revision: {detail}"
    commit = head.stdout.strip()
    status = _git(["status", "--porcelain", "--untracked-files=normal", "--", "."], folder)
    dirty = None if status is None or status.returncode != 0 else bool(status.stdout.strip())
    return commit, dirty, None


def dependency_versions(names: Iterable[str] = DEFAULT_DEPENDENCIES) -> dict[str, str]:
    """Installed version of each distribution (``not installed`` when absent), sorted by name."""
    out: dict[str, str] = {}
    for name in sorted(set(names)):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = NOT_INSTALLED
    return out


def collect_provenance(
    *,
    method: str,
    seed: int | None = None,
    case_set: str | os.PathLike[str] | None = None,
    thresholds: Mapping[str, JsonValue] | None = None,
    dependencies: Iterable[str] = DEFAULT_DEPENDENCIES,
) -> Provenance:
    """Collect the provenance of a run (once per run; every result line carries the same object).

    Args:
        method: The grading method (see :attr:`Provenance.method`).
        seed: The run's seed, if anything random ran.
        case_set: The case set's folder, for its git revision; ``None`` when the results come from no case
            set (the note says so), as text or a path object.
        thresholds: The thresholds in force, by name.
        dependencies: Distributions to record.

    Returns:
        The provenance.
    """
    case_set = Path(case_set) if case_set is not None else None
    commit: str | None
    dirty: bool | None
    note: str | None
    if case_set is None:
        commit, dirty, note = None, None, "no case set was given"
    else:
        commit, dirty, note = git_revision(case_set)
    return Provenance(
        method=method,
        seed=seed,
        case_set_revision=commit,
        case_set_dirty=dirty,
        case_set_revision_note=note,
        dependencies=dependency_versions(dependencies),
        thresholds=dict(thresholds or {}),
    )

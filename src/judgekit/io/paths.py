"""Input paths as a user gives them: several files, folders and glob patterns, expanded in one place.

A shell expands ``runs/*.jsonl`` before judgekit sees it, unless the pattern is quoted (as it must be in a
CI configuration or a Makefile, and as Windows shells never expand it). :func:`expand_input_paths` expands
what the shell did not, in the order given, and refuses a pattern that matches nothing or a file that is
not there with an error naming it, so that a typo never becomes an empty run.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable
from os import PathLike
from pathlib import Path

from judgekit.errors import JudgekitError
from judgekit.io.filekind import check_input_file

__all__ = ["GLOB_CHARS", "expand_input_paths", "is_pattern"]

GLOB_CHARS = frozenset("*?[")
"""Characters that make a path a glob pattern (``**`` matches folders at any depth)."""


def is_pattern(path: str | PathLike[str]) -> bool:
    """Whether a path is a glob pattern (holds ``*``, ``?`` or ``[``) rather than a file name."""
    return any(char in GLOB_CHARS for char in str(path))


def expand_input_paths(paths: Iterable[str | PathLike[str]], *, what: str, option: str = "") -> list[Path]:
    """Expand files and glob patterns into the files they name, in the order given, each once.

    A path that exists is taken as it is, even when its name holds a glob character. A pattern is
    expanded with :func:`glob.glob` (``**`` recursive), its matches sorted by name; folders among the
    matches are left out.

    Args:
        paths: Files and patterns, as text or path objects.
        what: What the files are, for messages (``transcript file``).
        option: The option they were given with, for messages (``--transcripts``); empty for none.

    Returns:
        The files, without repeats.

    Raises:
        JudgekitError: (exit code 2) When nothing was given, a pattern matches no file, or a named file
            does not exist or is not a regular file (:func:`check_input_file`).
    """
    given = f"{option} " if option else ""
    out: list[Path] = []
    seen: set[Path] = set()
    for item in paths:
        text = str(item)
        path = Path(text)
        if path.exists() or not is_pattern(text):
            if not path.exists():
                raise JudgekitError(f"{given}{text}: no such {what}", exit_code=2)
            check_input_file(path, what=what, option=option)
            matches = [path]
        else:
            matches = [Path(m) for m in sorted(glob.glob(text, recursive=True)) if Path(m).is_file()]
            if not matches:
                raise JudgekitError(
                    f"{given}'{text}': the pattern matches no {what} (looked from {Path.cwd()})", exit_code=2
                )
        for match in matches:
            key = match.resolve()
            if key not in seen:
                seen.add(key)
                out.append(match)
    if not out:
        raise JudgekitError(f"no {what} given{f' ({option})' if option else ''}", exit_code=2)
    return out

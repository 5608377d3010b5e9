"""Errors that reach a user, and the located problems that validation reports.

Every mistake a user can make (a malformed file, an unknown field, a missing fixture, a bad option) is
raised as a :class:`JudgekitError` or collected as a :class:`Problem`. The command line prints these as
one readable line each and exits non-zero; it never shows a traceback for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

__all__ = [
    "JudgekitError",
    "LocatedError",
    "Problem",
    "ProblemsError",
    "closest_name",
    "did_you_mean",
    "require_extra",
    "unknown_names",
]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a user's input, located as precisely as the input allows.

    Attributes:
        file: The file the problem is in, or ``None`` when it concerns no single file.
        line: 1-based line number inside ``file``, or ``None`` when it is not known (for example a
            missing required field, which has no line of its own; the line of its parent is used when
            it can be found).
        field: Dotted path of the field concerned (``expected.route.0.tool``), or ``""`` for the whole
            file.
        message: What is wrong and, where it helps, what to do about it.
    """

    file: Path | None
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = str(self.file) if self.file is not None else "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class JudgekitError(Exception):
    """A mistake in the user's input or configuration, with a message meant for people.

    Args:
        message: The whole explanation: what is wrong, where, and what to do.
        exit_code: The process exit code the command line uses for it: 2 (a usage or input error, as
            the exit-code table says) unless the raiser says 1 (a check found a problem, or an outside
            service such as the judge's API failed after its retries).
    """

    def __init__(self, message: str, *, exit_code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class ProblemsError(JudgekitError):
    """Several located problems found together (for example every invalid field of a case set)."""

    def __init__(self, problems: list[Problem], *, exit_code: int = 2) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems), exit_code=exit_code)


class LocatedError(JudgekitError):
    """A single user mistake at a known place in a file."""

    def __init__(self, problem: Problem, *, exit_code: int = 2) -> None:
        self.problem = problem
        super().__init__(str(problem), exit_code=exit_code)


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name a mistyped ``name`` most likely meant: the one place judgekit guesses a did-you-mean.

    Args:
        name: The name the user gave (a case id, a field, a predicate, a setting).
        known: The names that exist.

    Returns:
        The closest known name by :func:`difflib.get_close_matches` (similarity at least 0.6: one or two
        edits in a short name, a few in a longer one), or ``None`` when none is that close.
    """
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``; did you mean 'X'?`` to append to a message about an unknown ``name``, or ``""``.

    Args:
        name: The unknown name the user gave.
        known: The names that exist.

    Returns:
        The hint naming :func:`closest_name`, or the empty string when no known name is close.
    """
    close = closest_name(name, known)
    return f"; did you mean '{close}'?" if close is not None else ""


def unknown_names(names: Iterable[str], known: Iterable[str], *, quote: bool = False) -> str:
    """Unknown names listed for a message, each with its did-you-mean: ``a (did you mean 'b'?), c``.

    Args:
        names: The unknown names, in the order to list them.
        known: The names that exist (see :func:`closest_name`).
        quote: Put each unknown name in single quotes too (``'a' (did you mean 'b'?)``).

    Returns:
        The names joined by ``", "``; empty when ``names`` is.
    """
    candidates = list(known)
    shown = []
    for name in names:
        close = closest_name(name, candidates)
        named = f"'{name}'" if quote else name
        shown.append(f"{named} (did you mean '{close}'?)" if close is not None else named)
    return ", ".join(shown)


PACKAGE = "judgekit-agents"
"""The distribution name, as ``pip install`` takes it."""


def require_extra(module: str, extra: str) -> ModuleType:
    """Import an optional dependency, or say how to install it.

    Args:
        module: The module to import (``inspect_ai``).
        extra: The judgekit extra that brings it (``inspect``).

    Returns:
        The imported module.

    Raises:
        JudgekitError: When the module is not installed; the message gives the install command.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != module.split(".", maxsplit=1)[0]:
            raise
        raise JudgekitError(
            f"this integration needs the '{module}' package, which is not installed; "
            f"install it with: pip install '{PACKAGE}[{extra}]'"
        ) from None

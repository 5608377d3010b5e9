"""Locate data that ships with judgekit (rubrics, the bundled example) in a checkout or an install."""

from __future__ import annotations

from pathlib import Path

from judgekit.errors import JudgekitError

__all__ = ["EXAMPLE_SET", "resource_path"]

EXAMPLE_SET = "examples/airdesk"
"""The bundled synthetic golden set, relative to the repository (or ``_data`` when installed)."""

_PACKAGE = Path(__file__).resolve().parent


def resource_path(relative: str) -> Path:
    """Find shipped data by its path relative to the repository root.

    Looks in the installed package's ``_data`` folder first (wheels include ``rubrics/`` and the example
    there), then in the source checkout the package was imported from.

    Raises:
        JudgekitError: When neither place has it.
    """
    for candidate in (_PACKAGE / "_data" / relative, _PACKAGE.parents[1] / relative):
        if candidate.exists():
            return candidate
    raise JudgekitError(
        f"cannot find judgekit's bundled '{relative}' (looked in {_PACKAGE / '_data'} and "
        f"{_PACKAGE.parents[1]}); reinstall judgekit-agents"
    )

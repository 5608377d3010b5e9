"""Input paths a command reads: a missing one is a usage error (one line naming it, exit code 2).

A command marks the path parameters it reads with :func:`existing_inputs`; click then checks each path
before the command runs (``error: Invalid value for '--cases': Path 'golden' does not exist.``), so a
typo is reported the same way by every command, whatever order its inputs are read in, and nothing is
written first. Outputs (``--out``), ``--records`` (it may also come from ``JUDGEKIT_RECORDS`` or the project
configuration, and its default may be absent: no records, no trusted judge; a folder that was named must
exist, checked by :func:`judgekit.settings.records_folder`) and glob patterns (``grade --transcripts``,
expanded by :func:`judgekit.io.paths.expand_input_paths`) are not marked.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["existing_inputs"]

F = TypeVar("F", bound=Callable[..., Any])


def existing_inputs(*names: str) -> Callable[[F], F]:
    """Mark a command's path parameters that must exist when given.

    Args:
        *names: Names of the command function's parameters (``cases``, ``labels``); each must be
            declared with ``typer.Option`` or ``typer.Argument``.

    Returns:
        A decorator returning the command function itself, its parameters marked ``exists=True``.

    Raises:
        TypeError: When a name is not a typer parameter of the function (a programming error, raised
            when the command module is imported).
    """

    def mark(func: F) -> F:
        parameters = inspect.signature(func).parameters
        for name in names:
            info: Any = parameters[name].default if name in parameters else None
            if info is None or not hasattr(info, "exists"):
                raise TypeError(f"{func.__name__}: '{name}' is not a typer path parameter of the command")
            info.exists = True  # typer passes it to click's Path type, which checks before the command runs
        return func

    return mark

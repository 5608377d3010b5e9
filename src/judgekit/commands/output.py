"""Output settings shared by every command: ``--quiet``, and the version of the JSON documents.

``--quiet`` is the ``grep -q`` of judgekit: nothing but ``error:`` lines reaches the screen, the exit
code tells the outcome, and files a command writes (``--out``) are still written. It works for every
command without each one asking for it: while the command runs, standard output is discarded and
standard error lets through only the lines that start with ``error:``.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from typing import Any, TextIO

#: Lines of standard error that ``--quiet`` lets through.
ERROR_PREFIX = "error:"


class _Discard(io.TextIOBase):
    """A text stream that drops everything and is not a terminal."""

    def writable(self) -> bool:
        """Always writable."""
        return True

    def isatty(self) -> bool:
        """Never a terminal."""
        return False

    def write(self, text: str) -> int:
        """Drop ``text``.

        Args:
            text: What a command wrote.

        Returns:
            The number of characters taken.
        """
        return len(text)


class _ErrorsOnly(_Discard):
    """A text stream that forwards only the complete lines starting with ``error:`` to another stream."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self._target = target
        self._pending = ""

    def write(self, text: str) -> int:
        """Keep the ``error:`` lines of ``text``, drop the rest.

        Args:
            text: What a command wrote.

        Returns:
            The number of characters taken (all of them).
        """
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            if line.lstrip().startswith(ERROR_PREFIX):
                self._target.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        """Forward a last ``error:`` line that has no newline yet."""
        if self._pending.lstrip().startswith(ERROR_PREFIX):
            self._target.write(self._pending + "\n")
            self._pending = ""
        self._target.flush()


@contextlib.contextmanager
def quiet_output() -> Iterator[None]:
    """While open, discard standard output and keep only the ``error:`` lines of standard error."""
    errors = _ErrorsOnly(sys.stderr)
    with contextlib.redirect_stdout(_Discard()), contextlib.redirect_stderr(errors):
        try:
            yield
        finally:
            errors.flush()


#: Version of the JSON documents the commands print with ``--format json`` that have no model of their own.
#: Raise it when a field is renamed or removed; adding a field keeps it.
JSON_SCHEMA_VERSION = 1


def versioned(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """A command's JSON document with ``schema_version`` and ``kind`` first, so a reader can check both.

    Args:
        kind: What the document is (``lint_report``, ``reference_check``, ...).
        data: The document's fields.

    Returns:
        The document, led by ``schema_version`` (:data:`JSON_SCHEMA_VERSION`) and ``kind``.
    """
    return {"schema_version": JSON_SCHEMA_VERSION, "kind": kind, **data}


#: The output formats of a command that prints results: words for people, or one JSON document.
TEXT_OR_JSON = ("text", "json")


def format_option(default: str = "text", choices: tuple[str, ...] = TEXT_OR_JSON) -> Any:
    """The ``--format`` option of a command that prints results (one help sentence for every command).

    Args:
        default: The format when the option is not given.
        choices: The formats the command can print; ``json`` is a versioned document (:func:`versioned`).

    Returns:
        A typer option for the command's signature; check its value with :func:`chosen_format`.
    """
    import typer

    names = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
    extra = " (json: one document with schema_version, on standard output)" if "json" in choices else ""
    return typer.Option(default, "--format", metavar="FORMAT", help=f"Output format: {names}{extra}.")


def chosen_format(value: str, choices: tuple[str, ...] = TEXT_OR_JSON) -> str:
    """Check a ``--format`` value before the command does any work.

    Args:
        value: What the user gave.
        choices: The formats the command can print.

    Returns:
        ``value``, when it is one of ``choices``.

    Raises:
        JudgekitError: (exit code 2) When it is not; the message lists the choices.

    Example:
        >>> chosen_format("json")
        'json'
    """
    from judgekit.errors import JudgekitError

    if value not in choices:
        raise JudgekitError(f"--format must be {' or '.join(choices)} (got '{value}')", exit_code=2)
    return value


def print_document(kind: str, data: dict[str, Any]) -> None:
    """Print a command's result as one JSON document on standard output (see :func:`versioned`).

    Args:
        kind: What the document is (``validation``, ``coverage``, ...).
        data: Its fields; values that JSON has no type for (paths, dates) are written as text.
    """
    import json

    import typer

    typer.echo(json.dumps(versioned(kind, data), indent=2, ensure_ascii=False, default=str))

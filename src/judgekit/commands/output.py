"""Output settings shared by every command: ``--quiet``, redacted standard streams, JSON versions.

Also :func:`without_collections`, which the commands that build one large report (``report``,
``compare``) run their work in: the cyclic garbage collector off until it is done.

``--quiet`` is the ``grep -q`` of judgekit: nothing but ``error:`` lines reaches the screen, the exit
code tells the outcome, and files a command writes (``--out``) are still written. It works for every
command without each one asking for it: while the command runs, standard output is discarded and
standard error lets through only the lines that start with ``error:``.

Standard output is written like a file: :func:`redacted_streams` (installed once by
:func:`judgekit.cli.main`) passes everything a command prints on standard output and standard error
through the process-wide redactor (:func:`judgekit.secrets.output_redactor`), a whole line at a time. A
failed write to standard output is a :class:`~judgekit.errors.JudgekitError`: ``cannot write to standard
output: No space left on device`` with exit code 2 (``compare``'s regression code 1 stays unambiguous),
or, when the reader closed the pipe (``judgekit report ... | head``), :class:`OutputClosed`: no message
and exit code 141, the status
a Unix tool killed by ``SIGPIPE`` has, so a shell pipeline behaves as with ``cat``.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

from judgekit.errors import JudgekitError

if TYPE_CHECKING:
    from pydantic import BaseModel

#: The exit code when standard output's reader went away (128 + SIGPIPE, as a shell reports ``cat``).
EXIT_OUTPUT_CLOSED = 141

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


class _WholeLines(io.TextIOBase):
    """A text stream that hands on whole lines: what follows the last newline waits for more text."""

    _pending = ""

    def writable(self) -> bool:
        """Always writable."""
        return True

    def write(self, text: str) -> int:
        """Hand on the complete lines held with ``text``; keep the rest until a newline or a flush.

        Args:
            text: What a command wrote.

        Returns:
            The number of characters taken (all of them).
        """
        self._pending += text
        if "\n" in text:
            head, _, self._pending = self._pending.rpartition("\n")
            self._lines(head + "\n")
        return len(text)

    def _lines(self, text: str) -> None:
        """Hand on ``text``: complete lines, each ending with a newline (each subclass says how)."""
        raise NotImplementedError(type(self).__name__)


class _ErrorsOnly(_WholeLines):
    """A text stream that forwards only the complete lines starting with ``error:`` to another stream."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self._target = target

    def isatty(self) -> bool:
        """Never a terminal."""
        return False

    def _lines(self, text: str) -> None:
        for line in text.split("\n")[:-1]:
            if line.lstrip().startswith(ERROR_PREFIX):
                self._target.write(line + "\n")

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


class OutputClosed(JudgekitError):
    """Standard output's reader closed the pipe (``| head``): stop quietly with :data:`EXIT_OUTPUT_CLOSED`."""

    def __init__(self) -> None:
        super().__init__("", exit_code=EXIT_OUTPUT_CLOSED)


class _Redacting(_WholeLines):
    """A text stream that redacts whole lines before forwarding them to another stream.

    Text is held until a newline or a flush, so that a secret split over two writes is still seen whole.
    With ``standard_output`` true, a failed write becomes a :class:`~judgekit.errors.JudgekitError`
    (exit code 2) or :class:`OutputClosed`, and the stream's descriptor is pointed at the null device so
    that the interpreter's last flush at exit cannot fail again.

    Args:
        target: The stream written to.
        standard_output: Whether ``target`` is standard output (its failures are the command's).
    """

    def __init__(self, target: TextIO, *, standard_output: bool) -> None:
        super().__init__()
        self.target = target
        self._standard_output = standard_output
        self._failed: JudgekitError | None = None

    @property
    def failed(self) -> JudgekitError | None:
        """The error a failed write raised (every later write raises it again), or ``None``."""
        return self._failed

    def isatty(self) -> bool:
        """Whether the stream written to is a terminal (colour and progress bars follow it)."""
        try:
            return self.target.isatty()
        except (ValueError, OSError):  # closed (a test's captured stream after the test)
            return False

    def fileno(self) -> int:
        """The descriptor of the stream written to."""
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase declares it as a plain attribute
        """The encoding of the stream written to."""
        return getattr(self.target, "encoding", None) or "utf-8"

    def _lines(self, text: str) -> None:
        self._emit(text, flush=False)

    def flush(self) -> None:
        """Forward what is held, redacted, and flush the stream written to."""
        pending, self._pending = self._pending, ""
        self._emit(pending, flush=True)

    def _emit(self, text: str, *, flush: bool) -> None:
        if self._failed is not None:
            raise self._failed
        if text:
            from judgekit.secrets import output_redactor

            text = output_redactor().payload(text)
        try:
            if text:
                self.target.write(text)
            if flush:
                self.target.flush()
        except OSError as exc:
            if not self._standard_output:
                raise
            self._failed = _output_error(exc)
            _point_at_null(self.target)
            raise self._failed from None


def _output_error(exc: OSError) -> JudgekitError:
    if exc.errno == errno.EPIPE or isinstance(exc, BrokenPipeError):
        return OutputClosed()
    return JudgekitError(f"cannot write to standard output: {exc.strerror or exc}", exit_code=2)


def _point_at_null(stream: TextIO) -> None:
    """Make further writes to ``stream``'s descriptor vanish (what is buffered can no longer fail)."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)


@contextlib.contextmanager
def redacted_streams() -> Iterator[None]:
    """While open, standard output and standard error are redacted line by line (see the module).

    On leaving, what is held is flushed; a failure to write standard output then raises as described in
    the module (``judgekit.cli.main`` turns it into the exit code).
    """
    out = _Redacting(sys.stdout, standard_output=True)
    err = _Redacting(sys.stderr, standard_output=False)
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        try:
            with contextlib.suppress(OSError):
                err.flush()
            if out.failed is None:  # a failure already raised is not raised twice
                out.flush()
        finally:
            sys.stdout, sys.stderr = out.target, err.target


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


def print_document(kind: str, data: dict[str, Any], *, ascii_only: bool = False) -> None:
    """Print a command's result as one JSON document on standard output (see :func:`versioned`).

    Args:
        kind: What the document is (``validation``, ``coverage``, ...).
        data: Its fields; values that JSON has no type for (paths, dates) are written as text.
        ascii_only: Write every character beyond ASCII as a JSON escape sequence (the ``label_plan``
            and ``failure_mode_report`` documents always have); by default they are written as they are.
    """
    import json

    import typer

    typer.echo(json.dumps(versioned(kind, data), indent=2, ensure_ascii=ascii_only, default=str))


def print_model(kind: str, document: BaseModel, *, ascii_only: bool = False) -> None:
    """Print a command's result model as its JSON document (:func:`print_document`).

    Args:
        kind: What the document is (``coverage``, ``retirement``, ...).
        document: The library's result model; fields print under their aliases, in declaration order.
        ascii_only: Write every character beyond ASCII as a JSON escape (see :func:`print_document`).
    """
    print_document(kind, document.model_dump(mode="json", by_alias=True), ascii_only=ascii_only)


def without_collections(body: Callable[[], None]) -> None:
    """Run a command's body with the cyclic garbage collector off, given back once its objects are freed.

    For the commands that read a results file and build one report from it (``report``, ``compare``): the
    reading already pauses the collector (:func:`judgekit.results.paused_gc`), and everything it made stays
    alive until the command ends, so each collection after it (the young one, then full ones as the report
    is built and rendered) examined millions of objects only to find them alive: 0.13 s of ``compare``'s
    0.33 s after reading two 1 GiB files. ``body`` is a function, so that what it holds is freed by
    reference counting when it returns, before the collector is back. A ``typer.Exit`` it raises (a missed
    threshold, problems in the input) is raised again afresh afterwards, without the traceback that would
    keep the body's objects alive; any other exception goes up as it is. The collector comes back as it
    was (off stays off), however the body ends, whoever calls the command (``judgekit.cli.main``, typer's
    ``CliRunner``, a test).

    Args:
        body: The command's work, with no arguments (a closure over its options).

    Raises:
        typer.Exit: With the body's exit code, when the body raised one.

    Examples:
        >>> import gc
        >>> seen = []
        >>> without_collections(lambda: seen.append(gc.isenabled()))
        >>> seen, gc.isenabled()
        ([False], True)
    """
    import typer

    from judgekit.results import paused_gc

    code: int | None = None
    with paused_gc():
        try:
            body()
        except typer.Exit as exc:
            code = exc.exit_code
    if code is not None:
        raise typer.Exit(code)

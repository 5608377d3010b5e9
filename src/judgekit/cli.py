"""The ``judgekit`` command line: parse, call the library, render, choose the exit code.

Commands live in :mod:`judgekit.commands`, one module per area; :mod:`judgekit.commands.tree` places each
in the tree (the main jobs at the top, the rest in noun groups); this module only runs it.
Heavy libraries (litellm, scikit-learn, pydantic models) are imported inside the commands, so that
``judgekit --help`` stays fast.

Exit codes (docs/reference/exit-codes.md): 0 success; 1 a check found a problem (invalid cases, a
coverage gap, a failed gate, an untrusted judge) or an outside service failed after its retries; 2 a
usage or input error (a :class:`~judgekit.errors.JudgekitError` unless it says otherwise). A user mistake
never prints a traceback.
"""

from __future__ import annotations

import sys

import typer

from judgekit.commands.tree import Root
from judgekit.errors import JudgekitError
from judgekit.version import __version__

app = typer.Typer(
    name="judgekit",
    help="Grade tool-using agents in layers, and trust an LLM judge only after it is calibrated.\n\n"
    "Exit codes: 0 success, 1 a check found a problem, 2 a usage or input error. Colour follows the "
    "terminal and is off when the NO_COLOR environment variable is set.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    cls=Root,  # the command tree, each command built when used; metavars (FILE, DIR, N) and examples
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"judgekit {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
    quiet: bool = typer.Option(
        False,
        "--quiet",
        "-q",
        help="Print nothing but errors: the exit code tells the outcome, and files are still written.",
    ),
) -> None:
    """Grade tool-using agents in layers, and trust an LLM judge only after it is calibrated."""
    if quiet:
        from judgekit.commands.output import quiet_output

        ctx.with_resource(quiet_output())


def _usage_line(exc: Exception) -> str:
    """A click/typer usage error as one line: what is wrong, a did-you-mean, and where help is."""
    import difflib

    message = " ".join(str(getattr(exc, "format_message", lambda: str(exc))()).split())
    ctx = getattr(exc, "ctx", None)
    command_path = getattr(ctx, "command_path", "judgekit") or "judgekit"
    command = getattr(ctx, "command", None)
    if message.startswith("No such command") and command is not None:
        # click's own suggestions count the hidden old names; suggest visible commands, else an old
        # top-level name's new place
        message = message.split(" Did you mean")[0]
        wanted = message.split("'")[1] if message.count("'") >= 2 else ""
        commands = getattr(command, "commands", {})
        where = {name: name for name, cmd in commands.items() if not getattr(cmd, "hidden", False)}
        if getattr(ctx, "parent", None) is None:  # an old top-level name suggests its new place
            from judgekit.commands.tree import RENAMED

            where = {**{old: new for old, new in RENAMED.items() if " " not in old}, **where}
        close = list(dict.fromkeys(where[n] for n in difflib.get_close_matches(wanted, list(where), n=2)))
        if close:
            shown = "', '".join(close)
            message = f"{message.rstrip('.')}; did you mean '{shown}'?"
    return f"error: {message} (see '{command_path} --help')"


def _internal_error(exc: BaseException) -> int:
    """An unexpected error: one line, the full traceback in a file (or on screen with JUDGEKIT_DEBUG=1).

    The traceback and the line are redacted like every output: an exception's message or a local value
    in the traceback may hold a key.
    """
    import os
    import traceback

    from judgekit.io.atomic import write_temporary
    from judgekit.secrets import output_redactor

    text = "".join(traceback.format_exception(exc))
    if os.environ.get("JUDGEKIT_DEBUG"):
        typer.echo(output_redactor().payload(text), err=True)
        return 1
    try:
        where = f"the traceback is in {write_temporary(text, prefix='judgekit-error-', suffix='.txt')}"
    except OSError as problem:
        where = f"the traceback could not be saved ({problem.strerror})"
    line = (
        f"error: judgekit failed unexpectedly ({type(exc).__name__}: {exc}); this is a bug, not your "
        f"mistake: {where} (set JUDGEKIT_DEBUG=1 to show it here)"
    )
    typer.echo(output_redactor().payload(line), err=True)
    return 1


def _is_usage_error(exc: BaseException) -> bool:
    """Whether an exception is click's or typer's own copy of click's usage errors (or its Abort)."""
    return any(
        cls.__name__ in {"ClickException", "UsageError", "Abort"}
        and cls.__module__.split(".")[0] in {"click", "typer"}
        for cls in type(exc).__mro__
    )


def main(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit code.

    A usage mistake (an unknown command or option, a missing argument, a bad value) is one ``error:`` line
    and exit code 2; a :class:`~judgekit.errors.JudgekitError` is its message and its exit code; anything
    else is a bug: one line naming the file that holds the traceback, exit code 1.

    Args:
        argv: Arguments without the program name; ``None`` reads ``sys.argv``.

    Everything printed passes through the process-wide redactor, and a failed write to standard output is
    exit code 2 (141, quietly, when the reader closed the pipe); see :mod:`judgekit.commands.output`.

    Returns:
        The process exit code.
    """
    from judgekit.advice import advice_for
    from judgekit.commands.output import redacted_streams

    try:
        with redacted_streams(), advice_for("cli"):  # grades' advice names flags
            return _main(argv)
    except JudgekitError as exc:  # standard output failed while the last lines were flushed
        return _error_exit(exc)


def _error_exit(exc: JudgekitError) -> int:
    """Print a :class:`~judgekit.errors.JudgekitError` as its ``error:`` line and return its exit code."""
    from judgekit.commands.output import OutputClosed

    if not isinstance(exc, OutputClosed):
        typer.echo(f"error: {exc.message}" if "\n" not in exc.message else exc.message, err=True)
    return exc.exit_code


def _main(argv: list[str] | None) -> int:
    try:
        rv = app(args=argv, prog_name="judgekit", standalone_mode=False)
        sys.stdout.flush()  # a full disk behind standard output is this command's error, not the exit's
    except JudgekitError as exc:
        return _error_exit(exc)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return 130
    except Exception as exc:
        if type(exc).__name__ == "Exit" and isinstance(getattr(exc, "exit_code", None), int):
            return int(exc.exit_code)  # type: ignore[attr-defined]  # typer's own copy of click's Exit
        if not _is_usage_error(exc):
            return _internal_error(exc)
        if type(exc).__name__ == "Abort":
            typer.echo("aborted", err=True)
            return 1
        if type(exc).__name__ == "NoArgsIsHelpError":
            typer.echo(exc.format_message(), err=True)  # type: ignore[attr-defined]
            return 2
        typer.echo(_usage_line(exc), err=True)
        return 2
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``judgekit`` command line: parse, call the library, render, choose the exit code.

Command groups live in :mod:`judgekit.commands`, one module per area; this module only assembles them.
Heavy libraries (litellm, scikit-learn, pydantic models) are imported inside the commands, so that
``judgekit --help`` stays fast.

Exit codes: 0 success; 1 a check found problems (invalid cases, a coverage gap, a failed gate) or the
input was unusable; 2 a usage error. A user mistake never prints a traceback.
"""

from __future__ import annotations

import sys

import typer

from judgekit import __version__
from judgekit.commands import calibrate as calibrate_commands
from judgekit.commands import contamination as contamination_commands
from judgekit.commands import demo as demo_commands
from judgekit.commands import golden as golden_commands
from judgekit.commands import grading as grading_commands
from judgekit.commands import growing as growing_commands
from judgekit.commands import judge as judge_commands
from judgekit.commands import lint as lint_commands
from judgekit.commands import runs as runs_commands
from judgekit.commands import trust as trust_commands
from judgekit.errors import JudgekitError

app = typer.Typer(
    name="judgekit",
    help="Grade tool-using agents in layers, and trust an LLM judge only after it is calibrated.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"judgekit {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Grade tool-using agents in layers, and trust an LLM judge only after it is calibrated."""


# Command groups: each module exposes ``register(app)``; keep this list explicit (no import-time magic).
golden_commands.register(app)
runs_commands.register(app)
grading_commands.register(app)
demo_commands.register(app)
contamination_commands.register(app)
calibrate_commands.register(app)
growing_commands.register(app)  # after golden: it extends the candidates and golden groups
trust_commands.register(app)  # after runs: `otel` joins its `import` group
judge_commands.register(app)
lint_commands.register(app)


def main(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit code.

    Args:
        argv: Arguments without the program name; ``None`` reads ``sys.argv``.

    Returns:
        The process exit code.
    """
    try:
        rv = app(args=argv, prog_name="judgekit", standalone_mode=False)
    except JudgekitError as exc:
        typer.echo(f"error: {exc.message}" if "\n" not in exc.message else exc.message, err=True)
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return 130
    except Exception as exc:  # click's usage errors arrive here in non-standalone mode
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            return exc.exit_code
        if isinstance(exc, click.exceptions.Abort):
            typer.echo("aborted", err=True)
            return 1
        raise
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":
    sys.exit(main())

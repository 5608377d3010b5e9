"""``judgekit demo``: the main job on the bundled synthetic example, offline and without an API key."""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.commands.inputs import existing_inputs

__all__ = ["register"]


@existing_inputs("example")
def demo(
    out: Path = typer.Option(
        Path("judgekit-report"), "--out", help="Folder for the HTML reports (an earlier demo's is replaced)."
    ),
    example: Path | None = typer.Option(
        None, "--example", help="Golden set to run on (default: the bundled synthetic example)."
    ),
) -> None:
    """Run judgekit end to end on the bundled synthetic AirDesk example, offline, with no API key.

    Validates the golden set, shows its coverage, checks the reference solutions, calibrates the example's
    judge against two synthetic experts, grades the recorded trials of two agent versions with every layer
    (the judge replayed from a cassette of synthetic verdicts: a missing reply is an error, never a network
    call), compares the versions and writes self-contained HTML reports under --out. Exit 1 when the set
    has a coverage gap or a broken reference solution.
    """
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from judgekit.demo import run_demo

    result = run_demo(out, example=example, say=typer.echo)
    for page in result.pages[1:]:
        typer.echo(f"        {page}")
    typer.echo(f"demo finished in {result.seconds:.1f} s; open {result.index} in a browser")
    if result.problems:
        typer.echo(f"the example has {len(result.problems)} problem(s) (listed above)", err=True)
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``demo`` to the ``judgekit`` application."""
    app.command("demo")(demo)

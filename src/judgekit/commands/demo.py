"""``judgekit demo``: the main job on the bundled synthetic example, offline and without an API key."""

from __future__ import annotations

import time
from pathlib import Path

import typer

__all__ = ["register"]


def demo(
    example: Path | None = typer.Option(
        None, "--example", help="Golden set to run on (default: the bundled synthetic example)."
    ),
) -> None:
    """Run judgekit end to end on the bundled synthetic example: validate the set, show its coverage."""
    from judgekit.cases import load_case_set
    from judgekit.golden.coverage import compute_coverage
    from judgekit.resources import EXAMPLE_SET, resource_path

    started = time.perf_counter()
    root = example or resource_path(EXAMPLE_SET)
    typer.echo(f"[1/2] validating the golden set in {root}")
    case_set = load_case_set(root)
    for problem in case_set.problems:
        typer.echo(str(problem), err=True)
    if case_set.problems:
        typer.echo(f"the example set has {len(case_set.problems)} problem(s)", err=True)
        raise typer.Exit(1)
    reviewed = [c.case for c in case_set.reviewed()]
    typer.echo(f"      {len(reviewed)} cases valid, {len(case_set.candidates())} candidates awaiting review")
    manifest = case_set.manifest
    typer.echo("[2/2] coverage")
    cov = compute_coverage(
        reviewed,
        tools=manifest.tools if manifest else (),
        sources=manifest.sources if manifest else (),
        min_per_tool=manifest.min_per_tool if manifest else 5,
        min_per_source=manifest.min_per_source if manifest else 5,
    )
    typer.echo("      slices: " + ", ".join(f"{k} {v}" for k, v in sorted(cov.by_slice.items())))
    typer.echo("      cases per tool: " + ", ".join(f"{k} {v}" for k, v in sorted(cov.by_tool.items())))
    typer.echo("      cases per source: " + ", ".join(f"{k} {v}" for k, v in sorted(cov.by_source.items())))
    for gap in cov.gaps:
        typer.echo(f"      COVERAGE GAP {gap.describe()}")
    if not cov.gaps:
        typer.echo("      no coverage gaps")
    typer.echo(f"demo finished in {time.perf_counter() - started:.1f} s")
    if cov.gaps:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``demo`` to the ``judgekit`` application."""
    app.command("demo")(demo)

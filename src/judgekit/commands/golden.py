"""Golden-set commands: validate, coverage, export, candidates promote, golden diff."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgekit.commands.inputs import existing_inputs

if TYPE_CHECKING:
    from judgekit.caseset import CaseSet

__all__ = ["register"]


def _load(paths: list[Path]) -> CaseSet:
    from judgekit.caseset import load_case_set

    return load_case_set(paths)


def _print_problems(case_set: CaseSet) -> None:
    for warning in case_set.warnings:
        typer.echo(f"warning: {warning}", err=True)
    for problem in case_set.problems:
        typer.echo(str(problem), err=True)


@existing_inputs("paths")
def validate(
    paths: list[Path] = typer.Argument(..., help="Golden-set folders or case files.", show_default=False),
) -> None:
    """Check case files: schema, unique ids, reviewed acceptance, referenced fixtures, no personal data.

    Personal data (emails, phone numbers, card, IBAN and account numbers, national ids) is refused in
    reviewed cases and reported as a warning in candidates. Prints every problem as
    file:line: field: message. Exit 0 when valid, 1 when not.
    """
    from judgekit.golden.pii import personal_data_problems

    case_set = _load(paths)
    pii_problems, pii_warnings = personal_data_problems(
        case_set.cases, allow=case_set.manifest.synthetic_values if case_set.manifest else ()
    )
    case_set.problems.extend(pii_problems)
    case_set.warnings.extend(pii_warnings)
    _print_problems(case_set)
    reviewed = len(case_set.reviewed())
    candidates = len(case_set.candidates())
    files = len({p.file for p in case_set.problems})
    if case_set.problems:
        typer.echo(
            f"{len(case_set.problems)} problem{'s' if len(case_set.problems) != 1 else ''} in {files} "
            f"file{'s' if files != 1 else ''}; {reviewed + candidates} valid case(s) in "
            f"{len(case_set.files)} file(s)",
            err=True,
        )
        raise typer.Exit(1)
    typer.echo(f"{reviewed} cases valid" + (f" (+{candidates} candidates)" if candidates else ""))


def _mix_line(title: str, counts: dict[str, int]) -> str:
    inner = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{title}: {inner or '(none)'}"


@existing_inputs("path")
def coverage(  # noqa: PLR0917 - typer options
    path: Path = typer.Argument(..., help="Golden-set folder.", show_default=False),
    tools: list[str] = typer.Option(
        None, "--tools", help="Every tool the agent has (repeat or comma-separate). Default: the manifest's."
    ),
    sources: list[str] = typer.Option(
        None, "--sources", help="Every knowledge source (repeat or comma-separate). Default: the manifest's."
    ),
    min_per_tool: int | None = typer.Option(
        None, "--min-per-tool", min=0, help="Floor per tool (default 5)."
    ),
    min_per_source: int | None = typer.Option(
        None, "--min-per-source", min=0, help="Floor per source (default 5)."
    ),
    dimensions: list[str] = typer.Option(
        None,
        "--dimensions",
        help="Every quality dimension to test (repeat or comma-separate). Default: the manifest's.",
    ),
    min_per_dimension: int | None = typer.Option(
        None, "--min-per-dimension", min=0, help="Floor per dimension (default 5)."
    ),
) -> None:
    """Show the set's mix and its cases per tool and source; exit 1 when a declared one is below the floor."""
    from judgekit.golden.coverage import compute_coverage

    case_set = _load([path])
    if case_set.problems:
        _print_problems(case_set)
        typer.echo("the set is invalid; fix it first (judgekit validate)", err=True)
        raise typer.Exit(1)
    manifest = case_set.manifest
    tool_list = _split(tools) or list(manifest.tools if manifest else ())
    source_list = _split(sources) or list(manifest.sources if manifest else ())
    dimension_list = _split(dimensions) or list(manifest.dimensions if manifest else ())
    cov = compute_coverage(
        (c.case for c in case_set.reviewed()),
        tools=tool_list,
        sources=source_list,
        min_per_tool=min_per_tool if min_per_tool is not None else (manifest.min_per_tool if manifest else 5),
        min_per_source=min_per_source
        if min_per_source is not None
        else (manifest.min_per_source if manifest else 5),
        dimensions=dimension_list,
        min_per_dimension=min_per_dimension
        if min_per_dimension is not None
        else (manifest.min_per_dimension if manifest else 5),
    )
    typer.echo(f"{cov.total} cases")
    typer.echo(_mix_line("slice", dict(cov.by_slice)))
    typer.echo(_mix_line("category", dict(cov.by_category)))
    typer.echo(_mix_line("severity", dict(cov.by_severity)))
    if cov.by_dimension:
        typer.echo(_mix_line("dimension", dict(cov.by_dimension)))
    typer.echo(_mix_line("cases per tool", dict(cov.by_tool)))
    typer.echo(_mix_line("cases per source", dict(cov.by_source)))
    if not tool_list:
        typer.echo("note: no tool list declared (--tools or the manifest), so no tool gap can be named")
    for name in cov.undeclared_tools:
        typer.echo(f"warning: tool '{name}' is used by cases but not in the declared tool list", err=True)
    for name in cov.undeclared_sources:
        typer.echo(f"warning: source '{name}' is used by cases but not in the declared source list", err=True)
    for name in cov.undeclared_dimensions:
        typer.echo(
            f"warning: dimension '{name}' is named by cases but not in the declared dimension list", err=True
        )
    for gap in cov.gaps:
        typer.echo(f"COVERAGE GAP {gap.describe()}")
    if cov.gaps:
        raise typer.Exit(1)
    typer.echo("no coverage gaps")


def _split(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


@existing_inputs("path")
def export(
    path: Path = typer.Argument(..., help="Golden-set folder.", show_default=False),
    format: str = typer.Option(..., "--format", help="Export format: copilot-studio."),
    out: Path = typer.Option(..., "--out", help="Folder to write the export files into."),
) -> None:
    """Export reviewed cases to another tool's test-set format (holdout cases are never exported)."""
    from judgekit.errors import JudgekitError
    from judgekit.golden.export import EXPORT_FORMATS, export_copilot_studio

    if format not in EXPORT_FORMATS:
        raise JudgekitError(
            f"--format {format}: unknown export format; choose one of {', '.join(EXPORT_FORMATS)}"
        )
    case_set = _load([path])
    if case_set.problems:
        _print_problems(case_set)
        typer.echo("the set is invalid; fix it first (judgekit validate)", err=True)
        raise typer.Exit(1)
    holdouts = [c.case.id for c in case_set.reviewed() if c.case.split == "holdout"]
    result = export_copilot_studio((c.case for c in case_set.reviewed() if c.case.split != "holdout"), out)
    for file, rows in result.files:
        typer.echo(f"wrote {file} ({rows} rows)")
    if result.multi_turn:
        typer.echo(f"left out {len(result.multi_turn)} multi-turn case(s): {', '.join(result.multi_turn)}")
    for case_id, which, length in result.too_long:
        typer.echo(f"left out {case_id} {which}: {length} characters (the limit is 1000)")
    if holdouts:  # a holdout exported to another tool would be tuned against
        typer.echo(f"left out {len(holdouts)} holdout case(s): {', '.join(holdouts)}")
    if result.no_expected:
        typer.echo(
            f"left out {len(result.no_expected)} case(s) with no reference answer, acceptance or required "
            f"outcome: {', '.join(result.no_expected)}"
        )


@existing_inputs("set_path")
def promote(
    ids: list[str] = typer.Argument(..., help="Ids of reviewed candidates.", show_default=False),
    set_path: Path = typer.Option(Path("."), "--set", help="The golden set's root folder."),
) -> None:
    """Move reviewed candidates into the set; refuses an acceptance that still starts with REVIEW:."""
    from judgekit.golden.promote import promote_candidates

    for step in promote_candidates(set_path, ids):
        typer.echo(f"promoted {step.case_id}: {step.source} -> {step.destination}")


@existing_inputs("set_path")
def golden_diff(
    rev: str = typer.Argument(
        ..., help="A git revision to compare with (main, HEAD~1, a commit).", show_default=False
    ),
    set_path: Path = typer.Option(Path("."), "--set", help="The golden set's root folder."),
) -> None:
    """List cases whose contract changed since REV without a version bump; exit 1 when any.

    The contract is the expected outcome, the acceptance criterion and the forbidden rules.
    """
    from judgekit.golden.rebaseline import find_unversioned_changes

    found = find_unversioned_changes(set_path, rev)
    for item in found:
        typer.echo(
            f"{item.path}: {item.case_id}: {', '.join(item.changed)} changed since {rev} but version stayed "
            f"{item.new_version} (was {item.old_version}); bump the version"
        )
    if found:
        raise typer.Exit(1)
    typer.echo(f"no unversioned contract changes since {rev}")


def subgroup(app: typer.Typer, name: str) -> typer.Typer:
    """The command group ``name`` (``candidates``, ``golden``) that :func:`register` added to ``app``.

    Other command modules add their subcommands to it, so that ``judgekit candidates generate`` sits beside
    ``judgekit candidates promote``.

    Raises:
        LookupError: When :func:`register` has not added that group (register the golden commands first).
    """
    for info in app.registered_groups:
        if info.name == name and info.typer_instance is not None:
            return info.typer_instance
    raise LookupError(f"no '{name}' command group: call judgekit.commands.golden.register(app) first")


def register(app: typer.Typer) -> None:
    """Add the golden-set commands to the ``judgekit`` application."""
    app.command("validate")(validate)
    app.command("coverage")(coverage)
    app.command("export")(export)
    candidates = typer.Typer(help="Candidate cases awaiting review.", no_args_is_help=True)
    candidates.command("promote")(promote)
    app.add_typer(candidates, name="candidates")
    golden = typer.Typer(help="The golden set's history.", no_args_is_help=True)
    golden.command("diff")(golden_diff)
    app.add_typer(golden, name="golden")

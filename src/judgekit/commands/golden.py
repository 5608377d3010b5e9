"""Golden-set commands: validate, coverage, export, retire, candidates promote, golden diff."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_document, print_model

if TYPE_CHECKING:
    from judgekit.caseset import CaseSet
    from judgekit.errors import Problem
    from judgekit.golden.coverage import CoverageReport

__all__ = ["coverage", "export", "golden_diff", "promote", "retire", "validate"]


def _load(paths: list[Path]) -> CaseSet:
    from judgekit.caseset import load_case_set

    return load_case_set(paths)


def problem_data(problem: Problem) -> dict[str, Any]:
    """A located problem as plain data for a JSON document.

    Args:
        problem: The problem (or warning) to show.

    Returns:
        ``{file, line, field, message}``: the file as text (``None`` when it concerns no single file), the
        1-based line (``None`` when unknown), the dotted field (``""`` for the whole file) and the message.
    """
    from judgekit.caseset import LocatedProblem

    return LocatedProblem.of(problem).model_dump()


@contextlib.contextmanager
def problems_in_document(output_format: str, kind: str, empty: Mapping[str, Any]) -> Iterator[None]:
    """With ``--format json``, turn a refusal that lists located problems into the command's document.

    Inside the block, a :class:`~judgekit.errors.ProblemsError` (the command refused its input and wrote
    nothing) is printed as the ``kind`` document: the ``empty`` fields, then ``problems``; the exit code
    stays the error's. In text mode the error propagates and is printed as usual.

    Args:
        output_format: The checked ``--format`` value (``text`` or ``json``).
        kind: The command's document kind (``promotion``, ``intake``...).
        empty: The document's other fields as they are when nothing was done (empty lists, zero counts).

    Raises:
        typer.Exit: With the error's exit code, once the document is printed.
    """
    from judgekit.errors import ProblemsError

    try:
        yield
    except ProblemsError as exc:
        if output_format != "json":
            raise
        print_document(kind, {**empty, "problems": [problem_data(p) for p in exc.problems]})
        raise typer.Exit(exc.exit_code) from None


def _print_problems(case_set: CaseSet) -> None:
    for warning in case_set.warnings:
        typer.echo(f"warning: {warning}", err=True)
    for problem in case_set.problems:
        typer.echo(str(problem), err=True)


@existing_inputs("paths")
def validate(
    paths: list[Path] = typer.Argument(..., help="Golden-set folders or case files.", show_default=False),
    output_format: str = format_option(),
) -> None:
    """Check case files: schema, unique ids, reviewed acceptance, referenced fixtures, no personal data.

    Personal data (emails, phone numbers, card, IBAN and account numbers, national ids, person names,
    postal addresses, postcodes, dates of birth, sort codes) is refused in reviewed cases and reported
    as a warning in candidates. Prints every problem as file:line: field: message. Exit 0 when valid, 1
    when not.
    """
    from judgekit.golden.validation import validation_report

    output_format = chosen_format(output_format)
    report = validation_report(_load(paths))
    if output_format == "json":
        print_model("validation", report)
        if not report.valid:
            raise typer.Exit(1)
        return
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    for problem in report.problems:
        typer.echo(str(problem), err=True)
    if not report.valid:
        count, files, bad = len(report.problems), report.files_with_problems, report.cases_with_problems
        shown = ", ".join(bad[:10]) + (f" and {len(bad) - 10} more" if len(bad) > 10 else "")
        typer.echo(
            f"{count} problem{'s' if count != 1 else ''} in {files} file{'s' if files != 1 else ''}; "
            f"{report.valid_cases} valid case(s) in {report.files} file(s)"
            + (f"; not valid: {shown}" if bad else ""),
            err=True,
        )
        raise typer.Exit(1)
    typer.echo(
        f"{report.cases} cases valid" + (f" (+{report.candidates} candidates)" if report.candidates else "")
    )


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
        None, "--min-per-tool", min=0, help="Floor per tool: fewest cases that expect it (default 5)."
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
    min_per_slice: int | None = typer.Option(
        None, "--min-per-slice", min=0, help="Floor per slice (default 0: none)."
    ),
    min_per_category: int | None = typer.Option(
        None, "--min-per-category", min=0, help="Floor per category (default 0: none)."
    ),
    min_per_severity: int | None = typer.Option(
        None, "--min-per-severity", min=0, help="Floor per severity (default 0: none)."
    ),
    output_format: str = format_option(),
) -> None:
    """Show the set's mix and the cases expecting each tool and source; exit 1 when one is below a floor."""
    from judgekit.golden.coverage import coverage_report

    output_format = chosen_format(output_format)
    case_set = _load([path])
    floors = {
        "tool": min_per_tool,
        "source": min_per_source,
        "slice": min_per_slice,
        "category": min_per_category,
        "severity": min_per_severity,
        "dimension": min_per_dimension,
    }
    report = coverage_report(
        case_set, tools=_split(tools), sources=_split(sources), dimensions=_split(dimensions), floors=floors
    )
    if output_format == "json":
        print_model("coverage", report)
    elif not report.valid:
        _print_problems(case_set)
        typer.echo(report.notes[0], err=True)
    else:
        _print_coverage(report)
    if not report.valid or report.gaps:
        raise typer.Exit(1)
    if output_format != "json":
        typer.echo("no coverage gaps")


def _print_coverage(report: CoverageReport) -> None:
    """The text of ``judgekit cases coverage`` for a valid set, but its last line."""
    mix = report.mix or {}
    typer.echo(f"{report.total} cases")
    for kind in ("slice", "category", "severity"):
        typer.echo(_mix_line(kind, mix[kind]))
    if report.dimensions:
        typer.echo(_mix_line("dimension", report.dimensions))
    typer.echo(_mix_line("cases per tool (expecting it)", report.tools or {}))
    if report.listed_only:
        typer.echo(_mix_line("listed only (not counted)", report.listed_only))
    typer.echo(_mix_line("cases per source", report.sources or {}))
    for note in report.notes:
        typer.echo(f"note: {note}")
    gaps = report.gaps or []
    gap_tools = {gap.name for gap in gaps if gap.what == "tool"}
    listed = report.listed_only or {}
    for name in report.untested_tools():
        if name not in gap_tools:
            typer.echo(f"warning: tool {name}: 0 cases expect it (listed in {listed[name]})", err=True)
    undeclared = report.undeclared or {}
    for name in undeclared["tools"]:
        typer.echo(f"warning: tool '{name}' is used by cases but not in the declared tool list", err=True)
    for name in undeclared["sources"]:
        typer.echo(f"warning: source '{name}' is used by cases but not in the declared source list", err=True)
    for name in undeclared["dimensions"]:
        typer.echo(
            f"warning: dimension '{name}' is named by cases but not in the declared dimension list", err=True
        )
    for gap in gaps:
        typer.echo(f"COVERAGE GAP {gap.message}")


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
    """Export reviewed cases to another tool's test-set format (holdout cases are never exported).

    The files are written to a temporary folder, checked against the format, then moved into --out with
    the earlier export's files that are no longer written removed (those judgekit-export.json records,
    unchanged). Exit 0 when the export was written, 2 when it was refused (two owners sharing a file
    name, a file it would overwrite that no manifest records, a failed write); then --out is unchanged.
    """
    from judgekit.errors import JudgekitError
    from judgekit.golden.export import EXPORT_FORMATS, export_copilot_studio

    if format not in EXPORT_FORMATS:
        raise JudgekitError(
            f"--format {format}: unknown export format; choose one of {', '.join(EXPORT_FORMATS)}"
        )
    case_set = _load([path])
    if case_set.problems:
        _print_problems(case_set)
        typer.echo("the set is invalid; fix it first (judgekit cases check)", err=True)
        raise typer.Exit(2)  # an input error: export needs a valid set (validate is the check that says 1)
    from judgekit.caseset import select_cases

    selection = select_cases(case_set)  # no holdout is ever named here: an exported case gets tuned against
    holdouts = selection.left_out
    result = export_copilot_studio(selection.cases, out)
    for file, rows in result.files:
        typer.echo(f"wrote {file} ({rows} rows)")
    if not result.files:
        typer.echo("wrote no test-set file: no case could be exported")
    for file in result.removed:
        typer.echo(f"removed {file} (written by the earlier export, no longer exported)")
    for file, why in result.kept:
        typer.echo(f"kept {file}: {why}")
    if result.multi_turn:
        typer.echo(f"left out {len(result.multi_turn)} multi-turn case(s): {', '.join(result.multi_turn)}")
    for case_id, which, length in result.too_long:
        typer.echo(f"left out {case_id} {which}: {length} characters (the limit is 1000)")
    for case_id, which in result.blank:
        typer.echo(f"left out {case_id} {which}: blank")
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
    output_format: str = format_option(),
) -> None:
    """Move reviewed candidates into the set; refuses an acceptance that still starts with REVIEW:.

    Also refused: a missing or empty acceptance, a required outcome, forbidden outcome or rubric entry
    still starting with REVIEW: (in any letter case or spacing), personal data (except the manifest's
    synthetic_values), an id the set already has, and a destination file that exists. Every reason is
    one file:line: field: message line, nothing is moved, and the exit code is 2. The moves are all or
    nothing: if one fails, the files already moved are moved back.
    """
    from judgekit.golden.promote import PromotionDocument, promote_candidates, promotion_document

    output_format = chosen_format(output_format)
    with problems_in_document(output_format, "promotion", PromotionDocument().model_dump(mode="json")):
        steps = promote_candidates(set_path, ids)
    if output_format == "json":
        print_model("promotion", promotion_document(steps))
        return
    for step in steps:
        resumed = " (finishing the promotion a killed run left half done)" if step.resumed else ""
        typer.echo(f"promoted {step.case_id}: {step.source} -> {step.destination}{resumed}")


@existing_inputs("set_path")
def golden_diff(
    rev: str = typer.Argument(
        ..., help="A git revision to compare with (main, HEAD~1, a commit).", show_default=False
    ),
    set_path: Path = typer.Option(Path("."), "--set", help="The golden set's root folder."),
    output_format: str = format_option(),
) -> None:
    """List cases whose contract changed since REV without a version bump; exit 1 when any.

    The contract is the expected outcome, the acceptance criterion, the forbidden rules and the bytes of
    the fixture files the case's initial and expected states name. Cases new to the reviewed set (promoted
    candidates) are listed as promoted and not compared; cases whose split changed (judgekit cases retire) are
    listed as moved, with the reason their retired: record gives (no version bump needed).
    """
    from judgekit.golden.rebaseline import diff_with_revision

    output_format = chosen_format(output_format)
    document = diff_with_revision(set_path, rev)
    found = document.unversioned
    if output_format == "json":
        print_model("golden_diff", document)
        if found:
            raise typer.Exit(1)
        return
    for promoted in document.promoted:
        where = f"a candidate at {rev}" if promoted.source == "candidate" else f"not in the set at {rev}"
        typer.echo(f"{promoted.file}: {promoted.id}: promoted since {rev} ({where}); nothing to compare")
    for move in document.moved:
        why = f" (retired: {move.reason})" if move.reason else ""
        typer.echo(
            f"{move.file}: {move.id}: moved from split {move.old_split or '(none)'} to "
            f"{move.new_split or '(none)'} since {rev}{why}; not a contract change"
        )
    for item in found:
        typer.echo(
            f"{item.file}: {item.id}: {', '.join(item.changed)} changed since {rev} but version stayed "
            f"{item.new_version} (was {item.old_version}); bump the version"
        )
    if found:
        raise typer.Exit(1)
    typer.echo(f"no unversioned contract changes since {rev}")


@existing_inputs("results", "set_path")
def retire(  # noqa: PLR0917 - typer options
    results: list[Path] = typer.Argument(
        ...,
        help="Results files of the agent's releases, oldest first (judgekit grade writes them).",
        show_default=False,
    ),
    set_path: Path = typer.Option(Path("."), "--set", help="The golden set's root folder."),
    releases: int = typer.Option(
        3, "--releases", help="Distinct releases in a row in which a case must pass every trial."
    ),
    min_trials: int = typer.Option(
        8, "--min-trials", help="Trials a case needs in each of those releases (all passing)."
    ),
    case: list[str] = typer.Option(
        [], "--case", help="Retire only this case (by id; repeatable); refused when it is not saturated."
    ),
    reason: str | None = typer.Option(
        None, "--reason", help="A reviewer's note, written after the evidence in retired.reason."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would move; write nothing."),
    output_format: str = format_option(),
) -> None:
    """Move saturated capability cases to the regression split: an edit of their files, for review.

    A capability case is saturated when it passed every trial, at least --min-trials of them, in each of the
    last --releases distinct releases, all graded against its current version. A release is the agent
    version its run records name (app_version, agent_model, prompt_hash, tool_definitions_hash): the same
    results file given twice counts once, and results of one release pool their trials. The rule is the
    one judgekit report uses for its retirement suggestions.

    Each retired case's file gets split: regression and a retired: record (moved_from, reason with the
    evidence, releases, retired_on) and nothing else changes: YAML keeps its comments and layout. Review
    the edit with git diff or judgekit cases diff HEAD, then commit it. Refusals (a named case that is not
    saturated, a file that cannot be edited safely) are listed and nothing is written (exit 2).
    """
    from judgekit.api.cases import RetirementReport, retire_saturated

    output_format = chosen_format(output_format)
    empty = RetirementReport(dry_run=dry_run).model_dump(mode="json", by_alias=True)
    with problems_in_document(output_format, "retirement", empty):
        report = retire_saturated(
            set_path,
            results,
            releases=releases,
            min_trials=min_trials,
            cases=case,
            reason=reason,
            dry_run=dry_run,
            warn=lambda problem: typer.echo(f"warning: {problem}", err=True),
        )
    if output_format == "json":
        print_model("retirement", report)
        return
    for note in report.notes:
        typer.echo(f"note: {note}", err=True)
    verb = "would retire" if dry_run else "retired"
    for r in report.retired:
        resumed_note = " (finishing the retirement a killed run left half done)" if r.resumed else ""
        typer.echo(
            f"{verb} {r.id} ({r.file}:{r.line}): split {r.moved_from or '(none)'} -> regression: "
            f"{r.reason}{resumed_note}"
        )
    for s in report.undersampled:
        typer.echo(f"not yet {s.id}: {s.reason}")
    if report.retired and not dry_run:
        typer.echo(
            f"{len(report.retired)} case(s) moved to the regression split; review the edit (git diff, or "
            "judgekit cases diff HEAD) and commit it"
        )
    elif not report.retired:
        typer.echo(
            f"no capability case is saturated (every trial passed, at least {min_trials} per release, in "
            f"each of the last {releases} releases)"
        )

"""Golden-set commands: validate, coverage, export, retire, candidates promote, golden diff."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_document

if TYPE_CHECKING:
    from judgekit.cases import Case
    from judgekit.caseset import CaseSet
    from judgekit.errors import Problem
    from judgekit.results import CaseRef

__all__ = ["register"]


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
    return {
        "file": str(problem.file) if problem.file is not None else None,
        "line": problem.line,
        "field": problem.field,
        "message": problem.message,
    }


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
    from judgekit.golden.journal import pending_problems
    from judgekit.golden.pii import personal_data_problems

    output_format = chosen_format(output_format)
    case_set = _load(paths)
    case_set.problems.extend(pending_problems(case_set.root))  # a promote or retire killed half way
    pii_problems, pii_warnings = personal_data_problems(
        case_set.cases, allow=case_set.manifest.synthetic_values if case_set.manifest else ()
    )
    case_set.problems.extend(pii_problems)
    case_set.warnings.extend(pii_warnings)
    reviewed = len(case_set.reviewed())
    candidates = len(case_set.candidates())
    files = len({p.file for p in case_set.problems})
    if output_format == "json":
        print_document(
            "validation",
            {
                "valid": not case_set.problems,
                "cases": reviewed,
                "candidates": candidates,
                "files": len(case_set.files),
                "files_with_problems": files,
                "problems": [problem_data(p) for p in case_set.problems],
                "warnings": [problem_data(w) for w in case_set.warnings],
            },
        )
        if case_set.problems:
            raise typer.Exit(1)
        return
    _print_problems(case_set)
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


#: The fields of the ``coverage`` document besides ``valid``, ``problems`` and ``warnings`` (all ``None``
#: when the set is invalid and nothing was counted).
_COVERAGE_FIELDS = (
    "total",
    "mix",
    "tools",
    "listed_only",
    "sources",
    "dimensions",
    "declared",
    "floors",
    "gaps",
    "undeclared",
)


def _ranked(counts: Mapping[str, int]) -> dict[str, int]:
    """Counts in the order the text shows them: most cases first, then by name."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


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
    from judgekit.caseset import SetManifest
    from judgekit.golden.coverage import compute_coverage

    output_format = chosen_format(output_format)
    case_set = _load([path])
    if case_set.problems:
        if output_format == "json":
            print_document(
                "coverage",
                {
                    "valid": False,
                    "problems": [problem_data(p) for p in case_set.problems],
                    "warnings": [problem_data(w) for w in case_set.warnings],
                    **dict.fromkeys(_COVERAGE_FIELDS),
                    "notes": ["the set is invalid; fix it first (judgekit validate)"],
                },
            )
            raise typer.Exit(1)
        _print_problems(case_set)
        typer.echo("the set is invalid; fix it first (judgekit validate)", err=True)
        raise typer.Exit(1)
    manifest = case_set.manifest
    tool_list = _split(tools) or list(manifest.tools if manifest else ())
    source_list = _split(sources) or list(manifest.sources if manifest else ())
    dimension_list = _split(dimensions) or list(manifest.dimensions if manifest else ())
    flags = {
        "tool": min_per_tool,
        "source": min_per_source,
        "slice": min_per_slice,
        "category": min_per_category,
        "severity": min_per_severity,
        "dimension": min_per_dimension,
    }
    defaults = SetManifest()
    floors = {
        kind: flag if flag is not None else getattr(manifest or defaults, f"min_per_{kind}")
        for kind, flag in flags.items()
    }
    cov = compute_coverage(
        (c.case for c in case_set.reviewed()),
        tools=tool_list,
        sources=source_list,
        dimensions=dimension_list,
        min_per_tool=floors["tool"],
        min_per_source=floors["source"],
        min_per_slice=floors["slice"],
        min_per_category=floors["category"],
        min_per_severity=floors["severity"],
        min_per_dimension=floors["dimension"],
    )
    no_tools_note = "no tool list declared (--tools or the manifest), so no tool gap can be named"
    if output_format == "json":
        print_document(
            "coverage",
            {
                "valid": True,
                "problems": [],
                "warnings": [problem_data(w) for w in case_set.warnings],
                "total": cov.total,
                "mix": {
                    "slice": _ranked(cov.by_slice),
                    "category": _ranked(cov.by_category),
                    "severity": _ranked(cov.by_severity),
                },
                "tools": _ranked(cov.by_tool),
                "listed_only": _ranked(+cov.listed_only),
                "sources": _ranked(cov.by_source),
                "dimensions": _ranked(cov.by_dimension),
                "declared": {"tools": tool_list, "sources": source_list, "dimensions": dimension_list},
                "floors": floors,
                "gaps": [
                    {
                        "what": gap.kind,
                        "name": gap.name,
                        "count": gap.count,
                        "floor": gap.floor,
                        "listed_only": gap.listed,
                        "message": gap.describe(),
                    }
                    for gap in cov.gaps
                ],
                "undeclared": {
                    "tools": cov.undeclared_tools,
                    "sources": cov.undeclared_sources,
                    "dimensions": cov.undeclared_dimensions,
                },
                "notes": [] if tool_list else [no_tools_note],
            },
        )
        if cov.gaps:
            raise typer.Exit(1)
        return
    typer.echo(f"{cov.total} cases")
    typer.echo(_mix_line("slice", dict(cov.by_slice)))
    typer.echo(_mix_line("category", dict(cov.by_category)))
    typer.echo(_mix_line("severity", dict(cov.by_severity)))
    if cov.by_dimension:
        typer.echo(_mix_line("dimension", dict(cov.by_dimension)))
    typer.echo(_mix_line("cases per tool (expecting it)", dict(cov.by_tool)))
    if +cov.listed_only:
        typer.echo(_mix_line("listed only (not counted)", dict(+cov.listed_only)))
    typer.echo(_mix_line("cases per source", dict(cov.by_source)))
    if not tool_list:
        typer.echo(f"note: {no_tools_note}")
    gap_tools = {gap.name for gap in cov.gaps if gap.kind == "tool"}
    for name in cov.untested_tools():
        if name not in gap_tools:
            typer.echo(
                f"warning: tool {name}: 0 cases expect it (listed in {cov.listed_only[name]})", err=True
            )
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
        typer.echo("the set is invalid; fix it first (judgekit validate)", err=True)
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
    from judgekit.golden.promote import promote_candidates

    output_format = chosen_format(output_format)
    with problems_in_document(output_format, "promotion", {"promoted": []}):
        steps = promote_candidates(set_path, ids)
    if output_format == "json":
        print_document(
            "promotion",
            {
                "promoted": [
                    {"id": step.case_id, "from": str(step.source), "to": str(step.destination)}
                    for step in steps
                ],
                "problems": [],
            },
        )
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
    candidates) are listed as promoted and not compared; cases whose split changed (judgekit retire) are
    listed as moved, with the reason their retired: record gives (no version bump needed).
    """
    from judgekit.golden.rebaseline import compare_with_revision

    output_format = chosen_format(output_format)
    comparison = compare_with_revision(set_path, rev)
    found = comparison.unversioned
    if output_format == "json":
        print_document(
            "golden_diff",
            {
                "revision": rev,
                "unversioned": [
                    {
                        "id": item.case_id,
                        "file": str(item.path),
                        "changed": list(item.changed),
                        "old_version": item.old_version,
                        "new_version": item.new_version,
                    }
                    for item in found
                ],
                "promoted": [
                    {"id": item.case_id, "file": str(item.path), "from": item.source, "version": item.version}
                    for item in comparison.promoted
                ],
                "moved": [
                    {
                        "id": item.case_id,
                        "file": str(item.path),
                        "from": item.old_split,
                        "to": item.new_split,
                        "reason": item.reason,
                    }
                    for item in comparison.moved
                ],
            },
        )
        if found:
            raise typer.Exit(1)
        return
    for promoted in comparison.promoted:
        where = f"a candidate at {rev}" if promoted.source == "candidate" else f"not in the set at {rev}"
        typer.echo(f"{promoted.path}: {promoted.case_id}: promoted since {rev} ({where}); nothing to compare")
    for move in comparison.moved:
        why = f" (retired: {move.reason})" if move.reason else ""
        typer.echo(
            f"{move.path}: {move.case_id}: moved from split {move.old_split or '(none)'} to "
            f"{move.new_split or '(none)'} since {rev}{why}; not a contract change"
        )
    for item in found:
        typer.echo(
            f"{item.path}: {item.case_id}: {', '.join(item.changed)} changed since {rev} but version stayed "
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
    the edit with git diff or judgekit golden diff HEAD, then commit it. Refusals (a named case that is not
    saturated, a file that cannot be edited safely) are listed and nothing is written (exit 2).
    """
    from datetime import UTC, datetime

    from judgekit.caseset import load_case_set
    from judgekit.errors import JudgekitError, Problem, ProblemsError
    from judgekit.golden.journal import refuse_if_pending
    from judgekit.golden.retire import Retire, finish_interrupted_retirement, retire_cases
    from judgekit.reports.retirement import retirement_advice
    from judgekit.reports.run_model import in_capability_suite
    from judgekit.results import read_results

    output_format = chosen_format(output_format)
    if releases < 1:
        raise JudgekitError(f"--releases must be at least 1 (got {releases})", exit_code=2)
    if min_trials < 1:
        raise JudgekitError(
            f"--min-trials must be at least 1 (got {min_trials}); the seed recommends 8", exit_code=2
        )
    empty: dict[str, Any] = {
        "dry_run": dry_run,
        "releases": [],
        "retired": [],
        "undersampled": [],
        "notes": [],
    }
    with problems_in_document(output_format, "retirement", empty):
        case_set = load_case_set(set_path)
        if dry_run:
            refuse_if_pending(case_set.root, "show a dry run of a half-edited set")
        resumed = [] if dry_run else finish_interrupted_retirement(case_set.root)
        if resumed:  # a killed run's retirement, finished first: its cases are retired now
            case_set = load_case_set(set_path)
        try:
            case_set.raise_if_invalid()
        except JudgekitError as exc:
            exc.exit_code = 2
            raise
        runs = []
        for path in results:
            run = read_results(path)
            for problem in run.problems:
                typer.echo(f"warning: {problem}", err=True)
            runs.append(run)
        reviewed = {c.case.id: c.case for c in case_set.reviewed()}
        splits = {cid: c.split for cid, c in reviewed.items() if c.split}
        rule = in_capability_suite(splits)
        wanted = [c for c in case if c not in {r.case_id for r in resumed}]
        advice = retirement_advice(
            runs,
            # the set decides a case's suite (its split, category and slice now), not the results' copy
            is_capability=lambda ref: ref.id in reviewed and rule(_case_ref(reviewed[ref.id])),
            current_versions={cid: c.version for cid, c in reviewed.items()},
            required_releases=releases,
            min_trials=min_trials,
            cases=wanted or case or None,
        )
        if case and not wanted:  # every case named was in the finished retirement: nothing else to do
            advice = advice.model_copy(
                update={"suggestions": (), "undersampled": (), "blocked": (), "notes": ()}
            )
        if wanted:
            refusals = [
                Problem(None, None, s.case_id, f"not retired: {s.reason}")
                for s in (*advice.undersampled, *advice.blocked)
            ]
            refusals += [
                Problem(None, None, "--case", note) for note in advice.notes if "not capability" in note
            ]
            if refusals:
                raise ProblemsError(refusals)
        suffix = f"; {reason.strip()}" if reason and reason.strip() else ""
        items = [
            Retire(s.case_id, s.reason + suffix, tuple(t.release for t in s.releases))
            for s in advice.suggestions
        ]
        done = retire_cases(case_set, items, on=datetime.now(UTC).date(), write=not dry_run) if items else []
        done = [*resumed, *done]
    if output_format == "json":
        print_document(
            "retirement",
            {
                "dry_run": dry_run,
                "releases": list(advice.releases),
                "retired": [
                    {
                        "id": r.case_id,
                        "file": str(r.path),
                        "line": r.line,
                        "from": r.moved_from,
                        "to": "regression",
                        "reason": r.reason,
                    }
                    for r in done
                ],
                "undersampled": [{"id": s.case_id, "reason": s.reason} for s in advice.undersampled],
                "notes": list(advice.notes),
                "problems": [],
            },
        )
        return
    for note in advice.notes:
        typer.echo(f"note: {note}", err=True)
    verb = "would retire" if dry_run else "retired"
    for r in done:
        resumed_note = " (finishing the retirement a killed run left half done)" if r.resumed else ""
        typer.echo(
            f"{verb} {r.case_id} ({r.path}:{r.line}): split {r.moved_from or '(none)'} -> regression: "
            f"{r.reason}{resumed_note}"
        )
    for s in advice.undersampled:
        typer.echo(f"not yet {s.case_id}: {s.reason}")
    if done and not dry_run:
        typer.echo(
            f"{len(done)} case(s) moved to the regression split; review the edit (git diff, or judgekit "
            "golden diff HEAD) and commit it"
        )
    elif not done:
        typer.echo(
            f"no capability case is saturated (every trial passed, at least {min_trials} per release, in "
            f"each of the last {releases} releases)"
        )


def _case_ref(case: Case) -> CaseRef:
    """A case of the set as the reports' :class:`~judgekit.results.CaseRef` (id, version, slice, category)."""
    from judgekit.results import CaseRef

    return CaseRef(id=case.id, version=case.version, slice=case.slice, category=case.category)


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
    app.command("retire")(retire)
    candidates = typer.Typer(help="Candidate cases awaiting review.", no_args_is_help=True)
    candidates.command("promote")(promote)
    app.add_typer(candidates, name="candidates")
    golden = typer.Typer(help="The golden set's history.", no_args_is_help=True)
    golden.command("diff")(golden_diff)
    app.add_typer(golden, name="golden")

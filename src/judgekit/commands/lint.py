"""``judgekit cases lint``: the golden-set linter (cases a do-nothing agent passes, and other weak cases).

Only typer is imported at module level; the graders load inside the command so that ``judgekit --help``
stays fast. What is found is :mod:`judgekit.golden.lint`'s business; this module parses, renders and picks
the exit code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_model

if TYPE_CHECKING:
    from judgekit.golden.lint import LintReport

__all__ = ["lint"]


def _usage(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _rubric_files(named: list[str] | None) -> list[tuple[str, Path]]:
    """``--rubric`` values as ``(name, file)``: a file path, or a built-in id (default: every built-in)."""
    from judgekit.judges.rubric import builtin_rubric_dir, builtin_rubric_ids

    builtin = builtin_rubric_ids()
    if not named:
        return [(rid, builtin_rubric_dir() / f"{rid}.yaml") for rid in builtin]
    out: list[tuple[str, Path]] = []
    for name in named:
        path = Path(name)
        if path.is_file():
            out.append((name, path))
        elif name in builtin:
            out.append((name, builtin_rubric_dir() / f"{name}.yaml"))
        else:
            raise _usage(
                f"--rubric {name}: no such file and no built-in rubric of that id "
                f"(built-in: {', '.join(builtin) or 'none'})"
            )
    return out


@existing_inputs("cases", "tau_bench", "db", "replay")
def lint(  # noqa: PLR0917 - typer options
    cases: list[Path] = typer.Argument(
        None, help="Golden-set folder(s) or case files (leave out with --tau-bench).", show_default=False
    ),
    output_format: str = format_option(),
    rubric: list[str] = typer.Option(
        None,
        "--rubric",
        help="A rubric id or file to lint and to resolve do_nothing.decided_by against (repeat). "
        "Default: every built-in rubric.",
    ),
    include_candidates: bool = typer.Option(
        False, "--candidates", help="Also lint candidates (by default only reviewed cases)."
    ),
    tau_bench: Path | None = typer.Option(
        None, "--tau-bench", help="Lint the tasks of a tau-bench results file instead (needs --db, --replay)."
    ),
    db: Path | None = typer.Option(
        None, "--db", help="With --tau-bench: the domain database before any episode."
    ),
    replay: Path | None = typer.Option(
        None, "--replay", help="With --tau-bench: the replay file of final and expected database diffs."
    ),
) -> None:
    """Find weak golden cases: ones a do-nothing agent passes, expectations nobody checks, broken references.

    For each case, a do-nothing trial (the user's turns answered by "I'm sorry, I can't help with that
    right now.", no tool call, the fixture unchanged) and the reference solution are graded on every
    deterministic layer. Reported: a case no deterministic gate fails for the do-nothing agent (unless it
    declares do_nothing: {why, decided_by}), a deterministic expectation neither trial decides, a
    reference that does not pass its own case, an empty criterion list (response_rubric: [], a rubric with
    no criteria) and a rubric that does not load. Judge-only expectations are listed as information.
    One line per finding (file:line: case-id: message), then a summary. Exit 0 when nothing is reported,
    1 when something is, 2 on a usage or input error (an invalid set: fix it first with judgekit cases check).
    """
    from judgekit.errors import JudgekitError

    output_format = chosen_format(output_format)
    if tau_bench is not None:
        if cases:
            raise _usage("give either golden-set CASES or --tau-bench RESULTS, not both")
        if db is None or replay is None:
            raise _usage("--tau-bench needs --db (the initial database) and --replay (the replay file)")
        report = _lint_tau_bench(tau_bench, db, replay)
    else:
        if db is not None or replay is not None:
            raise _usage("--db and --replay go with --tau-bench")
        if not cases:
            raise _usage("name a golden-set folder or case files (or --tau-bench RESULTS)")
        from judgekit.caseset import load_case_set
        from judgekit.golden.lint import lint_case_set, load_lint_rubrics

        for path in cases:
            if not path.exists():
                raise _usage(f"{path}: no such file or folder")
        rubrics = load_lint_rubrics(_rubric_files(rubric))
        try:
            case_set = load_case_set(cases)
        except JudgekitError as exc:
            raise _usage(exc.message) from None
        if case_set.problems:
            for problem in case_set.problems:
                typer.echo(str(problem), err=True)
            typer.echo("the set is invalid; fix it first (judgekit cases check)", err=True)
            raise typer.Exit(2)  # an input error: lint judges the cases of a valid set
        report = lint_case_set(case_set, rubrics=rubrics, include_candidates=include_candidates)
    if output_format == "json":
        print_model("lint_report", report.document())
    else:
        _print_text(report, tau_bench=tau_bench is not None)
    if not report.clean:
        raise typer.Exit(1)


def _lint_tau_bench(results: Path, db: Path, replay: Path) -> LintReport:
    from judgekit.integrations.taubench import load_run
    from judgekit.integrations.taubench_lint import lint_tau_bench

    for option, path in (("--tau-bench", results), ("--db", db), ("--replay", replay)):
        if not path.exists():
            raise _usage(f"{option} {path}: no such file or folder")
    run = load_run(results, db=db, replay=replay)
    for problem in run.problems:
        typer.echo(f"warning: {problem}", err=True)
    return lint_tau_bench(run, results=results)


def _print_text(report: LintReport, *, tau_bench: bool) -> None:
    for finding in report.findings:
        typer.echo(finding.line())
    if tau_bench:
        from judgekit.integrations.taubench_lint import do_nothing_reward_tasks

        free = do_nothing_reward_tasks(report)
        typer.echo(
            f"a do-nothing agent gets tau-bench's reward 1 on {len(free)} of {len(report.cases)} tasks"
            + (f": {', '.join(free)}" if free else "")
        )
    typer.echo(report.summary())

"""Run commands: ``judgekit grade``, ``judgekit report``, ``judgekit compare``, ``judgekit import``.

Only typer is imported at module level; pydantic models, numpy, the graders and litellm load inside the
commands so that ``judgekit --help`` stays fast.

Exit codes (docs/reference/exit-codes.md): 0 success; 1 the check found a problem (``grade`` and ``report``:
a ``--fail-under``, ``--fail-under-k`` or ``--max-errors`` threshold missed; ``compare``: the regression
suite lost a task or the sign test shows a significant regression); 2 a usage or input error (``grade``:
input lines left out; ``report``: problems in the results file, the report still written; ``compare``:
runs that cannot be compared). Without a threshold, ``grade`` and ``report`` exit 0 whatever the verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.judge_options import (
    JudgeFlags,
    cache_mode_option,
    cassette_option,
    config_option,
    judge_api_base_option,
    judge_backoff_option,
    judge_model_option,
    judge_retries_option,
    judge_timeout_option,
    max_cost_option,
    records_option,
    require_trust_option,
    rubric_option,
    setup_judge,
    unlabelled_criteria_option,
    untrusted_option,
)
from judgekit.commands.output import chosen_format, format_option, without_collections

if TYPE_CHECKING:
    from judgekit.api.runs import RunOptions, RunOutcome
    from judgekit.commands.judge_options import JudgeSetup
    from judgekit.errors import Problem
    from judgekit.formats.importers import ImportResult
    from judgekit.graders.grounding import GroundingMode
    from judgekit.integrations.ray_grading import RayChecks
    from judgekit.reports.run_gate import Threshold
    from judgekit.results import ResultLine
    from judgekit.stats import UndecidedPolicy

__all__ = [
    "compare",
    "grade",
    "import_anthropic",
    "import_openai",
    "import_tau2_bench",
    "import_tau_bench",
    "report",
]


# --------------------------------------------------------------------------- thresholds (grade, report)

_FAIL_UNDER_HELP = (
    "Exit 1 when pass^1 is below X (repeatable); SUITE:X for one suite (capability or regression), "
    "else every suite separately."
)
_FAIL_UNDER_K_HELP = "Exit 1 when pass^K is below X (repeatable); SUITE:K=X for one suite."
_MAX_ERRORS_HELP = (
    "Exit 1 when more than N trials have verdict error (repeatable); SUITE:N for one suite, else the "
    "whole run."
)


def _check_thresholds(values: list[str], kind: str) -> list[str]:
    """Refuse a threshold that does not parse while the options are parsed (a usage error: exit 2)."""
    from judgekit.reports.run_gate import parse_thresholds

    try:
        parse_thresholds(**{kind: values})
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return values


def _check_fail_under(values: list[str]) -> list[str]:
    return _check_thresholds(values, "fail_under")


def _check_fail_under_k(values: list[str]) -> list[str]:
    return _check_thresholds(values, "fail_under_k")


def _check_max_errors(values: list[str]) -> list[str]:
    return _check_thresholds(values, "max_errors")


@contextmanager
def _input_errors() -> Iterator[None]:
    """A :class:`~judgekit.errors.JudgekitError` raised inside is an input error: exit code 2."""
    from judgekit.errors import JudgekitError

    try:
        yield
    except JudgekitError as exc:
        exc.exit_code = 2
        raise


def _say_gate(thresholds: Sequence[Threshold], misses: Sequence[str]) -> bool:
    """One stderr line per missed threshold (or one saying all were met); whether any was missed."""
    for miss in misses:
        typer.echo(f"threshold missed: {miss}", err=True)
    if not misses:
        typer.echo(f"thresholds met: {', '.join(t.option for t in thresholds)}", err=True)
    return bool(misses)


# --------------------------------------------------------------------------- grade


class _RichProgress:
    """A rich progress bar: trials done, rate, ETA, judge cost so far and error count."""

    def __init__(self, enabled: bool, console: Any = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = console if console is not None else Console(stderr=True)
        self.enabled = enabled and self.console.is_terminal
        self._progress = Progress(
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("cost ${task.fields[cost]:.4f}"),
            TextColumn("errors {task.fields[errors]}"),
            TimeElapsedColumn(),
            console=self.console,
            disable=not self.enabled,
            transient=False,
        )
        self._task: Any = None
        self.errors = 0
        self.done = 0
        self._t0 = 0.0

    def start(self, total: int, already_done: int) -> None:
        import time

        self._t0 = time.perf_counter()
        self._progress.start()
        self._task = self._progress.add_task(
            "grade", total=total, completed=already_done, rate="", cost=0.0, errors=0
        )

    def advance(self, line: ResultLine, cost_so_far: float) -> None:
        import time

        from judgekit.verdict import Verdict

        self.done += 1
        if line.verdict is Verdict.ERROR:
            self.errors += 1
        elapsed = max(time.perf_counter() - self._t0, 1e-9)
        self._progress.update(
            self._task,
            advance=1,
            rate=f"{self.done / elapsed:.1f} trials/s",
            cost=cost_so_far,
            errors=self.errors,
        )

    def finish(self) -> None:
        self._progress.stop()


_FAIL_UNDER_OPTION: Any = typer.Option(
    [], "--fail-under", metavar="[SUITE:]X", help=_FAIL_UNDER_HELP, callback=_check_fail_under
)
_FAIL_UNDER_K_OPTION: Any = typer.Option(
    [], "--fail-under-k", metavar="[SUITE:]K=X", help=_FAIL_UNDER_K_HELP, callback=_check_fail_under_k
)
_MAX_ERRORS_OPTION: Any = typer.Option(
    [], "--max-errors", metavar="[SUITE:]N", help=_MAX_ERRORS_HELP, callback=_check_max_errors
)
"""The threshold options, shared by ``grade`` and ``report``."""


@existing_inputs("cases", "config", "cascade", "jury")
def grade(  # noqa: PLR0917 - typer options
    cases: Path | None = typer.Option(
        None, "--cases", help="Golden-set folder (default: cases of the project configuration)."
    ),
    transcripts: list[Path] = typer.Option(
        ...,
        "--transcripts",
        help="Transcript JSONL file or glob pattern ('runs/*.jsonl', quoted); repeatable, and files after "
        "it are read too (--transcripts a.jsonl b.jsonl).",
    ),
    more_transcripts: list[Path] | None = typer.Argument(
        None,
        show_default=False,
        help="More transcript files or patterns (what a shell makes of --transcripts runs/*.jsonl).",
    ),
    out: Path = typer.Option(..., "--out", help="Results file (JSONL) to write, one line per trial."),
    judge_model: str | None = judge_model_option(),
    cassette: Path | None = cassette_option(),
    cache_mode: str | None = cache_mode_option(),
    rubric: str | None = rubric_option(),
    judge_api_base: str | None = judge_api_base_option(),
    max_cost: float | None = max_cost_option(),
    judge_timeout: float | None = judge_timeout_option(),
    judge_retries: int | None = judge_retries_option(),
    judge_backoff: float | None = judge_backoff_option(),
    concurrency: int | None = typer.Option(None, "--concurrency", help="Trials graded at once (default: 8)."),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted run in --out."),
    retry_errors: bool = typer.Option(
        False,
        "--retry-errors",
        help="With --resume: also grade again the trials whose line ended in error (the case verdict, or "
        "any check, is error: the judge was down, the grader raised); their new lines replace the old "
        "ones.",
    ),
    config: Path | None = config_option(),
    untrusted: str | None = untrusted_option(),
    unlabelled_criteria: str | None = unlabelled_criteria_option(),
    records: Path | None = records_option(),
    require_trust: bool = require_trust_option(),
    cascade: Path | None = typer.Option(
        None,
        "--cascade",
        help="Judge cascade file (judgekit judge fit-cascade): a criterion whose judge confidence is below a "
        "stage's threshold goes to the next stage, below the last to a human (insufficient_information); "
        "the route is in the check's evidence.",
    ),
    jury: Path | None = typer.Option(
        None,
        "--jury",
        help="Jury file (YAML/JSON: aggregation majority, any_fail or weighted, and two or more members, "
        "each a name and a model): every member judges each criterion and the aggregation decides; the "
        "jury's fingerprint names its members and aggregation (see docs/methods/juries.md).",
    ),
    canary: int | None = typer.Option(
        None,
        "--canary",
        metavar="N",
        min=0,
        help="Re-ask N drift canaries of the judge's calibration before grading, without the cassette "
        "(judge.canary in configuration; 0: none): a detected drift makes the judge untrusted for this run "
        "and is written to the canary history (see judgekit judge canary).",
    ),
    fsync: bool = typer.Option(False, "--fsync", help="Force each result line to disk (power-loss safe)."),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Send the judge requests as one provider batch (OpenAI-compatible files and batches API; "
        "about half the price, answered within a day), wait for it, then write the results; the batch is "
        "recorded in OUT.batch.json, and --resume continues it without submitting again.",
    ),
    batch_poll: float | None = typer.Option(
        None,
        "--batch-poll",
        metavar="SECONDS",
        help="With --batch: seconds between two looks at the batch's status (default: 30).",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the progress bar."),
    ray: str | None = typer.Option(
        None,
        "--ray",
        metavar="ADDRESS",
        help="Check the deterministic layers on this Ray cluster (ray in configuration): auto, HOST:PORT, "
        "ray://HOST:PORT, or local (a one-machine cluster); the judge, the verdicts and the lines stay "
        "on this machine, so the results file is the one grading here writes. Needs "
        "pip install 'judgekit-agents[ray]' and the same paths on every node.",
    ),
    holdout: list[str] = typer.Option(
        [],
        "--holdout",
        help="Also grade this holdout case (by id; repeatable). Holdouts are left out otherwise.",
    ),
    grounding: str | None = typer.Option(
        None,
        "--grounding",
        help="Also check expected sources (scored), in a mode: retrieved_or_cited, retrieved, cited, "
        "retrieved_and_cited.",
    ),
    fail_under: list[str] = _FAIL_UNDER_OPTION,
    fail_under_k: list[str] = _FAIL_UNDER_K_OPTION,
    max_errors: list[str] = _MAX_ERRORS_OPTION,
    output_format: str = format_option(),
) -> None:
    """Grade transcripts against a golden set: every layer, one result line per trial as it finishes.

    Interrupt at any time (Ctrl-C, or the process killed) and run again with --resume: finished trials
    are not graded again, no line is duplicated, and a line cut off by the interruption is re-graded.
    Secrets (API keys, tokens in URLs, authorisation headers) are removed from everything written.
    With --format json the end-of-run summary is one document (kind grade_summary) on standard output:
    trials per verdict, errors, pass rates per suite, each threshold and whether the gate passed, the
    results file, the judge's trust and cost; the progress bar, notes and warnings stay on standard error.
    """
    from dataclasses import replace

    from judgekit.api.runs import RunOptions, grade_run
    from judgekit.reports.run_gate import parse_thresholds

    output_format = chosen_format(output_format)
    options = RunOptions(  # checked before a judge is set up, so an option's error is the only line
        resume=resume,
        retry_errors=retry_errors,
        grounding=cast("GroundingMode | None", grounding),
        holdout=tuple(holdout),
        fsync=fsync,
        batch=batch,
        batch_poll=batch_poll,
        thresholds=tuple(parse_thresholds(fail_under, fail_under_k, max_errors)),
        report=output_format == "json",
        require_trust=require_trust,
    )
    setup = setup_judge(
        JudgeFlags(
            model=judge_model,
            api_base=judge_api_base,
            rubric=rubric,
            cassette=cassette,
            cache_mode=cache_mode,
            max_cost=max_cost,
            timeout=judge_timeout,
            retries=judge_retries,
            backoff=judge_backoff,
            records=records,
            untrusted=untrusted,
            unlabelled_criteria=unlabelled_criteria,
            require_trust=require_trust,
            config=config,
            cascade=cascade,
            jury=jury,
        ),
        settings={"cases": cases, "concurrency": concurrency, "judge.canary": canary, "ray": ray},
    )
    cases = _golden_set(setup)
    options = replace(
        options,
        canary=int(setup.effective.value("judge.canary") or 0),
        concurrency=setup.concurrency,
        untrusted=setup.untrusted,
        grading=_grading_record(setup, cases, grounding),
        deterministic_pass=_ray_pass(setup.effective.value("ray")),
    )
    outcome = grade_run(
        cases,
        [*transcripts, *(more_transcripts or [])],
        out,
        judge=setup.grader,
        options=options,
        progress=_RichProgress(progress),
        say=lambda text: typer.echo(text, err=True),
    )
    _render_grade(outcome, options, output_format, judged=setup.grader is not None)


def _ray_pass(address: str | None) -> RayChecks | None:
    """The Ray cluster the deterministic layers are checked on (``--ray``, else ``ray`` in configuration)."""
    if address is None:
        return None
    from judgekit.integrations.ray_grading import RayChecks

    return RayChecks(address)


def _golden_set(setup: JudgeSetup) -> Path:
    """The golden set in force (``--cases``, else the configuration).

    Raises:
        JudgekitError: (exit code 2) When none is given anywhere.
    """
    from judgekit.errors import JudgekitError

    cases = setup.effective.path("cases")
    if cases is None:
        raise JudgekitError(
            "no golden set: give --cases FOLDER, or set cases in [tool.judgekit] of pyproject.toml or in "
            "judgekit.toml (see judgekit config)",
            exit_code=2,
        )
    return cases


def _grading_record(setup: JudgeSetup, cases: Path, grounding: str | None) -> dict[str, Any]:
    """The configuration judgekit records in every line of the run (the service removes secrets)."""
    judged = setup.model is not None
    record: dict[str, Any] = {
        "cases": str(cases),
        "judge_model": setup.model,
        "judge_api_base": setup.api_base,
        "rubric": setup.rubric if judged else None,
        "cache_mode": setup.mode if judged else None,
        "concurrency": setup.concurrency,
        "untrusted_policy": setup.untrusted,
        "config": setup.effective.run_config,
    }
    if setup.effective.project is not None:
        record["project_config"] = str(setup.effective.project.path)
    # the holdouts named (plan.holdouts) are recorded in every line's grading["holdouts"] by the runner
    if grounding is not None:
        record["grounding"] = grounding
    return record


def _render_grade(outcome: RunOutcome, options: RunOptions, output_format: str, *, judged: bool) -> None:
    """Print what ``grade`` did (a line of text, or the ``grade_summary`` document), then exit as it says.

    Raises:
        typer.Exit: 2 when input lines were left out, else 1 when a threshold was missed.
    """
    from judgekit.api.runs import untrusted_note

    summary = outcome.summary
    if output_format == "text":
        typer.echo(outcome.headline)
        if judged:
            typer.echo(untrusted_note(options.untrusted, summary))
    missed = _say_gate(options.thresholds, outcome.gate.misses) if options.thresholds else False
    if output_format == "json" and outcome.report is not None:
        from judgekit.commands.output import print_document

        print_document("grade_summary", outcome.document())
    if outcome.input_problems:
        typer.echo(f"{len(outcome.input_problems)} input line(s) left out (see warnings above)", err=True)
        raise typer.Exit(2)
    if missed:
        raise typer.Exit(1)


# --------------------------------------------------------------------------- report

_REPORT_FORMATS = ("html", "md", "json")
"""The formats of ``judgekit report``: a self-contained HTML page, Markdown, or the run report as JSON."""


_PROCESSES_OPTION = typer.Option(
    None,
    "--processes",
    "-j",
    min=0,
    metavar="N",
    help="Processes reading each results file, by byte ranges (the output is the same whatever the count): "
    "1 reads in this process only, 0 one per CPU; default: the processes setting, else one per 128 MiB of "
    "the file, at most one per CPU.",
)


@existing_inputs("results", "history", "cases")
def report(  # noqa: PLR0917 - typer options
    results: Path = typer.Argument(..., help="Results file (JSONL) written by judgekit grade."),
    output_format: str = format_option("md", _REPORT_FORMATS),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here (default: standard output)."),
    k: int | None = typer.Option(None, "--k", help="Largest k for pass^k (default: the trial count)."),
    history: list[Path] = typer.Option(
        [],
        "--history",
        help="Earlier results files, oldest first (for retirement suggestions: trials count by release, the "
        "agent version in their run records).",
    ),
    retire_after: int = typer.Option(
        3,
        "--retire-after",
        help="Distinct releases in a row in which a capability task must pass every trial to be suggested "
        "for retirement (0: no suggestions).",
    ),
    retire_min_trials: int = typer.Option(
        8,
        "--retire-min-trials",
        help="Trials a task needs in each of those releases (all passing, at its current version).",
    ),
    regression_slice: list[str] = typer.Option(
        ["regression", "regressions"],
        "--regression-slice",
        help="Slice names that form the regression suite.",
    ),
    cases: Path | None = typer.Option(
        None, "--cases", help="Golden set: trials of other cases are left out."
    ),
    holdout: list[str] = typer.Option(
        [],
        "--holdout",
        help="Include this holdout case (by id; repeatable). Holdouts are left out otherwise.",
    ),
    undecided: str = typer.Option(
        "fail",
        "--undecided",
        help="How an undecided trial (error, insufficient information, not evaluated) counts in pass^k and "
        "the rates: fail (a trial that did not pass) or exclude (left out of its task's trials).",
    ),
    fail_under: list[str] = _FAIL_UNDER_OPTION,
    fail_under_k: list[str] = _FAIL_UNDER_K_OPTION,
    max_errors: list[str] = _MAX_ERRORS_OPTION,
    records: Path | None = records_option(
        "Calibration records: each judged criterion whose judge fingerprint has one gets its pass rate "
        "corrected for the judge's misses and false alarms (Lee et al.), with interval and bounds"
    ),
    short: bool = typer.Option(
        False,
        "--short",
        help="With --format md: a pull-request comment (the headline, the suites, the top reasons and "
        "--link), bounded in size whatever the run's size.",
    ),
    top: int = typer.Option(
        10,
        "--top",
        metavar="N",
        help="With --short: rows of reasons shown (a case's trials failing the same way share a row), "
        "failed trials first; 0 to 100.",
    ),
    link: str | None = typer.Option(
        None,
        "--link",
        metavar="URL",
        help="With --short: where the full report is (a URL or path), linked at the end.",
    ),
    processes: int | None = _PROCESSES_OPTION,
) -> None:
    """Report a run: a verdict line, why each trial did not pass, pass^1..pass^k, suites, failures.

    The report opens with its headline: whether the thresholds were met (or that none was given), each
    suite's pass^1 and pass^k with 95% intervals over tasks, and the failed and undecided trials. Every
    trial that did not pass lists every gate that did not pass, each with what its evidence shows (the
    ones that decided the verdict first); --short makes the Markdown a pull-request comment.

    The report states the undecided policy in force (--undecided, default fail) and lists every case with
    undecided trials. Problems in the input (lines from another schema version, a truncated last line,
    trials of cases not in --cases, k larger than the trial count) are listed in the report and on standard
    error, and the rest is still reported; the exit code is then 2.

    Thresholds gate a CI job on the report's own figures: --fail-under 0.9 exits 1 when pass^1 of a suite
    is below 0.9 (each suite separately; regression:0.9 for one suite), --fail-under-k 4=0.5 the same for
    pass^4, --max-errors 0 when any trial's verdict is error. One line per missed threshold says the
    figure, the threshold and the suite. Input problems (exit 2) take precedence over a missed threshold.
    """
    output_format = chosen_format(output_format, _REPORT_FORMATS)
    policy = _check_report_options(
        output_format,
        short=short,
        link=link,
        top=top,
        retire_min_trials=retire_min_trials,
        k=k,
        undecided=undecided,
    )
    thresholds = _parse_thresholds(fail_under, fail_under_k, max_errors, k=k)
    from judgekit.api.reports import render_report_pieces
    from judgekit.api.reports import report as report_run_service

    def body() -> None:  # what it builds is freed when it returns (commands.output.without_collections)
        with _input_errors():
            older_problems: list[Problem] = []
            model = report_run_service(
                results,
                cases=cases,
                undecided=policy,
                k=k,
                history=history,
                records=records,
                holdout=holdout,
                retire_after=retire_after,
                retire_min_trials=retire_min_trials,
                regression_slices=regression_slice,
                thresholds=thresholds,
                warn=older_problems.append,
                processes=processes,
            )
        _emit(render_report_pieces(model, output_format, short=short, top=top, link=link), output)
        for problem in [*model.problems, *older_problems]:
            typer.echo(f"warning: {problem}", err=True)
        missed = _say_gate(thresholds, model.headline.misses) if thresholds and model.headline else False
        if model.problems:
            raise typer.Exit(2)
        if missed:
            raise typer.Exit(1)

    without_collections(body)


def _check_report_options(
    output_format: str,
    *,
    short: bool,
    link: str | None,
    top: int,
    retire_min_trials: int,
    k: int | None,
    undecided: str,
) -> UndecidedPolicy:
    """Refuse options of ``report`` that cannot go together; the undecided policy they name.

    Raises:
        JudgekitError: (exit code 2) On ``--short`` without Markdown, ``--link`` or ``--top`` without
            ``--short``, ``--top`` outside 0..100, an unknown ``--undecided`` policy or a
            ``--retire-min-trials`` below 1.
    """
    from judgekit.errors import JudgekitError
    from judgekit.stats import check_undecided_policy

    if short and output_format != "md":
        raise JudgekitError(
            f"--short makes a Markdown pull-request comment, not {output_format}: use --format md --short, "
            "or leave --short out",
            exit_code=2,
        )
    if (link is not None or top != 10) and not short:
        raise JudgekitError(
            f"{'--link' if link is not None else '--top'} applies to the short report: add --short "
            "(with --format md)",
            exit_code=2,
        )
    if not 0 <= top <= 100:
        raise JudgekitError(
            f"--top must be between 0 and 100 (got {top}): it counts rows of reasons", exit_code=2
        )
    try:
        policy = check_undecided_policy(undecided)
    except ValueError as exc:
        raise JudgekitError(f"--undecided: {exc}", exit_code=2) from None
    if retire_min_trials < 1:
        raise JudgekitError(
            f"--retire-min-trials must be at least 1 (got {retire_min_trials}); the seed recommends 8",
            exit_code=2,
        )
    return policy


def _parse_thresholds(
    fail_under: list[str], fail_under_k: list[str], max_errors: list[str], *, k: int | None
) -> list[Threshold]:
    """The thresholds of ``report``, each reachable with the report's ``--k``.

    Raises:
        JudgekitError: (exit code 2) When a threshold needs a pass^k beyond ``--k``.
    """
    from judgekit.errors import JudgekitError
    from judgekit.reports.run_gate import parse_thresholds

    needed = [t for t in parse_thresholds(fail_under, fail_under_k) if k is not None and t.k > k]
    if needed:
        raise JudgekitError(
            f"{needed[0].option} needs pass^{needed[0].k}, but --k {k} stops the report at k={k}: "
            "raise --k or leave it out",
            exit_code=2,
        )
    return list(parse_thresholds(fail_under, fail_under_k, max_errors))


def _emit(text: str | Iterable[str], output: Path | None) -> None:
    """Write ``text`` (or its pieces, cut where no secret straddles two), secrets removed, to ``output``.

    Each piece passes once through the process-wide redactor (:func:`judgekit.secrets.output_redactor`)
    and is written as it comes, so a report of any size is never held whole: to ``output`` atomically
    (saying so on standard error), else to standard output, ending with a line break.
    """
    from judgekit.io.atomic import write_atomic_pieces
    from judgekit.secrets import output_redactor

    pieces = (text,) if isinstance(text, str) else text
    if output is not None:
        write_atomic_pieces(output, pieces)
        typer.echo(f"wrote {output}", err=True)
        return
    last = ""
    for piece in pieces:
        last = output_redactor().payload(piece)
        typer.echo(last, nl=False)
    if not last.endswith("\n"):
        typer.echo("")


# --------------------------------------------------------------------------- compare

_COMPARE_FORMATS = ("md", "json")
"""The formats of ``judgekit compare``: Markdown, or the comparison as JSON."""


@existing_inputs("baseline", "candidate", "cases")
def compare(  # noqa: PLR0917 - typer options
    baseline: Path = typer.Argument(..., help="Results of the baseline (A)."),
    candidate: Path = typer.Argument(..., help="Results of the new version (B)."),
    output_format: str = format_option("md", _COMPARE_FORMATS),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here (default: standard output)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the verdict."),
    regression_slice: list[str] = typer.Option(
        ["regression", "regressions"],
        "--regression-slice",
        help="Slice names that form the regression suite (as in judgekit report).",
    ),
    cases: Path | None = typer.Option(
        None, "--cases", help="Golden set: a case's split (capability, regression) decides its suite."
    ),
    processes: int | None = _PROCESSES_OPTION,
) -> None:
    """Compare two runs task by task: fixed, broken, exact sign test, McNemar, a plain verdict.

    Exit code 1 when the regression suite lost a task (it passed every trial in the baseline and does not
    in the new run; each such task is named) or when the sign test shows a significant regression, whatever
    the other says. Exit code 2 when the runs cannot be compared (graded on different case versions or
    policy revisions, each case named; no task in common) or a results file has problems.
    """
    from judgekit.api.reports import compare as compare_service

    output_format = chosen_format(output_format, _COMPARE_FORMATS)

    def body() -> None:  # what it builds is freed when it returns (commands.output.without_collections)
        problems: list[Problem] = []

        def warn(problem: Problem) -> None:
            problems.append(problem)
            typer.echo(f"warning: {problem}", err=True)

        with _input_errors():
            result = compare_service(
                baseline,
                candidate,
                cases=cases,
                alpha=alpha,
                regression_slices=regression_slice,
                warn=warn,
                processes=processes,
            )
        if output_format == "json":
            from judgekit.reports.run_json import render_comparison_json

            text = render_comparison_json(result)
        else:
            from judgekit.reports.run_markdown import render_comparison_markdown

            text = render_comparison_markdown(result)
        _emit(text, output)
        typer.echo(f"verdict: {result.verdict} ({result.explanation})", err=True)
        for lost in result.regression_lost:
            typer.echo(
                f"regression suite lost {lost.case_id}: {lost.a} in {result.a}, {lost.b} in {result.b}",
                err=True,
            )
        if result.regression_lost:
            typer.echo(
                f"regression: the regression suite lost {len(result.regression_lost)} task(s): "
                + ", ".join(c.case_id for c in result.regression_lost),
                err=True,
            )
        if result.verdict == "regression":
            typer.echo(
                f"regression: the sign test shows a significant regression: {result.explanation}", err=True
            )
        if problems:
            raise typer.Exit(2)
        if result.regression_lost or result.verdict == "regression":
            raise typer.Exit(1)

    without_collections(body)


# --------------------------------------------------------------------------- import


def _write_import(
    result: ImportResult,
    out: Path,
    *,
    rewards: Path | None,
    run_id: str | None,
    kind: str,
    source_format: str,
    output: str,
) -> None:
    """Write an import's transcripts (and stored rewards), then say what was done.

    Args:
        result: What the importer read: the trials to write and the entries it could not import.
        out: The transcript JSONL file to write.
        rewards: The results file for the source's stored rewards, or ``None`` for none.
        run_id: The run id of the rewards file (default: a new one).
        kind: The source format in words, for the text summary (``OpenAI chat``).
        source_format: The source format's identifier, for the JSON document (``openai-chat``).
        output: ``text`` (warnings and a summary on standard error) or ``json`` (one ``import``
            document on standard output, nothing else).

    Raises:
        typer.Exit: (code 2, an input error, as ``grade`` gives for input lines it left out) When some
            entries could not be imported; the others were still written.
    """
    from judgekit.commands.output import print_document
    from judgekit.formats.importers import reward_result_lines, transcript_lines
    from judgekit.io.atomic import write_atomic
    from judgekit.results import dump_result_line
    from judgekit.runner import new_run_id
    from judgekit.secrets import Redactor

    text = output == "text"
    redactor = Redactor.from_environ()
    lines = [redactor.text(line) for line in transcript_lines(result.trials)]
    write_atomic(out, "".join(line + "\n" for line in lines))
    if text:
        for problem in result.problems:
            typer.echo(f"warning: {problem}", err=True)
        typer.echo(f"imported {len(result.trials)} {kind} trial(s) -> {out}", err=True)
    rid: str | None = None
    if rewards is not None:
        rid = run_id or new_run_id()
        results = "".join(
            dump_result_line(line, redactor) + "\n" for line in reward_result_lines(result.trials, run_id=rid)
        )
        write_atomic(rewards, results)
        if text:
            typer.echo(f"stored rewards as results -> {rewards} (run {rid})", err=True)
    if not text:
        print_document(
            "import",
            {
                "source": str(result.source),
                "source_format": source_format,
                "out": str(out),
                "transcripts_written": len(result.trials),
                "cases": len({t.transcript.case_id for t in result.trials}),
                "problems": [
                    {
                        "file": str(p.file) if p.file is not None else None,
                        "line": p.line,
                        "field": p.field,
                        "message": redactor.text(p.message),
                    }
                    for p in result.problems
                ],
                "rewards_file": str(rewards) if rewards is not None else None,
                "rewards_run_id": rid,
            },
        )
    if result.problems:
        raise typer.Exit(2)


_OUT_OPTION_HELP = "Transcript JSONL file to write."
_CASE_ID_FIELD_HELP = "Dotted field holding the case id (default case_id, metadata.case_id)."
_RUN_ID_HELP = "Run id of the rewards results file."


@existing_inputs("source")
def import_tau_bench(  # noqa: PLR0917 - typer options
    source: Path = typer.Argument(..., help="tau-bench results file (JSON list of episodes, or JSONL)."),
    out: Path = typer.Option(..., "--out", help=_OUT_OPTION_HELP),
    case_prefix: str = typer.Option("task-", "--case-prefix", help="Case id prefix (task-0, task-1, ...)."),
    agent_model: str | None = typer.Option(
        None, "--agent-model", help="The agent's model, for the run record."
    ),
    rewards: Path | None = typer.Option(
        None, "--rewards-out", help="Also write tau-bench's stored rewards as a results file (for report)."
    ),
    run_id: str | None = typer.Option(None, "--run-id", help=_RUN_ID_HELP),
    output_format: str = format_option(),
) -> None:
    """Import tau-bench trajectories: one transcript per (task, trial); trials become 1-based."""
    from judgekit.formats.importers import read_tau_bench

    output = chosen_format(output_format)
    result = read_tau_bench(source, case_prefix=case_prefix, agent_model=agent_model)
    _write_import(
        result,
        out,
        rewards=rewards,
        run_id=run_id,
        kind="tau-bench",
        source_format="tau-bench",
        output=output,
    )


@existing_inputs("source", "tasks", "db")
def import_tau2_bench(  # noqa: PLR0917 - typer options
    source: Path = typer.Argument(..., help="tau2-bench results file (info, tasks, simulations)."),
    out: Path = typer.Option(..., "--out", help="Folder to write cases.jsonl and transcripts/ into."),
    tasks: Path | None = typer.Option(
        None, "--tasks", help="tasks.json to take the tasks from (default: the results file's own)."
    ),
    db: Path | None = typer.Option(
        None,
        "--db",
        help="The domain's db.json or db.toml: written as fixtures/db.json (TOML converted), the cases' "
        "initial state.",
    ),
    case_prefix: str = typer.Option("task-", "--case-prefix", help="Case id prefix (task-5, ...)."),
    agent_model: str | None = typer.Option(
        None, "--agent-model", help="The agent's model (default: the file's info.agent_info.llm)."
    ),
    rewards: Path | None = typer.Option(
        None, "--rewards-out", help="Also write tau2's stored rewards as a results file (for report)."
    ),
    run_id: str | None = typer.Option(None, "--run-id", help=_RUN_ID_HELP),
    output_format: str = format_option(),
) -> None:
    """Import tau2-bench simulations as cases and transcripts; reproduce its reward; list what it skips.

    Task ids that are not case ids (telecom's [mobile_data_issue]...|...) are escaped reversibly
    (task-.5Bmobile_data_issue.5D...); the import lists which case is which task. Exit 2 when some task or
    simulation could not be imported (the others are written) or none could (nothing is written), 1 when
    a stored reward is not reproduced.
    """
    from judgekit.commands.output import print_document
    from judgekit.formats.importers import reward_result_lines
    from judgekit.integrations import tau2bench
    from judgekit.io.atomic import write_atomic
    from judgekit.results import dump_result_line
    from judgekit.runner import new_run_id
    from judgekit.secrets import Redactor

    output = chosen_format(output_format)
    redactor = Redactor.from_environ()
    run = tau2bench.load_run(
        source,
        tasks=tasks,
        case_prefix=case_prefix,
        initial_state=tau2bench.DB_FIXTURE if db is not None else None,
        agent_model=agent_model,
    )
    written = tau2bench.write_run(run, out, db=db, redact=redactor.text)
    rid: str | None = None
    if rewards is not None:
        rid = run_id or new_run_id()
        lines = reward_result_lines(run.trials, run_id=rid, source_ids=run.escaped_ids())
        write_atomic(rewards, "".join(dump_result_line(line, redactor) + "\n" for line in lines))
    if output == "text":
        for problem in run.problems:
            typer.echo(f"warning: {problem}", err=True)
        typer.echo(
            f"imported {len(run.cases)} case(s) and {len(run.trials)} tau2-bench trial(s) -> {out}", err=True
        )
        for line in [*tau2bench.id_lines(run), *tau2bench.reward_lines(run), *tau2bench.finding_lines(run)]:
            typer.echo(redactor.text(line))
    else:
        from judgekit.commands.golden import problem_data

        problems = [{**problem_data(p), "message": redactor.text(p.message)} for p in run.problems]
        print_document(
            "tau2_import",
            {
                "source": str(source),
                "out": str(out),
                "written": {k: str(v) for k, v in written.items()},
                "cases": len(run.cases),
                "transcripts_written": len(run.trials),
                "problems": problems,
                "rewards_file": str(rewards) if rewards is not None else None,
                "rewards_run_id": rid,
                **tau2bench.run_document(run),
            },
        )
    if run.problems:
        raise typer.Exit(2)
    if not all(r.reproduced for r in run.rewards):
        raise typer.Exit(1)


_CHAT_AGENT_MODEL_OPTION = typer.Option(None, "--agent-model", help="The agent's model (default: 'model').")
_CHAT_REWARDS_OPTION = typer.Option(
    None, "--rewards-out", help="Also write metadata.reward as a results file."
)


def _import_chat(  # noqa: PLR0917 - the import commands' options, passed on
    read: Callable[..., ImportResult],
    source: Path,
    out: Path,
    case_id_field: str | None,
    agent_model: str | None,
    rewards: Path | None,
    run_id: str | None,
    output_format: str,
    *,
    kind: str,
    source_format: str,
) -> None:
    """Read a chat JSONL file with ``read`` and write its transcripts (and rewards), as one import command."""
    output = chosen_format(output_format)
    result = read(source, case_id_field=case_id_field, agent_model=agent_model)
    _write_import(
        result, out, rewards=rewards, run_id=run_id, kind=kind, source_format=source_format, output=output
    )


@existing_inputs("source")
def import_openai(  # noqa: PLR0917 - typer options
    source: Path = typer.Argument(..., help="OpenAI chat JSONL file: {messages, tools, ...} per line."),
    out: Path = typer.Option(..., "--out", help=_OUT_OPTION_HELP),
    case_id_field: str | None = typer.Option(None, "--case-id-field", help=_CASE_ID_FIELD_HELP),
    agent_model: str | None = _CHAT_AGENT_MODEL_OPTION,
    rewards: Path | None = _CHAT_REWARDS_OPTION,
    run_id: str | None = typer.Option(None, "--run-id", help=_RUN_ID_HELP),
    output_format: str = format_option(),
) -> None:
    """Import OpenAI chat JSONL conversations as transcripts."""
    from judgekit.formats.importers import read_openai_chat

    args = (source, out, case_id_field, agent_model, rewards, run_id, output_format)
    _import_chat(read_openai_chat, *args, kind="OpenAI chat", source_format="openai-chat")


@existing_inputs("source")
def import_anthropic(  # noqa: PLR0917 - typer options
    source: Path = typer.Argument(
        ..., help="Anthropic messages JSONL file: {system, messages, tools, ...} per line."
    ),
    out: Path = typer.Option(..., "--out", help=_OUT_OPTION_HELP),
    case_id_field: str | None = typer.Option(None, "--case-id-field", help=_CASE_ID_FIELD_HELP),
    agent_model: str | None = _CHAT_AGENT_MODEL_OPTION,
    rewards: Path | None = _CHAT_REWARDS_OPTION,
    run_id: str | None = typer.Option(None, "--run-id", help=_RUN_ID_HELP),
    output_format: str = format_option(),
) -> None:
    """Import Anthropic messages JSONL conversations (tool_use / tool_result blocks) as transcripts."""
    from judgekit.formats.adapters import read_anthropic

    args = (source, out, case_id_field, agent_model, rewards, run_id, output_format)
    _import_chat(read_anthropic, *args, kind="Anthropic messages", source_format="anthropic-messages")

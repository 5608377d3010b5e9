"""Drift canary commands: ``judgekit judge canary-set`` (build) and ``judgekit judge canary`` (re-check).

Only typer is imported at module level; the judge, the records and scipy load inside the commands.

Exit codes: 0 no drift (or the set written); 1 ``judge canary`` declared drift (the judge is untrusted
until re-calibrated); 2 a usage or input error (no record, no canary set, replay mode, a bad option).
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.judge_options import (
    JudgeFlags,
    cache_mode_option,
    cassette_option,
    config_option,
    judge_api_base_option,
    judge_model_option,
    judge_timeout_option,
    max_cost_option,
    records_option,
    rubric_option,
    setup_judge,
)
from judgekit.commands.output import chosen_format, format_option, print_model

__all__ = ["canary_check", "canary_set"]

_NO_MODEL = (
    "a canary check re-asks the judge and none is configured: give --judge-model MODEL, or set judge.model "
    "in --config FILE or the project configuration (see judgekit config)"
)


def _flags(  # noqa: PLR0917 - the judge options, passed on
    judge_model: str | None,
    judge_api_base: str | None,
    rubric: str | None,
    cassette: Path | None,
    cache_mode: str | None,
    max_cost: float | None,
    judge_timeout: float | None,
    records: Path | None,
    config: Path | None,
) -> JudgeFlags:
    return JudgeFlags(
        model=judge_model,
        api_base=judge_api_base,
        rubric=rubric,
        cassette=cassette,
        cache_mode=cache_mode,
        max_cost=max_cost,
        timeout=judge_timeout,
        records=records,
        config=config,
    )


@existing_inputs("config")
def canary_check(  # noqa: PLR0917 - typer options
    n: int = typer.Option(
        20, "-n", "--items", min=1, help="Canaries to re-ask (a seeded choice; default 20)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the choice (each check of a series chooses anew)."),
    judge_model: str | None = judge_model_option(),
    judge_api_base: str | None = judge_api_base_option(),
    rubric: str | None = rubric_option(),
    cassette: Path | None = cassette_option(),
    cache_mode: str | None = cache_mode_option(),
    max_cost: float | None = max_cost_option(),
    judge_timeout: float | None = judge_timeout_option(),
    records: Path | None = records_option(),
    config: Path | None = config_option(),
    output_format: str = format_option(),
) -> None:
    """Re-ask the judge's drift canaries and test whether its replies moved (for a schedule: cron, CI).

    N canaries of the canary set kept with the judge's latest calibration record are re-asked through the
    judge's client, never from the cassette; flips against the recorded replies and new errors against the
    labels update an always-valid sequential test whose false-alarm rate over the whole series of checks is
    the set's alpha (1% by default). The check is written to RECORDS/canary-history/; a detected drift
    makes the judge untrusted (judgekit judge trust says why) until it is re-calibrated. The check's cost
    (calls, tokens, dollars) is printed. Exit code 1 on detected drift, 2 on an input error, 0 otherwise.
    """
    from judgekit.api.canary import check_canaries

    output_format = chosen_format(output_format)
    flags = _flags(
        judge_model, judge_api_base, rubric, cassette, cache_mode, max_cost, judge_timeout, records, config
    )
    setup = setup_judge(flags, need_model=_NO_MODEL)
    if setup.grader is None:  # pragma: no cover - need_model guarantees a judge
        raise typer.Exit(2)
    outcome = check_canaries(setup.grader, n, records=setup.records, seed=seed)
    if output_format == "json":
        print_model("canary_check", outcome)
    else:
        typer.echo(outcome.summary)
    if outcome.detected:
        raise typer.Exit(1)


@existing_inputs("results", "transcripts", "cases", "record", "config")
def canary_set(  # noqa: PLR0917 - typer options
    results: Path = typer.Argument(
        ..., help="Results file (judgekit grade --out) the calibrated judge graded."
    ),
    transcripts: list[Path] = typer.Option(
        ..., "--transcripts", help="Transcript file(s) the results were graded from (repeatable)."
    ),
    cases: Path = typer.Option(..., "--cases", help="Golden-set folder the results were graded against."),
    record: Path | None = typer.Option(
        None,
        "--record",
        help="Calibration record file (default: the judge's latest record in the records folder).",
    ),
    tolerance: float = typer.Option(
        0.02,
        "--tolerance",
        help="Flip probability per item a stable judge may show (the null; default 0.02).",
    ),
    alpha: float = typer.Option(0.01, "--alpha", help="False-alarm rate over the whole series of checks."),
    judge_model: str | None = judge_model_option(),
    judge_api_base: str | None = judge_api_base_option(),
    rubric: str | None = rubric_option(),
    cassette: Path | None = cassette_option(),
    cache_mode: str | None = cache_mode_option(),
    records: Path | None = records_option(),
    config: Path | None = config_option(),
    output_format: str = format_option(),
) -> None:
    """Build the drift canary set of a calibration record from the results its judge graded.

    Each item the record labelled (item CASE#TRIAL and criterion) whose judge verdict (pass or fail, by the
    record's exact fingerprint) is in RESULTS and whose transcript is among --transcripts becomes a canary:
    the experts' consensus, the judge's recorded verdict and samples, and what re-creates its request
    exactly (criterion, transcript block, case facts). It is written to RECORDS/canaries/ under the
    record's file name, bound to the record by its SHA-256. The judge options name the judge the record
    calibrated (its fingerprint is checked); nothing is sent to it.
    """
    from judgekit.api.canary import build_canary_set, write_canary_set

    output_format = chosen_format(output_format)
    flags = _flags(judge_model, judge_api_base, rubric, cassette, cache_mode, None, None, records, config)
    setup = setup_judge(flags, need_model=_NO_MODEL)
    if setup.grader is None:  # pragma: no cover - need_model guarantees a judge
        raise typer.Exit(2)
    built = build_canary_set(
        results,
        rubric=setup.grader.rubric,
        record=record,
        records=setup.records,
        fingerprint=setup.grader.fingerprint,
        include_case_criteria=setup.grader.include_case_criteria,
        cases=cases,
        transcripts=transcripts,
        tolerance=tolerance,
        alpha=alpha,
    )
    path = write_canary_set(built, setup.records)
    if output_format == "json":
        print_model("canary_set", built.model_copy(update={"items": ()}))
    else:
        typer.echo(
            f"canary set of {built.record_file}: {len(built.items)} item(s), null flip rate "
            f"{built.null_rate:g}, false-alarm rate {built.alpha:g} over the series -> {path}"
        )

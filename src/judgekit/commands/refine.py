"""Refinement command: ``judgekit judge refine``.

Only typer is imported at module level; the refinement (:func:`judgekit.api.refine.refine`) and the judge
load inside the command so that ``judgekit --help`` stays fast.
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
    judge_backoff_option,
    judge_model_option,
    judge_retries_option,
    judge_timeout_option,
    max_cost_option,
    records_option,
    rubric_option,
    setup_judge,
)
from judgekit.commands.output import chosen_format, format_option, print_model

__all__ = ["refine"]

_NO_MODEL = (
    "judge refine needs a judge model and none is configured: give --judge-model MODEL, or --config FILE "
    "with judge.model (examples/airdesk/judge.yaml for the bundled example), or JUDGEKIT_JUDGE_MODEL"
)


@existing_inputs("labels", "cases", "runs", "config", "policy")
def refine(  # noqa: PLR0917 - typer options
    labels: Path = typer.Argument(..., help="The experts' label table (.csv, .tsv or .jsonl)."),
    experts: str = typer.Option(
        ..., "--experts", help="Comma-separated expert raters whose consensus the judge is refined on."
    ),
    cases: Path = typer.Option(..., "--cases", help="The golden set holding the labelled trials' cases."),
    runs: list[Path] = typer.Option(
        ..., "--runs", help="Transcript file(s) (JSONL) holding every labelled trial; repeat for several."
    ),
    out: Path = typer.Option(..., "--out", help="Folder for the candidate rubrics and the reports."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split by case (same seed, same split)."),
    dev_share: float = typer.Option(
        0.5, "--dev-share", help="Share of cases in the development part, between 0 and 1 (exclusive)."
    ),
    metric: str = typer.Option(
        "kappa", "--metric", help="Development metric: kappa, agreement or balanced_accuracy."
    ),
    examples_per_criterion: int = typer.Option(
        3, "--examples-per-criterion", help="Most few-shot examples per criterion (0: none)."
    ),
    propose_wording: bool = typer.Option(
        False, "--propose-wording", help="Also ask the judge's model for new criterion wording (recorded)."
    ),
    policy: Path | None = typer.Option(None, "--policy", help="Trust policy (YAML/JSON) for the test part."),
    judge_rater: str = typer.Option("judge", "--judge-rater", help="Rater name of the judge's rows written."),
    judge_model: str | None = judge_model_option(),
    judge_api_base: str | None = judge_api_base_option(),
    rubric: str | None = rubric_option(),
    cassette: Path | None = cassette_option(),
    cache_mode: str | None = cache_mode_option(),
    max_cost: float | None = max_cost_option(),
    judge_timeout: float | None = judge_timeout_option(),
    judge_retries: int | None = judge_retries_option(),
    judge_backoff: float | None = judge_backoff_option(),
    records: Path | None = records_option(),
    config: Path | None = config_option(),
    output_format: str = format_option(),
) -> None:
    """Improve the judge's rubric on part of the labels; measure it once on labels it was not tuned on.

    Splits LABELS by case (seeded) into a development part and a test part, recorded in the records
    folder's label-usage ledger. The current rubric judges the development trials; its disagreements with
    the experts' consensus become few-shot examples (and, with --propose-wording, the model proposes new
    criterion wording). Each candidate rubric judges the development trials, the best on --metric is
    chosen (a tie goes to the simpler one), and it is measured once on the test part: the calibration
    record is built from the test part alone, the development figure shown beside it as optimistic. A
    second look at the test part for the same rubric id is refused: label fresh test cases. Exit code 0
    when the chosen judge passes the trust policy on the test part, 1 when it does not or a guard
    refuses, 2 for an input mistake.
    """
    from judgekit.api.refine import RefineOptions
    from judgekit.api.refine import refine as run_refine

    output_format = chosen_format(output_format)
    flags = JudgeFlags(
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
        config=config,
    )
    setup = setup_judge(flags, need_model=_NO_MODEL)
    if setup.grader is None:  # pragma: no cover - need_model refuses first
        raise typer.Exit(2)
    options = RefineOptions(
        judge=setup.grader,
        experts=experts.split(","),
        cases=cases,
        runs=runs,
        seed=seed,
        dev_share=dev_share,
        metric=metric,
        examples_per_criterion=examples_per_criterion,
        propose_wording=propose_wording,
        records=records,  # the flag as given: the default folder may be absent (the record makes it)
        policy=policy,
        judge_rater=judge_rater,
    )
    result = run_refine(labels, options=options, out=out)
    if output_format == "json":
        print_model("refinement", result.document)
    else:
        typer.echo(result.render_markdown(), nl=False)
    if not result.calibration.trusted:
        raise typer.Exit(1)

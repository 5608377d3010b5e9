"""``judgekit judge fit-cascade``: fit a judge cascade (cheap to strong, then a human) on calibration labels.

The file it writes is what ``judgekit grade --cascade`` routes each criterion with
(docs/methods/selective-judging.md). Only typer is imported at module top; numpy, scipy and the pydantic
models load inside the command so that ``judgekit --help`` stays fast.

Exit codes: 0 the cascade was written; 2 a usage or input error (a malformed label table, a stage that is
not a rater of the table or whose rows carry no confidence, an output that cannot be written).
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_model

__all__ = ["fit_cascade"]


@existing_inputs("labels")
def fit_cascade(
    labels: Path = typer.Argument(
        ...,
        help="Long label table (.csv, .tsv or .jsonl) with every stage's verdicts and a confidence column.",
        show_default=False,
    ),
    *,
    stage: list[str] = typer.Option(
        ...,
        "--stage",
        metavar="RATER=MODEL",
        help="A judge of the cascade, cheap first (repeatable): its rater name in the table and the litellm "
        "model it judges with at grade time.",
    ),
    out: Path = typer.Option(
        ..., "--out", help="The cascade file (JSON) to write, for judgekit grade --cascade."
    ),
    experts: str | None = typer.Option(
        None,
        "--experts",
        help="Comma-separated expert raters (default: the one rater that is not a stage; refused when there "
        "are several or it looks like a model).",
    ),
    target: float = typer.Option(
        0.9, "--target", help="Agreement with the experts promised on what the judges decide."
    ),
    delta: float = typer.Option(
        0.05, "--delta", help="Probability that the promise fails (split evenly over the stages)."
    ),
    fmt: str = format_option(),
) -> None:
    """Fit a judge cascade (cheap to strong, then a human) with a confidence threshold per stage.

    Each stage's threshold is fitted on the items the earlier stages passed on, by fixed-sequence testing
    at delta / stages, so that agreement with the experts on everything the judges decide is at least
    --target with probability at least 1 - delta. Writes --out; exit 0, or 2 for a usage or input error.
    """
    from judgekit.calibration.guards import random_sample_only
    from judgekit.calibration.labels import VERDICT_SCALE, parse_labels
    from judgekit.calibration.selective import CascadeDocument, cascade_from_table
    from judgekit.errors import JudgekitError
    from judgekit.io.atomic import write_atomic
    from judgekit.io.documents import read_input

    as_json = chosen_format(fmt) == "json"
    pairs: list[tuple[str, str | None]] = []
    for given in stage:
        rater, sep, model = given.partition("=")
        if not sep or not rater.strip() or not model.strip():
            raise JudgekitError(f"--stage {given!r}: give RATER=MODEL (judge-small=openai/gpt-4o-mini)")
        pairs.append((rater.strip(), model.strip()))
    names = [n for n, _ in pairs]
    if len(set(names)) != len(names):
        raise JudgekitError(f"--stage: a rater is named twice ({', '.join(names)}); name each stage once")
    for name, value in (("--target", target), ("--delta", delta)):
        if not 0.0 < value < 1.0:
            raise JudgekitError(f"{name} must be strictly between 0 and 1 (got {value:g})")
    expert_list = None
    if experts is not None:
        expert_list = [e.strip() for e in experts.split(",") if e.strip()]
        if not expert_list:
            raise JudgekitError("--experts: no expert named")
    table = parse_labels(read_input(labels, "label table"), source=labels, scale=VERDICT_SCALE)
    table, provenance = random_sample_only(table)  # thresholds use the random-sample items only
    if provenance.random:
        typer.echo(provenance.note, err=True)
    cascade = cascade_from_table(table, pairs, experts=expert_list, target=target, delta=delta, source=labels)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, cascade.model_dump_json(indent=2) + "\n")
    except OSError as exc:
        raise JudgekitError(f"{out}: cannot write the cascade file: {exc.strerror or exc}") from None
    if as_json:
        print_model("cascade", CascadeDocument(out=str(out), cascade=cascade))
        return
    typer.echo(
        f"cascade: {out} (target agreement {target:g} at δ = {delta:g}, {cascade.calibration_items} items)"
    )
    for s in cascade.stages:
        where = "decides nothing" if s.threshold is None else f"threshold {s.threshold:g}"
        bound = "" if s.agreement_lower_bound is None else f", agreement ≥ {s.agreement_lower_bound:.3f}"
        typer.echo(
            f"  {s.name} ({s.model}): {where}; keeps {s.kept}/{s.reached}, coverage {s.coverage:.3f}{bound}"
        )
    typer.echo(f"  human reviewer: {cascade.human_share:.3f} of the calibration items")

"""``judgekit judge fit-jury``: fit a weighted jury's member weights on development labels.

The file it writes is a jury file (:mod:`judgekit.judges.jury`) with aggregation ``weighted``, each member's
weight and what the weights were fitted on; ``judgekit grade --jury`` grades with it and ``judgekit
calibrate --jury`` calibrates it on the other items (docs/methods/juries.md). Only typer is imported at
module top.

Exit codes: 0 the jury was written; 2 a usage or input error (a malformed label table, a member that is
not a rater of the table, no development label to fit on, an output that cannot be written).
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_model

__all__ = ["fit_jury"]


@existing_inputs("labels")
def fit_jury(
    labels: Path = typer.Argument(
        ...,
        help="Long label table (.csv, .tsv or .jsonl) with each member's verdicts and the experts' labels.",
        show_default=False,
    ),
    *,
    member: list[str] = typer.Option(
        ...,
        "--member",
        metavar="RATER=MODEL",
        help="A member of the jury (repeatable, at least two): its rater name in the table and the litellm "
        "model it judges with at grade time.",
    ),
    out: Path = typer.Option(..., "--out", help="The jury file (JSON) to write, for judgekit grade --jury."),
    experts: str | None = typer.Option(
        None,
        "--experts",
        help="Comma-separated expert raters (default: the one rater that is not a member; refused when there "
        "are several or it looks like a model).",
    ),
    development_share: float = typer.Option(
        0.5,
        "--development-share",
        help="Share of the cases whose labels fit the weights (the rest are left for calibrate --jury).",
    ),
    seed: int = typer.Option(0, "--seed", help="Changes which cases are drawn for development."),
    fmt: str = format_option(),
) -> None:
    """Fit a weighted jury: each member's weight is the log-odds of its accuracy on development labels.

    Writes --out, a jury file with aggregation weighted, the weights and the development items they were
    fitted on (calibrate --jury leaves those items out). Exit 0, or 2 for a usage or input error.
    """
    from judgekit.api.calibration import fit_jury
    from judgekit.errors import JudgekitError
    from judgekit.io.atomic import write_atomic_making_folder

    as_json = chosen_format(fmt) == "json"
    pairs: list[tuple[str, str]] = []
    for given in member:
        rater, sep, model = given.partition("=")
        if not sep or not rater.strip() or not model.strip():
            raise JudgekitError(
                f"--member {given!r}: give RATER=MODEL (small=openai/gpt-4o-mini)", exit_code=2
            )
        pairs.append((rater.strip(), model.strip()))
    jury = fit_jury(
        labels,
        pairs,
        experts=None if experts is None else experts.split(","),
        development_share=development_share,
        seed=seed,
        on_note=lambda note: typer.echo(note, err=True),
    )
    write_atomic_making_folder(out, jury.model_dump_json(indent=2) + "\n", what="jury file")
    if as_json:
        print_model("jury", jury)
        return
    fit = jury.fit
    typer.echo(
        f"jury: {out} (weighted, fitted on {len(fit.development_items) if fit else 0} development items)"
    )
    for m in jury.members:
        accuracy = fit.accuracy.get(m.name) if fit else None
        shown = "undefined" if accuracy is None else f"{accuracy:.3f}"
        typer.echo(f"  {m.name} ({m.model}): weight {m.weight:.3f}; accuracy {shown} on development items")

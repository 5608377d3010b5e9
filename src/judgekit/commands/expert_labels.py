"""Commands for labels from experts: ``labels page`` (one expert's labelling page) and ``labels reconcile``.

The work is :func:`judgekit.api.expert_labels.label_page` and
:func:`judgekit.api.expert_labels.reconcile_labels`; their places in the tree are in
:mod:`judgekit.commands.tree`. Only typer is imported at module level.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_model

__all__ = ["labels_page", "labels_reconcile"]


@existing_inputs("results", "cases", "transcripts")
def labels_page(  # noqa: PLR0917 - typer options
    results: Path = typer.Argument(
        ..., help="Results file (JSONL) written by judgekit grade with a judge.", show_default=False
    ),
    expert: str = typer.Option(..., "--expert", help="The expert's name: the rater of every label."),
    out: Path = typer.Option(..., "--out", help="The HTML page to write (self-contained)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the expert's order (same seed, same order)."),
    criteria: list[str] = typer.Option(
        [],
        "--criteria",
        help="Criterion ids to label, comma-separated or repeated (default: every judged one).",
    ),
    show_judge: bool = typer.Option(
        False, "--show-judge", help="Show the judge's verdicts (default blind); the labels record it."
    ),
    rubric: str = typer.Option("honest-reporting", "--rubric", help="Rubric id or file graded with."),
    cases: Path | None = typer.Option(
        None, "--cases", help="The golden set graded on: case facts and the cases' own criteria."
    ),
    transcripts: list[Path] = typer.Option(
        [], "--transcripts", help="Transcript files to take the trials from (default: each result's source)."
    ),
    output_format: str = format_option(),
) -> None:
    """Write one expert's labelling page: one trial and one criterion at a time, blind to the judge.

    The page (one HTML file, no network) shows each judged criterion's text, the case facts and the
    transcript, in an order seeded by --seed and the expert's name; the expert answers pass, fail or
    insufficient information with notes, and downloads a label table that joins with the judge's rows.
    Answers stay in the browser across reloads. Give each expert their own page.
    """
    from judgekit.api.expert_labels import label_page

    output_format = chosen_format(output_format)
    document = label_page(
        results,
        expert=expert,
        out=out,
        seed=seed,
        criteria=[c.strip() for given in criteria for c in given.split(",") if c.strip()],
        show_judge=show_judge,
        rubric=rubric,
        cases=cases,
        transcripts=transcripts,
    )
    if output_format == "json":
        print_model("label_page", document)
        return
    for warning in document.warnings:
        typer.echo(f"warning: {warning}", err=True)
    per = ", ".join(f"{c} {n}" for c, n in document.criteria.items())
    skipped = "; ".join(f"{n} {why}" for why, n in document.skipped.items())
    typer.echo(
        f"wrote {document.page} for {document.expert}: {document.items} item(s) from {document.trials} "
        f"trial(s) ({per}); seed {document.seed}; "
        + ("judge verdicts SHOWN" if document.show_judge else "blind to the judge")
        + (f"; left out: {skipped}" if skipped else "")
    )


@existing_inputs("a", "b")
def labels_reconcile(
    a: Path = typer.Argument(..., help="Expert A's label table.", show_default=False),
    b: Path = typer.Argument(..., help="Expert B's label table.", show_default=False),
    out: Path | None = typer.Option(
        None, "--out", help="Write both experts' rows as one label table, only when everything is settled."
    ),
    resolution_sheet: Path | None = typer.Option(
        None, "--sheet", help="Write the resolution sheet (CSV) of the items still to settle."
    ),
    output_format: str = format_option(),
) -> None:
    """Compare two experts' label tables; list the items they disagree on, with each one's label and notes.

    Exit 0 when they agree on every item (and --out is written), 1 when items are disputed or labelled by
    one expert only (--sheet lists them; nothing is written to --out).
    """
    from judgekit.api.expert_labels import reconcile_labels

    output_format = chosen_format(output_format)
    doc = reconcile_labels(a, b, out=out, sheet=resolution_sheet)
    name_a, name_b = doc.experts
    if output_format == "json":
        print_model("label_reconciliation", doc)
    else:
        for c in doc.disputed:
            typer.echo(
                f"{c.item_id}/{c.criterion}: {name_a} {c.a_label}"
                + (f" ({c.a_notes})" if c.a_notes else "")
                + f" | {name_b} {c.b_label}"
                + (f" ({c.b_notes})" if c.b_notes else "")
            )
        for name, only in ((name_a, doc.only_a), (name_b, doc.only_b)):
            for c in only:
                typer.echo(f"{c.item_id}/{c.criterion}: labelled by {name} only")
        typer.echo(
            f"{name_a} vs {name_b}: {len(doc.agreed)} agreed, {len(doc.disputed)} disputed, "
            f"{len(doc.only_a)} only {name_a}, {len(doc.only_b)} only {name_b}"
        )
        for name, n in doc.saw_judge.items():
            if n:
                typer.echo(f"note: {n} of {name}'s labels were given seeing the judge's verdict")
        if doc.written:
            typer.echo(f"the experts agree; wrote {doc.written}")
        if doc.sheet:
            typer.echo(f"wrote the resolution sheet {doc.sheet}")
        if not doc.settled:
            typer.echo(
                "settle each item (reword an ambiguous criterion, or agree on the policy), correct the "
                "labels on each expert's page, download again and run again"
            )
    if not doc.settled:
        raise typer.Exit(1)

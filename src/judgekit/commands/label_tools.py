"""``labels import``: expert labels from annotation tools (Label Studio, Argilla, Langfuse, Phoenix).

The work is :func:`judgekit.api.label_import.import_labels`; this module parses the options and prints.

Exit codes: 0 the label table was written; 2 a usage or input error, or records that could not be
mapped (nothing written unless ``--accept-skipped``; each is listed with its location).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_model

if TYPE_CHECKING:
    from judgekit.api.label_import import LabelImport

__all__ = ["labels_import"]


@existing_inputs("source")
def labels_import(
    tool: str = typer.Argument(
        ..., help="The annotation tool: label-studio, argilla, langfuse or phoenix.", show_default=False
    ),
    source: Path = typer.Argument(
        ...,
        help="The export: Label Studio's JSON export, the folder Argilla's Dataset.to_disk wrote, Langfuse "
        "scores or Phoenix span annotations (.json, .jsonl or .csv).",
        show_default=False,
    ),
    *,
    out: Path = typer.Option(..., "--out", help="The label table to write (.csv or .jsonl)."),
    value_map: str | None = typer.Option(
        None, "--map", help="Tool values to scale labels (Yes=pass,No=fail,Unsure=insufficient_information)."
    ),
    item_field: str | None = typer.Option(
        None,
        "--item-field",
        help="Field holding the judgekit item id (default: item_id in Label Studio data and Argilla "
        "metadata/fields, traceId for Langfuse, span_id for Phoenix; else looked up in metadata).",
    ),
    case_field: str | None = typer.Option(
        None, "--case-field", help="Field holding the case id (default: case_id when present)."
    ),
    criteria: str | None = typer.Option(
        None,
        "--criteria",
        help="Read only these comma-separated criteria (controls, questions, score names).",
    ),
    model_rater: str | None = typer.Option(
        None,
        "--model-rater",
        help="Import the tool's model labels (predictions, suggestions, EVAL scores, LLM annotations) as "
        "this rater; default: left out and counted.",
    ),
    rater_name: str | None = typer.Option(
        None, "--rater-name", help="Rename annotators: tool identity to rater (12=bob,alice@x.org=alice)."
    ),
    criterion_name: str | None = typer.Option(
        None,
        "--criterion-name",
        help="Rename criteria: a tool's control, question or score name to the rubric's criterion id "
        "(resolved=task_done).",
    ),
    accept_skipped: bool = typer.Option(
        False, "--accept-skipped", help="Write the labels that mapped even when some records could not be."
    ),
    scale: str | None = typer.Option(
        None, "--scale", help='Declare an ordered scale, lowest first ("1,2,3,4,5"); default: pass/fail.'
    ),
    level: str = typer.Option(
        "ordinal", "--level", help="Level of a declared scale: nominal, ordinal, interval."
    ),
    positive: str = typer.Option("", "--positive", help="Labels of a declared scale that count as failures."),
    abstain: str | None = typer.Option(None, "--abstain", help="The abstain label of a declared scale."),
    output_format: str = format_option(),
) -> None:
    """Import expert labels from an annotation tool's export as a label table, annotators as raters.

    Every record that cannot be mapped is listed by location; nothing is written then (exit 2) unless
    --accept-skipped.
    """
    from judgekit.api.label_import import import_labels
    from judgekit.calibration.labels import parse_scale_option
    from judgekit.calibration.tool_labels import parse_pairs
    from judgekit.errors import JudgekitError

    output_format = chosen_format(output_format)
    if scale is None and (positive or abstain):
        raise JudgekitError("--positive and --abstain apply to a declared --scale")
    document = import_labels(
        tool,
        source,
        out=out,
        scale=None
        if scale is None
        else parse_scale_option(scale, level=level, positive=positive, abstain=abstain),
        value_map=parse_pairs(value_map, "--map"),
        item_field=item_field,
        case_field=case_field,
        criteria=None if criteria is None else [c.strip() for c in criteria.split(",") if c.strip()],
        model_rater=model_rater,
        rater_names=parse_pairs(rater_name, "--rater-name"),
        criterion_names=parse_pairs(criterion_name, "--criterion-name"),
        accept_skipped=accept_skipped,
    )
    if output_format == "json":
        print_model("label_import", document)
    else:
        _print_text(document)
    if document.exit_code:
        raise typer.Exit(document.exit_code)


def _print_text(document: LabelImport) -> None:
    """The import's summary: what was written, left out and not mapped, and what to run next."""
    if document.written:
        raters = ", ".join(f"{r} ({n})" for r, n in document.raters.items())
        typer.echo(
            f"wrote {document.out}: {document.labels} label(s) on {document.items} item(s) "
            f"({', '.join(document.criteria)}) by {raters}"
        )
    for reason, count in document.left_out.items():
        typer.echo(f"left out: {count} {reason}")
    for note in document.notes:
        typer.echo(f"note: {note}")
    for problem in document.problems:
        typer.echo(str(problem), err=True)
    if document.problems:
        verb = "skipped" if document.written else "could not be mapped; nothing written"
        typer.echo(f"{len(document.problems)} record(s) {verb}", err=True)
    typer.echo(f"Next: {document.next}", err=not document.written)

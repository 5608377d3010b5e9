"""Inspect AI logs: import their samples as transcripts, export verdicts back as scores on copies.

* ``judgekit import inspect LOG... --out transcripts.jsonl``: every sample and epoch of ``.eval`` and
  ``.json`` logs, with what each log did not record.
* ``judgekit export inspect RESULTS --transcripts transcripts.jsonl --out DIR``: each verdict as a score on
  a copy of its log in DIR, beside the scores the log had.

Only typer is imported at module top. Exit codes (docs/reference/exit-codes.md): 0 success; 2 a usage or
input error (a missing, malformed or truncated log, a sample that could not be imported, a result that
names no imported sample, an unwritable output).
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_model

__all__ = ["export_inspect", "import_inspect"]


@existing_inputs("logs")
def import_inspect(  # noqa: PLR0917 - typer options
    logs: list[Path] = typer.Argument(
        ...,
        help="Inspect logs (.eval or .json) written by inspect eval, or log folders (every log in them).",
        show_default=False,
    ),
    out: Path = typer.Option(..., "--out", help="Transcripts file (JSONL) to write."),
    case_id_field: str | None = typer.Option(
        None,
        "--case-id-field",
        help="Dotted sample-metadata field holding the case id (default: metadata case_id, else the sample "
        "id).",
    ),
    final_state_field: str = typer.Option(
        "final_state",
        "--final-state-field",
        help="Sample-metadata field of the world after the run, when the store has no judgekit:final_state.",
    ),
    fidelity: Path | None = typer.Option(None, "--fidelity", help="Also write the fidelity reports (JSON)."),
    fmt: str = format_option(),
) -> None:
    """Import Inspect AI logs: one transcript per sample and epoch (epoch = trial), with a fidelity report.

    Logs are read with inspect_ai's own reader (the inspect extra). A malformed or truncated log refuses
    the import (exit 2, nothing written). A sample that cannot be imported is named by log, sample id and
    epoch, the others are written, and the exit is 2.
    """
    from judgekit.api.inspect_logs import import_inspect_logs
    from judgekit.commands.trust import echo_imported

    as_json = chosen_format(fmt) == "json"
    document = import_inspect_logs(
        list(logs), out, case_id_field=case_id_field, final_state_field=final_state_field, fidelity=fidelity
    )
    if as_json:
        print_model("inspect_import", document)
    else:
        notes = [
            f"case {case}: several samples share an epoch; trials numbered in reading order"
            for case in document.renumbered
        ]
        echo_imported(document.samples, document.imported, out, document.problems, notes=notes)
    if document.exit_code:
        raise typer.Exit(document.exit_code)


@existing_inputs("results", "transcripts")
def export_inspect(
    results: Path = typer.Argument(
        ..., help="Results file (JSONL) written by judgekit grade.", show_default=False
    ),
    transcripts: Path = typer.Option(
        ..., "--transcripts", help="The transcripts file judgekit import inspect wrote (and grade read)."
    ),
    out: Path = typer.Option(
        ..., "--out", help="Folder for the scored copies of the logs (never a log's own folder)."
    ),
    score_name: str = typer.Option("judgekit", "--score-name", help="Name of the scores written."),
    fmt: str = format_option(),
) -> None:
    """Write verdicts back as scores on a copy of each Inspect log (inspect view shows them beside the old).

    Each score has the value, explanation, unscored reason and per-check trust of judgekit's Inspect scorer;
    the original logs are never written. Exit 2 when a result names no imported sample (nothing written).
    """
    from judgekit.api.inspect_logs import write_inspect_scores

    as_json = chosen_format(fmt) == "json"
    document = write_inspect_scores(results, transcripts, out, score_name=score_name)
    if as_json:
        print_model("inspect_scores", document)
        return
    for copy in document.copies:
        typer.echo(
            f"{copy.original} -> {copy.scored_copy}: {copy.scored} sample(s) scored '{document.score_name}'"
        )
    for sample in document.not_graded:
        typer.echo(f"not graded: {sample}", err=True)

"""Judge-layer commands: ``judgekit rubrics`` (list, show, check) and ``judgekit cassette`` (stats, compact).

Only typer is imported at module top; rubric models, jinja2 and the cassette load inside the commands.
No command here calls a model. Every command prints text by default and one versioned JSON document with
``--format json`` (kinds ``rubric_list``, ``rubric``, ``rubric_check``, ``cassette_stats`` and
``cassette_compaction``; see :func:`judgekit.commands.output.print_document`).

Exit codes: 0 success; 1 an invalid rubric file or an unreadable cassette; 2 a usage error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_model

if TYPE_CHECKING:
    from judgekit.judges.cache import Cassette
    from judgekit.judges.rubric import Rubric

__all__ = ["cassette_compact", "cassette_stats", "check_rubrics", "list_rubrics", "show_rubric"]


def _load(ref: str) -> Rubric:
    from judgekit.judges.rubric import load_builtin_rubric, load_rubric

    path = Path(ref)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        return load_rubric(path)
    return load_builtin_rubric(ref)


def list_rubrics(output_format: str = format_option()) -> None:
    """List the rubrics that ship with judgekit: id, version, criteria (gates) and title."""
    from judgekit.judges.rubric import rubric_list

    output_format = chosen_format(output_format)
    document = rubric_list()
    if output_format == "json":
        print_model("rubric_list", document)
        return
    for row in document.rubrics:
        typer.echo(f"{row.id}\tv{row.version}\t{row.criteria} criteria ({row.gates} gates)\t{row.title}")


def show_rubric(
    rubric: str = typer.Argument(..., help="Built-in rubric id or a rubric file (.yaml/.json)."),
    output_format: str = format_option(),
) -> None:
    """Show a rubric's criteria, verdict menu, content hash and template hash."""
    from judgekit.judges.prompt import PromptRenderer
    from judgekit.judges.rubric import RubricDocument

    output_format = chosen_format(output_format)
    loaded = _load(rubric)
    renderer = PromptRenderer(loaded)
    if output_format == "json":
        print_model("rubric", RubricDocument.of(loaded, renderer.template_hash))
        return
    typer.echo(f"{loaded.id} v{loaded.version}: {loaded.title}")
    if loaded.description:
        typer.echo(loaded.description.strip())
    typer.echo(f"verdicts: {', '.join(loaded.verdict.options)}; up to {loaded.verdict.max_quotes} quotes")
    typer.echo(f"content hash {loaded.content_hash}")
    typer.echo(
        f"template hash {renderer.template_hash} ({'custom' if loaded.template else 'default'} template)"
    )
    for c in loaded.criteria:
        kind = "GATE" if c.critical else f"scored, weight {c.weight:g}"
        typer.echo(f"\n- {c.id} [{c.dimension}; {kind}" + (f"; {c.category.value}]" if c.category else "]"))
        typer.echo(f"  {c.text}")
        if c.insufficient_when:
            typer.echo(f"  insufficient_information when: {c.insufficient_when}")
        for example in loaded.examples_for(c.id):
            typer.echo(f"  example ({example.label}): {example.text}")
    shown = {c.id for c in loaded.criteria}
    for example in (e for e in loaded.examples if e.criterion not in shown):
        typer.echo(f"\n- example for {example.criterion} ({example.label}): {example.text}")


@existing_inputs("files")
def check_rubrics(
    files: list[Path] = typer.Argument(..., help="Rubric files to validate."),
    output_format: str = format_option(),
) -> None:
    """Validate rubric files (fields, criteria, verdict menu, template); exit 1 when any is invalid."""
    from judgekit.judges.rubric import check_rubric_file, check_rubric_files

    output_format = chosen_format(output_format)
    checks = []
    for path in files:
        check, error = check_rubric_file(path)
        checks.append(check)
        if error is not None:
            typer.echo(error.message, err=True)
        elif output_format == "text":
            typer.echo(f"{path}: ok ({check.id} v{check.version}, {check.criteria} criteria)")
    document = check_rubric_files(checks)
    if output_format == "json":
        print_model("rubric_check", document)
    if document.invalid:
        raise typer.Exit(1)


def _cassette(path: Path) -> Cassette:
    from judgekit.errors import JudgekitError
    from judgekit.io.filekind import check_input_file
    from judgekit.judges.cache import Cassette

    check_input_file(path, what="judge cassette")  # a FIFO or device: say what it is, never "not found"
    if not path.is_file():
        raise JudgekitError(f"{path}: cassette not found")
    return Cassette(path)


@existing_inputs("path")
def cassette_stats(
    path: Path = typer.Argument(..., help="Cassette file (JSONL)."),
    output_format: str = format_option(),
) -> None:
    """Count a cassette's records, unusable lines and models; print its metadata header."""
    from judgekit.judges.cache import cassette_stats as stats_of

    output_format = chosen_format(output_format)
    document = stats_of(_cassette(path))
    if output_format == "json":
        print_model("cassette_stats", document)
        return
    typer.echo(
        f"{path}: {document.recorded_replies} recorded replies, {document.unusable_lines} unusable line(s)"
    )
    for model, n in document.models.items():
        typer.echo(f"  {model}: {n} line(s)")
    if document.meta:
        typer.echo(f"  meta: {json.dumps(document.meta, ensure_ascii=False, sort_keys=True)}")


@existing_inputs("path")
def cassette_compact(
    path: Path = typer.Argument(..., help="Cassette file (JSONL)."),
    output_format: str = format_option(),
) -> None:
    """Rewrite a cassette sorted by key, one record per key, so that it diffs cleanly when committed."""
    from judgekit.judges.cache import compact_cassette

    output_format = chosen_format(output_format)
    document = compact_cassette(_cassette(path))
    if output_format == "json":
        print_model("cassette_compaction", document)
        return
    header = " + meta header" if document.meta_header else ""
    typer.echo(f"{path}: {document.lines_before} line(s) -> {document.records_kept} record(s)" + header)

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
from typing import TYPE_CHECKING, Any

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option, print_document
from judgekit.errors import LocatedError
from judgekit.io.documents import load_json_bounded

if TYPE_CHECKING:
    from judgekit.errors import JudgekitError
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
    from judgekit.judges.rubric import builtin_rubric_ids, load_builtin_rubric

    output_format = chosen_format(output_format)
    rows: list[dict[str, Any]] = []
    for rubric_id in builtin_rubric_ids():
        rubric = load_builtin_rubric(rubric_id)
        rows.append(
            {
                "id": rubric.id,
                "version": rubric.version,
                "title": rubric.title,
                "criteria": len(rubric.criteria),
                "gates": sum(1 for c in rubric.criteria if c.critical),
                "content_hash": rubric.content_hash,
            }
        )
    if output_format == "json":
        print_document("rubric_list", {"rubrics": rows})
        return
    for row in rows:
        typer.echo(
            f"{row['id']}\tv{row['version']}\t{row['criteria']} criteria ({row['gates']} gates)"
            f"\t{row['title']}"
        )


def show_rubric(
    rubric: str = typer.Argument(..., help="Built-in rubric id or a rubric file (.yaml/.json)."),
    output_format: str = format_option(),
) -> None:
    """Show a rubric's criteria, verdict menu, content hash and template hash."""
    from judgekit.judges.prompt import PromptRenderer

    output_format = chosen_format(output_format)
    loaded = _load(rubric)
    renderer = PromptRenderer(loaded)
    if output_format == "json":
        data = loaded.model_dump(mode="json")
        data["content_hash"] = loaded.content_hash
        data["template_hash"] = renderer.template_hash
        print_document("rubric", data)
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


def _problem_rows(path: Path, exc: JudgekitError) -> list[dict[str, Any]]:
    """What is wrong with a rubric file: one row per located problem.

    Each row has ``file``, ``line`` (``None`` when unknown), ``field`` (dotted, ``""`` for the whole file),
    ``message`` and ``text`` (the line the text output prints).
    """
    from judgekit.errors import LocatedError, ProblemsError

    if isinstance(exc, ProblemsError):
        problems = exc.problems
    elif isinstance(exc, LocatedError):
        problems = [exc.problem]
    else:
        return [{"file": str(path), "line": None, "field": "", "message": exc.message, "text": exc.message}]
    return [
        {
            "file": str(p.file) if p.file is not None else str(path),
            "line": p.line,
            "field": p.field,
            "message": p.message,
            "text": str(p),
        }
        for p in problems
    ]


@existing_inputs("files")
def check_rubrics(
    files: list[Path] = typer.Argument(..., help="Rubric files to validate."),
    output_format: str = format_option(),
) -> None:
    """Validate rubric files (fields, criteria, verdict menu, template); exit 1 when any is invalid."""
    from judgekit.errors import JudgekitError
    from judgekit.judges.rubric import load_rubric

    output_format = chosen_format(output_format)
    rows: list[dict[str, Any]] = []
    for path in files:
        try:
            rubric = load_rubric(path)
        except JudgekitError as exc:
            typer.echo(exc.message, err=True)
            rows.append(
                {
                    "file": str(path),
                    "ok": False,
                    "id": None,
                    "version": None,
                    "criteria": None,
                    "problems": _problem_rows(path, exc),
                }
            )
            continue
        rows.append(
            {
                "file": str(path),
                "ok": True,
                "id": rubric.id,
                "version": rubric.version,
                "criteria": len(rubric.criteria),
                "problems": [],
            }
        )
        if output_format == "text":
            typer.echo(f"{path}: ok ({rubric.id} v{rubric.version}, {len(rubric.criteria)} criteria)")
    bad = sum(not row["ok"] for row in rows)
    if output_format == "json":
        print_document(
            "rubric_check", {"checked": len(rows), "valid": len(rows) - bad, "invalid": bad, "files": rows}
        )
    if bad:
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
    output_format = chosen_format(output_format)
    cassette = _cassette(path)
    models: dict[str, int] = {}
    from judgekit.io.documents import open_regular_text

    with open_regular_text(path, "judge cassette", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                model = load_json_bounded(line, source=path).get("request", {}).get("model")
            except (LocatedError, AttributeError):
                continue
            if isinstance(model, str):
                models[model] = models.get(model, 0) + 1
    if output_format == "json":
        print_document(
            "cassette_stats",
            {
                "file": str(path),
                "recorded_replies": len(cassette),
                "unusable_lines": cassette.skipped_lines,
                "models": dict(sorted(models.items())),
                "meta": cassette.meta or None,
            },
        )
        return
    typer.echo(f"{path}: {len(cassette)} recorded replies, {cassette.skipped_lines} unusable line(s)")
    for model, n in sorted(models.items()):
        typer.echo(f"  {model}: {n} line(s)")
    if cassette.meta:
        typer.echo(f"  meta: {json.dumps(cassette.meta, ensure_ascii=False, sort_keys=True)}")


@existing_inputs("path")
def cassette_compact(
    path: Path = typer.Argument(..., help="Cassette file (JSONL)."),
    output_format: str = format_option(),
) -> None:
    """Rewrite a cassette sorted by key, one record per key, so that it diffs cleanly when committed."""
    output_format = chosen_format(output_format)
    cassette = _cassette(path)
    from judgekit.io.documents import open_regular_text

    with open_regular_text(path, "judge cassette", encoding="utf-8", errors="replace") as fh:
        before = sum(1 for _ in fh)
    kept = cassette.compact()
    from judgekit.io.documents import open_regular_text

    with open_regular_text(path, "judge cassette", encoding="utf-8", errors="replace") as fh:
        after = sum(1 for _ in fh)
    if output_format == "json":
        print_document(
            "cassette_compaction",
            {
                "file": str(path),
                "lines_before": before,
                "records_kept": kept,
                "lines_after": after,
                "meta_header": bool(cassette.meta),
            },
        )
        return
    typer.echo(f"{path}: {before} line(s) -> {kept} record(s)" + (" + meta header" if cassette.meta else ""))

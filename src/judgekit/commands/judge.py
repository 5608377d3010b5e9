"""Judge-layer commands: ``judgekit rubrics`` (list, show, check) and ``judgekit cassette`` (stats, compact).

Only typer is imported at module top; rubric models, jinja2 and the cassette load inside the commands.
No command here calls a model.

Exit codes: 0 success; 1 an invalid rubric file or an unreadable cassette; 2 a usage error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from judgekit.commands.inputs import existing_inputs

if TYPE_CHECKING:
    from judgekit.judges.cache import Cassette
    from judgekit.judges.rubric import Rubric

__all__ = ["register"]

rubrics_app = typer.Typer(
    name="rubrics", help="List, show and validate rubric files for the judge layer.", no_args_is_help=True
)
cassette_app = typer.Typer(
    name="cassette",
    help="Inspect and compact judge cassettes (recorded judge replies).",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add the ``rubrics`` and ``cassette`` groups to the ``judgekit`` application."""
    rubrics_app.command("list")(list_rubrics)
    rubrics_app.command("show")(show_rubric)
    rubrics_app.command("check")(check_rubrics)
    cassette_app.command("stats")(cassette_stats)
    cassette_app.command("compact")(cassette_compact)
    app.add_typer(rubrics_app, name="rubrics")
    app.add_typer(cassette_app, name="cassette")


def _load(ref: str) -> Rubric:
    from judgekit.judges.rubric import load_builtin_rubric, load_rubric

    path = Path(ref)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        return load_rubric(path)
    return load_builtin_rubric(ref)


def list_rubrics() -> None:
    """List the rubrics that ship with judgekit: id, version, criteria (gates) and title."""
    from judgekit.judges.rubric import builtin_rubric_ids, load_builtin_rubric

    for rubric_id in builtin_rubric_ids():
        rubric = load_builtin_rubric(rubric_id)
        gates = sum(1 for c in rubric.criteria if c.critical)
        typer.echo(
            f"{rubric.id}\tv{rubric.version}\t{len(rubric.criteria)} criteria ({gates} gates)\t{rubric.title}"
        )


def show_rubric(
    rubric: str = typer.Argument(..., help="Built-in rubric id or a rubric file (.yaml/.json)."),
    output_format: str = typer.Option("text", "--format", help="text or json."),
) -> None:
    """Show a rubric's criteria, verdict menu, content hash and template hash."""
    from judgekit.errors import JudgekitError
    from judgekit.judges.prompt import PromptRenderer

    if output_format not in ("text", "json"):
        raise JudgekitError(f"--format must be text or json (got '{output_format}')", exit_code=2)
    loaded = _load(rubric)
    renderer = PromptRenderer(loaded)
    if output_format == "json":
        data = loaded.model_dump(mode="json")
        data["content_hash"] = loaded.content_hash
        data["template_hash"] = renderer.template_hash
        from judgekit.commands.output import versioned

        typer.echo(json.dumps(versioned("rubric", data), indent=2, ensure_ascii=False))
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


@existing_inputs("files")
def check_rubrics(
    files: list[Path] = typer.Argument(..., help="Rubric files to validate."),
) -> None:
    """Validate rubric files (fields, criteria, verdict menu, template); exit 1 when any is invalid."""
    from judgekit.errors import JudgekitError
    from judgekit.judges.rubric import load_rubric

    bad = 0
    for path in files:
        try:
            rubric = load_rubric(path)
        except JudgekitError as exc:
            bad += 1
            typer.echo(exc.message, err=True)
            continue
        typer.echo(f"{path}: ok ({rubric.id} v{rubric.version}, {len(rubric.criteria)} criteria)")
    if bad:
        raise typer.Exit(1)


def _cassette(path: Path) -> Cassette:
    from judgekit.errors import JudgekitError
    from judgekit.judges.cache import Cassette

    if not path.is_file():
        raise JudgekitError(f"{path}: cassette not found")
    return Cassette(path)


@existing_inputs("path")
def cassette_stats(path: Path = typer.Argument(..., help="Cassette file (JSONL).")) -> None:
    """Count a cassette's records, unusable lines and models; print its metadata header."""
    cassette = _cassette(path)
    models: dict[str, int] = {}
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                model = json.loads(line).get("request", {}).get("model")
            except (ValueError, AttributeError):
                continue
            if isinstance(model, str):
                models[model] = models.get(model, 0) + 1
    typer.echo(f"{path}: {len(cassette)} recorded replies, {cassette.skipped_lines} unusable line(s)")
    for model, n in sorted(models.items()):
        typer.echo(f"  {model}: {n} line(s)")
    if cassette.meta:
        typer.echo(f"  meta: {json.dumps(cassette.meta, ensure_ascii=False, sort_keys=True)}")


@existing_inputs("path")
def cassette_compact(path: Path = typer.Argument(..., help="Cassette file (JSONL).")) -> None:
    """Rewrite a cassette sorted by key, one record per key, so that it diffs cleanly when committed."""
    cassette = _cassette(path)
    before = sum(1 for _ in path.open(encoding="utf-8", errors="replace"))
    kept = cassette.compact()
    typer.echo(f"{path}: {before} line(s) -> {kept} record(s)" + (" + meta header" if cassette.meta else ""))

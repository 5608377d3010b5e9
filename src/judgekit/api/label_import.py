"""Expert labels from annotation tools into a label table: ``judgekit labels import`` as one call.

:func:`import_labels` reads a Label Studio JSON export, an Argilla ``Dataset.to_disk`` folder, a Langfuse
score export or a Phoenix span-annotation export (the formats and what counts as an expert's label are
in :mod:`judgekit.calibration.tool_labels`), maps each label onto the declared scale, and writes the
long label table ``judgekit calibrate`` reads (``item_id``, ``criterion``, ``rater``, ``label``,
``case_id``, ``notes``), the annotators named as raters.

Nothing is skipped silently: every record that cannot be mapped is a located problem (file, record
index and id, field, what is wrong, what to do). When there is one, nothing is written and the result's
``exit_code`` is 2, unless the caller accepts skipping (``accept_skipped``): then the rows that mapped
are written and the problems are still listed. Records left out on purpose (cancelled annotations,
drafts, a model's pre-annotations, text answers) are counted by reason, not problems.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import Field

from judgekit.calibration.labels import VERDICT_SCALE, Scale, parse_labels
from judgekit.calibration.tool_labels import (
    TOOLS,
    ImportSettings,
    Located,
    ToolLabel,
    ToolLabels,
    argilla_labels,
    argilla_question_types,
    label_studio_labels,
    langfuse_labels,
    located_records,
    phoenix_labels,
)
from judgekit.caseset import LocatedProblem
from judgekit.errors import JudgekitError, did_you_mean
from judgekit.io.atomic import write_atomic
from judgekit.io.documents import MAX_IMPORT_BYTES, decode_utf8, jsonl_lines, load_json_bounded, read_input
from judgekit.verdict import FrozenModel

__all__ = ["LabelImport", "import_labels"]

_COLUMNS = ("item_id", "criterion", "rater", "label", "case_id", "notes")
_OUT_SUFFIXES = (".csv", ".jsonl")
_ROW_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv")
_REFUSED_NEXT = (
    "fix the records listed (or map their values with --map, name the item field with --item-field), or "
    "pass --accept-skipped to write the labels that mapped"
)
_WHAT = {
    "label-studio": "Label Studio JSON export",
    "argilla": "Argilla dataset folder",
    "langfuse": "Langfuse score export",
    "phoenix": "Phoenix span-annotation export",
}


class LabelImport(FrozenModel):
    """What an import read and wrote (the ``label_import`` document).

    Attributes:
        tool: The annotation tool (``label-studio``, ``argilla``, ``langfuse``, ``phoenix``).
        source: The export read, as given.
        out: The label table, as given.
        written: True when the table was written (no problem, or problems accepted with
            ``accept_skipped``).
        labels: How many labels mapped: the table's rows when it was written.
        items: How many distinct (item, criterion) pairs were labelled.
        raters: Each rater (annotator identity, renamed as asked) with its number of labels, in order of
            first appearance.
        criteria: The criteria labelled, in order of first appearance.
        left_out: Why records were left out on purpose (not problems), with how many.
        notes: Things to know about how the export was read.
        problems: Every record, or part of one, that could not be mapped, located.
        next: What to run next.
        exit_code: 0 when written, 2 when problems stopped the write (not printed in the document).
    """

    tool: str
    source: str
    out: str
    written: bool
    labels: int
    items: int
    raters: dict[str, int]
    criteria: list[str]
    left_out: dict[str, int]
    notes: list[str]
    problems: list[LocatedProblem]
    next: str
    exit_code: int = Field(default=0, exclude=True)


def _load_json(path: Path, what: str) -> object:
    """A whole JSON file, read under the hostile-input limits (an error is located)."""
    raw = read_input(path, what)
    return load_json_bounded(raw, source=path, max_bytes=MAX_IMPORT_BYTES, what="the file")


def _csv_records(path: Path, text: str) -> Located:
    """A CSV export's rows as objects: empty cells absent, a JSON ``metadata`` cell as its object.

    A ``metadata`` cell that is not JSON (``DataFrame.to_csv`` writes a Python dict's text) stays text: a
    field looked up in it is then reported missing, with the reason.
    """
    reader = csv.DictReader(io.StringIO(text))
    rows: Located = []
    for row in reader:
        record: dict[str, object] = {k: v for k, v in row.items() if k and v not in (None, "")}
        meta = record.get("metadata")
        if isinstance(meta, str) and meta.strip().startswith("{"):
            with contextlib.suppress(JudgekitError):
                record["metadata"] = load_json_bounded(meta, source=path, line=reader.line_num)
        rows.append((reader.line_num, record))
    return rows


def _row_records(path: Path, what: str) -> Located:
    """The records of a row export: a JSON list or API page, JSONL, or CSV (by the file's suffix)."""
    suffix = path.suffix.lower()
    if suffix not in _ROW_SUFFIXES:
        raise JudgekitError(
            f"{path}: cannot tell the {what}'s format from its name; use a .json (a list, or the API's "
            "{data: [...]} page), .jsonl or .csv file"
        )
    if suffix == ".json":
        return located_records(_load_json(path, what), path, what)
    text = decode_utf8(read_input(path, what), path)
    if suffix == ".csv":
        return _csv_records(path, text.removeprefix("\ufeff"))
    return [
        (n, load_json_bounded(line, source=path, line=n))
        for n, line in enumerate(jsonl_lines(text), start=1)
        if line.strip()
    ]


def _argilla(folder: Path, settings: ImportSettings) -> ToolLabels:
    """Read an Argilla ``to_disk`` folder: its settings' question types, then its records."""
    if not folder.is_dir():
        raise JudgekitError(
            f"{folder}: an Argilla export is the folder Dataset.to_disk(path) wrote (records.json and "
            ".argilla/settings.json in it); give that folder"
        )
    settings_file = folder / ".argilla" / "settings.json"
    records_file = folder / "records.json"
    for needed in (settings_file, records_file):
        if not needed.is_file():
            raise JudgekitError(
                f"{folder}: no {needed.relative_to(folder)}: not a Dataset.to_disk folder, or it was written "
                "with with_records=False (export it with its records)"
            )
    types = argilla_question_types(_load_json(settings_file, "Argilla settings"), settings_file)
    records = _load_json(records_file, "Argilla records")
    return argilla_labels(records, types=types, source=records_file, settings=settings)


def _read(tool: str, source: Path, settings: ImportSettings) -> ToolLabels:
    """Dispatch to the tool's reader."""
    if tool == "argilla":
        return _argilla(source, settings)
    if tool == "label-studio":
        return label_studio_labels(_load_json(source, _WHAT[tool]), source=source, settings=settings)
    records = _row_records(source, _WHAT[tool])
    reader = langfuse_labels if tool == "langfuse" else phoenix_labels
    return reader(records, source=source, settings=settings)


def _table_text(labels: Sequence[ToolLabel], out: Path) -> str:
    """The label table's text: CSV or JSONL by ``out``'s suffix, one row per label."""
    rows = [
        {
            "item_id": r.item_id,
            "criterion": r.criterion,
            "rater": r.rater,
            "label": r.label,
            "case_id": r.case_id,
            "notes": r.notes,
        }
        for r in labels
    ]
    if out.suffix.lower() == ".jsonl":
        return "".join(
            json.dumps({k: v for k, v in row.items() if v is not None}, ensure_ascii=False) + "\n"
            for row in rows
        )
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in rows)
    return buffer.getvalue()


def _next_step(out: Path, raters: Sequence[str], model_rater: str | None) -> str:
    """The ``judgekit calibrate`` line for the table written."""
    experts = ",".join(r for r in raters if r != model_rater) or "EXPERTS"
    if model_rater is not None and model_rater in raters:
        return f"judgekit calibrate {out} --judge {model_rater} --experts {experts}"
    return (
        f"add the judge's rows (judgekit labels from-results, or --model-rater for the tool's own model "
        f"labels), then judgekit calibrate {out} --judge JUDGE --experts {experts}"
    )


def import_labels(
    tool: str,
    source: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str],
    scale: Scale | None = None,
    value_map: Mapping[str, str] | None = None,
    item_field: str | None = None,
    case_field: str | None = None,
    criteria: Sequence[str] | None = None,
    model_rater: str | None = None,
    rater_names: Mapping[str, str] | None = None,
    criterion_names: Mapping[str, str] | None = None,
    accept_skipped: bool = False,
) -> LabelImport:
    """Read an annotation tool's export and write it as a label table, annotators named as raters.

    Args:
        tool: ``label-studio`` (a JSON export file), ``argilla`` (a ``Dataset.to_disk`` folder),
            ``langfuse`` (scores as .json, .jsonl or .csv) or ``phoenix`` (span annotations as .json,
            .jsonl or .csv).
        source: The export.
        out: The label table to write (``.csv`` or ``.jsonl``).
        scale: The scale every label must belong to (``None``: the verdict scale, pass / fail /
            insufficient_information).
        value_map: A tool value (as text) to the scale label it means (``{"yes": "pass"}``); a value
            not listed must be a scale label already (or equal a numeric scale value as a number).
        item_field: The field holding the judgekit item id (``None``: ``item_id`` for Label Studio's
            task data and Argilla's metadata or fields, ``traceId`` for Langfuse, ``span_id`` for
            Phoenix; a Langfuse or Phoenix field is looked up in the record, then its ``metadata``).
        case_field: The field holding the case id (``None``: ``case_id`` when present, else each item
            is its own case).
        criteria: Read only these criteria (the tool's control, question or score names); ``None``
            reads all.
        model_rater: Import the tool's model labels (predictions, suggestions, EVAL scores, LLM
            annotations) as this rater; ``None`` leaves them out (counted).
        rater_names: A tool identity (user id, email) to the rater name to write.
        criterion_names: A tool's control, question or score name to the criterion id to write (the
            rubric's criterion id); ``criteria`` filters by the tool's names.
        accept_skipped: Write the rows that mapped even when some records could not be mapped (they are
            still listed); ``False`` writes nothing then.

    Returns:
        What was read and written; ``exit_code`` is 2 when problems stopped the write.

    Raises:
        JudgekitError: (exit 2) An unknown tool, an output that is not ``.csv`` or ``.jsonl``, a ``--map``
            target outside the scale, a missing or unreadable export, an export that is not the
            tool's format, or (even with ``accept_skipped``) an export with no label at all.
    """
    if tool not in TOOLS:
        raise JudgekitError(
            f"unknown annotation tool {tool!r}; one of {', '.join(TOOLS)}{did_you_mean(tool, TOOLS)}"
        )
    out_path, source_path = Path(out), Path(source)
    if out_path.suffix.lower() not in _OUT_SUFFIXES:
        raise JudgekitError(f"--out {out_path}: a label table is a .csv or .jsonl file")
    scale = VERDICT_SCALE if scale is None else scale
    settings = ImportSettings(
        scale=scale,
        value_map=dict(value_map or {}),
        item_field=item_field,
        case_field=case_field,
        criteria=None if criteria is None else tuple(criteria),
        model_rater=model_rater,
        rater_names=dict(rater_names or {}),
        criterion_names=dict(criterion_names or {}),
    )
    read = _read(tool, source_path, settings)
    raters = Counter(r.rater for r in read.labels)
    criteria_seen = list(dict.fromkeys(r.criterion for r in read.labels))
    refused = bool(read.problems) and not accept_skipped
    if not read.labels and not read.problems:
        why = _left_out_text(read.left_out) or "the export holds no labels"
        raise JudgekitError(f"{source_path}: no label to import ({why})")
    written = bool(read.labels) and not refused
    if written:
        text = _table_text(read.labels, out_path)
        parse_labels(text, source=out_path, scale=scale)  # the table calibrate will read: checked first
        write_atomic(out_path, text, what="label table")
    return LabelImport(
        tool=tool,
        source=str(source),
        out=str(out),
        written=written,
        labels=len(read.labels),
        items=len({(r.item_id, r.criterion) for r in read.labels}),
        raters=dict(raters),
        criteria=criteria_seen,
        left_out=dict(read.left_out),
        notes=read.notes,
        problems=[LocatedProblem.of(p) for p in read.problems],
        next=_next_step(out_path, list(raters), model_rater) if written else _REFUSED_NEXT,
        exit_code=0 if written else 2,
    )


def _left_out_text(left_out: Mapping[str, int]) -> str:
    """The left-out counts as one phrase (``3 cancelled annotations; 2 model predictions``)."""
    return "; ".join(f"left out: {n} {reason}" for reason, n in left_out.items())

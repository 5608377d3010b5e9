"""Labels from annotation tools: Label Studio, Argilla, Langfuse and Phoenix exports as label-table rows.

Each reader takes a tool's export as already parsed (this module never opens files; see
:func:`judgekit.api.label_import.import_labels`) and returns :class:`ToolLabels`: one :class:`ToolLabel`
per label an annotator gave, keeping the annotator's identity as the rater, every record it could not
map as a located :class:`~judgekit.errors.Problem` (file, record index and id, field, what is wrong and
what to do), and a count of what it left out on purpose and why (cancelled annotations, drafts, a
model's pre-annotations, free-text answers).

The formats followed, from each tool's own documentation and code:

* Label Studio: the JSON export, a list of tasks (``data``, ``annotations[]`` with ``completed_by`` as a
  user id or a user object with ``email``, ``was_cancelled``, ``result[]`` with ``from_name``, ``type``
  and ``value.choices`` / ``value.rating`` / ``value.number`` / ``value.text``; ``predictions[]`` with
  ``model_version``), as in labelstud.io/guide/task_format and ``label_studio/data_export/serializers.py``
  (``CompletedBySerializer``: id, email, first_name, last_name).
* Argilla 2.x: ``Dataset.to_disk(path)`` writes ``path/.argilla/settings.json`` (``questions[]`` with
  ``name`` and ``settings.type``: ``label_selection``, ``multi_label_selection``, ``rating``, ``text``,
  ``ranking``, ``span``), ``path/.argilla/dataset.json`` and ``path/records.json``, a list of records
  ``{id, fields, metadata, suggestions: {question: {value, score, agent}}, responses: {question:
  [{value, user_id, status}]}, vectors, _server_id}`` (argilla ``datasets/_io/_disk.py``,
  ``records/_io/_json.py``, ``records/_resource.py``). Only ``submitted`` responses are labels; a
  response without a status (exports before the status was written) counts as submitted and is noted.
* Langfuse: scores as the public API returns them (``GET /api/public/v2/scores``: ``{data: [...]}``) or
  as a list, JSONL or CSV of the same fields: ``name``, ``value``, ``stringValue``, ``dataType``
  (``NUMERIC``, ``CATEGORICAL``, ``BOOLEAN``), ``source`` (``ANNOTATION``, ``API``, ``EVAL``),
  ``authorUserId``, ``traceId``, ``observationId``, ``sessionId``, ``comment``, ``metadata``
  (Langfuse's OpenAPI ``Score`` schema).
* Phoenix: span annotations as ``GET /v1/projects/{project}/span_annotations`` returns them
  (``{data: [...], next_cursor}``) or as ``Client().spans.get_span_annotations`` lists them: ``span_id``,
  ``name``, ``annotator_kind`` (``HUMAN``, ``LLM``, ``CODE``), ``result`` ``{label, score,
  explanation}``, ``identifier``, ``metadata``, ``source`` (``API``, ``APP``), ``user_id`` (the Phoenix
  user's id, ``null`` for annotations logged without a user) (``phoenix/server/api/routers/v1/
  annotations.py``, ``phoenix-client`` ``resources/spans``); the flat columns of
  ``get_span_annotations_dataframe`` (``annotation_name``, ``result.label``...) are read too.

What counts as an expert's label: Label Studio annotations, Argilla submitted responses, Langfuse
``ANNOTATION`` scores and Phoenix ``HUMAN`` annotations, each under its annotator. A model's output
(Label Studio ``predictions``, Argilla ``suggestions``, Langfuse ``EVAL`` scores, Phoenix ``LLM``
annotations) is never an expert's label: it is left out and counted unless ``model_rater`` names the
rater it is imported as (the judge, say). Langfuse ``API`` scores and Phoenix ``CODE`` annotations are
left out and counted: they are neither an annotator's nor known to be the judge's.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from judgekit.calibration.labels import Scale
from judgekit.errors import JudgekitError, Problem

__all__ = [
    "TOOLS",
    "ImportSettings",
    "ToolLabel",
    "ToolLabels",
    "argilla_labels",
    "label_studio_labels",
    "langfuse_labels",
    "parse_pairs",
    "phoenix_labels",
]

TOOLS = ("label-studio", "argilla", "langfuse", "phoenix")
"""The annotation tools whose exports judgekit reads, as ``judgekit labels import`` names them."""

DEFAULT_ITEM_FIELD = {
    "label-studio": "item_id",
    "argilla": "item_id",
    "langfuse": "traceId",
    "phoenix": "span_id",
}
"""Where each tool's record holds the judgekit item id unless ``item_field`` says otherwise."""

DEFAULT_CASE_FIELD = "case_id"
"""The field read as the item's case when present (and ``case_field`` is not given)."""

MODEL_HINT = "--model-rater NAME imports them as that rater"


@dataclass(frozen=True)
class ImportSettings:
    """How a tool's records become label rows.

    Attributes:
        scale: The scale every label must belong to (the verdict scale by default).
        value_map: A tool's value (as text: ``yes``, ``True``, ``4``) to the scale label it means; values
            not listed must already be scale labels (or, on a numeric scale, equal one as numbers).
        item_field: The field holding the judgekit item id (``None``: the tool's default,
            :data:`DEFAULT_ITEM_FIELD`). Looked up in the record's own fields first (a Label Studio
            task's ``data``, an Argilla record's ``metadata`` then ``fields``, a Langfuse score's columns
            then ``metadata``, a Phoenix annotation's columns then ``metadata``).
        case_field: The field holding the item's case id (``None``: ``case_id`` when the record has one,
            else the item is its own case). A named field missing from a record is a problem.
        criteria: Only these criteria (tool questions/controls/score names) are read; others are left
            out and counted. ``None`` reads every one.
        model_rater: The rater name a model's pre-annotations are imported as, or ``None`` to leave them
            out (counted).
        rater_names: A tool's annotator identity (user id, email) to the rater name written.
        criterion_names: A tool's control, question or score name to the criterion id written (the
            rubric's criterion id, so ``calibrate --rubric`` finds its text); ``criteria`` names the
            tool's names.
    """

    scale: Scale
    value_map: Mapping[str, str] = field(default_factory=dict)
    item_field: str | None = None
    case_field: str | None = None
    criteria: tuple[str, ...] | None = None
    model_rater: str | None = None
    rater_names: Mapping[str, str] = field(default_factory=dict)
    criterion_names: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        domain = self.scale.domain
        wrong = sorted({v for v in self.value_map.values() if v not in domain})
        if wrong:
            raise JudgekitError(
                f"--map: {', '.join(map(repr, wrong))} is not a label of the scale {list(domain)}; map each "
                "tool value onto one of them (--map yes=pass,no=fail)"
            )


@dataclass(frozen=True)
class ToolLabel:
    """One label an annotator (or, with ``model_rater``, a model) gave, ready to be a label-table row.

    Attributes:
        item_id: The judgekit item id read from the record.
        criterion: The tool's question, control or score name (renamed by ``criterion_names``).
        rater: The annotator's identity (renamed by ``rater_names``), or the model rater.
        label: The scale label the tool's value maps to.
        case_id: The item's case, or ``None`` (the item is its own case).
        notes: The annotator's free text with it (a comment, explanation or text answer), or ``None``.
        where: Where it came from (for the message when it conflicts with another label).
    """

    item_id: str
    criterion: str
    rater: str
    label: str
    case_id: str | None
    notes: str | None
    where: Problem


@dataclass
class ToolLabels:
    """What a reader made of one export.

    Attributes:
        tool: One of :data:`TOOLS`.
        labels: The labels, in the export's order, one per (item, criterion, rater).
        problems: Every record (or part of one) that could not be mapped, located.
        left_out: Why records were left out on purpose, with how many (not problems).
        notes: Things a reader should know about how the export was read.
    """

    tool: str
    labels: list[ToolLabel] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)


def parse_pairs(text: str | None, option: str) -> dict[str, str]:
    """Parse ``a=b,c=d`` (a ``--map`` or ``--rater-name`` value) into a mapping.

    Args:
        text: The option's value, or ``None``.
        option: The option's name, for the message.

    Returns:
        The pairs in order; empty when ``text`` is ``None`` or blank.

    Raises:
        JudgekitError: (exit 2) When an entry has no ``=``, an empty side, or a left side repeats.
    """
    pairs: dict[str, str] = {}
    for entry in (text or "").split(","):
        if not entry.strip():
            continue
        left, sep, right = entry.partition("=")
        if not sep or not left.strip() or not right.strip():
            raise JudgekitError(
                f"{option}: {entry.strip()!r} is not FROM=TO (e.g. {option} yes=pass,no=fail)"
            )
        if left.strip() in pairs:
            raise JudgekitError(f"{option}: {left.strip()!r} is given twice")
        pairs[left.strip()] = right.strip()
    return pairs


def _value_text(raw: object) -> str | None:
    """A tool's value as text (``4.0`` as ``4``), or ``None`` when it is no text, number or boolean."""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            return None
        return str(int(raw)) if raw.is_integer() else repr(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    return None


def _text(raw: object) -> str | None:
    """An identity or id field as text: a non-empty string or an integer, else ``None``."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    return None


class _Collector:
    """Builds one :class:`ToolLabels`: maps values, drops repeats, locates every problem."""

    def __init__(self, tool: str, source: Path | None, settings: ImportSettings) -> None:
        self.out = ToolLabels(tool=tool)
        self.source = source
        self.settings = settings
        self.item_field = settings.item_field or DEFAULT_ITEM_FIELD[tool]
        self._seen: dict[tuple[str, str, str], ToolLabel] = {}
        self.missing_status = 0

    def problem(self, line: int | None, where: str, message: str) -> None:
        self.out.problems.append(Problem(self.source, line, where, message))

    def leave_out(self, reason: str, count: int = 1) -> None:
        self.out.left_out[reason] += count

    def wanted(self, criterion: str) -> bool:
        """Whether ``criterion`` is read; one not asked for is counted as left out."""
        if self.settings.criteria is None or criterion in self.settings.criteria:
            return True
        self.leave_out("criteria not asked for (--criteria)")
        return False

    def rater(self, identity: str) -> str:
        return self.settings.rater_names.get(identity, identity)

    def lookup(self, name: str, places: Iterable[object]) -> object:
        """The first value of ``name`` in the mappings ``places`` (``None`` when none has it)."""
        for place in places:
            if isinstance(place, Mapping) and place.get(name) not in (None, ""):
                return place[name]
        return None

    def item_and_case(
        self, places: list[object], line: int | None, where: str, what: str
    ) -> tuple[str, str | None] | None:
        """The record's item id and case id, or ``None`` after reporting what is missing."""
        raw_item = self.lookup(self.item_field, places)
        item = _text(raw_item)
        if item is None:
            found = "has no" if raw_item is None else f"has a {type(raw_item).__name__} in"
            text = any(isinstance(p, str) for p in places)
            hint = " (its metadata is text, not a JSON object, as DataFrame.to_csv writes it: export JSON)"
            self.problem(
                line,
                where,
                f"{what} {found} {self.item_field!r} field (the judgekit item id: case#trial); name "
                f"the field that holds it with --item-field{hint if text else ''}",
            )
            return None
        case_name = self.settings.case_field or DEFAULT_CASE_FIELD
        raw_case = self.lookup(case_name, places)
        case = _text(raw_case)
        if case is None and (self.settings.case_field is not None or raw_case is not None):
            self.problem(
                line,
                where,
                f"{what} has no text {case_name!r} field (the item's case id); name the field with "
                "--case-field, or leave the option out to make each item its own case",
            )
            return None
        return item, case

    def label(self, raw: object, line: int | None, where: str, what: str) -> str | None:
        """The scale label ``raw`` maps to, or ``None`` after reporting why it maps to none."""
        text = _value_text(raw)
        domain = self.settings.scale.domain
        if text is None:
            self.problem(line, where, f"{what} has no value a label can be read from (got {raw!r})")
            return None
        if text in self.settings.value_map:
            return self.settings.value_map[text]
        if text in domain:
            return text
        numbers = self.settings.scale.numeric_values()
        if numbers is not None:
            try:
                x = float(text)
            except ValueError:
                x = math.nan
            for value, number in zip(self.settings.scale.values, numbers, strict=True):
                if number == x:
                    return value
        self.problem(
            line,
            where,
            f"{what}: {text!r} is not a label of the scale {list(domain)}; map it with --map "
            f"{text}=<label> (or declare the tool's values with --scale)",
        )
        return None

    def add(
        self,
        *,
        item: tuple[str, str | None],
        criterion: str,
        rater: str,
        label: str,
        notes: str | None,
        line: int | None,
        where: str,
    ) -> None:
        """Keep one label; the same label again is counted once, a different one is a problem."""
        criterion = self.settings.criterion_names.get(criterion, criterion)
        key = (item[0], criterion, rater)
        prev = self._seen.get(key)
        if prev is not None:
            if prev.label == label:
                self.leave_out("the same label repeated (counted once)")
                return
            first = f"{prev.where.file}:{prev.where.line}" if prev.where.line else str(prev.where.field)
            self.problem(
                line,
                where,
                f"rater {rater!r} labelled item {item[0]}/{criterion} {label!r} here but {prev.label!r} at "
                f"{first}; keep one label per item, criterion and rater",
            )
            return
        row = ToolLabel(
            item[0], criterion, rater, label, item[1], notes, Problem(self.source, line, where, "")
        )
        self._seen[key] = row
        self.out.labels.append(row)


def _objects(
    c: _Collector, records: list[tuple[int | None, object]], noun: str, a_noun: str
) -> Iterator[tuple[int | None, str, Mapping[str, object], str]]:
    """Each record that is an object, as (line, field path, record, ``noun id``); the others are problems."""
    for index, (line, record) in enumerate(records):
        at = _at(index, line)
        if isinstance(record, Mapping):
            yield line, at, record, f"{noun} {record.get('id', index)!s}"
        else:
            c.problem(line, at, f"{a_noun} is not a JSON object")


def _at(index: int, line: int | None) -> str:
    """The field path of a record: its index in a JSON list, nothing for a line of its own."""
    return f"[{index}]" if line is None else ""


def _records(doc: object, source: Path | None, what: str) -> list[tuple[int | None, object]]:
    """The records of a JSON list, an API page ``{data: [...]}`` or (already split) JSONL lines."""
    if isinstance(doc, Mapping) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    if not isinstance(doc, list):
        raise JudgekitError(
            f"{source}: not {what}: expected a JSON list of records (or an API page with a 'data' list), "
            f"got {type(doc).__name__}"
        )
    return [(None, r) for r in doc]


# --------------------------------------------------------------------------- Label Studio


def _ls_value(result: Mapping[str, object]) -> tuple[object, str | None]:
    """A Label Studio result's value and, when it cannot be a label, why (``None`` when it can)."""
    kind = result.get("type")
    value = result.get("value")
    if not isinstance(value, Mapping):
        return None, "has no 'value' object"
    if kind == "choices":
        choices = value.get("choices")
        if not isinstance(choices, list) or len(choices) != 1:
            n = len(choices) if isinstance(choices, list) else 0
            return None, f"has {n} choices; a label is exactly one choice (make the control single-choice)"
        return choices[0], None
    if kind in ("rating", "number"):
        return value.get(str(kind)), None
    return None, (
        f"is a {kind!r} result, which is no label judgekit reads (choices, rating, number; textarea is "
        "read as notes)"
    )


def _ls_notes(results: list[object]) -> str | None:
    """The text of an annotation's textarea results, joined (``None`` when it has none)."""
    texts: list[str] = []
    for r in results:
        if isinstance(r, Mapping) and r.get("type") == "textarea" and isinstance(r.get("value"), Mapping):
            text = r["value"].get("text")
            parts = text if isinstance(text, list) else [text]
            texts += [p.strip() for p in parts if isinstance(p, str) and p.strip()]
    return "\n".join(texts) or None


def _ls_identity(completed_by: object) -> str | None:
    """The annotator of a Label Studio annotation: the user object's email, else its id, else the id."""
    if isinstance(completed_by, Mapping):
        return _text(completed_by.get("email")) or _text(completed_by.get("id"))
    return _text(completed_by)


def _ls_results(
    c: _Collector,
    results: object,
    *,
    item: tuple[str, str | None],
    rater: str,
    where: str,
    what: str,
) -> None:
    """Read one annotation's (or prediction's) results as labels of ``rater``."""
    if not isinstance(results, list):
        c.problem(None, f"{where}.result", f"{what}: 'result' is not a list")
        return
    notes = _ls_notes(results)
    for k, result in enumerate(results):
        here = f"{where}.result[{k}]"
        if not isinstance(result, Mapping):
            c.problem(None, here, f"{what}: a result is not an object")
            continue
        if result.get("type") == "textarea":
            continue
        criterion = _text(result.get("from_name"))
        if criterion is None:
            c.problem(None, f"{here}.from_name", f"{what}: the result names no control (from_name)")
            continue
        if not c.wanted(criterion):
            continue
        raw, why = _ls_value(result)
        if why is not None:
            c.problem(None, here, f"{what}, control {criterion!r}: the result {why}")
            continue
        label = c.label(raw, None, f"{here}.value", f"{what}, control {criterion!r}")
        if label is not None:
            c.add(
                item=item, criterion=criterion, rater=rater, label=label, notes=notes, line=None, where=here
            )


def _as_path(source: str | os.PathLike[str] | None) -> Path | None:
    """The export's path for messages (``None``: the records did not come from a file)."""
    return None if source is None else Path(source)


def label_studio_labels(
    tasks: object, *, source: str | os.PathLike[str] | None, settings: ImportSettings
) -> ToolLabels:
    """Labels from a Label Studio JSON export (a list of tasks).

    Args:
        tasks: The parsed export.
        source: The export file, for locations.
        settings: How records map to rows.

    Returns:
        The labels, problems and what was left out.

    Raises:
        JudgekitError: (exit 2) When the export is not a list of tasks.
    """
    source = _as_path(source)
    c = _Collector("label-studio", source, settings)
    for _, at, task, what in _objects(
        c, _records(tasks, source, "a Label Studio JSON export"), "task", "a task"
    ):
        item = c.item_and_case([task.get("data")], None, f"{at}.data", what)
        if item is None:
            continue
        annotations = task.get("annotations", [])
        annotations = [] if annotations is None else annotations
        if not isinstance(annotations, list):
            c.problem(None, f"{at}.annotations", f"{what}: 'annotations' is not a list")
            continue
        for j, annotation in enumerate(annotations):
            where = f"{at}.annotations[{j}]"
            if not isinstance(annotation, Mapping):
                c.problem(None, where, f"{what}: an annotation is not an object")
                continue
            if annotation.get("was_cancelled") is True:
                c.leave_out("cancelled (skipped) annotations")
                continue
            identity = _ls_identity(annotation.get("completed_by"))
            if identity is None:
                c.problem(
                    None,
                    f"{where}.completed_by",
                    f"{what}: the annotation names no annotator (completed_by); an expert's label needs "
                    "its expert",
                )
                continue
            ann_what = f"{what}, annotation {annotation.get('id', j)!s}"
            _ls_results(
                c, annotation.get("result"), item=item, rater=c.rater(identity), where=where, what=ann_what
            )
        _model_labels(c, task.get("predictions"), item=item, at=at, what=what)
    return c.out


def _model_rater(c: _Collector, part: object, *, name: str, at: str, what: str, source: str) -> str | None:
    """The rater a record's model labels (a ``predictions`` list, a ``suggestions`` object) are read as.

    ``None`` when they are not read: absent or empty; of the wrong shape (a located problem); or no
    ``model_rater`` was given (counted as left out).
    """
    shape: type = list if name == "predictions" else Mapping
    if part is None or (isinstance(part, list | Mapping) and not part):
        return None
    if not isinstance(part, shape):
        wanted = "a list" if shape is list else "an object of questions"
        c.problem(None, f"{at}.{name}", f"{what}: '{name}' is not {wanted}")
        return None
    if c.settings.model_rater is None:
        c.leave_out(
            f"model {name} ({source}; {MODEL_HINT})", len(part) if isinstance(part, list | Mapping) else 0
        )
        return None
    return c.settings.model_rater


def _model_labels(
    c: _Collector, predictions: object, *, item: tuple[str, str | None], at: str, what: str
) -> None:
    """Label Studio predictions: a model's labels under ``model_rater``, else left out and counted."""
    source = "Label Studio predictions[]"
    rater = _model_rater(c, predictions, name="predictions", at=at, what=what, source=source)
    if rater is None or not isinstance(predictions, list):
        return
    for j, prediction in enumerate(predictions):
        where = f"{at}.predictions[{j}]"
        if isinstance(prediction, Mapping):
            _ls_results(
                c,
                prediction.get("result"),
                item=item,
                rater=rater,
                where=where,
                what=f"{what}, prediction {prediction.get('model_version', j)!s}",
            )
        else:
            c.problem(None, where, f"{what}: a prediction is not an object")


# --------------------------------------------------------------------------- Argilla

_ARGILLA_LABELS = ("label_selection", "multi_label_selection", "rating")
_ARGILLA_STATUSES = ("submitted", "draft", "discarded")


def argilla_question_types(settings_doc: object, source: Path | None) -> dict[str, str]:
    """Each question's type from an Argilla ``.argilla/settings.json``.

    Raises:
        JudgekitError: (exit 2) When the settings hold no ``questions`` list of named, typed questions.
    """
    questions = settings_doc.get("questions") if isinstance(settings_doc, Mapping) else None
    if not isinstance(questions, list):
        raise JudgekitError(f"{source}: not Argilla dataset settings: no 'questions' list")
    types: dict[str, str] = {}
    for k, q in enumerate(questions):
        name = _text(q.get("name")) if isinstance(q, Mapping) else None
        qs = q.get("settings") if isinstance(q, Mapping) else None
        kind = _text(qs.get("type")) if isinstance(qs, Mapping) else None
        if name is None or kind is None:
            raise JudgekitError(
                f"{source}: questions[{k}]: a question needs a 'name' and 'settings.type' (Argilla's "
                "Settings.to_json writes both); re-export the dataset with Dataset.to_disk"
            )
        types[name] = kind
    return types


def _argilla_value(kind: str, raw: object) -> tuple[object, str | None]:
    """An Argilla response's value and, when it cannot be a label, why."""
    if kind == "multi_label_selection":
        if not isinstance(raw, list) or len(raw) != 1:
            n = len(raw) if isinstance(raw, list) else 0
            return None, f"selects {n} labels; a label is exactly one (use a label_selection question)"
        return raw[0], None
    if kind in _ARGILLA_LABELS:
        return raw, None
    return None, f"is a {kind!r} question, which is no label judgekit reads ({', '.join(_ARGILLA_LABELS)})"


def _argilla_notes(responses: Mapping[str, object], types: Mapping[str, str]) -> dict[str, str]:
    """Each user's answers to the record's text questions, joined: their notes."""
    notes: dict[str, list[str]] = {}
    for question, answers in responses.items():
        if types.get(question) != "text" or not isinstance(answers, list):
            continue
        for a in answers:
            if isinstance(a, Mapping) and isinstance(a.get("value"), str) and a["value"].strip():
                user = _text(a.get("user_id"))
                if user is not None and a.get("status", "submitted") == "submitted":
                    notes.setdefault(user, []).append(a["value"].strip())
    return {user: "\n".join(texts) for user, texts in notes.items()}


def _argilla_response(
    c: _Collector,
    answer: object,
    *,
    kind: str,
    question: str,
    item: tuple[str, str | None],
    notes: Mapping[str, str],
    where: str,
    what: str,
) -> None:
    """One user's response to one question of a record."""
    if not isinstance(answer, Mapping):
        c.problem(None, where, f"{what}: a response is not an object")
        return
    status = answer.get("status")
    if status is None:
        status = "submitted"
        c.missing_status += 1
    if status != "submitted":
        if status in _ARGILLA_STATUSES:
            c.leave_out(f"{status} responses (only submitted responses are labels)")
        else:
            c.problem(
                None, f"{where}.status", f"{what}: unknown status {status!r} ({', '.join(_ARGILLA_STATUSES)})"
            )
        return
    user = _text(answer.get("user_id"))
    if user is None:
        c.problem(None, f"{where}.user_id", f"{what}: the response names no user (user_id)")
        return
    raw, why = _argilla_value(kind, answer.get("value"))
    if why is not None:
        c.problem(None, f"{where}.value", f"{what}: the response {why}")
        return
    label = c.label(raw, None, f"{where}.value", what)
    if label is not None:
        c.add(
            item=item,
            criterion=question,
            rater=c.rater(user),
            label=label,
            notes=notes.get(user),
            line=None,
            where=where,
        )


def argilla_labels(
    records: object,
    *,
    types: Mapping[str, str],
    source: str | os.PathLike[str] | None,
    settings: ImportSettings,
) -> ToolLabels:
    """Labels from the ``records.json`` of an Argilla ``Dataset.to_disk`` folder.

    Args:
        records: The parsed ``records.json`` (a list of records).
        types: Each question's type (:func:`argilla_question_types`).
        source: The records file, for locations.
        settings: How records map to rows.

    Returns:
        The labels (submitted responses, by user), problems and what was left out.

    Raises:
        JudgekitError: (exit 2) When ``records`` is not a list.
    """
    source = _as_path(source)
    c = _Collector("argilla", source, settings)
    for _, at, record, what in _objects(
        c, _records(records, source, "an Argilla records.json"), "record", "a record"
    ):
        item = c.item_and_case([record.get("metadata"), record.get("fields")], None, at, what)
        if item is None:
            continue
        responses = record.get("responses", {})
        responses = {} if responses is None else responses
        if not isinstance(responses, Mapping):
            c.problem(None, f"{at}.responses", f"{what}: 'responses' is not an object of questions")
            continue
        notes = _argilla_notes(responses, types)
        for question, answers in responses.items():
            where = f"{at}.responses.{question}"
            kind = types.get(question)
            if kind is None:
                c.problem(None, where, f"{what}: question {question!r} is not in the dataset's settings")
                continue
            if kind == "text":
                continue
            if not c.wanted(question):
                continue
            if not isinstance(answers, list):
                c.problem(None, where, f"{what}: the responses to {question!r} are not a list")
                continue
            for j, answer in enumerate(answers):
                c_what = f"{what}, question {question!r}"
                _argilla_response(
                    c,
                    answer,
                    kind=kind,
                    question=question,
                    item=item,
                    notes=notes,
                    where=f"{where}[{j}]",
                    what=c_what,
                )
        _argilla_suggestions(c, record.get("suggestions"), types=types, item=item, at=at, what=what)
    if c.missing_status:
        c.out.notes.append(
            f"{c.missing_status} response(s) carried no status (an export before Argilla wrote it) and "
            "were read as submitted"
        )
    return c.out


def _argilla_suggestions(
    c: _Collector,
    suggestions: object,
    *,
    types: Mapping[str, str],
    item: tuple[str, str | None],
    at: str,
    what: str,
) -> None:
    """Argilla suggestions: a model's labels under ``model_rater``, else left out and counted."""
    rater = _model_rater(c, suggestions, name="suggestions", at=at, what=what, source="Argilla suggestions")
    if rater is None or not isinstance(suggestions, Mapping):
        return
    for question, suggestion in suggestions.items():
        where = f"{at}.suggestions.{question}"
        kind = types.get(question)
        if kind is None or not isinstance(suggestion, Mapping):
            c.problem(
                None,
                where,
                f"{what}: the suggestion for {question!r} is not a suggestion of a known question",
            )
            continue
        if kind == "text" or not c.wanted(question):
            continue
        raw, why = _argilla_value(kind, suggestion.get("value"))
        if why is not None:
            c.problem(None, f"{where}.value", f"{what}: the suggestion {why}")
            continue
        label = c.label(raw, None, f"{where}.value", f"{what}, suggestion for {question!r}")
        if label is not None:
            c.add(
                item=item,
                criterion=question,
                rater=rater,
                label=label,
                notes=None,
                line=None,
                where=where,
            )


# --------------------------------------------------------------------------- Langfuse and Phoenix

Located = list[tuple[int | None, object]]
"""Records with the line each starts on (JSONL, CSV) or ``None`` (the items of one JSON list)."""


def located_records(doc: object, source: Path | None, what: str) -> Located:
    """The records of a parsed JSON export (a list, or an API page ``{data: [...]}``), unlined.

    Raises:
        JudgekitError: (exit 2) When ``doc`` is neither.
    """
    return _records(doc, source, what)


def _field(at: str, name: str) -> str:
    return f"{at}.{name}" if at else name


_LANGFUSE_EXPERT = "ANNOTATION"
_LANGFUSE_MODEL = "EVAL"
_LANGFUSE_TYPES = ("NUMERIC", "CATEGORICAL", "BOOLEAN")


def _langfuse_value(score: Mapping[str, object]) -> tuple[object, str | None]:
    """A Langfuse score's value by its data type, and why it has none a label can come from."""
    kind = score.get("dataType")
    if kind is None:
        kind = "CATEGORICAL" if _text(score.get("stringValue")) is not None else "NUMERIC"
    if kind not in _LANGFUSE_TYPES:
        return None, f"dataType {kind!r} is not one of {', '.join(_LANGFUSE_TYPES)}"
    if kind == "NUMERIC":
        value = score.get("value")
        if isinstance(value, str):
            try:
                return float(value), None
            except ValueError:
                return None, f"a NUMERIC score's value {value!r} is not a number"
        return value, None
    string = score.get("stringValue")
    return (string if _text(string) is not None else score.get("value")), None


def langfuse_labels(
    scores: Located, *, source: str | os.PathLike[str] | None, settings: ImportSettings
) -> ToolLabels:
    """Labels from Langfuse scores: ``ANNOTATION`` scores under their ``authorUserId``.

    ``EVAL`` scores (a model's) are imported under ``settings.model_rater`` when it is given, else left
    out and counted; ``API`` scores are left out and counted.

    Args:
        scores: The scores, each with the line it starts on (``None`` for a JSON list's items).
        source: The export, for locations.
        settings: How scores map to rows (the item id defaults to the score's ``traceId``).

    Returns:
        The labels, problems and what was left out.
    """
    source = _as_path(source)
    c = _Collector("langfuse", source, settings)
    for line, at, score, what in _objects(c, scores, "score", "a score"):
        source_kind = score.get("source")
        if source_kind == _LANGFUSE_MODEL and settings.model_rater is None:
            c.leave_out(f"model scores (Langfuse source EVAL; {MODEL_HINT})")
            continue
        if source_kind not in (_LANGFUSE_EXPERT, _LANGFUSE_MODEL):
            if source_kind == "API":
                c.leave_out(
                    "API scores (Langfuse source API: neither an annotator's nor known to be a model's)"
                )
            else:
                c.problem(
                    line,
                    _field(at, "source"),
                    f"{what}: source {source_kind!r} is not ANNOTATION, API or EVAL",
                )
            continue
        criterion = _text(score.get("name"))
        if criterion is None:
            c.problem(line, _field(at, "name"), f"{what}: the score has no name (the criterion)")
            continue
        if not c.wanted(criterion):
            continue
        if source_kind == _LANGFUSE_MODEL:
            rater: str | None = settings.model_rater
        else:
            author = _text(score.get("authorUserId"))
            if author is None:
                c.problem(
                    line,
                    _field(at, "authorUserId"),
                    f"{what}: an ANNOTATION score with no authorUserId; an expert's label needs its expert",
                )
                continue
            rater = c.rater(author)
        item = c.item_and_case([score, score.get("metadata")], line, at, what)
        if item is None or rater is None:
            continue
        raw, why = _langfuse_value(score)
        if why is not None:
            c.problem(line, _field(at, "dataType"), f"{what}: {why}")
            continue
        label = c.label(raw, line, _field(at, "value"), f"{what} ({criterion})")
        if label is not None:
            notes = _text(score.get("comment"))
            c.add(item=item, criterion=criterion, rater=rater, label=label, notes=notes, line=line, where=at)
    return c.out


def _phoenix_result(annotation: Mapping[str, object]) -> Mapping[str, object]:
    """An annotation's ``result`` object, also from the flat ``result.label`` or ``label`` columns."""
    result = annotation.get("result")
    if isinstance(result, Mapping):
        return result
    return {
        key: annotation.get(f"result.{key}", annotation.get(key)) for key in ("label", "score", "explanation")
    }


def _phoenix_rater(c: _Collector, annotation: Mapping[str, object]) -> str | None:
    """A HUMAN annotation's annotator: its ``user_id``, else its ``identifier`` (``None``: neither)."""
    identity = _text(annotation.get("user_id")) or _text(annotation.get("identifier"))
    return None if identity is None else c.rater(identity)


def phoenix_labels(
    annotations: Located, *, source: str | os.PathLike[str] | None, settings: ImportSettings
) -> ToolLabels:
    """Labels from Phoenix span annotations: ``HUMAN`` annotations under their user.

    The annotator is the annotation's ``user_id`` (the Phoenix user who made it in the app or through
    the API with a user key), else its ``identifier`` (set by whoever logged it). ``LLM`` annotations
    are imported under ``settings.model_rater`` when given, else left out and counted; ``CODE``
    annotations and Phoenix's ``note`` annotations are left out and counted. The label is the result's
    ``label``, else its ``score``; the ``explanation`` is kept as notes.

    Args:
        annotations: The annotations, each with the line it starts on (``None`` for a JSON list's items).
        source: The export, for locations.
        settings: How annotations map to rows (the item id defaults to the ``span_id``).

    Returns:
        The labels, problems and what was left out.
    """
    source = _as_path(source)
    c = _Collector("phoenix", source, settings)
    for line, at, annotation, what in _objects(c, annotations, "annotation", "an annotation"):
        criterion = _text(annotation.get("name")) or _text(annotation.get("annotation_name"))
        if criterion is None:
            c.problem(line, _field(at, "name"), f"{what}: the annotation has no name (the criterion)")
            continue
        if criterion == "note":
            c.leave_out("notes (Phoenix 'note' annotations)")
            continue
        kind = annotation.get("annotator_kind")
        if kind == "CODE" or (kind == "LLM" and settings.model_rater is None):
            hint = f"; {MODEL_HINT}" if kind == "LLM" else ""
            c.leave_out(f"{kind} annotations (Phoenix annotator_kind {kind}{hint})")
            continue
        if kind not in ("HUMAN", "LLM"):
            c.problem(
                line,
                _field(at, "annotator_kind"),
                f"{what}: annotator_kind {kind!r} is not HUMAN, LLM or CODE",
            )
            continue
        if not c.wanted(criterion):
            continue
        rater = settings.model_rater if kind == "LLM" else _phoenix_rater(c, annotation)
        if rater is None:
            c.problem(
                line,
                _field(at, "user_id"),
                f"{what}: a HUMAN annotation with no user_id and no identifier; an expert's label needs its "
                "expert (log annotations with an identifier naming the annotator)",
            )
            continue
        item = c.item_and_case([annotation, annotation.get("metadata")], line, at, what)
        if item is None:
            continue
        result = _phoenix_result(annotation)
        raw = result.get("label") if _text(result.get("label")) is not None else result.get("score")
        label = c.label(raw, line, _field(at, "result"), f"{what} ({criterion})")
        if label is not None:
            notes = _text(result.get("explanation"))
            c.add(item=item, criterion=criterion, rater=rater, label=label, notes=notes, line=line, where=at)
    return c.out
